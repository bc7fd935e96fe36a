#!/usr/bin/env bash
# quince-queue against BullMQ (npm bullmq 6.7.0 + ioredis, bench/bullmq/), on the same
# server in the same run: enqueue N no-op jobs in batches of 1,000, then process them with
# one worker at concurrency 50. On redis-server and on quince-server, alternating, RUNS
# times each; also quince-queue on the embedded Db (no server). Servers are pinned to
# SERVER_CPU (default 0), the clients to CLIENT_CPU (default 1); quince-server runs with
# --threads QUINCE_THREADS (default 1).
#
# Usage: bench/queue.sh [-n 20000] [-r 2] [-o DIR]
#   -n  jobs per run                                  default: 20000
#   -r  runs per server and client, alternating       default: 2
#   -o  report directory, or "none" for no files      default: bench/results
# Environment: QUINCE_BIN, NO_BUILD, QUINCE_THREADS, SERVER_CPU, CLIENT_CPU (as compare.sh).
# Needs node and npm (installs bench/bullmq/node_modules on first use) and redis-server.
# Output: a Markdown table (jobs/s per run and phase, quince-queue/BullMQ ratios of the
# means); unless -o none also DIR/YYYY-MM-DD-HHMM-queue.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
CMDLINE=$(command_line "QUINCE_BIN NO_BUILD QUINCE_THREADS SERVER_CPU CLIENT_CPU" "$0" "$@")

JOBS=20000; RUNS=2; OUT=""
while getopts "n:r:o:h" opt; do
  case $opt in
    n) JOBS=$OPTARG ;; r) RUNS=$OPTARG ;; o) OUT=$OPTARG ;;
    *) usage ;;
  esac
done
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
QUINCE_THREADS=${QUINCE_THREADS:-1}
need_tools redis-server redis-cli node npm taskset python3 cargo
prepare_quince_and_out
(cd "$root" && cargo build --release -p quince-queue --example queue_bench >&2)
QUEUE_BENCH=$root/target/release/examples/queue_bench
install_bullmq
start_pinned_servers

RESULTS=$WORK/results  # "server client run enqueue process"
: > "$RESULTS"
measure() {  # server client port run
  local line
  if [ "$2" = bullmq ]; then
    line=$(cd "$root/bench/bullmq" && taskset -c "$CLIENT_CPU" node bench.mjs "$3" "$JOBS" 1000 50)
  else
    line=$(taskset -c "$CLIENT_CPU" "$QUEUE_BENCH" "redis://127.0.0.1:$3/" "$JOBS" 1000 50)
  fi
  read -r enq proc <<<"$(queue_rates "$line")"
  echo "$1 $2 $4 $enq $proc" >> "$RESULTS"
  echo "  $2 on $1 run $4: enqueue $enq jobs/s, process $proc jobs/s" >&2
  redis-cli -p "$3" FLUSHALL >/dev/null
}
for run in $(seq "$RUNS"); do
  for server in redis quince; do
    port=$QPORT; [ "$server" = redis ] && port=$RPORT
    for client in quince-queue bullmq; do
      measure "$server" "$client" "$port" "$run"
    done
  done
  # The embedded Db: no server; the whole run is pinned to CLIENT_CPU.
  line=$(taskset -c "$CLIENT_CPU" "$QUEUE_BENCH" embedded "$JOBS" 1000 50)
  read -r enq proc <<<"$(queue_rates "$line")"
  echo "embedded quince-queue $run $enq $proc" >> "$RESULTS"
  echo "  quince-queue embedded run $run: enqueue $enq jobs/s, process $proc jobs/s" >&2
done

REDIS_VERSION=$(redis-server --version | awk '{print $3}' | sed 's/^v=//')
SETTINGS="$JOBS no-op jobs per run, enqueued in batches of 1000, then one worker at concurrency 50; servers on cpu $SERVER_CPU (quince --threads $QUINCE_THREADS), clients on cpu $CLIENT_CPU; $RUNS alternating runs per server and client"
TABLE=$WORK/table.md
python3 - "$RESULTS" "$TABLE" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
def runs(server, client, col):
    return [int(r[col]) for r in rows if r[0] == server and r[1] == client]
def mean(xs):
    return sum(xs) / len(xs)
with open(sys.argv[2], "w") as out:
    out.write("| server | phase | quince-queue jobs/s (each run) | BullMQ jobs/s (each run) | quince-queue/BullMQ (means) |\n|---|---|---|---|---|\n")
    for server, label in (("redis", "redis-server"), ("quince", "quince-server")):
        for name, col in (("enqueue", 3), ("process", 4)):
            q, b = runs(server, "quince-queue", col), runs(server, "bullmq", col)
            out.write(f"| {label} | {name} | {' / '.join(map(str, q))} | {' / '.join(map(str, b))} | {mean(q) / mean(b):.2f} |\n")
    for name, col in (("enqueue", 3), ("process", 4)):
        e = runs("embedded", "quince-queue", col)
        out.write(f"| embedded Db (no server) | {name} | {' / '.join(map(str, e))} | n/a | n/a |\n")
PY
report queue "quince-queue vs BullMQ 6.7.0, on redis-server $REDIS_VERSION and quince-server"
