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
# The SVG's text as chromium lays it out (the SVG inline in a page, margin 0, whose script
# lists each <text>'s box and content, read back with --dump-dom):
#   text_fit   every text lies inside the picture's width (the title was clipped at 640 px)
#   legend     the legend's counts ("≥N") are all different and rise, the first ≥1
#   axes       an x axis title naming its unit, "time since the first request (UNIT)", its
#              first tick "0"; a y axis title "latency"; the panel is named "loopN read"
#   stage      --stage q2c: the title names q2c and the cells hold fio's IO count (one
#              block request per read), short only by the tracer's missed completions
#   empty      a heatmap of nothing (-p of no recorded pid): says "no finished request",
#              has no "per column" and no cell
# shellcheck disable=SC2016 # awk/jq programs in single quotes
set -u
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

it_begin sum device median columns browser bad_out text_fit legend axes stage empty
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


# texts SVG OUT: "x0 x1 width text" per <text> of SVG, laid out by chromium (1 when none)
texts() {
	local html=$IT_TMP/texts.html
	{
		echo '<!DOCTYPE html><html><body style="margin:0">'
		sed '1{/^<?xml/d}' "$1"
		cat <<'JS'
<pre id="out"></pre><script>
const s = document.querySelector('svg'), w = +s.getAttribute('width');
let o = '';
for (const t of s.querySelectorAll('text')) {
	const b = t.getBoundingClientRect(); /* after transforms (the rotated axis title) */
	o += 'TE' + 'XT ' + Math.floor(b.left) + ' ' + Math.ceil(b.right) + ' ' + w + ' ' +
		t.textContent + '\n';
}
document.getElementById('out').textContent = o;
</script></body></html>
JS
	} >"$html"
	timeout 60 "$browser" --headless --no-sandbox --disable-gpu --user-data-dir="$IT_TMP/chromium" \
		--dump-dom "file://$html" 2>>"$IT_TMP/chromium.log" | grep -o 'TEXT .*' | cut -c6- >"$2"
	[[ -s $2 ]]
}

"$IOTRACER" report -n 0 -p "$FIO_PID" -d "$name" --stage q2c --heatmap "$IT_TMP/q2c.svg" "$rec" \
	>/dev/null 2>"$IT_TMP/q2c.err"
rc=$?
qsum=$(grep -o '<rect class="cell"[^>]*data-count="[0-9]*"' "$IT_TMP/q2c.svg" 2>/dev/null |
	grep -o '[0-9]*"$' | tr -d '"' | awk '{ s += $1 } END { print s + 0 }')
qt=$(grep -o 'IO latency heatmap: [^<]*' "$IT_TMP/q2c.svg" 2>/dev/null)
# a block request whose completion no program saw has no record (docs/hooks.md): short of
# fio's only by the tracer's missed completions (lib.sh accounted)
missed=x
tracer_summary && missed=$(jq -r '.drops.block.missed // 0' "$SUMMARY")
acc=0
accounted "$qsum" "$ios" "$missed" 0 && acc=1
check stage "exit $rc, title '$qt', cells $qsum, fio $ios, missed $missed $(head -c 200 "$IT_TMP/q2c.err")" \
	test "$rc" = 0 -a "$acc" = 1 -a "${qt#*q2c}" != "$qt"

if [[ -z $browser ]]; then
	skip_rest "chromium not installed (make test-deps)"
	it_end
fi
t=$IT_TMP/texts.txt
texts "$svg" "$t" || fail_all "chromium laid out no text of $svg: $(tail -c 200 "$IT_TMP/chromium.log")"
note "title: $(head -2 "$t" | cut -d' ' -f4- | tr '\n' '|')"
# and the narrowest picture: one request (one column, the 640 px minimum), its busiest cell 1
"$IOTRACER" report -n 0 -p "$FIO_PID" -d "$name" --json "$IT_TMP/all.json" "$rec" >/dev/null 2>&1
head -n 1 "$IT_TMP/all.json" >"$IT_TMP/one.json"
"$IOTRACER" report -n 0 --heatmap "$IT_TMP/one.svg" "$IT_TMP/one.json" >/dev/null 2>&1
t1=$IT_TMP/texts.one.txt
texts "$IT_TMP/one.svg" "$t1" || fail_all "chromium laid out no text of one.svg"
note "one request: $(head -2 "$t1" | cut -d' ' -f4- | tr '\n' '|')"
out=$(awk '$1 < 0 || $2 > $3 { print FILENAME ": " $0 }' "$t" "$t1")
check text_fit "outside the picture (x0 x1 width text): $(head -3 <<<"$out" | tr '\n' '|')" test -z "$out"
legend_ok() { # FILE: the legend's counts rise strictly from 1
	grep -o '^-*[0-9]* [0-9]* [0-9]* ≥[0-9]*$' "$1" | sed 's/.*≥//' |
		awk 'NR == 1 { ok = $1 == 1 } NR > 1 { ok = ok && $1 + 0 > p } { p = $1 + 0 }
			END { exit !(NR && ok) }'
}
leg=$(grep -o '≥[0-9]*$' "$t" | tr '\n' ' ')
leg1=$(grep -o '≥[0-9]*$' "$t1" | tr '\n' ' ')
lok=0
legend_ok "$t" && legend_ok "$t1" && lok=1
check legend "legend counts: $leg; one request: $leg1" test "$lok" = 1
xt=$(grep -o 'time since the first request ([numn]*s)$' "$t")
tick0=$(awk '$4 == "0" { print; exit }' "$t")
check axes "x title '$xt', tick 0 '$tick0', y title $(grep -c ' latency' "$t"), panel $(grep -c " $name read:" "$t")" \
	test -n "$xt" -a -n "$tick0" -a "$(grep -c ' latency' "$t")" -ge 1 -a "$(grep -c " $name read:" "$t")" = 1

"$IOTRACER" report -n 0 -p 1 --heatmap "$IT_TMP/none.svg" "$rec" >/dev/null 2>&1
rc=$?
texts "$IT_TMP/none.svg" "$IT_TMP/none.txt"
check empty "exit $rc: $(cut -d' ' -f4- "$IT_TMP/none.txt" | tr '\n' '|' | head -c 300)" \
	test "$rc" = 0 -a "$(grep -c 'no finished request' "$IT_TMP/none.txt")" -ge 1 -a \
	"$(grep -c 'per column' "$IT_TMP/none.txt")" = 0 -a "$(grep -c 'class="cell"' "$IT_TMP/none.svg")" = 0
it_end
