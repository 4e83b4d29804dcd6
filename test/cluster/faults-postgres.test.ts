/**
 * Fault: PostgreSQL stops under capture load, with the NATS log on (issue #27, item 6). Capture
 * keeps acknowledging (the stream holds the batches), /flags answers as PostHog's SDKs expect
 * (from cache, or 200 with errorsWhileComputingFlags) within a bound, /_ready names PostgreSQL
 * as the part that is down, and once PostgreSQL is back every acknowledged event is stored
 * exactly once.
 *
 * The server's metadata lives on a PostgreSQL of this test's own (private-postgres.ts), so that
 * stopping it disturbs no other test or checkout; NATS is the cluster's. Runs only when a
 * cluster is up.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { clusterAvailability } from '../helpers/cluster.js';
import { assertStoredOnce, CaptureLoad, sleep, timedGet, waitFor } from '../helpers/faults.js';
import { createFlag, everyone } from '../helpers/flags.js';
import { PrivatePostgres } from '../helpers/private-postgres.js';
import { startServer, type TestServer } from '../helpers/server.js';

const availability = clusterAvailability();
const skip = availability.enabled ? false : availability.reason;
/** SDKs give up on a flags request after a few seconds (posthog-node: 3 s by default, posthog-js: 10 s). */
const FLAGS_BOUND_MS = 3_000;
const READY_BOUND_MS = 3_000;
const OUTAGE_MS = 10_000;

let postgres: PrivatePostgres | null = null;
after(async () => {
  await postgres?.dispose();
});

/**
 * One person's `$set: {step}` in consecutive batches, each sent again until acknowledged (as an
 * SDK retries), so the stream holds them in order.
 */
class OrderedSteps {
  static readonly DISTINCT_ID = 'ordered-steps';
  private step = 0;
  private running = true;
  private readonly loop: Promise<void>;

  constructor(private readonly server: TestServer) {
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    while (this.running) {
      const batch = [{ event: 'step', distinct_id: OrderedSteps.DISTINCT_ID, uuid: randomUUID(), properties: { $set: { step: this.step + 1 } } }];
      while ((await this.server.post('/batch/', { api_key: this.server.projectKey, batch }).then((r) => r.status, () => 0)) !== 200) await sleep(200);
      this.step += 1;
      await sleep(150);
    }
  }

  /** Stops after the batch in flight; the last step acknowledged. */
  async stop(): Promise<number> {
    this.running = false;
    await this.loop;
    return this.step;
  }
}

describe('fault: PostgreSQL stops under capture load', { skip, concurrency: false }, () => {
  test('capture acknowledges, flags answer, /_ready names postgres, nothing acknowledged is lost or doubled', { timeout: 300_000 }, async () => {
    if (!availability.enabled) return;
    postgres = await PrivatePostgres.create();
    const tag = randomBytes(6).toString('hex');
    const server = await startServer({
      env: {
        SIGHTLINE_POSTGRES_URL: postgres.url,
        SIGHTLINE_NATS_URL: availability.settings.natsServers.join(','),
        SIGHTLINE_NATS_STREAM: `T_FAULTPG_${tag}`,
        SIGHTLINE_NATS_PARTITIONS: '4',
      },
    });
    let loadToStop: CaptureLoad | null = null;
    try {
      await createFlag(server, everyone('fault-flag'));
      const flags = () => timedGet(`${server.url}/flags?v=2`, FLAGS_BOUND_MS, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: server.projectKey, distinct_id: 'person-1' }) });
      const before = await flags();
      assert.equal((before.body as any).flags['fault-flag'].enabled, true);

      const load = new CaptureLoad([server], 2);
      loadToStop = load;
      const steps = new OrderedSteps(server);
      await sleep(2_000);
      const stoppedAt = Date.now();
      await postgres.stop();
      const stopMs = Date.now() - stoppedAt;

      // During the outage.
      await sleep(1_000);
      const ready = await timedGet(`${server.url}/_ready`, READY_BOUND_MS);
      console.log(`/_ready during the outage: ${ready.response.status} in ${ready.ms} ms`, JSON.stringify(ready.body));
      assert.equal(ready.response.status, 503);
      assert.equal((ready.body as any).checks?.postgres, 'down');

      const during = await flags();
      console.log(`/flags during the outage: ${during.response.status} in ${during.ms} ms`, JSON.stringify(during.body).slice(0, 300));
      if (during.response.status !== 200) console.log(server.output().split('\n').filter((line) => /"level":50/.test(line)).slice(-3).join('\n').slice(0, 3000));
      assert.equal(during.response.status, 200);
      const answer = during.body as { errorsWhileComputingFlags: boolean; flags: Record<string, { enabled: boolean }> };
      assert.ok(answer.errorsWhileComputingFlags === true || answer.flags['fault-flag']?.enabled === true, 'from cache, or errorsWhileComputingFlags as the SDKs expect');

      // The management API cannot work without its store: a clear 503 naming it, at once.
      const api = await timedGet(`${server.url}/api/projects/@current/feature_flags/`, READY_BOUND_MS, { headers: { authorization: `Bearer ${server.personalKey}` } });
      console.log(`the API during the outage: ${api.response.status} in ${api.ms} ms`, JSON.stringify(api.body));
      assert.equal(api.response.status, 503);
      assert.equal((api.body as any).code, 'meta_store_unavailable');
      assert.ok(api.response.headers.get('retry-after'));

      await sleep(Math.max(0, OUTAGE_MS - (Date.now() - stoppedAt)));
      const restartedAt = Date.now();
      const acknowledgedDuringOutage = load.acknowledgedBetween(stoppedAt + stopMs, restartedAt);
      console.log(`capture during the outage (${restartedAt - stoppedAt} ms):`, JSON.stringify(load.statuses(stoppedAt, restartedAt)));
      assert.ok(acknowledgedDuringOutage > 0, 'capture keeps acknowledging while PostgreSQL is down');

      const lastStep = await steps.stop();
      await postgres.start();
      const readyAgainMs = await waitFor('/_ready 200 after the restart', async () => (await fetch(`${server.url}/_ready`)).status === 200);
      await sleep(2_000);
      await load.stop();
      const storedMs = await assertStoredOnce(server, load.acknowledged);
      // The batches the store refused during the outage were applied in their order after it.
      const person = await server.api(`/api/projects/@current/persons/?distinct_id=${OrderedSteps.DISTINCT_ID}`);
      const [stepper] = ((await person.json()) as { results: { properties: { step?: number } }[] }).results;
      assert.equal(stepper.properties.step, lastStep, `the last $set wins (${lastStep} steps sent, one a batch)`);
      console.log(
        `postgres fault: ${load.acknowledged.length} events acknowledged (${acknowledgedDuringOutage} batches during the outage); ` +
          `/_ready 200 ${readyAgainMs} ms after the restart; all stored ${Date.now() - restartedAt} ms after the restart (${storedMs} ms after the load stopped)`,
      );
      const ready2 = await timedGet(`${server.url}/_ready`, READY_BOUND_MS);
      assert.equal((ready2.body as any).checks?.postgres, 'ok');
    } finally {
      await loadToStop?.stop(); // stopped already, unless the test failed midway
      await server.stop();
    }
  });
});
