#!/usr/bin/env bash
# Cluster mode side by side: a quince cluster and a redis-server cluster on this machine
# (3 masters and 3 replicas each, made by `redis-cli --cluster create`), one after the other
# in one run, through the same steps:
#
#   1. `redis-cli --cluster check` is clean.
#   2. redis-py's RedisCluster writes KEYS keys and reads them all back.
#   3. `redis-benchmark --cluster` SET and GET (-P 16): requests per second, and the
#      masters' CPU per request (from /proc).
#   4. `redis-cli --cluster reshard` moves 1,000 slots while a RedisCluster client writes:
#      every acknowledged write reads back, every key sits on the master of its slot.
#   5. SIGKILL of a master while the client writes: the time until its replica is master,
#      the client's longest wait, and the acknowledged writes lost (asynchronous
#      replication may lose some, on both servers).
#
# Usage: bench/cluster.sh [-k 100000] [-n 400000] [-o DIR]
#   -k  keys written and read by RedisCluster      default: 100000
#   -n  redis-benchmark requests per test          default: 400000
#   -o  report directory, or "none" for no files   default: bench/results
# Environment: QUINCE_BIN (default target/release/quince-server, built first unless
# NO_BUILD=1), PYTHON (a python with redis-py; default: a virtualenv made under target/),
# BASE_PORT (default 31000: quince uses BASE+1..6, redis-server BASE+11..16, buses +10000),
# NODE_TIMEOUT (cluster-node-timeout, default 3000).
# Output: a Markdown report on stdout, and DIR/YYYY-MM-DD-HHMM-cluster.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
CMDLINE=$(command_line "QUINCE_BIN NO_BUILD PYTHON BASE_PORT NODE_TIMEOUT" "$0" "$@")

KEYS=100000; REQUESTS=400000; OUT=""
while getopts "k:n:o:h" opt; do
  case $opt in
    k) KEYS=$OPTARG ;;
    n) REQUESTS=$OPTARG ;;
    o) OUT=$OPTARG ;;
    *) usage ;;
  esac
done
need_tools redis-server redis-cli redis-benchmark
[ -n "$OUT" ] && export OUT
prepare_quince_and_out
BASE_PORT=${BASE_PORT:-31000}
NODE_TIMEOUT=${NODE_TIMEOUT:-3000}
if [ -z "${PYTHON:-}" ]; then
  venv=$root/target/bench-venv
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "redis>=5,<9"
  PYTHON=$venv/bin/python
fi
check() { "$PYTHON" "$root/bench/cluster_check.py" "$@"; }

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# start_node NAME BINARY PORT: a cluster node in its own directory; its pid in $work/NAME-PORT.pid.
start_node() {
  local name=$1 bin=$2 port=$3 dir=$work/$1-$3
  mkdir -p "$dir"
  (cd "$dir" && exec "$bin" --port "$port" --bind 127.0.0.1 --cluster-enabled yes \
    --cluster-node-timeout "$NODE_TIMEOUT" --dir "$dir" --appendonly no --save "" \
    --logfile "$dir/log.txt" --repl-diskless-sync-delay 0) &
  pids+=("$!")
  echo "$!" > "$dir.pid"
  wait_ready "$port"
}

cpu_ticks() { # total user+system ticks of the given pids
  local t=0 p
  for p in "$@"; do
    t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
  done
  echo "$t"
}

master_pids() { # NAME FIRST_PORT: pids of the nodes that are masters now
  local name=$1 first=$2 port
  for port in $(seq "$first" $((first + 5))); do
    if redis-cli -p "$port" role 2>/dev/null | head -1 | grep -q master; then cat "$work/$name-$port.pid"; fi
  done
}

report=""
add() { report+="$1"$'\n'; }

run_kind() { # NAME BINARY FIRST_PORT
  local name=$1 bin=$2 first=$3 port nodes=() t0 t1 c0 c1
  for port in $(seq "$first" $((first + 5))); do start_node "$name" "$bin" "$port"; nodes+=("127.0.0.1:$port"); done
  redis-cli --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes >"$work/$name-create.txt" 2>&1
  for _ in $(seq 300); do
    local ok=0
    for port in $(seq "$first" $((first + 5))); do
      redis-cli -p "$port" cluster info | grep -q cluster_state:ok && ok=$((ok + 1))
    done
    [ "$ok" = 6 ] && break
    sleep 0.1
  done
  sleep 1
  local check_out
  check_out=$(redis-cli --cluster check "127.0.0.1:$first" 2>&1 | tr -d '\033' | sed 's/\[[0-9;]*m//g')
  local clean=no
  grep -q "All nodes agree about slots configuration" <<<"$check_out" && grep -q "All 16384 slots covered" <<<"$check_out" && clean=yes
  add "| $name | cluster check clean | $clean |"

  local load
  load=$(check load "$first" "$KEYS")
  add "| $name | RedisCluster $KEYS keys: write, read (keys/s), wrong values | $(jq -r '"\(.write_rps), \(.read_rps), \(.wrong)"' <<<"$load" 2>/dev/null || echo "$load") |"

  local test
  for test in set get; do
    read -r -a mp <<<"$(master_pids "$name" "$first" | tr '\n' ' ')"
    c0=$(cpu_ticks "${mp[@]}"); t0=$(date +%s%N)
    local rps
    rps=$(redis-benchmark --cluster -p "$first" -t "$test" -n "$REQUESTS" -c 50 -P 16 -r 1000000 -q 2>/dev/null \
      | tr '\r' '\n' | grep -i "^$test:" | tail -1 | awk '{print $2}')
    t1=$(date +%s%N); c1=$(cpu_ticks "${mp[@]}")
    local us_per_req
    us_per_req=$(awk -v c=$((c1 - c0)) -v n="$REQUESTS" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", c / hz * 1e6 / n }')
    add "| $name | redis-benchmark --cluster $test -P 16: rps, masters' CPU µs/request | $rps, $us_per_req |"
    eval "RPS_${name}_${test}=$rps; CPU_${name}_${test}=$us_per_req"
  done

  # Resharding 1,000 slots under write load.
  local from to acked
  from=$(redis-cli -p "$first" cluster nodes | awk '/master/ && !/fail/ {print $1; exit}')
  to=$(redis-cli -p "$first" cluster nodes | awk -v f="$from" '/master/ && !/fail/ && $1 != f {print $1; exit}')
  acked=$work/$name-reshard.acked
  check writer "$first" "$acked" 600 >"$work/$name-writer1.json" &
  local writer=$!
  sleep 1
  t0=$(date +%s%N)
  redis-cli --cluster reshard "127.0.0.1:$first" --cluster-from "$from" --cluster-to "$to" \
    --cluster-slots 1000 --cluster-yes --cluster-pipeline 100 >"$work/$name-reshard.txt" 2>&1 || true
  t1=$(date +%s%N)
  touch "$acked.stop"; wait "$writer" || true
  local verify place
  verify=$(check verify "$first" "$acked")
  place=$(check placement "$first")
  add "| $name | reshard 1,000 slots under writes: seconds, writes acknowledged, lost, keys misplaced | $(awk -v d=$((t1 - t0)) 'BEGIN{printf "%.1f", d/1e9}'), $(jq -r '"\(.acked), \(.lost)"' <<<"$verify"), $(jq -r .misplaced <<<"$place") |"

  # SIGKILL of a master under writes.
  local victim vport vid
  victim=$(redis-cli -p "$first" cluster nodes | awk '/master/ && !/fail/ && !/myself/ {print $2; exit}')
  vport=${victim#*:}; vport=${vport%@*}
  vid=$(redis-cli -p "$vport" cluster myid)
  acked=$work/$name-failover.acked
  check writer "$first" "$acked" 600 >"$work/$name-writer2.json" &
  writer=$!
  sleep 2
  kill -9 "$(cat "$work/$name-$vport.pid")"
  t0=$(date +%s%N)
  for _ in $(seq 600); do
    redis-cli -p "$first" cluster nodes | grep -q "slave $vid" || break
    sleep 0.05
  done
  t1=$(date +%s%N)
  sleep 3
  touch "$acked.stop"; wait "$writer" || true
  verify=$(check verify "$first" "$acked")
  add "| $name | SIGKILL of a master under writes: failover ms, client's longest write ms, acknowledged, lost | $(( (t1 - t0) / 1000000 )), $(jq -r .worst_write_ms "$work/$name-writer2.json"), $(jq -r '"\(.acked), \(.lost)"' <<<"$verify") |"
}

run_kind quince "$QUINCE_BIN" $((BASE_PORT + 1))
run_kind redis "$(command -v redis-server)" $((BASE_PORT + 11))

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
# shellcheck disable=SC2154
{
  echo "# Cluster mode, quince and redis-server side by side"
  echo
  echo "\`$CMDLINE\`"
  echo
  machine_facts "$QUINCE_BIN"
  echo
  echo "3 masters + 3 replicas each, \`cluster-node-timeout $NODE_TIMEOUT\`, all on this machine (the load generator shares the cores)."
  echo
  echo "| server | step | result |"
  echo "|---|---|---|"
  printf '%s' "$report"
  echo
  echo "quince/redis-server: SET rps $(ratio "$RPS_quince_set" "$RPS_redis_set"), GET rps $(ratio "$RPS_quince_get" "$RPS_redis_get"); masters' CPU per request SET $(ratio "$CPU_quince_set" "$CPU_redis_set"), GET $(ratio "$CPU_quince_get" "$CPU_redis_get")."
} | tee "$work/report.md"
if [ "$OUT" != none ]; then
  base=$(report_base "$OUT" cluster)
  cp "$work/report.md" "$OUT/$base.md"
  echo "report: $OUT/$base.md" >&2
fi
