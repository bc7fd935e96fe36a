#!/usr/bin/env bash
# BullMQ (npm bullmq 6.7.0 + ioredis, bench/bullmq/) against quince-server and redis-server,
# alternately: enqueue N no-op jobs with addBulk in batches of 1,000, then process them with
# one Worker at concurrency 50. Both servers are pinned to SERVER_CPU (default 0), node to
# CLIENT_CPU (default 1); quince runs with --threads QUINCE_THREADS (default 1).
#
# Usage: bench/bullmq.sh [-n 20000] [-r 2] [-o DIR]
#   -n  jobs per run                                  default: 20000
#   -r  runs per server, alternating                  default: 2
#   -o  report directory, or "none" for no files      default: bench/results
# Environment: QUINCE_BIN, NO_BUILD, QUINCE_THREADS, SERVER_CPU, CLIENT_CPU (as compare.sh).
# Needs node and npm (installs bench/bullmq/node_modules on first use).
# Output: a Markdown table (jobs/s per run and phase, and quince/redis ratios of the means;
# the server's CPU time per job over both phases, and how busy its core was during a run);
# unless -o none also DIR/YYYY-MM-DD-HHMM-bullmq.md.
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
need_tools redis-server redis-cli node npm taskset python3 bc
prepare_quince_and_out
install_bullmq
start_pinned_servers

RESULTS=$WORK/results  # "server run enqueue process server_us_per_job wall_s server_cpu_s"
: > "$RESULTS"
TICK_HZ=$(getconf CLK_TCK)
for run in $(seq "$RUNS"); do
  for server in quince redis; do
    port=$QPORT; pid=$QPID
    [ "$server" = redis ] && port=$RPORT && pid=$RPID
    before=$(cpu_ticks "$pid"); started=$(date +%s.%N)
    line=$(cd "$root/bench/bullmq" && taskset -c "$CLIENT_CPU" node bench.mjs "$port" "$JOBS" 1000 50)
    ticks=$(( $(cpu_ticks "$pid") - before )); wall=$(echo "$(date +%s.%N) - $started" | bc)
    read -r enq proc <<<"$(queue_rates "$line")"
    # The server's user+system time over both phases (and the client's start-up), per job.
    us_per_job=$(echo "scale=1; $ticks * 1000000 / $TICK_HZ / $JOBS" | bc)
    echo "$server $run $enq $proc $us_per_job $wall $(echo "scale=3; $ticks / $TICK_HZ" | bc)" >> "$RESULTS"
    echo "  $server run $run: enqueue $enq jobs/s, process $proc jobs/s, server CPU $us_per_job us/job over ${wall}s" >&2
  done
done

REDIS_VERSION=$(redis-server --version | awk '{print $3}' | sed 's/^v=//')
SETTINGS="$JOBS no-op jobs per run, addBulk batches of 1000, one Worker at concurrency 50; servers on cpu $SERVER_CPU (quince --threads $QUINCE_THREADS), node on cpu $CLIENT_CPU; $RUNS alternating runs per server"
TABLE=$WORK/table.md
python3 - "$RESULTS" "$TABLE" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
def runs(server, col):
    return [int(r[col]) for r in rows if r[0] == server]
with open(sys.argv[2], "w") as out:
    out.write("| phase | quince jobs/s (each run) | redis-server jobs/s (each run) | quince/redis (means) |\n|---|---|---|---|\n")
    for name, col in (("enqueue", 2), ("process", 3)):
        q, r = runs("quince", col), runs("redis", col)
        ratio = (sum(q) / len(q)) / (sum(r) / len(r))
        out.write(f"| {name} | {' / '.join(map(str, q))} | {' / '.join(map(str, r))} | {ratio:.2f} |\n")
    cpu = lambda server: [float(r[4]) for r in rows if r[0] == server]
    q, r = cpu("quince"), cpu("redis")
    out.write(f"| server CPU µs per job (both phases) | {' / '.join(map(str, q))} | {' / '.join(map(str, r))} | {(sum(q) / len(q)) / (sum(r) / len(r)):.2f} |\n")
    busy = lambda server: [round(100 * float(r[6]) / float(r[5])) for r in rows if r[0] == server]
    out.write(f"| server core busy, % of the run | {' / '.join(map(str, busy('quince')))} | {' / '.join(map(str, busy('redis')))} | |\n")
PY
report bullmq "BullMQ 6.7.0 on quince vs redis-server $REDIS_VERSION"
