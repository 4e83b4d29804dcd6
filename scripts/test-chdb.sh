#!/usr/bin/env bash
# The chdb part of `npm test`: the event-reading suites (events, every insight kind, actions,
# dashboards, cohorts) run again with each test server's events in ClickHouse 26.7 inside its own
# process (npm `chdb`, test/helpers/chdb.ts). scripts/test-cluster.sh runs the ones 18.16 can
# answer on Debian's servers; what 26.7 adds (window functions, joins) is printed only for it. chdb (0.55 GB) is installed here, from its own lock file in test/chdb/,
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
  test/insights/*.test.ts
  test/actions/*.test.ts
  test/dashboards/*.test.ts
  test/cohorts/*.test.ts
)
SIGHTLINE_CLUSTER_TESTS=0 SIGHTLINE_TEST_EVENT_STORE=chdb node --import tsx --test --test-concurrency=1 --test-force-exit "${SUITES[@]}"
