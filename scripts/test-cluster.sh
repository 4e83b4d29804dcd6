#!/usr/bin/env bash
# The cluster part of `npm test`: brings the local cluster up (scripts/cluster/cluster.sh, from
# Debian's packages) unless it runs already, runs the cluster tests and a representative part of
# the integration suite with metadata in PostgreSQL (each test server gets a database of its own,
# test/helpers/server.ts), and stops the cluster again if it started it.
# SIGHTLINE_SKIP_CLUSTER_TESTS=1 skips it (a machine without root or apt cannot install the parts).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${SIGHTLINE_SKIP_CLUSTER_TESTS:-}" = 1 ]; then
  echo "test:cluster skipped (SIGHTLINE_SKIP_CLUSTER_TESTS=1)"
  exit 0
fi

# The suites that run in both modes: tenancy, flags, capture, events, definitions, the query API,
# persons (with their deletion), groups, saved insights and dashboards, actions, cohorts.
# (test/cluster/transfer.test.ts moves an embedded folder into PostgreSQL + ClickHouse and back.)
# (test/cluster/faults-*.test.ts: PostgreSQL stopped, a ClickHouse shard stopped, the NATS leader killed,
# Sightline nodes killed -9 under load; the last takes ~2 min.)
SUITES=(
  test/cluster/*.test.ts
  test/tenancy/*.test.ts
  test/flags/management.test.ts test/flags/blast-radius.test.ts test/flags/decide.test.ts test/flags/evaluation.test.ts test/flags/local-evaluation.test.ts
  test/capture/capture.test.ts
  test/events/events-list.test.ts test/events/events-hogql.test.ts
  test/definitions/*.test.ts
  test/insights/query-api.test.ts
  test/persons/*.test.ts
  test/groups/*.test.ts
  test/dashboards/*.test.ts
  test/actions/*.test.ts
  test/cohorts/*.test.ts
)

cluster() { bash scripts/cluster/cluster.sh "$@"; }

started=0
if ! cluster status --check > /dev/null 2>&1; then
  started=1
  cluster up
fi
stop_cluster() { if [ "$started" = 1 ]; then cluster down > /dev/null || true; fi; }
trap stop_cluster EXIT

eval "$(cluster env)"
export SIGHTLINE_POSTGRES_URL SIGHTLINE_CLICKHOUSE_URL SIGHTLINE_CLICKHOUSE_CLUSTER SIGHTLINE_NATS_URL
# One file at a time: the cluster takes CPU from test servers that must start within 30 s.
SIGHTLINE_CLUSTER_TESTS=1 node --import tsx --test --test-concurrency=1 "${SUITES[@]}"
# The events API and the cohort filters again with events in ClickHouse (two 18.16 shards under a Distributed table; the
# store's own test ran above with test/cluster/),
# a database per test server (test/helpers/clickhouse-databases.ts).
CLICKHOUSE_SUITES=(test/cluster/clickhouse-dialect.test.ts test/events/events-list.test.ts test/events/events-hogql.test.ts test/insights/query-api.test.ts test/insights/hogql-functions.test.ts test/insights/retention.test.ts test/insights/events-query.test.ts test/cohorts/cohort-filters.test.ts)
SIGHTLINE_CLUSTER_TESTS=1 SIGHTLINE_TEST_EVENT_STORE=clickhouse node --import tsx --test --test-concurrency=1 "${CLICKHOUSE_SUITES[@]}"
# Every node is equal: two nodes on the same PostgreSQL and ClickHouse behind a round-robin proxy
# (test/helpers/round-robin-proxy.ts), so a test's consecutive requests land on different nodes.
# The SDK suites drive the unmodified posthog-node and posthog-js through the proxy.
# Not here: suites that read a node's own files (person deletion's compaction) or use insight
# statements 18.16 refuses (actions).
TWO_NODE_SUITES=(
  test/cluster/two-nodes-events.test.ts
  test/sdk/*.test.ts
  test/capture/capture.test.ts
  test/health/health.test.ts
  test/robustness/cross-organization-isolation.test.ts
  test/tenancy/*.test.ts
  test/flags/management.test.ts test/flags/blast-radius.test.ts test/flags/decide.test.ts test/flags/evaluation.test.ts test/flags/local-evaluation.test.ts
  test/definitions/*.test.ts
  test/events/events-list.test.ts test/events/events-hogql.test.ts
  test/insights/query-api.test.ts test/insights/hogql-functions.test.ts test/insights/retention.test.ts test/insights/events-query.test.ts
  test/persons/persons-api.test.ts test/persons/person-export.test.ts
  test/groups/*.test.ts
  test/dashboards/*.test.ts
  test/cohorts/*.test.ts
)
SIGHTLINE_CLUSTER_TESTS=1 SIGHTLINE_TEST_EVENT_STORE=clickhouse SIGHTLINE_TEST_NODES=2 node --import tsx --test --test-concurrency=1 "${TWO_NODE_SUITES[@]}"
