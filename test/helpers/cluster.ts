/**
 * The settings of the local scale-out cluster (`npm run cluster:up`), for the tests that run
 * against it. They come from the environment, else from the `.cluster/env` file that
 * cluster:up writes; without either, those tests are skipped.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface ClusterSettings {
  postgresUrl: string;
  clickhouseUrls: string[];
  clickhouseCluster: string;
  natsServers: string[];
}

export type ClusterAvailability = { enabled: true; settings: ClusterSettings } | { enabled: false; reason: string };

function envFilePath(): string {
  const dir = process.env.SIGHTLINE_CLUSTER_DIR ?? path.join(ROOT, '.cluster');
  return path.join(path.resolve(ROOT, dir), 'env');
}

/** Reads `export KEY=value` lines, as cluster.sh writes them. */
function readEnvFile(file: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const match = /^(?:export\s+)?([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (match) values[match[1]] = match[2];
  }
  return values;
}

function list(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/**
 * Whether the cluster tests run, and against what. Once they are enabled (the env file exists
 * or SIGHTLINE_CLUSTER_TESTS=1), a missing setting is an error, not a reason to skip.
 * SIGHTLINE_CLUSTER_TESTS=0 turns them off even with a cluster up (npm test's embedded part).
 */
export function clusterAvailability(): ClusterAvailability {
  const file = envFilePath();
  const fileExists = fs.existsSync(file);
  if (process.env.SIGHTLINE_CLUSTER_TESTS === '0') return { enabled: false, reason: 'SIGHTLINE_CLUSTER_TESTS=0' };
  if (!fileExists && process.env.SIGHTLINE_CLUSTER_TESTS !== '1') {
    return { enabled: false, reason: `no local cluster (${file} is missing): run npm run cluster:up, or set SIGHTLINE_CLUSTER_TESTS=1 with the SIGHTLINE_* settings` };
  }
  const fromFile = fileExists ? readEnvFile(file) : {};
  const setting = (name: string): string => {
    const value = process.env[name] ?? fromFile[name];
    if (!value) throw new Error(`cluster tests are enabled but ${name} is not set (in the environment or ${file})`);
    return value;
  };
  return {
    enabled: true,
    settings: {
      postgresUrl: setting('SIGHTLINE_POSTGRES_URL'),
      clickhouseUrls: list(setting('SIGHTLINE_CLICKHOUSE_URL')),
      clickhouseCluster: setting('SIGHTLINE_CLICKHOUSE_CLUSTER'),
      natsServers: list(setting('SIGHTLINE_NATS_URL')),
    },
  };
}

/**
 * The cluster's PostgreSQL URL when the cluster tests are enabled, else null: test servers
 * (server.ts) then keep their metadata there. Needs only that one setting, so a cluster of
 * PostgreSQL alone (`cluster.sh start postgres`) will do.
 */
export function clusterPostgresUrl(): string | null {
  const file = envFilePath();
  const fileExists = fs.existsSync(file);
  if (process.env.SIGHTLINE_CLUSTER_TESTS === '0' || (!fileExists && process.env.SIGHTLINE_CLUSTER_TESTS !== '1')) return null;
  const url = process.env.SIGHTLINE_POSTGRES_URL ?? (fileExists ? readEnvFile(file).SIGHTLINE_POSTGRES_URL : undefined);
  if (!url) throw new Error(`cluster tests are enabled but SIGHTLINE_POSTGRES_URL is not set (in the environment or ${file})`);
  return url;
}
