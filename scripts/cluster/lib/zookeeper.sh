# ZooKeeper (standalone), which ClickHouse needs for Replicated*MergeTree tables and ON CLUSTER
# DDL. Debian ships no service for it: it runs straight from the jar, whose manifest carries
# its class path.

ZOOKEEPER_JAR=/usr/share/java/zookeeper.jar
# Without a logging backend on the class path ZooKeeper logs nothing; the simple one (from
# libslf4j-java, a dependency of the zookeeper package) writes to stderr, i.e. server.log.
SLF4J_SIMPLE_JAR=/usr/share/java/slf4j-simple.jar

start_zookeeper() {
  local dir
  dir=$(part_dir zookeeper)
  mkdir -p "$dir/data"
  cat > "$dir/zoo.cfg" <<EOF
tickTime=2000
dataDir=$dir/data
clientPort=$(port zookeeper)
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr,mntr
autopurge.snapRetainCount=3
autopurge.purgeInterval=1
EOF
  command -v java >/dev/null || fail "java is missing (the zookeeper package should have brought it)"
  local classpath=$ZOOKEEPER_JAR
  [ -f "$SLF4J_SIMPLE_JAR" ] && classpath=$classpath:$SLF4J_SIMPLE_JAR
  launch zookeeper "$dir/server.log" java -Xmx256m -cp "$classpath" \
    org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/zoo.cfg"
}

zookeeper_says() {
  timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1; echo "$2" >&3; cat <&3' _ "$(port zookeeper)" "$1" 2>/dev/null
}

# `ruok` answers imok as soon as the process listens, also while it is still loading its data
# (after a restart with a big snapshot), and ClickHouse started then fails its handshake.
# `srvr` reports a Mode only once the server serves.
ready_zookeeper() { zookeeper_says srvr | grep -q '^Mode: '; }

stop_signal_zookeeper() { echo TERM; }
