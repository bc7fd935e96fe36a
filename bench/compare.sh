#!/usr/bin/env bash
# Side-by-side benchmark of quince-server against redis-server, in one run.
#
# Both servers are pinned to the same core (SERVER_CPU, default 0); redis-benchmark runs
# on another (CLIENT_CPU, default 1) against each server alternately, one test at a time,
# so each server's CPU time can be charged to the test that used it (from /proc/PID/stat).
#
# Usage: bench/compare.sh [-t set,get,incr] [-n 200000] [-c 50] [-P "1 16"] [-r ROUNDS] [-o DIR]
#   -t  redis-benchmark tests (comma separated)      default: set,get,incr
#       and script tests: eval, evalsha, script_3cmds, script_loop, fcall, script_heavy (bench/lib.sh)
#   -n  requests per test                            default: 200000
#   -c  parallel connections                         default: 50
#   -P  pipeline depths to run, space separated      default: "1 16"
#   -r  alternating rounds per test (best is kept)   default: 1
#   -o  report directory, or "none" for no files     default: bench/results
# Environment: PEERS, the servers to compare with, as NAME=BINARY separated by spaces
# (default "redis=redis-server"; e.g. "redis=redis-server valkey=/opt/valkey/src/valkey-server":
# every peer runs with the same arguments, pinned like quince, and gets its own ratios),
# QUINCE_BIN (default target/release/quince-server, built first unless
# NO_BUILD=1; a QUINCE_BIN given explicitly is never built), QUINCE_THREADS (default 1, same
# core budget as redis), SERVER_CPU, CLIENT_CPU, SERVER_ARGS for settings given to both
# servers (e.g. "--appendonly yes --appendfsync always"; each server gets its own temporary
# --dir), QUINCE_ARGS for quince only (e.g. "--io-backend epoll"), UNIX_SOCKET=1 to connect
# redis-benchmark through each server's Unix domain socket (`unixsocket`) instead of TCP,
# BENCH_ARGS for more redis-benchmark arguments (e.g. "-r 100000000 -d 100": random keys of
# 100-byte values), PREFILL=N to run N untimed SETs with BENCH_ARGS into each server first
# (e.g. to fill a `maxmemory` so that every measured write evicts: the eviction benchmark).
# After the table: used_memory, RSS and evicted_keys of each server.
# Output: a Markdown table on stdout: rps, p50 and p99 (ms) per server, the quince/redis
# throughput ratio, and server CPU microseconds per request with its quince/redis ratio.
# Unless -o none, also DIR/YYYY-MM-DD-HHMM-compare.md (machine facts, settings, the table),
# DIR/YYYY-MM-DD-HHMM-compare.svg (the two ratios as a bar chart, from bench/chart.py) and
# DIR/LATEST.md linking the newest reports.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
CMDLINE=$(command_line "PEERS QUINCE_BIN NO_BUILD QUINCE_THREADS SERVER_CPU CLIENT_CPU SERVER_ARGS QUINCE_ARGS UNIX_SOCKET BENCH_ARGS PREFILL" "$0" "$@")

TESTS=set,get,incr; REQUESTS=200000; CLIENTS=50; PIPELINES="1 16"; ROUNDS=1; OUT=""
while getopts "t:n:c:P:r:o:h" opt; do
  case $opt in
    t) TESTS=$OPTARG ;; n) REQUESTS=$OPTARG ;; c) CLIENTS=$OPTARG ;;
    P) PIPELINES=$OPTARG ;; r) ROUNDS=$OPTARG ;; o) OUT=$OPTARG ;;
    *) usage ;;
  esac
done
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
QUINCE_THREADS=${QUINCE_THREADS:-1}

need_tools redis-server redis-benchmark redis-cli taskset python3
prepare_quince_and_out

read -r -a PEER_SPECS <<< "${PEERS:-redis=redis-server}"
PEER_NAMES=(); PEER_BINS=()
for spec in "${PEER_SPECS[@]}"; do
  case $spec in *=*) ;; *) echo "PEERS: expected NAME=BINARY, got $spec" >&2; exit 2 ;; esac
  PEER_NAMES+=("${spec%%=*}"); PEER_BINS+=("${spec#*=}")
  command -v "${spec#*=}" >/dev/null || { echo "peer binary ${spec#*=} not found" >&2; exit 1; }
done
QPORT=$(free_port); QDIR=$(mktemp -d); WORK=$(mktemp -d)
QPID=""; PEER_PIDS=(); PEER_DIRS=(); PEER_TARGETS=()
trap 'kill $QPID ${PEER_PIDS[*]} 2>/dev/null || true; sleep 0.2; rm -rf "$QDIR" ${PEER_DIRS[*]} "$WORK"' EXIT
trap 'exit 130' INT; trap 'exit 143' TERM
read -r -a EXTRA <<< "${SERVER_ARGS:-}"
read -r -a QEXTRA <<< "${QUINCE_ARGS:-}"
QTARGET=(-p "$QPORT")
if [ "${UNIX_SOCKET:-0}" = 1 ]; then
  QEXTRA+=(--unixsocket "$QDIR/q.sock"); QTARGET=(-s "$QDIR/q.sock")
fi
taskset -c "$SERVER_CPU" "$QUINCE_BIN" --port "$QPORT" --bind 127.0.0.1 --save "" --threads "$QUINCE_THREADS" --dir "$QDIR" "${EXTRA[@]}" "${QEXTRA[@]}" >/dev/null 2>&1 &
QPID=$!
wait_ready "$QPORT"
for i in "${!PEER_NAMES[@]}"; do
  port=$(free_port); dir=$(mktemp -d); pextra=(); target="-p $port"
  if [ "${UNIX_SOCKET:-0}" = 1 ]; then pextra=(--unixsocket "$dir/peer.sock"); target="-s $dir/peer.sock"; fi
  taskset -c "$SERVER_CPU" "${PEER_BINS[$i]}" --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" "${EXTRA[@]}" "${pextra[@]}" >/dev/null 2>&1 &
  PEER_PIDS+=($!); PEER_DIRS+=("$dir"); PEER_TARGETS+=("$target")
  wait_ready "$port"
done

TICK_US=$((1000000 / $(getconf CLK_TCK)))

# run_one "-p PORT"|"-s PATH" PID TEST PIPELINE -> "rps p50 p99 cpu_us_per_request"
run_one() {
  local target=$1 pid=$2 test=$3 pipeline=$4 before after line
  before=$(cpu_ticks "$pid")
  # shellcheck disable=SC2086
  script_command "$test"
  if [ ${#BENCH_CMD[@]} -eq 0 ]; then BENCH_CMD=(-t "$test"); fi
  # shellcheck disable=SC2086
  line=$(taskset -c "$CLIENT_CPU" redis-benchmark $target -n "$REQUESTS" -c "$CLIENTS" -P "$pipeline" ${BENCH_ARGS:-} --csv "${BENCH_CMD[@]}" 2>/dev/null | tail -n 1)
  after=$(cpu_ticks "$pid")
  # CSV: "test","rps","avg","min","p50","p95","p99","max"
  echo "$line" | tr -d '"' | awk -F, -v cpu=$(( (after - before) * TICK_US )) -v n="$REQUESTS" \
    '{ if ($2 + 0 == 0) print "0 error error 0"; else printf "%s %s %s %.3f\n", $2, $5, $7, cpu / n }'
}

best() { sort -k1 -g -r | head -n 1; }

load_scripts_for "$TESTS" "${QTARGET[*]}"
for target in "${PEER_TARGETS[@]}"; do load_scripts_for "$TESTS" "$target"; done
if [ -n "${PREFILL:-}" ]; then
  for target in "${QTARGET[*]}" "${PEER_TARGETS[@]}"; do
    # shellcheck disable=SC2086
    taskset -c "$CLIENT_CPU" redis-benchmark $target -t set -n "$PREFILL" -c "$CLIENTS" -P 16 ${BENCH_ARGS:-} -q >/dev/null 2>&1
  done
fi
# "used_memory rss evicted_keys" of the server at $1 ("-p PORT" or "-s PATH").
memory_facts() {
  # shellcheck disable=SC2086
  redis-cli $1 INFO | tr -d '\r' | awk -F: '/^used_memory:/ {u=$2} /^used_memory_rss:/ {r=$2} /^evicted_keys:/ {e=$2} END {print u, r, e}'
}

PEER_LIST=""
for i in "${!PEER_NAMES[@]}"; do
  PEER_LIST+="${PEER_LIST:+, }${PEER_NAMES[$i]} ($("${PEER_BINS[$i]}" --version | awk '{print $3}' | sed 's/^v=//'))"
done
SETTINGS="requests=$REQUESTS clients=$CLIENTS servers on cpu $SERVER_CPU (quince --threads $QUINCE_THREADS), redis-benchmark on cpu $CLIENT_CPU, best of $ROUNDS round(s), peers: $PEER_LIST"
if [ -n "${SERVER_ARGS:-}" ]; then SETTINGS="$SETTINGS, SERVER_ARGS: $SERVER_ARGS"; fi
if [ "${UNIX_SOCKET:-0}" = 1 ]; then SETTINGS="$SETTINGS, clients over Unix domain sockets"; fi
if [ -n "${BENCH_ARGS:-}" ]; then SETTINGS="$SETTINGS, BENCH_ARGS: $BENCH_ARGS"; fi
if [ -n "${PREFILL:-}" ]; then SETTINGS="$SETTINGS, after $PREFILL untimed SETs"; fi
TABLE=$WORK/table.md; TSV=$WORK/ratios.tsv
echo "# quince vs $PEER_LIST"
echo
echo "$SETTINGS"
echo
{
  echo "| test | P | peer | quince rps | peer rps | rps ratio | quince p50/p99 ms | peer p50/p99 ms | quince CPU us/req | peer CPU us/req | CPU ratio |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
} | tee "$TABLE"
{
  printf 'test'
  for name in "${PEER_NAMES[@]}"; do
    printf '\tthroughput quince/%s (higher: quince faster)\tCPU per request quince/%s (lower: quince cheaper)' "$name" "$name"
  done
  printf '\n'
} > "$TSV"
for pipeline in $PIPELINES; do
  if [ "$pipeline" = 1 ]; then printf '## no pipelining (P=1)\n' >> "$TSV"; else printf '## pipeline %s (P=%s)\n' "$pipeline" "$pipeline" >> "$TSV"; fi
  for test in ${TESTS//,/ }; do
    q=""; declare -A peer_runs=()
    for _ in $(seq "$ROUNDS"); do
      q+="$(run_one "${QTARGET[*]}" "$QPID" "$test" "$pipeline")"$'\n'
      for i in "${!PEER_NAMES[@]}"; do
        peer_runs[$i]+="$(run_one "${PEER_TARGETS[$i]}" "${PEER_PIDS[$i]}" "$test" "$pipeline")"$'\n'
      done
    done
    read -r qrps qp50 qp99 qcpu <<<"$(printf '%s' "$q" | best)"
    tsv_row="$test"
    for i in "${!PEER_NAMES[@]}"; do
      read -r rrps rp50 rp99 rcpu <<<"$(printf '%s' "${peer_runs[$i]}" | best)"
      tsv_row+=$(awk -v t="$test" -v p="$pipeline" -v peer="${PEER_NAMES[$i]}" -v qr="$qrps" -v rr="$rrps" -v q50="$qp50" -v q99="$qp99" \
          -v r50="$rp50" -v r99="$rp99" -v qc="$qcpu" -v rc="$rcpu" -v table="$TABLE" 'BEGIN {
        cr = (rc > 0) ? sprintf("%.2f", qc / rc) : "n/a";
        if (qr == 0 || rr == 0) {
          printf "| %s | %s | %s | %s | %s | error | | | | | |\n", t, p, peer, qr, rr >> table
          printf "\tn/a\tn/a"
          exit
        }
        printf "| %s | %s | %s | %.0f | %.0f | %.2f | %s / %s | %s / %s | %.2f | %.2f | %s |\n", t, p, peer, qr, rr, qr / rr, q50, q99, r50, r99, qc, rc, cr >> table
        printf "\t%.2f\t%s", qr / rr, cr }')
      tail -n 1 "$TABLE"
    done
    printf '%s\n' "$tsv_row" >> "$TSV"
    unset peer_runs
  done
done

read -r qused qrss qevicted <<<"$(memory_facts "${QTARGET[*]}")"
FACTS="After the run: quince used_memory $qused, RSS $qrss, evicted_keys $qevicted"
for i in "${!PEER_NAMES[@]}"; do
  read -r rused rrss revicted <<<"$(memory_facts "${PEER_TARGETS[$i]}")"
  FACTS+="; ${PEER_NAMES[$i]} used_memory $rused, RSS $rrss, evicted_keys $revicted"
done
FACTS+="."
echo; echo "$FACTS"

[ "$OUT" != none ] || exit 0
base=$(report_base "$OUT" compare)
python3 "$root/bench/chart.py" -o "$OUT/$base.svg" --ref 1 --ref-label "1.0 = same as the peer" --max 2 \
  --title "quince vs $PEER_LIST: throughput and CPU per request" \
  --subtitle "$SETTINGS" \
  --note "CPU per request: server user+system time from /proc/PID/stat (10 ms ticks) over the requests of the test." \
  "$TSV"
{
  echo "# quince vs $PEER_LIST: throughput, latency, CPU per request"
  echo
  machine_facts "$QUINCE_BIN"
  echo
  echo "Command: \`$CMDLINE\`"
  echo
  echo "Settings: $SETTINGS. Environment: QUINCE_BIN=$QUINCE_BIN QUINCE_THREADS=$QUINCE_THREADS SERVER_CPU=$SERVER_CPU CLIENT_CPU=$CLIENT_CPU SERVER_ARGS=\"${SERVER_ARGS:-}\" QUINCE_ARGS=\"${QUINCE_ARGS:-}\"."
  echo "tests=$TESTS pipelines=\"$PIPELINES\". p50/p99 are redis-benchmark's latency percentiles; CPU us/req is the server's user+system time from /proc/PID/stat (10 ms ticks) divided by the requests of the test."
  echo
  cat "$TABLE"
  echo
  echo "$FACTS"
  echo
  echo "![throughput and CPU-per-request ratios, quince/each peer]($base.svg)"
} > "$OUT/$base.md"
write_latest "$OUT"
echo "report: $OUT/$base.md, chart: $OUT/$base.svg" >&2
