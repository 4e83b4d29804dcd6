/**
 * An event that passes capture's guards but that the metadata store refuses must not fail the
 * group commit it shares with other requests: it is dropped and counted, and every other
 * event, of its own request too, is stored. The refusal is injected as a SQLite trigger, the
 * way a constraint the guards do not know about would refuse it.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { DatabaseSync } from '@photostructure/sqlite';
import pg from 'pg';
import { readStores } from '../helpers/stores.js';
import { metric } from '../helpers/robustness.js';
import { startServer } from '../helpers/server.js';

describe('a malformed event in a group commit', () => {
  it('is dropped and counted alone; the other requests of the commit are stored', async (t) => {
    const first = await startServer();
    assert.equal(await first.stop(), 0);
    const postgresUrl = first.storeEnv.SIGHTLINE_POSTGRES_URL;
    if (postgresUrl) {
      const client = new pg.Client({ connectionString: postgresUrl });
      await client.connect();
      await client.query(`CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
                          BEGIN IF NEW.name = 'poison' THEN RAISE EXCEPTION 'malformed event' USING ERRCODE = 'check_violation'; END IF; RETURN NEW; END $$`);
      await client.query('CREATE TRIGGER refuse_poison BEFORE INSERT ON event_definitions FOR EACH ROW EXECUTE FUNCTION refuse_poison()');
      await client.end();
    } else {
      const meta = new DatabaseSync(path.join(first.dataDir, 'meta.sqlite'));
      meta.exec(`CREATE TRIGGER refuse_poison BEFORE INSERT ON event_definitions WHEN NEW.name = 'poison'
                 BEGIN SELECT RAISE(ABORT, 'malformed event'); END`);
      meta.close();
    }

    // A long flush interval puts all requests into one group commit.
    const server = await startServer({ dataDir: first.dataDir, projectKey: first.projectKey, personalKey: first.personalKey, env: { SIGHTLINE_FLUSH_INTERVAL_MS: '200' } });
    t.after(() => server.kill());
    const batch = (events: { event: string; distinct_id: string }[]) => server.post('/batch/', { api_key: server.projectKey, batch: events });
    const responses = await Promise.all([
      batch([{ event: 'signup', distinct_id: 'a' }, { event: 'pageview', distinct_id: 'a' }]),
      batch([{ event: 'pageview', distinct_id: 'b' }, { event: 'poison', distinct_id: 'b' }, { event: 'purchase', distinct_id: 'b' }]),
      batch([{ event: 'pageview', distinct_id: 'c' }]),
    ]);
    assert.deepEqual(responses.map((r) => r.status), [200, 200, 200]);
    // On the NATS log a 200 comes before processing; an API read waits until every node processed what it acknowledged.
    assert.equal((await server.api('/api/projects/@current/')).status, 200);

    let dropped = 0;
    for (const nodeUrl of server.nodeUrls) dropped += metric(await (await fetch(`${nodeUrl}/metrics`)).text(), 'sightline_events_dropped_total', { reason: 'unstorable' });
    assert.equal(dropped, 1);
    assert.equal(await server.stop(), 0);

    const stored = await readStores(server.dataDir);
    const events = stored.events.map((e) => `${e.distinct_id}:${e.event}`).sort();
    assert.deepEqual(events, ['a:pageview', 'a:signup', 'b:pageview', 'b:purchase', 'c:pageview']);
  });
});
