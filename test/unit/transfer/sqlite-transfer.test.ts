/** The SQLite metadata store's whole-table reads and writes (store/sqlite/transfer.ts), paged. */
import { test } from 'node:test';
import { SqliteMetaStore } from '../../../src/store/sqlite/meta-store.js';
import { newTempDir } from '../../helpers/server.js';
import { checkPaging } from '../../helpers/transfer.js';

test('rows written through the transfer path read back once each, in pages, persons with their integer ids', async () => {
  const meta = SqliteMetaStore.open(newTempDir());
  try {
    await checkPaging(meta);
  } finally {
    await meta.close();
  }
});
