/**
 * Loaded with `node --import` into the compiled server by the insights benchmark's ClickHouse mode
 * (insights-clickhouse.ts): as test/chdb/in-process.ts, but into dist's store module, the one the
 * compiled server runs (the test preload reaches src's, a different module instance).
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClickHouseConnection } from '../src/store/clickhouse/transport.js';

const dir = process.env.SIGHTLINE_TEST_CHDB_DIR;
if (!dir) throw new Error('SIGHTLINE_TEST_CHDB_DIR is not set');
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// Not static imports: dist is built by the benchmark, and chdb lives in test/chdb's own node_modules.
const { useInProcessClickHouse } = (await import(path.join(root, 'dist/store/clickhouse/transport.js') as string)) as { useInProcessClickHouse: (open: () => ClickHouseConnection) => void };
const { createChdbConnection } = createRequire(path.join(root, 'test/chdb/package.json'))('chdb/connection') as { createChdbConnection: (options: { path: string }) => ClickHouseConnection };

useInProcessClickHouse(() => createChdbConnection({ path: dir }));
