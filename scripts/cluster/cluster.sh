#!/usr/bin/env bash
# The local scale-out cluster: PostgreSQL 15, ZooKeeper, two ClickHouse servers (two shards of
# one cluster) and three NATS JetStream nodes, from Debian packages, as plain processes on
# loopback, with data and logs under .cluster/. See docs/scale-out-cluster.md.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
for lib in common install zookeeper clickhouse postgres nats; do
  # shellcheck source=/dev/null
  source "$HERE/lib/$lib.sh"
done

usage() {
  cat <<EOF
usage: cluster.sh COMMAND [ARG]
  up                   install what is missing, start every part, wait until all answer, print the settings
  down [--wipe]        stop every part (data stays unless --wipe)
  status [--check]     which parts run, their ports and memory (--check: exit 3 when one is down)
  env                  print the SIGHTLINE_* settings
  start PART           start one part (or 'clickhouse', 'nats') and wait until it answers
  stop PART            stop one part gracefully
  kill PART            SIGKILL one part, as a crash would
  nats-leader STREAM   print the NATS node leading STREAM
  kill-nats-leader STREAM
                       SIGKILL the NATS node leading STREAM and print its name
PART is one of: ${PARTS[*]}
EOF
}

# Expands 'clickhouse', 'nats' and 'all' into the parts they name.
expand_parts() {
  case $1 in
    all) echo "${PARTS[@]}" ;;
    clickhouse) echo clickhouse-1 clickhouse-2 ;;
    nats) echo "${NATS_NODES[@]}" ;;
    *) is_part "$1" || { usage >&2; fail "unknown part '$1'"; }; echo "$1" ;;
  esac
}

kind_of() { echo "${1%-[0-9]}"; }

# Fails, before anything starts, when a port of a part that is not running is taken.
check_ports_free() {
  local part p
  for part in "$@"; do
    [ -z "$(part_pid "$part")" ] || continue
    for p in $(part_ports "$part"); do
      port_in_use "$p" &&
        fail "port $p, needed by $part, is taken by another process (another cluster? see SIGHTLINE_CLUSTER_PORT_BASE)"
    done
  done
  return 0
}

# Starts PART unless it runs, and adds it to TO_WAIT when it has to be waited for. (Its
# status is not the answer: set -e does not apply inside a function called as a condition.)
start_part() {
  local part=$1
  if [ -n "$(part_pid "$part")" ]; then
    say "$part already runs (pid $(part_pid "$part"))"
    return 0
  fi
  check_ports_free "$part"
  mkdir -p "$(part_dir "$part")"
  "start_$(kind_of "$part")" "$part"
  TO_WAIT+=("$part")
}

stop_part() {
  local part=$1 signal=${2:-} pid
  pid=$(part_pid "$part")
  if [ -z "$pid" ]; then
    say "$part is not running"
    return 0
  fi
  [ -n "$signal" ] || signal=$("stop_signal_$(kind_of "$part")")
  if [ "$signal" = KILL ]; then
    kill -KILL "$pid"
    # Wait until init has reaped it too: PostgreSQL will not start while the old postmaster's
    # pid, even as a zombie, still answers a signal.
    local i
    for i in $(seq 1 600); do
      [ -d "/proc/$pid" ] || break
      sleep 0.05
    done
    say "$part (pid $pid) killed"
  else
    stop_pid "$part" "$pid" "$signal"
    say "$part (pid $pid) stopped"
  fi
}

# Stops several parts at once and waits for all of them.
stop_parts() {
  local part pids=()
  for part in "$@"; do
    stop_part "$part" & pids+=($!)
  done
  for part in "${pids[@]}"; do wait "$part"; done
}

# Waits for every part in TO_WAIT to answer, saying when each did (seconds since STARTED).
await_started() {
  local started=$1 part
  for part in "${TO_WAIT[@]}"; do
    wait_ready "$part" 60
    say "$part answers (pid $(part_pid "$part"), after $(seconds_since "$started") s)"
  done
}

write_env() {
  local urls=() part
  {
    echo "export SIGHTLINE_POSTGRES_URL=postgres://postgres@127.0.0.1:$(port postgres)/$PG_DATABASE"
    for part in clickhouse-1 clickhouse-2; do urls+=("http://127.0.0.1:$(port "$part" http)"); done
    echo "export SIGHTLINE_CLICKHOUSE_URL=$(IFS=,; echo "${urls[*]}")"
    echo "export SIGHTLINE_CLICKHOUSE_CLUSTER=$CLICKHOUSE_CLUSTER"
    urls=()
    for part in "${NATS_NODES[@]}"; do urls+=("nats://127.0.0.1:$(port "$part" client)"); done
    echo "export SIGHTLINE_NATS_URL=$(IFS=,; echo "${urls[*]}")"
  } > "$ENV_FILE"
}

cmd_up() {
  local started part
  started=$(now)
  mkdir -p "$CLUSTER_DIR"
  echo "$PORT_BASE" > "$PORT_BASE_FILE"
  install_packages
  check_ports_free "${PARTS[@]}"
  local boot
  boot=$(now)
  # ZooKeeper first: ClickHouse cannot start without it once replicated tables exist.
  TO_WAIT=()
  start_part zookeeper
  await_started "$boot"
  TO_WAIT=()
  for part in nats-1 nats-2 nats-3 clickhouse-1 clickhouse-2 postgres; do start_part "$part"; done
  await_started "$boot"
  write_env
  say "Cluster ready: started in $(seconds_since "$boot") s, $(seconds_since "$started") s in all. Data and logs: $CLUSTER_DIR"
  say "Settings (also in $ENV_FILE; load them with: source $ENV_FILE):"
  cat "$ENV_FILE"
}

cmd_down() {
  local wipe=${1:-}
  [ -z "$wipe" ] || [ "$wipe" = --wipe ] || fail "down takes only --wipe"
  if [ -d "$CLUSTER_DIR" ]; then
    # ClickHouse before ZooKeeper: it holds a ZooKeeper session while shutting down.
    stop_parts clickhouse-1 clickhouse-2 nats-1 nats-2 nats-3 postgres
    stop_parts zookeeper
    rm -f "$ENV_FILE"
  fi
  if [ "$wipe" = --wipe ]; then
    rm -rf "$CLUSTER_DIR"
    say "Removed $CLUSTER_DIR"
  fi
}

# Exits 3 with --check when a part is down or silent.
cmd_status() {
  local check=${1:-} part pid answers down=0 ports
  printf '%-13s %-8s %-8s %-8s %s\n' PART STATE PID MEM_MB PORTS
  for part in "${PARTS[@]}"; do
    pid=$(part_pid "$part")
    case $part in
      clickhouse-*) ports="http $(port "$part" http), tcp $(port "$part" tcp), interserver $(port "$part" interserver)" ;;
      nats-*) ports="client $(port "$part" client), route $(port "$part" route), monitor $(port "$part" monitor)" ;;
      *) ports=$(port "$part") ;;
    esac
    if [ -z "$pid" ]; then
      printf '%-13s %-8s %-8s %-8s %s\n' "$part" stopped - - "$ports"
      down=$((down + 1))
      continue
    fi
    if "ready_$(kind_of "$part")" "$part"; then answers=up; else answers=silent; down=$((down + 1)); fi
    printf '%-13s %-8s %-8s %-8s %s\n' "$part" "$answers" "$pid" "$(memory_mb "$pid")" "$ports"
  done
  if [ $down -eq 0 ]; then say "All ${#PARTS[@]} parts answer."; else say "$down of ${#PARTS[@]} parts are down or silent."; fi
  if [ "$check" = --check ] && [ $down -gt 0 ]; then exit 3; fi
  return 0
}

cmd_start() {
  local part started
  started=$(now)
  TO_WAIT=()
  for part in "$@"; do start_part "$part"; done
  await_started "$started"
}

cmd_nats_leader() {
  local leader
  leader=$(nats_stream_leader "$1")
  [ -n "$leader" ] || fail "no running NATS node reports a leader for stream '$1'"
  echo "$leader"
}

main() {
  local command=${1:-}
  [ $# -gt 0 ] && shift
  load_port_base
  case $command in
    up) cmd_up ;;
    down) cmd_down "$@" ;;
    status) cmd_status "$@" ;;
    env) [ -f "$ENV_FILE" ] || fail "no cluster is up ($ENV_FILE is missing)"; cat "$ENV_FILE" ;;
    start | stop | kill)
      [ $# -eq 1 ] || fail "$command takes one part"
      local parts part
      parts=$(expand_parts "$1")
      case $command in
        start) cmd_start $parts ;;
        stop) stop_parts $parts ;;
        kill) for part in $parts; do stop_part "$part" KILL; done ;;
      esac ;;
    nats-leader) [ $# -eq 1 ] || fail "nats-leader takes a stream name"; cmd_nats_leader "$1" ;;
    kill-nats-leader)
      [ $# -eq 1 ] || fail "kill-nats-leader takes a stream name"
      local leader
      leader=$(cmd_nats_leader "$1")
      stop_part "$leader" KILL >&2
      echo "$leader" ;;
    help | -h | --help) usage ;;
    *) usage >&2; exit 2 ;;
  esac
}

main "$@"
