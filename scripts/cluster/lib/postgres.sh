# PostgreSQL 15 with a database named sightline, reachable over loopback without a password.
# initdb refuses to run as root, so as root the server belongs to the postgres user that
# Debian's package creates. Durability settings are off: this is a test cluster, and a
# killed server process still leaves its writes in the operating system's cache.

PG_DATABASE=sightline

as_pg_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start_postgres() {
  local dir
  dir=$(part_dir postgres)
  mkdir -p "$dir"
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres:postgres "$dir"
    as_pg_owner test -w "$dir" ||
      fail "the postgres user cannot write $dir: put the cluster where it can (SIGHTLINE_CLUSTER_DIR=/var/tmp/sightline-cluster)"
  fi
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    as_pg_owner "$PG_BIN/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync \
      > "$dir/initdb.log" 2>&1 || { tail -n 25 "$dir/initdb.log" >&2; fail "initdb failed"; }
  fi
  as_pg_owner "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o "$(postgres_options "$dir")" start \
    > "$dir/pg_ctl.log" 2>&1 || { print_log_tail postgres; fail "postgres did not start"; }
  if [ -z "$(pg_sql "SELECT 1 FROM pg_database WHERE datname = '$PG_DATABASE'")" ]; then
    pg_sql "CREATE DATABASE $PG_DATABASE" > /dev/null
  fi
}

postgres_options() {
  echo "-p $(port postgres) -c listen_addresses=127.0.0.1 -c unix_socket_directories=$1" \
    "-c max_connections=200 -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
}

pg_sql() {
  "$PG_BIN/psql" -h 127.0.0.1 -p "$(port postgres)" -U postgres -d postgres -v ON_ERROR_STOP=1 -qAtc "$1"
}

ready_postgres() { "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$(port postgres)" -U postgres -d postgres; }

# SIGINT is PostgreSQL's fast shutdown: open sessions are ended, then it stops cleanly.
stop_signal_postgres() { echo INT; }
