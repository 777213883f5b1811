#!/bin/sh
# iotracer with --sink, for `iotracer bench --tracers ...,iotracer-nojson@tools/sink_tracer.sh`
# (docs/bench.md, "The sink"): the bench's own arguments (-q --no-live -d DEV ...) plus
# --sink $IOTRACER_SINK (tools/clickhouse_local.sh prints one), spilling into a temporary
# directory. exec: the bench measures this process (the tracer) itself.
#   IOTRACER_BIN   the iotracer to run (default: ./iotracer next to tools/)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
: "${IOTRACER_SINK:?set IOTRACER_SINK to a clickhouse:// URL (tools/clickhouse_local.sh)}"
spill=$(mktemp -d "${TMPDIR:-/tmp}/iotracer-sink-spill.XXXXXX")
exec "${IOTRACER_BIN:-$here/iotracer}" --sink "$IOTRACER_SINK" --sink-spill "$spill" "$@"
