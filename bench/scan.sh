#!/usr/bin/env bash
# A full scan of a keyspace (or of one big set or hash), quince-server and redis-server
# side by side.
#
# For each count, a fresh quince and a fresh redis-server (--save "" --appendonly no) are
# loaded, then every element is listed at COUNT 10, one call per round trip:
#   keys  DEBUG POPULATE N key 10, listed by `redis-cli --scan`
#   set   one set of N members (SADD, through redis-cli --pipe), listed by SSCAN
#   hash  one hash of N fields, listed by HSCAN
#   zset  one sorted set of N members, listed by ZSCAN
# Reported per server: elements listed (at least N: SSCAN, HSCAN and ZSCAN may return an element
# twice, as in Redis), the largest page, wall time, the server's CPU time for the whole
# scan (utime + stime from /proc/PID/stat) and that CPU per element: flat across counts
# means a scan linear in the size.
#
# Usage: bench/scan.sh [-n 1000000,4000000] [-k keys|set|hash|zset] [-o DIR]
#   -n  counts (comma separated)         default: 1000000,4000000
#   -k  what to scan                     default: keys
#   -o  report directory, or "none"      default: bench/results
# Environment: QUINCE_BIN (default target/release/quince-server, built first unless
# NO_BUILD=1), SERVERS (default "quince redis").
# Output: a Markdown table on stdout; unless -o none also DIR/YYYY-MM-DD-HHMM-scan.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
CMDLINE=$(command_line "QUINCE_BIN NO_BUILD SERVERS" "$0" "$@")

COUNTS=1000000,4000000; OUT=""; KIND=keys
while getopts "n:k:o:h" opt; do
  case $opt in
    n) COUNTS=$OPTARG ;; k) KIND=$OPTARG ;; o) OUT=$OPTARG ;;
    *) usage ;;
  esac
done
need_tools redis-server redis-cli python3
prepare_quince_and_out
SERVERS=${SERVERS:-quince redis}

ticks_per_s=$(getconf CLK_TCK)

work=$(mktemp -d)
pid=""
cleanup() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi; rm -rf "$work"; }
trap cleanup EXIT

rows=""
for n in ${COUNTS//,/ }; do
  for server in $SERVERS; do
    port=$(free_port)
    case $server in
      quince) "$QUINCE_BIN" --port "$port" --save "" --appendonly no --enable-debug-command yes --dir "$work" >/dev/null 2>&1 & ;;
      redis) redis-server --port "$port" --save "" --appendonly no --enable-debug-command yes --dir "$work" >/dev/null 2>&1 & ;;
      *) echo "unknown server $server" >&2; exit 2 ;;
    esac
    pid=$!
    wait_ready "$port"
    case $KIND in
      keys) redis-cli -p "$port" DEBUG POPULATE "$n" key 10 >/dev/null ;;
      set|hash|zset) python3 "$root/bench/scan_collection.py" load "$KIND" "$n" | redis-cli -p "$port" --pipe >/dev/null ;;
      *) echo "unknown kind $KIND (keys, set, hash, zset)" >&2; exit 2 ;;
    esac
    before=$(cpu_ticks "$pid")
    start=$(date +%s.%N)
    if [ "$KIND" = keys ]; then
      listed="$(redis-cli -p "$port" --scan | wc -l) n/a"
    else
      listed=$(python3 "$root/bench/scan_collection.py" scan "$KIND" "$port")
    fi
    end=$(date +%s.%N)
    after=$(cpu_ticks "$pid")
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
    read -r listed page <<< "$listed"
    row=$(python3 -c "
n, listed, wall, cpu = $n, $listed, $end - $start, ($after - $before) / $ticks_per_s
print(f'| {\"$server\"} | $KIND | {n:,} | {listed:,} | $page | {wall:.1f} | {cpu:.2f} | {cpu / n * 1e6:.2f} |')")
    echo "$row" >&2
    rows+="$row"$'\n'
  done
done

table="| server | scanned | elements | listed | largest page | wall s | server CPU s | server CPU µs per element |
|---|---|---|---|---|---|---|---|
$rows"
echo "$table"
if [ "$OUT" != none ]; then
  base=$(report_base "$OUT" scan)
  {
    echo "# full scan ($KIND), $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "Command: \`$CMDLINE\`"
    echo
    machine_facts "$QUINCE_BIN"
    echo
    echo "$table"
  } > "$OUT/$base.md"
  write_latest "$OUT"
  echo "report: $OUT/$base.md" >&2
fi
