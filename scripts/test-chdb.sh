#!/usr/bin/env bash
# The chdb part of `npm test`: the suites that run on ClickHouse run again with each test server's
# events in ClickHouse 26.7 inside its own process (npm `chdb`, test/helpers/chdb.ts), where
# scripts/test-cluster.sh runs them on Debian's 18.16 servers: the SQL the ClickHouse printer
# writes must pass on both. chdb (0.55 GB) is installed here, from its own lock file in test/chdb/,
# not by the service's `npm ci`; a folder already installed from the same lock file is kept.
# `npm install --no-save`, not `npm ci`: the lock file names only the linux-x64 build of chdb's
# library (the registry this was locked against has no other), and `npm ci` refuses a lock file
# without every optional platform package; `install` takes the locked versions and changes nothing.
# SIGHTLINE_SKIP_CHDB_TESTS=1 skips it.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${SIGHTLINE_SKIP_CHDB_TESTS:-}" = 1 ]; then
  echo "test:chdb skipped (SIGHTLINE_SKIP_CHDB_TESTS=1)"
  exit 0
fi

stamp=test/chdb/node_modules/.installed-from-lock
if ! cmp -s test/chdb/package-lock.json "$stamp" 2>/dev/null; then
  started=$(date +%s)
  npm install --prefix test/chdb --no-save --no-audit --no-fund --loglevel=error
  cp test/chdb/package-lock.json "$stamp"
  echo "chdb installed in $(( $(date +%s) - started )) s"
fi

SUITES=(
  test/cluster/clickhouse-dialect.test.ts
  test/events/events-list.test.ts test/events/events-hogql.test.ts
  test/insights/query-api.test.ts test/insights/hogql-functions.test.ts
  test/cohorts/cohort-filters.test.ts
)
SIGHTLINE_CLUSTER_TESTS=0 SIGHTLINE_TEST_EVENT_STORE=chdb node --import tsx --test --test-concurrency=1 "${SUITES[@]}"
