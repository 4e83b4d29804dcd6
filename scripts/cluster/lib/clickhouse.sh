# Two ClickHouse servers (Debian's 18.16) forming one cluster of two shards with one replica
# each. Macros name each server's shard and replica, so one ON CLUSTER statement creates a
# Replicated*MergeTree table on both, coordinated through ZooKeeper.

clickhouse_shard_xml() {
  local part=$1
  cat <<EOF
      <shard>
        <internal_replication>true</internal_replication>
        <replica><host>127.0.0.1</host><port>$(port "$part" tcp)</port></replica>
      </shard>
EOF
}

write_clickhouse_config() {
  local part=$1 dir
  dir=$(part_dir "$part")
  mkdir -p "$dir/data" "$dir/tmp" "$dir/user_files" "$dir/log"
  cat > "$dir/config.xml" <<EOF
<?xml version="1.0"?>
<yandex>
  <logger>
    <level>information</level>
    <log>$dir/log/server.log</log>
    <errorlog>$dir/log/server.err.log</errorlog>
    <size>100M</size>
    <count>2</count>
  </logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>$(port "$part" http)</http_port>
  <tcp_port>$(port "$part" tcp)</tcp_port>
  <interserver_http_host>127.0.0.1</interserver_http_host>
  <interserver_http_port>$(port "$part" interserver)</interserver_http_port>
  <max_connections>1024</max_connections>
  <keep_alive_timeout>3</keep_alive_timeout>
  <max_concurrent_queries>100</max_concurrent_queries>
  <mark_cache_size>268435456</mark_cache_size>
  <uncompressed_cache_size>268435456</uncompressed_cache_size>
  <path>$dir/data/</path>
  <tmp_path>$dir/tmp/</tmp_path>
  <user_files_path>$dir/user_files/</user_files_path>
  <users_config>$dir/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mlock_executable>false</mlock_executable>
  <remote_servers>
    <$CLICKHOUSE_CLUSTER>
$(clickhouse_shard_xml clickhouse-1)
$(clickhouse_shard_xml clickhouse-2)
    </$CLICKHOUSE_CLUSTER>
  </remote_servers>
  <zookeeper>
    <node index="1"><host>127.0.0.1</host><port>$(port zookeeper)</port></node>
    <session_timeout_ms>30000</session_timeout_ms>
  </zookeeper>
  <macros>
    <shard>${part#clickhouse-}</shard>
    <replica>$part</replica>
  </macros>
  <distributed_ddl><path>/clickhouse/task_queue/ddl</path></distributed_ddl>
</yandex>
EOF
  cat > "$dir/users.xml" <<EOF
<?xml version="1.0"?>
<yandex>
  <profiles>
    <default>
      <max_memory_usage>4000000000</max_memory_usage>
      <load_balancing>random</load_balancing>
    </default>
  </profiles>
  <users>
    <default>
      <password></password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <quotas>
    <default>
      <interval>
        <duration>3600</duration>
        <queries>0</queries><errors>0</errors><result_rows>0</result_rows>
        <read_rows>0</read_rows><execution_time>0</execution_time>
      </interval>
    </default>
  </quotas>
</yandex>
EOF
}

start_clickhouse() {
  local part=$1 dir
  dir=$(part_dir "$part")
  # Once Replicated tables exist on disk, ClickHouse 18.16 refuses to start without ZooKeeper.
  [ -n "$(part_pid zookeeper)" ] || fail "$part needs ZooKeeper: start zookeeper first"
  write_clickhouse_config "$part"
  launch "$part" "$dir/stdout.log" clickhouse-server --config-file="$dir/config.xml"
}

# Ready when it answers queries and reaches ZooKeeper (which ON CLUSTER DDL goes through).
ready_clickhouse() {
  local http
  http=$(port "$1" http)
  [ "$(http_get "$http" /ping)" = "Ok." ] &&
    [ "$(http_get "$http" '/?query=SELECT%20count()%3E0%20FROM%20system.zookeeper%20WHERE%20path%3D%27%2F%27')" = 1 ]
}

stop_signal_clickhouse() { echo TERM; }
