#!/usr/bin/env bash
# A ClickHouse server of your own for --sink, `report --from` and the sink's bench
# (docs/fleet.md, docs/bench.md "The sink"): Debian's clickhouse-server run by you, with
# its own config and data in DIR, on loopback ports picked free, deploy/clickhouse/schema.sql
# loaded; never the packaged system service.
#
#   tools/clickhouse_local.sh start DIR   start it; prints the --sink URL (user default)
#   tools/clickhouse_local.sh stop DIR    stop it (the data stays in DIR)
set -eu
cmd=${1:-}
dir=${2:-}
if [[ $cmd != start && $cmd != stop ]] || [[ -z $dir ]]; then
	echo "usage: $0 start|stop DIR" >&2
	exit 2
fi
if [[ $cmd == stop ]]; then
	[[ -f $dir/pid ]] && kill "$(cat "$dir/pid")" 2>/dev/null
	rm -f "$dir/pid"
	exit 0
fi
here=$(cd "$(dirname "$0")/.." && pwd)
port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
mkdir -p "$dir/log" "$dir/data" "$dir/tmp"
dir=$(cd "$dir" && pwd)
http=$(port)
tcp=$(port)
cat >"$dir/users.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <profiles><default></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip></networks>
    <profile>default</profile><quota>default</quota></default></users>
  <quotas><default></default></quotas>
</yandex>
XML
cat >"$dir/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$dir/log/server.log</log><errorlog>$dir/log/error.log</errorlog></logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>$http</http_port>
  <tcp_port>$tcp</tcp_port>
  <path>$dir/data/</path>
  <tmp_path>$dir/tmp/</tmp_path>
  <users_config>$dir/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>268435456</mark_cache_size>
</yandex>
XML
clickhouse-server --config-file="$dir/config.xml" >"$dir/log/stdout" 2>&1 &
echo $! >"$dir/pid"
for ((i = 0; i < 100; i++)); do
	[[ $(curl -s "http://127.0.0.1:$http/ping" 2>/dev/null) == Ok. ]] && break
	sleep 0.1
done
sed -e 's/--.*$//' "$here/deploy/clickhouse/schema.sql" | tr '\n' ' ' | tr ';' '\n' |
	while read -r st; do
		[[ -n $st ]] && curl -sf "http://127.0.0.1:$http/" --data-binary "$st" >/dev/null
	done
echo "clickhouse://127.0.0.1:$http/iotracer.requests"
