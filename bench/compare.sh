#!/usr/bin/env bash
# Side-by-side benchmark of quince-server against redis-server, in one run.
#
# Both servers are pinned to the same core (SERVER_CPU, default 0); redis-benchmark runs
# on another (CLIENT_CPU, default 1) against each server alternately, one test at a time,
# so each server's CPU time can be charged to the test that used it (from /proc/PID/stat).
#
# Usage: bench/compare.sh [-t set,get,incr] [-n 200000] [-c 50] [-P "1 16"] [-r ROUNDS]
#   -t  redis-benchmark tests (comma separated)      default: set,get,incr
#   -n  requests per test                            default: 200000
#   -c  parallel connections                         default: 50
#   -P  pipeline depths to run, space separated      default: "1 16"
#   -r  alternating rounds per test (best is kept)   default: 1
# Environment: QUINCE_THREADS (default 1, same core budget as redis), SERVER_CPU,
# CLIENT_CPU, NO_BUILD=1 to reuse target/release/quince-server, SERVER_ARGS for settings
# given to both servers (e.g. "--appendonly yes --appendfsync always"; each server gets its
# own temporary --dir).
# Output: a Markdown table on stdout: rps, p50 and p99 (ms) per server, the quince/redis
# throughput ratio, and server CPU microseconds per request with its quince/redis ratio.
set -euo pipefail

TESTS=set,get,incr; REQUESTS=200000; CLIENTS=50; PIPELINES="1 16"; ROUNDS=1
while getopts "t:n:c:P:r:h" opt; do
  case $opt in
    t) TESTS=$OPTARG ;; n) REQUESTS=$OPTARG ;; c) CLIENTS=$OPTARG ;;
    P) PIPELINES=$OPTARG ;; r) ROUNDS=$OPTARG ;;
    *) sed -n '2,17p' "$0"; exit 2 ;;
  esac
done
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
QUINCE_THREADS=${QUINCE_THREADS:-1}

root=$(cd "$(dirname "$0")/.." && pwd)
for tool in redis-server redis-benchmark redis-cli taskset; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y redis-server redis-tools util-linux)" >&2; exit 1; }
done
if [ "${NO_BUILD:-0}" != 1 ]; then
  (cd "$root" && cargo build --release -p quince-server >&2)
fi
QUINCE_BIN=$root/target/release/quince-server

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_ready() { for _ in $(seq 100); do redis-cli -p "$1" ping >/dev/null 2>&1 && return 0; sleep 0.05; done; echo "server on $1 did not start" >&2; exit 1; }

QPORT=$(free_port); RPORT=$(free_port)
QDIR=$(mktemp -d); RDIR=$(mktemp -d)
read -r -a EXTRA <<< "${SERVER_ARGS:-}"
taskset -c "$SERVER_CPU" "$QUINCE_BIN" --port "$QPORT" --bind 127.0.0.1 --save "" --threads "$QUINCE_THREADS" --dir "$QDIR" "${EXTRA[@]}" >/dev/null 2>&1 &
QPID=$!
taskset -c "$SERVER_CPU" redis-server --port "$RPORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$RDIR" "${EXTRA[@]}" >/dev/null 2>&1 &
RPID=$!
trap 'kill $QPID $RPID 2>/dev/null || true; sleep 0.2; rm -rf "$QDIR" "$RDIR"' EXIT
wait_ready "$QPORT"; wait_ready "$RPORT"

TICK_US=$((1000000 / $(getconf CLK_TCK)))
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# run_one PORT PID TEST PIPELINE -> "rps p50 p99 cpu_us_per_request"
run_one() {
  local port=$1 pid=$2 test=$3 pipeline=$4 before after line
  before=$(cpu_ticks "$pid")
  line=$(taskset -c "$CLIENT_CPU" redis-benchmark -p "$port" -t "$test" -n "$REQUESTS" -c "$CLIENTS" -P "$pipeline" --csv 2>/dev/null | tail -n 1)
  after=$(cpu_ticks "$pid")
  # CSV: "test","rps","avg","min","p50","p95","p99","max"
  echo "$line" | tr -d '"' | awk -F, -v cpu=$(( (after - before) * TICK_US )) -v n="$REQUESTS" \
    '{ if ($2 + 0 == 0) print "0 error error 0"; else printf "%s %s %s %.3f\n", $2, $5, $7, cpu / n }'
}

best() { sort -k1 -g -r | head -n 1; }

echo "# quince vs redis-server ($(redis-server --version | awk '{print $3}'))"
echo
echo "requests=$REQUESTS clients=$CLIENTS servers on cpu $SERVER_CPU (quince --threads $QUINCE_THREADS), redis-benchmark on cpu $CLIENT_CPU, best of $ROUNDS round(s)"
echo
echo "| test | P | quince rps | redis rps | rps ratio | quince p50/p99 ms | redis p50/p99 ms | quince CPU us/req | redis CPU us/req | CPU ratio |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for pipeline in $PIPELINES; do
  for test in ${TESTS//,/ }; do
    q=""; r=""
    for _ in $(seq "$ROUNDS"); do
      q+="$(run_one "$QPORT" "$QPID" "$test" "$pipeline")"$'\n'
      r+="$(run_one "$RPORT" "$RPID" "$test" "$pipeline")"$'\n'
    done
    read -r qrps qp50 qp99 qcpu <<<"$(printf '%s' "$q" | best)"
    read -r rrps rp50 rp99 rcpu <<<"$(printf '%s' "$r" | best)"
    awk -v t="$test" -v p="$pipeline" -v qr="$qrps" -v rr="$rrps" -v q50="$qp50" -v q99="$qp99" \
        -v r50="$rp50" -v r99="$rp99" -v qc="$qcpu" -v rc="$rcpu" 'BEGIN {
      cr = (rc > 0) ? sprintf("%.2f", qc / rc) : "n/a";
      if (qr == 0 || rr == 0) { printf "| %s | %s | %s | %s | error | | | | | |\n", t, p, qr, rr; exit }
      printf "| %s | %s | %.0f | %.0f | %.2f | %s / %s | %s / %s | %.2f | %.2f | %s |\n", t, p, qr, rr, qr / rr, q50, q99, r50, r99, qc, rc, cr }'
  done
done
