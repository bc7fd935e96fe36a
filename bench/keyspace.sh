#!/usr/bin/env bash
# Pipelined GET and SET in a small and a large keyspace, quince-server and redis-server side
# by side: how much a keyspace larger than the caches costs each server per request.
#
# For each round, key range and server (servers alternate, their order reversed every other
# round): a fresh server (--save "", one worker for quince) pinned to SERVER_CPU is filled
# with `redis-benchmark -t set -r K -n K -d 16` (about 0.63 K distinct keys of the form
# key:000000012345: the keys the measured commands ask for), then each test runs
# `redis-benchmark -t TEST -r K -n N -P 16 -c 50 -d 16` pinned to CLIENT_CPU. Reported per run:
# keys held, rps and the server's CPU per request (utime + stime from /proc/PID/stat over the
# run): at P=16 the server's core is the limit, so CPU per request is the figure that
# compares; then, per server and test, the medians over the rounds and the large range's
# throughput as a fraction of the small one's (small CPU per request / large).
#
# Usage: bench/keyspace.sh [-k 100000,10000000] [-t get,set] [-n 3000000] [-r 2] [-o DIR]
#   -k  key ranges, smallest first (comma separated)   default: 100000,10000000
#   -t  redis-benchmark tests                           default: get,set
#   -n  requests per measured run                       default: 3000000
#   -r  rounds                                          default: 2
#   -o  report directory, or "none"                     default: bench/results
# Environment: QUINCE_BIN (default target/release/quince-server, built first unless
# NO_BUILD=1), SERVERS (default "quince redis"; more as NAME=BINARY, e.g.
# "quince redis valkey=/opt/valkey/src/valkey-server"), SERVER_CPU (0), CLIENT_CPU (1).
# Output: a Markdown table on stdout; unless -o none also DIR/YYYY-MM-DD-HHMM-keyspace.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
CMDLINE=$(command_line "QUINCE_BIN NO_BUILD SERVERS SERVER_CPU CLIENT_CPU" "$0" "$@")

RANGES=100000,10000000; TESTS=get,set; REQUESTS=3000000; ROUNDS=2; OUT=""
while getopts "k:t:n:r:o:h" opt; do
  case $opt in
    k) RANGES=$OPTARG ;; t) TESTS=$OPTARG ;; n) REQUESTS=$OPTARG ;; r) ROUNDS=$OPTARG ;; o) OUT=$OPTARG ;;
    *) usage ;;
  esac
done
need_tools redis-server redis-cli redis-benchmark taskset python3
prepare_quince_and_out
SERVERS=${SERVERS:-quince redis}
SERVER_CPU=${SERVER_CPU:-0}; CLIENT_CPU=${CLIENT_CPU:-1}

ticks_per_s=$(getconf CLK_TCK)

work=$(mktemp -d)
pid=""
cleanup() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi; rm -rf "$work"; }
trap cleanup EXIT

# start_server NAME PORT: starts it pinned, sets pid.
start_server() {
  local name=$1 port=$2 bin args=()
  case $name in
    quince) bin=$QUINCE_BIN; args=(--threads 1) ;;
    redis) bin=redis-server ;;
    *=*) bin=${name#*=} ;;
    *) echo "unknown server $name (quince, redis or NAME=BINARY)" >&2; exit 2 ;;
  esac
  mkdir -p "$work/$port"
  taskset -c "$SERVER_CPU" "$bin" --port "$port" --save "" --appendonly no --dir "$work/$port" "${args[@]}" \
    >/dev/null 2>&1 &
  pid=$!
  wait_ready "$port"
}

runs=""   # lines: server range test keys rps cpu_us
servers=($SERVERS)
for round in $(seq "$ROUNDS"); do
  order=("${servers[@]}")
  if [ $((round % 2)) -eq 0 ]; then
    order=(); for ((i = ${#servers[@]} - 1; i >= 0; i--)); do order+=("${servers[$i]}"); done
  fi
  for range in ${RANGES//,/ }; do
    for server in "${order[@]}"; do
      port=$(free_port)
      start_server "$server" "$port"
      taskset -c "$CLIENT_CPU" redis-benchmark -p "$port" -t set -r "$range" -n "$range" -P 32 -c 50 -d 16 -q \
        >/dev/null 2>&1
      keys=$(redis-cli -p "$port" DBSIZE)
      for test in ${TESTS//,/ }; do
        before=$(cpu_ticks "$pid")
        out=$(taskset -c "$CLIENT_CPU" redis-benchmark -p "$port" -t "$test" -r "$range" -n "$REQUESTS" -P 16 -c 50 \
          -d 16 -q 2>/dev/null | tr '\r' '\n' | grep -i "requests per second" | tail -1)
        after=$(cpu_ticks "$pid")
        rps=$(echo "$out" | sed -E 's/.*: ([0-9.]+) requests per second.*/\1/')
        cpu_us=$(python3 -c "print(f'{($after - $before) / $ticks_per_s / $REQUESTS * 1e6:.3f}')")
        line="${server%%=*} $range $test $keys ${rps:-0} $cpu_us"
        echo "round $round: $line" >&2
        runs+="$line"$'\n'
      done
      kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
    done
  done
done

TABLE=$work/table.md
RUNS="$runs" RANGES="$RANGES" python3 - > "$TABLE" <<'PY'
import os, statistics
runs = [l.split() for l in os.environ["RUNS"].strip().splitlines()]
ranges = [int(r) for r in os.environ["RANGES"].split(",")]
out = ["| server | test | key range | keys held | runs | rps (median) | server CPU µs/req (median; each run) | throughput vs the smallest range |",
       "|---|---|---|---|---|---|---|---|"]
servers = list(dict.fromkeys(r[0] for r in runs))
tests = list(dict.fromkeys(r[2] for r in runs))
for server in servers:
    for test in tests:
        base = None
        for rng in ranges:
            rows = [r for r in runs if r[0] == server and r[2] == test and int(r[1]) == rng]
            if not rows:
                continue
            cpu = [float(r[5]) for r in rows]
            med = statistics.median(cpu)
            base = med if base is None else base
            rps = statistics.median(float(r[4]) for r in rows)
            each = ", ".join(f"{c:.3f}" for c in cpu)
            out.append(f"| {server} | {test} | {rng:,} | {int(rows[-1][3]):,} | {len(rows)} | {rps:,.0f} | "
                       f"{med:.3f} ({each}) | {base / med:.2f} |")
print("\n".join(out))
PY
SETTINGS="pipelined (P=16), -c 50, -d 16, $REQUESTS requests per run, $ROUNDS round(s), key ranges $RANGES, servers pinned to cpu $SERVER_CPU (quince --threads 1), redis-benchmark on cpu $CLIENT_CPU"
report keyspace "pipelined GET and SET by keyspace size"
