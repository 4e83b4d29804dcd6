/**
 * Fault: the NATS node leading the stream is killed (-9) under capture load (issue #27, item
 * 6). Three NATS nodes, stream R3. Capture continues once the stream has elected a new leader
 * (503 + Retry-After until then; the load retries as an SDK does), and every acknowledged event
 * is stored exactly once. The leader is found through the JetStream API (stream info
 * `cluster.leader`), killed by the pid the cluster script recorded, and started again at the end.
 * Runs only when a cluster is up.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from 'nats';
import { describe, test } from 'node:test';
import { clusterAvailability } from '../helpers/cluster.js';
import { assertStoredOnce, CaptureLoad, clusterCommand, sleep, waitFor } from '../helpers/faults.js';
import { databaseFor } from '../helpers/postgres-databases.js';
import { newTempDir, startServer } from '../helpers/server.js';

const availability = clusterAvailability();
const skip = availability.enabled ? false : availability.reason;
const CLUSTER_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..', process.env.SIGHTLINE_CLUSTER_DIR ?? '.cluster');

/** The node (nats-N) leading `stream`, as the JetStream API says. */
async function streamLeader(servers: string[], stream: string): Promise<string> {
  const nc = await connect({ servers, timeout: 5_000 });
  try {
    const info = await (await nc.jetstreamManager()).streams.info(stream);
    assert.equal(info.config.num_replicas, 3, 'the stream keeps three replicas');
    assert.ok(info.cluster?.leader, 'the stream has a leader');
    return info.cluster.leader;
  } finally {
    await nc.close();
  }
}

describe('fault: the NATS stream leader is killed under capture load', { skip, concurrency: false }, () => {
  test('capture continues after the election and nothing acknowledged is lost or doubled', { timeout: 300_000 }, async () => {
    if (!availability.enabled) return;
    const { postgresUrl, natsServers } = availability.settings;
    const stream = `T_FAULTNATS_${randomBytes(6).toString('hex')}`;
    const server = await startServer({
      env: { SIGHTLINE_POSTGRES_URL: await databaseFor(postgresUrl, newTempDir()), SIGHTLINE_NATS_URL: natsServers.join(','), SIGHTLINE_NATS_STREAM: stream, SIGHTLINE_NATS_PARTITIONS: '4' },
    });
    let killed: string | null = null;
    let loadToStop: CaptureLoad | null = null;
    try {
      const load = new CaptureLoad([server], 3);
      loadToStop = load;
      await sleep(3_000);
      killed = await streamLeader(natsServers, stream);
      const pid = Number(fs.readFileSync(path.join(CLUSTER_DIR, killed, 'pid'), 'utf8'));
      const killedAt = Date.now();
      process.kill(pid, 'SIGKILL');
      await waitFor(`${killed} gone`, async () => !fs.existsSync(`/proc/${pid}`) || fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2] === 'Z', 10_000);

      // Capture continues: a 200 for a batch sent after the kill, within the election's time.
      const firstAck = await waitFor('a batch acknowledged after the kill', async () => load.acknowledgedBetween(killedAt) > 0, 30_000);
      await sleep(5_000);
      const newLeader = await streamLeader(natsServers, stream);
      assert.notEqual(newLeader, killed);
      const duringMs = Date.now() - killedAt;
      const statuses = load.statuses(killedAt);
      // The longest time without an acknowledgement around the kill.
      const acks = load.answers.filter((a) => a.status === 200).map((a) => a.at + a.ms).sort((x, y) => x - y);
      let gap = 0;
      for (let i = 1; i < acks.length; i++) if (acks[i] > killedAt - 1_000) gap = Math.max(gap, acks[i] - acks[i - 1]);
      await load.stop();
      assert.ok(load.acknowledgedBetween(killedAt + firstAck) > 10, 'capture keeps acknowledging after the election');

      const storedMs = await assertStoredOnce(server, load.acknowledged);
      console.log(
        `nats leader kill: ${killed} killed, ${newLeader} leads now; first acknowledgement ${firstAck} ms after the kill; longest gap between acknowledgements ${gap} ms; ` +
          `answers in the ${duringMs} ms after the kill: ${JSON.stringify(statuses)}; ${load.acknowledged.length} events acknowledged, all stored once ${storedMs} ms after the load stopped`,
      );
    } finally {
      await loadToStop?.stop(); // stopped already, unless the test failed midway
      await server.stop();
      if (killed) await clusterCommand('start', killed);
    }
  });
});
