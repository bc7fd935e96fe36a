#!/usr/bin/env bash
# A full `redis-cli --scan` of a keyspace, quince-server and redis-server side by side.
#
# For each key count, a fresh quince and a fresh redis-server (--save "" --appendonly no)
# are loaded with DEBUG POPULATE (keys key:N, 10-byte values), then `redis-cli --scan`
# (COUNT 10, one call per round trip) lists every key. Reported per server: keys listed
# (must be the key count), wall time, the server's CPU time for the whole scan (utime +
# stime from /proc/PID/stat) and that CPU per key: flat across key counts means a scan
# linear in the keyspace.
#
# Usage: bench/scan.sh [-n 1000000,4000000] [-o DIR]
#   -n  key counts (comma separated)     default: 1000000,4000000
#   -o  report directory, or "none"      default: bench/results
# Environment: QUINCE_BIN (default target/release/quince-server, built first unless
# NO_BUILD=1), SERVERS (default "quince redis").
# Output: a Markdown table on stdout; unless -o none also DIR/YYYY-MM-DD-HHMM-scan.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
CMDLINE=$(command_line "QUINCE_BIN NO_BUILD SERVERS" "$0" "$@")

COUNTS=1000000,4000000; OUT=""
while getopts "n:o:h" opt; do
  case $opt in
    n) COUNTS=$OPTARG ;; o) OUT=$OPTARG ;;
    *) usage ;;
  esac
done
need_tools redis-server redis-cli python3
prepare_quince_and_out
SERVERS=${SERVERS:-quince redis}

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
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
    redis-cli -p "$port" DEBUG POPULATE "$n" key 10 >/dev/null
    before=$(cpu_ticks "$pid")
    start=$(date +%s.%N)
    listed=$(redis-cli -p "$port" --scan | wc -l)
    end=$(date +%s.%N)
    after=$(cpu_ticks "$pid")
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
    row=$(python3 -c "
n, listed, wall, cpu = $n, $listed, $end - $start, ($after - $before) / $ticks_per_s
print(f'| {\"$server\"} | {n:,} | {listed:,} | {wall:.1f} | {cpu:.2f} | {cpu / n * 1e6:.2f} |')")
    echo "$row" >&2
    rows+="$row"$'\n'
  done
done

table="| server | keys | listed | wall s | server CPU s | server CPU µs per key |
|---|---|---|---|---|---|
$rows"
echo "$table"
if [ "$OUT" != none ]; then
  base=$(report_base "$OUT" scan)
  {
    echo "# redis-cli --scan, $(date -u '+%Y-%m-%d %H:%M UTC')"
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
