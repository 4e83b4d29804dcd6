/**
 * How the ClickHouse event store reaches its server: HTTP to SIGHTLINE_CLICKHOUSE_URL, unless the
 * process installed an in-process ClickHouse before the store opened. The dialect tests do that
 * (test/chdb/in-process.ts): chdb embeds a current ClickHouse (26.7) in the test server's process,
 * where Debian's server is 18.16, and the printed SQL must run on both.
 */
import type { createClient } from '@clickhouse/client';

/** @clickhouse/client's (experimental) connection hook, which chdb implements. */
export type ClickHouseConnection = NonNullable<NonNullable<Parameters<typeof createClient>[0]>['connection']>;

let openInProcess: (() => ClickHouseConnection) | null = null;

/** Every client the store makes from now on talks to what `open` returns; the URLs are not used. */
export function useInProcessClickHouse(open: () => ClickHouseConnection): void {
  openInProcess = open;
}

/** A new in-process connection, or undefined for HTTP. */
export function inProcessConnection(): ClickHouseConnection | undefined {
  return openInProcess?.();
}
