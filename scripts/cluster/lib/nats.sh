# Three NATS servers with JetStream, clustered over loopback routes, so that streams can keep
# three replicas and survive the loss of one node. Each also serves its monitoring endpoint,
# which tells readiness and which node leads a stream.

NATS_NODES=(nats-1 nats-2 nats-3)

write_nats_config() {
  local part=$1 dir other routes=()
  dir=$(part_dir "$part")
  for other in "${NATS_NODES[@]}"; do
    [ "$other" = "$part" ] || routes+=("\"nats-route://127.0.0.1:$(port "$other" route)\"")
  done
  cat > "$dir/nats.conf" <<EOF
server_name: "$part"
listen: "127.0.0.1:$(port "$part" client)"
http: "127.0.0.1:$(port "$part" monitor)"
jetstream {
  store_dir: "$dir"
  max_memory_store: 268435456
  max_file_store: 10737418240
}
cluster {
  name: "sightline"
  listen: "127.0.0.1:$(port "$part" route)"
  routes: [$(IFS=,; echo "${routes[*]}")]
}
EOF
}

start_nats() {
  local part=$1 dir
  dir=$(part_dir "$part")
  write_nats_config "$part"
  launch "$part" "$dir/server.log" nats-server -c "$dir/nats.conf"
}

# Ready when the cluster has elected a metadata leader and JetStream is healthy on the node,
# so that a stream can be created right away. (Asked in that order: each failed health check
# leaves a warning in the server's log.)
ready_nats() {
  local monitor
  monitor=$(port "$1" monitor)
  [[ $(http_get "$monitor" /jsz) =~ \"leader\":\ *\"nats-[0-9]\" ]] &&
    [[ $(http_get "$monitor" /healthz) =~ \"status\":\ *\"ok\" ]]
}

stop_signal_nats() { echo TERM; }

# The node that leads STREAM (in the global account), as nats-N, or nothing.
nats_stream_leader() {
  local stream=$1 node leader
  for node in "${NATS_NODES[@]}"; do
    [ -n "$(part_pid "$node")" ] || continue
    leader=$(http_get "$(port "$node" monitor)" "/jsz?accounts=true&streams=true" | node -e '
      const stream = process.argv[1];
      let text = "";
      process.stdin.on("data", (c) => (text += c)).on("end", () => {
        let info;
        try { info = JSON.parse(text); } catch { return; }
        for (const account of info.account_details ?? [])
          for (const s of account.stream_detail ?? [])
            if (s.name === stream && s.cluster?.leader) process.stdout.write(s.cluster.leader);
      });' "$stream")
    if [ -n "$leader" ]; then
      echo "$leader"
      return 0
    fi
  done
}
