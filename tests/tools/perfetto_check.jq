# perfetto_check.jq: check a Chrome trace-event JSON file (the format Perfetto
# and chrome://tracing open) against the format's rules, independently of the
# code that wrote it. Prints one line per problem found, nothing when it is
# well formed:
#   jq -r -f tests/tools/perfetto_check.jq trace.json
# Rules checked:
#   - the file is {"traceEvents": [...]} and every event has ph, pid, tid
#   - every complete event (ph "X") has a name, ts and dur >= 0
#   - on each (pid, tid) track the X events nest properly: an event that
#     starts inside another ends inside it too
#   - every flow start (ph "s") id has exactly one flow end (ph "f") and
#     vice versa, and flow ends bind to the enclosing slice (bp "e")
#   - every flow event (s and f) has a slice (X) on its pid and tid that starts at
#     its ts with its cat (Chrome DevTools' engine binds a flow event to the slice
#     of the same ts, pid, tid and cat; the format, to the one enclosing its ts)
#   - a flow named "dirtied" (a buffered write -> the writeback request carrying its pages)
#     starts at a write syscall's slice (write, pwrite64, writev, pwritev, pwritev2) and
#     ends at a block write's slice on the "block devices" process
#   - the wall-clock anchor: metadata.startTime is an ISO 8601 UTC time
#   - every pid with X events has a process_name metadata event (ph "M"),
#     every (pid, tid) with X events a thread_name, each with args.name
# The slices' start index is built with reduce and `=`, not INDEX: jq 1.6's INDEX
# copies the object for every row (50 s for a 40,000-slice trace, 0.6 s this way).
# Times are compared in integer ns (ts and dur are microseconds with ns
# decimals), so rounding never makes a child end past its parent.

def ns: . * 1000 | round;

# Drop the stack's events that ended at or before $s (only from the top).
def popended($s):
  if length > 0 and .[-1].e <= $s then .[:-1] | popended($s) else . end;

def nesting:
  group_by([.pid, .tid])[]
  | sort_by([.s, -.e])
  | reduce .[] as $i ({st: [], errs: []};
      .st |= popended($i.s)
      | if (.st | length) > 0 and $i.e > .st[-1].e then
          .errs += ["overlap on pid \($i.pid) tid \($i.tid): \"\($i.name)\" [\($i.s),\($i.e)] "
                    + "crosses \"\(.st[-1].name)\" [\(.st[-1].s),\(.st[-1].e)] ns"]
        else . end
      | .st += [$i])
  | .errs[];

if (type != "object") or ((.traceEvents | type) != "array") then
  "not a trace: expected an object with a traceEvents array"
else
  .traceEvents as $ev
  | ($ev | map(select(.ph == "X"))) as $x
  | ($ev | map(select(.ph == "M"))) as $m
  | (
      ($ev[] | select((.ph | type) != "string" or (.pid | type) != "number"
                      or (.tid | type) != "number")
             | "event without ph, pid or tid: \(tojson)"),
      ($x[] | select((.name | type) != "string" or (.ts | type) != "number"
                     or (.dur | type) != "number" or .dur < 0)
            | "X event without name or ts, or with dur < 0: \(tojson)"),
      ($x | map(select((.ts | type) == "number" and (.dur | type) == "number" and .dur >= 0)
                | {pid, tid, name, s: (.ts | ns), e: ((.ts | ns) + (.dur | ns))})
          | nesting),
      ($ev | map(select(.ph == "s" or .ph == "f")) | group_by(.id)[]
           | select((map(select(.ph == "s")) | length) != 1
                    or (map(select(.ph == "f")) | length) != 1)
           | "flow id \(.[0].id): \(map(select(.ph == "s")) | length) starts, "
             + "\(map(select(.ph == "f")) | length) ends"),
      ($ev[] | select(.ph == "f" and .bp != "e") | "flow end without bp \"e\": \(tojson)"),
      ((reduce $x[] as $e ({}; .["\($e.pid) \($e.tid) \($e.ts | ns) \($e.cat)"] = true)) as $starts
       | $ev[] | select((.ph == "s" or .ph == "f") and (.ts | type) == "number")
       | select($starts["\(.pid) \(.tid) \(.ts | ns) \(.cat)"] == null)
       | "flow \(.ph) id \(.id) binds to no slice of its cat starting at its ts: \(tojson)"),
      ((reduce ($x[] | select(.cat == "io")) as $e ({};
          .["\($e.pid) \($e.tid) \($e.ts | ns)"] = $e.name)) as $io
       | ($ev | map(select(.ph == "M" and .name == "process_name"
                           and .args.name == "block devices") | .pid) | first) as $devpid
       | $ev[] | select((.ph == "s" or .ph == "f") and .name == "dirtied"
                        and (.ts | type) == "number")
       | ($io["\(.pid) \(.tid) \(.ts | ns)"] // "") as $at
       | select(if .ph == "s" then ($at | test("^(write|pwrite64|writev|pwritev|pwritev2) ") | not)
                else (.pid != $devpid or ($at | test("^write ") | not)) end)
       | "dirtied flow \(.ph) id \(.id) at \"\($at)\", not a "
         + (if .ph == "s" then "write syscall" else "block write" end) + ": \(tojson)"),
      (.metadata.startTime | select(type != "string"
                                    or (test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$") | not))
       | "no wall-clock anchor: metadata.startTime is \(tojson)"),
      (($m | map(select(.name == "process_name" and (.args.name | type) == "string")
                 | .pid) | unique) as $pn
       | $x | map(.pid) | unique | .[] | select(. as $p | $pn | index([$p]) | not)
       | "pid \(.) has slices but no process_name"),
      (($m | map(select(.name == "thread_name" and (.args.name | type) == "string")
                 | [.pid, .tid]) | unique) as $tn
       | $x | map([.pid, .tid]) | unique | .[] | select(. as $t | $tn | index([$t]) | not)
       | "pid \(.[0]) tid \(.[1]) has slices but no thread_name")
    )
end
