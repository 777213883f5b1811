#!/usr/bin/env bash
# `iotracer report --heatmap FILE.svg` of a recording of fio's direct 4k reads on a loop
# device, paced over ~3 s so that the picture has many columns.
# Oracles: fio (IO count, clat median), the report's own request count (the text it
# prints), and a real browser (Debian's chromium, headless) drawing the SVG.
#   sum        the cells' counts (data-count of every cell) add up to the report's
#              "N matched the filters", and to fio's IO count (report -p FIO -d loopN)
#   device     one panel, named loopN, whose count is fio's IO count
#   median     the row (log2 latency bucket) holding the heatmap's median request is
#              fio's clat p50 bucket, or a neighbour (fio's clat excludes the syscall entry)
#   columns    the cells span more than 20 time columns (the 3 s of paced IO)
#   browser    chromium --headless --screenshot of the SVG: the centre pixel of every cell
#              has the cell's colour, every empty grid position is white
#              (tests/tools/heatmap_png.py)
#   bad_out    --heatmap into a missing directory: exit 1, one line naming --heatmap
# shellcheck disable=SC2016 # awk/jq programs in single quotes
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin sum device median columns browser bad_out
it_require_all python3
here=$(cd "$(dirname "$0")" && pwd)

NIOS=${HEATMAP_IOS:-3000}
RATE=${HEATMAP_RATE:-1000}

record_paced_reads hm "$NIOS" "$RATE"
ios=$(fio_read_ios "$IT_TMP/fio.json")
p50=$(fio_read_pct "$IT_TMP/fio.json" 50.000000)
note "fio pid $FIO_PID: $ios reads, clat p50 $p50 ns"

svg=$IT_TMP/heatmap.svg
"$IOTRACER" report -n 0 -p "$FIO_PID" -d "$name" --heatmap "$svg" "$rec" \
	>"$IT_TMP/report.txt" 2>"$IT_TMP/report.err" ||
	fail_all "report --heatmap failed: $(head -c 300 "$IT_TMP/report.err")"
matched=$(sed -n 's/.* \([0-9]*\) matched the filters$/\1/p' "$IT_TMP/report.txt")
cells=$(grep -o '<rect class="cell"[^>]*data-count="[0-9]*"' "$svg" | grep -o '[0-9]*"$' | tr -d '"')
sum=$(awk '{ s += $1 } END { print s + 0 }' <<<"$cells")
ncells=$(grep -c . <<<"$cells")
note "report: $matched matched; heatmap: $ncells cells holding $sum requests; $(grep -o 'IO latency heatmap: [^<]*' "$svg")"
check sum "cells hold $sum requests, the report matched ${matched:-?}, fio did $ios" \
	test "$sum" = "${matched:-x}" -a "$sum" = "$ios"

panels=$(grep -o '<g class="device" data-device="[^"]*" data-count="[0-9]*"' "$svg" |
	sed 's/.*data-device="\([^"]*\)" data-count="\([0-9]*\)"/\1=\2/' | tr '\n' ' ')
check device "panels: $panels (want $name=$ios)" test "$panels" = "$name=$ios "

# median: walk the rows from the fastest (row label = lower edge, 2^k ns) until half the
# requests are counted; compare with fio's p50 bucket
krow=$(grep -o '<rect class="cell"[^>]*' "$svg" |
	sed 's/.* y="\([0-9]*\)".*data-count="\([0-9]*\)".*/\1 \2/' |
	awk '{ n[$1] += $2 } END { for (y in n) print y, n[y] }' | sort -k1,1nr |
	awk -v total="$sum" '{ c += $2; i++; if (2 * c >= total) { print i; exit } }')
# krow: rows counted from the fastest row present; its k from the fastest row's label
lo_label=$(grep -o '<text x="[0-9]*" y="[0-9]*" font-size="10" text-anchor="end">[^<]*' "$svg" |
	head -1 | sed 's/.*>//')
klo=$(awk -v l="$lo_label" 'BEGIN { v = l + 0; u = l; sub(/^[0-9.]+/, "", u)
	m = u == "ns" ? 1 : u == "us" ? 1e3 : u == "ms" ? 1e6 : 1e9
	printf "%d\n", int(log(v * m) / log(2) + 0.5) }')
kmed=$((klo + ${krow:-1000} - 1))
kfio=$(awk -v p="$p50" 'BEGIN { printf "%d\n", int(log(p) / log(2)) }')
note "median row: the ${krow:-?}th from the fastest ($lo_label = 2^$klo ns): 2^$kmed ns; fio p50 2^$kfio ns"
check median "heatmap median in 2^$kmed ns, fio p50 $p50 ns in 2^$kfio" \
	test $((kmed - kfio)) -ge -1 -a $((kmed - kfio)) -le 1

cols=$(grep -o '<rect class="cell" x="[0-9]*"' "$svg" | sort -u | wc -l)
check columns "cells in $cols columns" test "$cols" -gt 20

browser=""
for b in chromium chromium-browser; do command -v "$b" >/dev/null && browser=$b && break; done
if [[ -z $browser ]]; then
	skip browser "chromium not installed (make test-deps)"
else
	read -r w h < <(sed -n 's/.*<svg [^>]*width="\([0-9]*\)" height="\([0-9]*\)".*/\1 \2/p' "$svg")
	png=$IT_TMP/heatmap.png
	# its own profile in the temp dir; --no-sandbox: root has no user namespace sandbox
	timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$IT_TMP/chromium" --force-device-scale-factor=1 \
		--window-size="$w,$h" --screenshot="$png" "file://$svg" >"$IT_TMP/chromium.log" 2>&1
	out=$(/usr/bin/python3 "$here/../tools/heatmap_png.py" "$svg" "$png" 2>&1)
	rc=$?
	note "chromium ($w x $h): $out"
	check browser "$out $(tail -c 200 "$IT_TMP/chromium.log")" test "$rc" -eq 0
fi

"$IOTRACER" report --heatmap "$IT_TMP/no/such/dir.svg" "$rec" >/dev/null 2>"$IT_TMP/bad.err"
rc=$?
err=$(cat "$IT_TMP/bad.err")
check bad_out "exit $rc, stderr: $err" \
	test "$rc" = 1 -a "$(wc -l <"$IT_TMP/bad.err")" = 1 -a "${err#*--heatmap}" != "$err"

it_end
