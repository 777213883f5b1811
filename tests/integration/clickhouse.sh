# shellcheck shell=bash
# shellcheck disable=SC2034 # globals set here are read by the test scripts
# ClickHouse servers of the tests' own (sourced after lib.sh by test_fleet.sh and
# test_sink_faults.sh; docs/testing.md): Debian's clickhouse-server run as a child of the
# test, with its own config, data directory and free loopback ports, registered with the
# exit trap like any background process. The packaged system service is never touched.
#
#   ch_start NAME [SHARD_TCP_PORTS...]  start server NAME (CH_HTTP[NAME], CH_TCP[NAME],
#                     CH_PID[NAME]); with ports: a cluster "iotracer" of one shard each
#   ch_https NAME     the same server NAME also on HTTPS (CH_HTTPS[NAME], CH_CA: its
#                     self-signed certificate); call before ch_start
#   ch_q NAME SQL     one statement over HTTP as user default (stdout: the answer)
#   ch_ddl NAME FILE  every statement of an SQL file (deploy/clickhouse/*.sql)
#   ch_kill NAME / ch_restart NAME / ch_signal NAME SIG
# The daemons' user is "iotracer", its password in CH_PWFILE (0600).

declare -A CH_HTTP CH_TCP CH_PID CH_DIR CH_HTTPS
CH_PASSWORD=it-$RANDOM-$RANDOM
CH_SERVER=$(command -v clickhouse-server || echo /usr/sbin/clickhouse-server)

# ch_require: skip everything when the server is not installed.
ch_require() {
	[[ -x $CH_SERVER ]] || skip_all "clickhouse-server not installed (make deps-test)"
	CH_PWFILE=$IT_TMP/ch.password
	(umask 077 && printf '%s\n' "$CH_PASSWORD" >"$CH_PWFILE")
}

# The users: default (no password, loopback: the test's own queries) and iotracer.
_ch_users() {
	local sha
	sha=$(printf '%s' "$CH_PASSWORD" | sha256sum | cut -d' ' -f1)
	cat <<EOF
<?xml version="1.0"?>
<yandex>
  <profiles><default></default></profiles>
  <users>
    <default><password></password><networks><ip>127.0.0.1</ip></networks>
      <profile>default</profile><quota>default</quota></default>
    <iotracer><password_sha256_hex>$sha</password_sha256_hex><networks><ip>127.0.0.1</ip></networks>
      <profile>default</profile><quota>default</quota></iotracer>
  </users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors>
    <result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time>
  </interval></default></quotas>
</yandex>
EOF
}

# _ch_config NAME DIR SHARDS...: the server's config.xml.
_ch_config() {
	local name=$1 dir=$2 p
	shift 2
	cat <<EOF
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$dir/log/server.log</log>
    <errorlog>$dir/log/error.log</errorlog><size>10M</size><count>1</count></logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>${CH_HTTP[$name]}</http_port>
  <tcp_port>${CH_TCP[$name]}</tcp_port>
  <path>$dir/data/</path>
  <tmp_path>$dir/tmp/</tmp_path>
  <user_files_path>$dir/user_files/</user_files_path>
  <format_schema_path>$dir/format_schemas/</format_schema_path>
  <users_config>$dir/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <max_concurrent_queries>50</max_concurrent_queries>
EOF
	if [[ -n ${CH_HTTPS[$name]:-} ]]; then
		cat <<EOF
  <https_port>${CH_HTTPS[$name]}</https_port>
  <openSSL><server><certificateFile>$dir/server.crt</certificateFile>
    <privateKeyFile>$dir/server.key</privateKeyFile><verificationMode>none</verificationMode>
    <cacheSessions>true</cacheSessions><disableProtocols>sslv2,sslv3</disableProtocols>
  </server></openSSL>
EOF
	fi
	if (($# > 0)); then
		echo "  <remote_servers><iotracer>"
		for p in "$@"; do
			echo "    <shard><replica><host>127.0.0.1</host><port>$p</port></replica></shard>"
		done
		echo "  </iotracer></remote_servers>"
	fi
	echo "</yandex>"
}

# ch_https NAME: a self-signed certificate for 127.0.0.1 and an HTTPS port (before ch_start).
ch_https() {
	local name=$1 dir=$IT_TMP/ch-$1
	mkdir -p "$dir"
	CH_HTTPS[$name]=$(free_port) || return 1
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj "/CN=127.0.0.1" \
		-addext "subjectAltName=IP:127.0.0.1" -keyout "$dir/server.key" \
		-out "$dir/server.crt" >/dev/null 2>&1 || return 1
	CH_CA=$dir/server.crt
}

# ch_ports NAME: pick its ports (before ch_start, so that a cluster can name them).
ch_ports() {
	local name=$1
	[[ -n ${CH_HTTP[$name]:-} ]] && return 0
	CH_HTTP[$name]=$(free_port) || return 1
	CH_TCP[$name]=$(free_port) || return 1
	[[ ${CH_TCP[$name]} != "${CH_HTTP[$name]}" ]] || CH_TCP[$name]=$((CH_TCP[$name] + 1))
}

_ch_launch() {
	local name=$1 dir=${CH_DIR[$1]} i
	"$CH_SERVER" --config-file="$dir/config.xml" >"$dir/log/stdout" 2>&1 &
	CH_PID[$name]=$!
	_it_register pids "${CH_PID[$name]}"
	for ((i = 0; i < 150; i++)); do
		[[ $(curl -s --max-time 1 "http://127.0.0.1:${CH_HTTP[$name]}/ping" 2>/dev/null) == Ok. ]] &&
			return 0
		proc_alive "${CH_PID[$name]}" || break
		sleep 0.1
	done
	note "clickhouse $name did not start: $(tail -n 3 "$dir/log/error.log" "$dir/log/stdout" 2>/dev/null | tr '\n' ' ')"
	return 1
}

ch_start() {
	local name=$1 dir=$IT_TMP/ch-$1
	shift
	ch_ports "$name" || return 1
	CH_DIR[$name]=$dir
	mkdir -p "$dir/log" "$dir/data" "$dir/tmp"
	_ch_users >"$dir/users.xml"
	_ch_config "$name" "$dir" "$@" >"$dir/config.xml"
	_ch_launch "$name"
}

ch_q() {
	curl -sS --max-time 60 "http://127.0.0.1:${CH_HTTP[$1]}/" --data-binary "$2"
}

# ch_ddl NAME FILE: the file's statements, one POST each (comments cut).
ch_ddl() {
	local st
	while IFS= read -r -d ';' st; do
		[[ -n ${st//[[:space:]]/} ]] || continue
		if ! ch_q "$1" "$st" >"$IT_TMP/ch.ddl.out" 2>&1 || grep -q '^Code:' "$IT_TMP/ch.ddl.out"; then
			note "ch_ddl $1 $2: $(head -c 300 "$IT_TMP/ch.ddl.out")"
			return 1
		fi
	done < <(sed -e 's/--.*$//' "$2")
}

ch_kill() {
	kill -KILL "${CH_PID[$1]}" 2>/dev/null
	wait "${CH_PID[$1]}" 2>/dev/null
	_it_unregister pids "${CH_PID[$1]}"
}

ch_restart() { _ch_launch "$1"; }
ch_signal() { kill "-$2" "${CH_PID[$1]}"; }

# ---------------------------------------------------------------- several daemons at once
# tr_start NAME ARGS...: iotracer -j $IT_TMP/NAME.json --no-live -q ARGS in the background
#   (TR_PID[NAME], TR_OUT[NAME], TR_ERR[NAME], TR_JSON[NAME]), not waiting for it
# tr_attached NAME...: wait until each holds BPF links, unchanged for 1 s (30 s at most);
#   returns 1 (TR_WHY) when one died or did not attach
# tr_stop NAME...: SIGTERM to all, then reap each (30 s at most); TR_RC[NAME]
declare -A TR_PID TR_OUT TR_ERR TR_JSON TR_RC
tr_start() {
	local n=$1
	shift
	TR_OUT[$n]=$IT_TMP/$n.out TR_ERR[$n]=$IT_TMP/$n.err TR_JSON[$n]=$IT_TMP/$n.json
	"$IOTRACER" -j "${TR_JSON[$n]}" --no-live -q "$@" >"${TR_OUT[$n]}" 2>"${TR_ERR[$n]}" &
	TR_PID[$n]=$!
	_it_register pids "${TR_PID[$n]}"
}

tr_attached() {
	local n i links
	declare -A last stable
	for ((i = 0; i < 150; i++)); do
		local done=1
		for n in "$@"; do
			if ! proc_alive "${TR_PID[$n]}"; then
				TR_WHY="$n exited before attaching: $(head -c 300 "${TR_ERR[$n]}" | tr '\n' ' ')"
				return 1
			fi
			links=$(bpf_link_count "${TR_PID[$n]}")
			if ((links > 0 && links == ${last[$n]:--1})); then
				stable[$n]=$((${stable[$n]:-0} + 1))
			else
				stable[$n]=0
			fi
			last[$n]=$links
			((stable[$n] >= 5)) || done=0
		done
		((done)) && return 0
		sleep 0.2
	done
	TR_WHY="not attached within 30 s: $*"
	return 1
}

tr_stop() {
	local n i
	for n in "$@"; do kill -TERM "${TR_PID[$n]}" 2>/dev/null; done
	for n in "$@"; do
		for ((i = 0; i < 300; i++)); do
			proc_alive "${TR_PID[$n]}" || break
			sleep 0.1
		done
		proc_alive "${TR_PID[$n]}" && kill -KILL "${TR_PID[$n]}" 2>/dev/null
		wait "${TR_PID[$n]}" 2>/dev/null
		TR_RC[$n]=$?
		_it_unregister pids "${TR_PID[$n]}"
	done
}
