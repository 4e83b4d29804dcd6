# Shared by every part of the local cluster: where things live, which ports, and how a
# server process is started, recognised, awaited and stopped. Sourced by cluster.sh.

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
CLUSTER_DIR=${SIGHTLINE_CLUSTER_DIR:-$REPO_ROOT/.cluster}
case $CLUSTER_DIR in /*) ;; *) CLUSTER_DIR=$PWD/$CLUSTER_DIR ;; esac
ENV_FILE=$CLUSTER_DIR/env
PORT_BASE_FILE=$CLUSTER_DIR/port-base

PG_BIN=/usr/lib/postgresql/15/bin
CLICKHOUSE_CLUSTER=sightline
PARTS=(zookeeper clickhouse-1 clickhouse-2 postgres nats-1 nats-2 nats-3)

say() { printf '%s\n' "$*"; }
fail() { printf 'cluster: %s\n' "$*" >&2; exit 1; }
now() { date +%s.%N; }
seconds_since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# Every port lies in a block of 100 from one base, fixed when the cluster is first created,
# so that another checkout on the same machine can run its own cluster on the next block
# (SIGHTLINE_CLUSTER_PORT_BASE=27200 …). The block stays below Linux's ephemeral ports.
DEFAULT_PORT_BASE=27100

load_port_base() {
  local wanted=${SIGHTLINE_CLUSTER_PORT_BASE:-}
  if [ -f "$PORT_BASE_FILE" ]; then
    PORT_BASE=$(cat "$PORT_BASE_FILE")
    if [ -n "$wanted" ] && [ "$wanted" != "$PORT_BASE" ]; then
      fail "$CLUSTER_DIR was created with port base $PORT_BASE, not $wanted; run 'down --wipe' to change it"
    fi
  else
    PORT_BASE=${wanted:-$DEFAULT_PORT_BASE}
  fi
  [[ $PORT_BASE =~ ^[0-9]+$ ]] && [ "$PORT_BASE" -ge 1024 ] && [ "$PORT_BASE" -le 32600 ] ||
    fail "the port base must be a number from 1024 to 32600, got '$PORT_BASE'"
}

# port PART [http|tcp|interserver|client|route|monitor]
port() {
  local part=$1 kind=${2:-} n=${1##*-} offset
  case $part:$kind in
    postgres:) offset=1 ;;
    zookeeper:) offset=2 ;;
    clickhouse-*:http) offset=$((10 + n)) ;;
    clickhouse-*:tcp) offset=$((20 + n)) ;;
    clickhouse-*:interserver) offset=$((30 + n)) ;;
    nats-*:client) offset=$((40 + n)) ;;
    nats-*:route) offset=$((50 + n)) ;;
    nats-*:monitor) offset=$((60 + n)) ;;
    *) fail "no port '$kind' for $part" ;;
  esac
  echo $((PORT_BASE + offset))
}

# Every port PART listens on.
part_ports() {
  case $1 in
    clickhouse-*) echo "$(port "$1" http) $(port "$1" tcp) $(port "$1" interserver)" ;;
    nats-*) echo "$(port "$1" client) $(port "$1" route) $(port "$1" monitor)" ;;
    *) port "$1" ;;
  esac
}

part_dir() { echo "$CLUSTER_DIR/$1"; }

is_part() {
  local p
  for p in "${PARTS[@]}"; do [ "$p" = "$1" ] && return 0; done
  return 1
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# GET PATH from 127.0.0.1:PORT with bash alone, so readiness checks need no curl.
http_get() {
  local port=$1 path=$2
  timeout 2 bash -c '
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" "$2" >&3
    cat <&3' _ "$port" "$path" 2>/dev/null | sed '1,/^\r$/d'
}

# A pid counts as ours only while its command line names our cluster folder: a stale pid
# file whose number was reused by another process is not mistaken for a running server.
pid_is_ours() {
  local pid=$1 command_line
  [ -n "$pid" ] || return 1
  command_line=$(tr '\0' ' ' 2>/dev/null < "/proc/$pid/cmdline") || return 1
  [[ $command_line == *"$CLUSTER_DIR/"* ]]
}

# The running pid of PART, or nothing.
part_pid() {
  local part=$1 pid=
  case $part in
    postgres) [ -f "$(part_dir postgres)/data/postmaster.pid" ] && pid=$(head -1 "$(part_dir postgres)/data/postmaster.pid") ;;
    *) [ -f "$(part_dir "$part")/pid" ] && pid=$(cat "$(part_dir "$part")/pid") ;;
  esac
  if pid_is_ours "$pid"; then echo "$pid"; fi
}

# Runs a server detached from the caller's session (so that ending the shell or job that
# ran cluster:up does not end it) and records its pid.
launch() {
  local part=$1 log=$2
  shift 2
  setsid "$@" >>"$log" 2>&1 </dev/null &
  echo $! > "$(part_dir "$part")/pid"
}

# The files whose tail explains a failure of PART.
part_logs() {
  local dir
  dir=$(part_dir "$1")
  case $1 in
    postgres) echo "$dir/server.log" ;;
    clickhouse-*) echo "$dir/stdout.log $dir/log/server.err.log" ;;
    *) echo "$dir/server.log" ;;
  esac
}

print_log_tail() {
  local f
  for f in $(part_logs "$1"); do
    [ -s "$f" ] || continue
    printf -- '--- last lines of %s ---\n' "$f" >&2
    # Without ClickHouse's stack frames, which would push the message itself out of view.
    grep -Ev '^[0-9]+\. /|^$' "$f" | tail -n 20 >&2
  done
}

# wait_ready PART TIMEOUT_SECONDS: polls ready_PART until it answers; fails early when the
# process is gone, and prints the log tail either way.
wait_ready() {
  local part=$1 timeout=$2 started
  started=$(now)
  while :; do
    if "ready_${part%-[0-9]}" "$part"; then return 0; fi
    if [ -z "$(part_pid "$part")" ]; then
      printf 'cluster: %s exited while starting\n' "$part" >&2
      print_log_tail "$part"
      exit 1
    fi
    if awk -v s="$started" -v n="$(now)" -v t="$timeout" 'BEGIN { exit !(n - s > t) }'; then
      printf 'cluster: %s did not answer within %s s\n' "$part" "$timeout" >&2
      print_log_tail "$part"
      exit 1
    fi
    sleep 0.1
  done
}

# A killed process lingers as a zombie until init reaps it, which can take a while: it counts
# as gone.
process_alive() {
  local state
  state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

# stop_pid PART PID SIGNAL: asks the process to stop, waits, and kills it after a minute.
stop_pid() {
  local part=$1 pid=$2 signal=$3 i
  kill "-$signal" "$pid" 2>/dev/null || return 0
  for i in $(seq 1 600); do
    process_alive "$pid" || return 0
    sleep 0.1
  done
  say "$part (pid $pid) did not stop within 60 s: killing it" >&2
  kill -KILL "$pid" 2>/dev/null || true
  while process_alive "$pid"; do sleep 0.1; done
}

# Memory of a process and its children, as proportional set size (shared pages split
# between the processes that map them), in MB.
memory_mb() {
  local pid=$1 total=0 p kb
  for p in $pid $(ps -o pid= --ppid "$pid" 2>/dev/null); do
    kb=$(awk '/^Pss:/ { print $2 }' "/proc/$p/smaps_rollup" 2>/dev/null || true)
    total=$((total + ${kb:-0}))
  done
  echo $((total / 1024))
}
