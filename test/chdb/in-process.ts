/**
 * Loaded with `node --import` into a test server (test/helpers/chdb.ts): the ClickHouse event
 * store then talks to ClickHouse 26.7 inside this process (npm `chdb`, installed in this folder by
 * scripts/test-chdb.sh) instead of a server, on SIGHTLINE_TEST_CHDB_DIR. chdb locks its folder, so
 * each test server gets one of its own; a restart on the same data folder gets the same one.
 */
import { useInProcessClickHouse, type ClickHouseConnection } from '../../src/store/clickhouse/transport.js';

const dir = process.env.SIGHTLINE_TEST_CHDB_DIR;
if (!dir) throw new Error('SIGHTLINE_TEST_CHDB_DIR is not set');

// Not a static import: the service's typecheck runs where this folder's packages are not installed.
const { createChdbConnection } = (await import('chdb/connection' as string)) as { createChdbConnection: (options: { path: string }) => ClickHouseConnection };

useInProcessClickHouse(() => createChdbConnection({ path: dir }));
