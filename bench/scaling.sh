#!/usr/bin/env bash
# Throughput of quince-server with 1 and 2 worker threads (and redis-server for reference)
# as the load moves from one redis-benchmark process to several concurrent ones.
#
# No CPU pinning: servers and load generators share all cores. Each server configuration
# runs alone (started, measured, stopped); for each test, pipeline depth and generator count
# G, G redis-benchmark processes run at once, each with CONNECTIONS/G connections and
# REQUESTS/G requests, so the total load is the same; the aggregate is the sum of their
# requests per second.
#
# Usage: bench/scaling.sh [-t set,get] [-n 200000] [-c 50] [-P "1 16"] [-g "1 2"] [-T "1 2"] [-r ROUNDS] [-o DIR]
#   -t  redis-benchmark tests (comma separated)             default: set,get
#       and script tests: eval, evalsha, script_3cmds, script_loop, fcall, script_heavy (bench/lib.sh)
#   -n  requests per measurement, split over the generators default: 200000
#   -c  connections per measurement, split likewise         default: 50
#   -P  pipeline depths, space separated                    default: "1 16"
#   -g  concurrent generator counts, space separated        default: "1 2"
#   -T  quince --threads values, space separated            default: "1 2"
#   -r  rounds per measurement (best is kept)               default: 1
#   -o  report directory, or "none" for no files            default: bench/results
# Environment: QUINCE_BIN (default target/release/quince-server, built first unless
# NO_BUILD=1; a QUINCE_BIN given explicitly is never built), SERVER_ARGS (given to both
# servers), NO_REDIS=1 to leave redis-server out, KEY_SPREAD=request to give script tests a
# random hash tag per request instead of one per generator.
# Output: a Markdown table on stdout (aggregate rps per server configuration and the
# ratios of the last quince configuration to the first and to redis-server); unless -o none
# also DIR/YYYY-MM-DD-HHMM-scaling.md, a chart next to it (.svg) and DIR/LATEST.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
CMDLINE=$(command_line "QUINCE_BIN NO_BUILD SERVER_ARGS NO_REDIS KEY_SPREAD" "$0" "$@")

TESTS=set,get; REQUESTS=200000; CONNECTIONS=50; PIPELINES="1 16"; GENERATORS="1 2"; THREADS="1 2"; ROUNDS=1; OUT=""
while getopts "t:n:c:P:g:T:r:o:h" opt; do
  case $opt in
    t) TESTS=$OPTARG ;; n) REQUESTS=$OPTARG ;; c) CONNECTIONS=$OPTARG ;; P) PIPELINES=$OPTARG ;;
    g) GENERATORS=$OPTARG ;; T) THREADS=$OPTARG ;; r) ROUNDS=$OPTARG ;; o) OUT=$OPTARG ;;
    *) usage ;;
  esac
done
need_tools redis-server redis-benchmark redis-cli python3
prepare_quince_and_out
read -r -a EXTRA <<< "${SERVER_ARGS:-}"

CONFIGS=()
for t in $THREADS; do CONFIGS+=("quince-t$t"); done
if [ "${NO_REDIS:-0}" != 1 ]; then CONFIGS+=(redis); fi

WORK=$(mktemp -d)
SPID=""; SDIR=""
stop_server() {
  if [ -n "$SPID" ]; then kill "$SPID" 2>/dev/null || true; wait "$SPID" 2>/dev/null || true; fi
  SPID=""
  if [ -n "$SDIR" ]; then rm -rf "$SDIR"; fi
  SDIR=""
}
trap 'stop_server; rm -rf "$WORK"' EXIT
trap 'exit 130' INT; trap 'exit 143' TERM

# start_server CONFIG: sets PORT and SPID.
start_server() {
  PORT=$(free_port); SDIR=$(mktemp -d)
  case $1 in
    quince-t*) "$QUINCE_BIN" --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no --threads "${1#quince-t}" \
                 --dir "$SDIR" "${EXTRA[@]}" >"$WORK/server.log" 2>&1 & ;;
    redis) redis-server --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no \
             --dir "$SDIR" "${EXTRA[@]}" >"$WORK/server.log" 2>&1 & ;;
  esac
  SPID=$!
  wait_ready "$PORT"
  load_scripts_for "$TESTS" "-p $PORT"
}

# measure TEST PIPELINE G -> "sum_of_rps spread": the generators' rps summed (0 if one
# failed), and the longest generator's run time over the shortest's (they start together, so
# a spread near 1 means they overlapped; a large one means the sum overstates).
measure() {
  local test=$1 pipeline=$2 g=$3 i pids=()
  for i in $(seq "$g"); do
    # Script tests: each generator's keys share a hash tag of their own, so the generators'
    # scripts touch disjoint keys (one shard each); with KEY_SPREAD=request each request's
    # key is its own hash tag (a random shard), so concurrent scripts rarely share a shard.
    if [ "${KEY_SPREAD:-generator}" = request ]; then
      script_command "$test" "{key:__rand_int__}"
    else
      script_command "$test" "key:{g$i}:__rand_int__"
    fi
    if [ ${#BENCH_CMD[@]} -eq 0 ]; then BENCH_CMD=(-t "$test"); else BENCH_CMD=(-r 100000 "${BENCH_CMD[@]}"); fi
    redis-benchmark -p "$PORT" -n $((REQUESTS / g)) -c $((CONNECTIONS / g)) -P "$pipeline" --csv "${BENCH_CMD[@]}" \
      > "$WORK/gen.$i" 2>/dev/null &
    pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i" || true; done
  for i in $(seq "$g"); do tail -n 1 "$WORK/gen.$i"; done \
    | tr -d '"' | awk -F, -v n=$((REQUESTS / g)) '
      { if ($2 + 0 == 0) { bad = 1; next } s += $2; d = n / $2; if (NR == 1 || d > hi) hi = d; if (NR == 1 || d < lo) lo = d }
      END { if (bad) print "0 0"; else printf "%.0f %.2f\n", s, hi / lo }'
}

REDIS_VERSION=$(redis-server --version | awk '{print $3}' | sed 's/^v=//')
RESULTS=$WORK/results  # "config test pipeline g rps spread"
: > "$RESULTS"
for config in "${CONFIGS[@]}"; do
  start_server "$config"
  for pipeline in $PIPELINES; do
    for test in ${TESTS//,/ }; do
      for g in $GENERATORS; do
        best=0; best_spread=0
        for _ in $(seq "$ROUNDS"); do
          read -r rps spread <<<"$(measure "$test" "$pipeline" "$g")"
          if [ "$rps" -gt "$best" ]; then best=$rps; best_spread=$spread; fi
        done
        echo "$config $test $pipeline $g $best $best_spread" >> "$RESULTS"
        echo "  $config $test P=$pipeline generators=$g: $best rps (longest/shortest generator run: $best_spread)" >&2
      done
    done
  done
  stop_server
done

SETTINGS="requests=$REQUESTS and connections=$CONNECTIONS per measurement, split over the generators; no CPU pinning ($(nproc) cpus); best of $ROUNDS round(s)"
if [ -n "${SERVER_ARGS:-}" ]; then SETTINGS="$SETTINGS, SERVER_ARGS: $SERVER_ARGS"; fi
TABLE=$WORK/table.md; TSV=$WORK/chart.tsv
first=${CONFIGS[0]}; last=${CONFIGS[0]}
for c in "${CONFIGS[@]}"; do case $c in quince-t*) last=$c ;; esac; done
python3 - "$RESULTS" "$TABLE" "$TSV" "$first" "$last" "$PIPELINES" "${TESTS//,/ }" "$GENERATORS" "$CONNECTIONS" "${CONFIGS[@]}" <<'EOF'
import sys
results, table, tsv, first, last, pipelines, tests, gens, conns, *configs = sys.argv[1:]
rps, skew = {}, []
for line in open(results):
    c, t, p, g, r, spread = line.split()
    rps[(c, t, p, g)] = int(r)
    if int(r) and float(spread) > 1.15:
        skew.append(f"{c} {t} P={p} G={g} ({spread})")
def name(c):
    return f"quince --threads {c[8:]}" if c.startswith("quince-t") else "redis-server"
def ratio(a, b):
    return f"{a / b:.2f}" if a and b else "n/a"
ratios = []
if last != first:
    ratios.append((last, first))
if "redis" in configs:
    ratios.append((last, "redis"))
with open(table, "w") as out, open(tsv, "w") as chart:
    head = ["test", "P", "generators x connections"] + [f"{name(c)} rps" for c in configs] + [f"{name(a)} / {name(b)}" for a, b in ratios]
    out.write("| " + " | ".join(head) + " |\n")
    out.write("|" + "---|" * len(head) + "\n")
    chart.write("\t".join(["measurement"] + [name(c) for c in configs]) + "\n")
    for p in pipelines.split():
        chart.write(f"## no pipelining (P=1)\n" if p == "1" else f"## pipeline {p} (P={p})\n")
        for t in tests.split():
            for g in gens.split():
                vals = [rps.get((c, t, p, g), 0) for c in configs]
                row = [t, p, f"{g} x {int(conns) // int(g)}"]
                row += [str(v) if v else "error" for v in vals]
                row += [ratio(rps.get((a, t, p, g), 0), rps.get((b, t, p, g), 0)) for a, b in ratios]
                out.write("| " + " | ".join(row) + " |\n")
                chart.write("\t".join([f"{t}, {g} generator{'s' if g != '1' else ''}"] + [str(v) if v else "n/a" for v in vals]) + "\n")
    if skew:
        out.write("\nThe generators' run times differed by more than 15% (longest/shortest in brackets), so their summed rps overstates the aggregate, in: " + ", ".join(skew) + ".\n")
EOF
echo "# quince scaling with threads and load generators, vs redis-server ($REDIS_VERSION)"
echo
echo "$SETTINGS"
echo
cat "$TABLE"

[ "$OUT" != none ] || exit 0
base=$(report_base "$OUT" scaling)
python3 "$root/bench/chart.py" -o "$OUT/$base.svg" --format si --per-section \
  --title "Aggregate requests per second: quince threads vs redis-server $REDIS_VERSION" \
  --subtitle "$SETTINGS" \
  --note "G generators: G redis-benchmark processes at once, each with 1/G of the connections and requests; their rps summed." \
  "$TSV"
{
  echo "# quince scaling with threads and load generators, vs redis-server $REDIS_VERSION"
  echo
  machine_facts "$QUINCE_BIN"
  echo
  echo "Command: \`$CMDLINE\`"
  echo
  echo "Settings: $SETTINGS. tests=$TESTS pipelines=\"$PIPELINES\" generators=\"$GENERATORS\" quince threads=\"$THREADS\"."
  echo "Each server configuration runs alone. With G generators, G redis-benchmark processes run at once, each with $CONNECTIONS/G connections and $REQUESTS/G requests; the table gives the sum of their requests per second."
  echo
  cat "$TABLE"
  echo
  echo "![aggregate requests per second]($base.svg)"
} > "$OUT/$base.md"
write_latest "$OUT"
echo "report: $OUT/$base.md, chart: $OUT/$base.svg" >&2
