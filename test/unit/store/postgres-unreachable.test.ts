/**
 * The PostgreSQL pool turns a server it cannot reach into MetaStoreUnavailableError (the API's
 * 503 `meta_store_unavailable`), through the pool's own query, a pooled client and a
 * transaction alike. No server is needed: the port is one nobody listens on.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { openPool, transaction } from '../../../src/store/postgres/database.js';

async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

test('an unreachable server is MetaStoreUnavailableError on every path', async () => {
  const pool = openPool(`postgres://postgres@127.0.0.1:${await closedPort()}/sightline`, 2);
  try {
    await assert.rejects(pool.query('SELECT 1'), { name: 'MetaStoreUnavailableError', code: 'ECONNREFUSED' });
    await assert.rejects(pool.connect(), { name: 'MetaStoreUnavailableError' });
    await assert.rejects(transaction(pool, async (client) => client.query('SELECT 1')), { name: 'MetaStoreUnavailableError' });
  } finally {
    await pool.end();
  }
});
