/**
 * `npm run bench`: runs every benchmark and prints markdown tables, each figure next to a
 * baseline measured in the same run. `npm run bench -- ingest` runs one.
 */
import os from 'node:os';
import { benchActions } from './actions.js';
import { benchCohorts } from './cohorts.js';
import { benchDefinitions } from './definitions.js';
import { benchEvents } from './events.js';
import { benchFlags } from './flags.js';
import { benchFootprint } from './footprint.js';
import { benchStartLarge } from './start-large.js';
import { benchIngest } from './ingest.js';
import { benchPersons } from './persons.js';
import { benchInsights } from './insights.js';
import { benchRetention } from './retention.js';
import { benchWeb } from './web.js';
import { benchDashboard } from './dashboard.js';
import { benchMetadataPostgres } from './metadata-postgres.js';
import { benchClickhouseFinal } from './clickhouse-final.js';
import { benchClickhouseProps } from './clickhouse-props.js';
import { benchNatsLog } from './natslog.js';
import { benchNatsReads } from './nats-reads.js';
import { benchClusterScale } from './cluster-scale.js';
import { benchTransfer } from './transfer.js';

const benchmarks: Record<string, () => Promise<string>> = {
  ingest: benchIngest,
  definitions: benchDefinitions,
  events: benchEvents,
  actions: benchActions,
  flags: benchFlags,
  retention: benchRetention,
  persons: benchPersons,
  cohorts: benchCohorts,
  footprint: benchFootprint,
  'start-large': benchStartLarge,
  insights: benchInsights,
  web: benchWeb,
  dashboard: benchDashboard,
  'metadata-postgres': benchMetadataPostgres,
  'clickhouse-final': benchClickhouseFinal,
  'clickhouse-props': benchClickhouseProps,
  natslog: benchNatsLog,
  'nats-reads': benchNatsReads,
  'cluster-scale': benchClusterScale,
  transfer: benchTransfer,
};

/** Run only when named: they make a data set of 10 million events first (minutes, gigabytes), or need the local cluster. */
const ON_REQUEST_ONLY = new Set(['start-large', 'insights', 'metadata-postgres', 'clickhouse-final', 'clickhouse-props', 'natslog', 'nats-reads', 'cluster-scale', 'transfer']);

const wanted = process.argv.slice(2);
const header = `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}; ${new Date().toISOString()}`;
process.stdout.write(`${header}\n\n`);
for (const [name, run] of Object.entries(benchmarks)) {
  if (wanted.length > 0 ? !wanted.includes(name) : ON_REQUEST_ONLY.has(name)) continue;
  process.stdout.write(`## ${name}\n\n${await run()}\n\n`);
}
