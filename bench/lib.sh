# shellcheck shell=bash
# Shared helpers for bench/compare.sh, bench/memory.sh and bench/scaling.sh (sourced, not run).
# Expects $root (the repository root) to be set by the caller.
: "${root:?set root before sourcing bench/lib.sh}"

# usage: print the calling script's header comment (its help) and exit 2.
usage() { awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 2; }

need_tools() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y redis-server redis-tools util-linux)" >&2; exit 1; }
  done
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

wait_ready() {
  local _
  for _ in $(seq 200); do redis-cli -p "$1" ping >/dev/null 2>&1 && return 0; sleep 0.05; done
  echo "server on $1 did not start" >&2; exit 1
}

_bench_quote() {
  if [[ $1 =~ ^[A-Za-z0-9_./,:=+@%-]+$ ]]; then printf '%s' "$1"; else printf "'%s'" "${1//\'/\'\\\'\'}"; fi
}

# command_line "VAR1 VAR2" ARGS...: the command as typed, prefixed by those variables that
# are set in the environment, quoted for a shell only where needed.
command_line() {
  local vars=$1 v out="" a; shift
  for v in $vars; do
    if [ -n "${!v+x}" ]; then out+="$v=$(_bench_quote "${!v}") "; fi
  done
  for a in "$@"; do out+="$(_bench_quote "$a") "; done
  printf '%s' "${out% }"
}

# Report file stamp, UTC: YYYY-MM-DD-HHMM.
# cpu_ticks PID: the process's user + system CPU time so far, in clock ticks (CLK_TCK a second).
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
stamp() { date -u +%Y-%m-%d-%H%M; }
# report_base DIR KIND: <stamp>-KIND, or <stamp>-KIND-2, -3... when a report of the same
# minute is there already (two runs in one minute would overwrite each other).
report_base() {
  local now base n=2
  now=$(stamp); base=$now-$2
  while [ -e "$1/$base.md" ]; do base=$now-$2-$n; n=$((n + 1)); done
  echo "$base"
}

# prepare_quince_and_out: sets QUINCE_BIN (default: the release build, built first unless
# NO_BUILD=1; a given QUINCE_BIN is used as is) and OUT (default bench/results; "none" writes
# no files), and creates OUT. Uses $root.
prepare_quince_and_out() {
  OUT=${OUT:-$root/bench/results}
  if [ -z "${QUINCE_BIN:-}" ]; then
    QUINCE_BIN=$root/target/release/quince-server
    if [ "${NO_BUILD:-0}" != 1 ]; then
      (cd "$root" && cargo build --release -p quince-server >&2)
    fi
  fi
  [ -x "$QUINCE_BIN" ] || { echo "quince binary $QUINCE_BIN not found or not executable (build it or set QUINCE_BIN)" >&2; exit 1; }
  if [ "$OUT" != none ]; then mkdir -p "$OUT"; fi
}

# machine_facts QUINCE_BIN: a Markdown bullet list describing the machine and the binaries.
machine_facts() {
  local bin=$1 cpu commit
  cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
  commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
  if [ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null || true)" ]; then commit="$commit (dirty)"; fi
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- host: $(nproc) cpus, ${cpu:-unknown cpu}, kernel $(uname -r)"
  echo "- redis-server: $(redis-server --version | awk '{print $3}' | sed 's/^v=//')"
  echo "- quince: checkout at commit $commit; binary \`$bin\` (modified $(date -u -r "$bin" '+%Y-%m-%d %H:%M UTC'), sha256 $(sha256sum "$bin" | cut -c1-12))"
}

# write_latest DIR: (re)write DIR/LATEST.md linking the newest report of each kind in DIR.
write_latest() {
  local dir=$1 kind newest f found=0 others=""
  {
    echo "# Latest benchmark reports"
    echo
    echo "Written by the scripts in \`bench/\` (see \`docs/benchmarks.md\`); the newest report of each kind in this directory."
    echo
    for kind in compare scaling memory; do
      newest=""
      for f in "$dir"/????-??-??-????-"$kind".md; do  # glob order is sorted: the last is the newest
        [ -e "$f" ] && newest=${f##*/}
      done
      [ -n "$newest" ] || continue
      found=1
      case $kind in
        compare) echo "- Throughput, latency and CPU per request vs redis-server (\`bench/compare.sh\`): [${newest}](${newest})" ;;
        scaling) echo "- Throughput with 1 and 2 threads and load generators (\`bench/scaling.sh\`): [${newest}](${newest})" ;;
        memory)  echo "- Memory per dataset vs redis-server (\`bench/memory.sh\`): [${newest}](${newest})" ;;
      esac
      if [ -f "$dir/${newest%.md}.svg" ]; then
        echo
        echo "  ![${kind} chart](${newest%.md}.svg)"
        echo
      fi
    done
    if [ "$found" = 0 ]; then
      echo "No report from \`bench/compare.sh\`, \`bench/scaling.sh\` or \`bench/memory.sh\` yet."
    fi
    for f in "$dir"/*.md; do
      [ -e "$f" ] || continue
      case ${f##*/} in LATEST.md | ????-??-??-????-compare.md | ????-??-??-????-scaling.md | ????-??-??-????-memory.md) continue ;; esac
      others+="[${f##*/}](${f##*/}), "
    done
    if [ -n "$others" ]; then
      echo
      echo "Earlier results, written by hand: ${others%, }."
    fi
  } | cat -s > "$dir/LATEST.md"
}

# Script tests, usable in -t next to redis-benchmark's own tests (compare.sh, scaling.sh):
#   eval          EVAL "return 1" 0 (the body is hashed and looked up on every call)
#   evalsha       EVALSHA of "return 1"
#   script_3cmds  EVALSHA of a script running SET, INCR and GET on its one declared key
#   script_loop   EVALSHA of a 100-iteration Lua loop (no command)
#   fcall         FCALL of a library function running the same three commands
#   script_heavy  EVALSHA of a 10,000-iteration Lua loop, then INCR of its one declared key:
#                 the server's own work dominates (what more worker threads can share)
# load_scripts TARGET ("-p PORT" or "-s PATH") loads the scripts and the library into a server
# (load_scripts_for TESTS TARGET only when TESTS hold a script test);
# script_command TEST [KEY] sets BENCH_CMD to the command's arguments (empty for other tests).
# KEY defaults to key:__rand_int__ (redis-benchmark fills in a random number with -r).
BENCH_SCRIPT_1='return 1'
BENCH_SCRIPT_3="redis.call('SET', KEYS[1], ARGV[1]) redis.call('INCR', KEYS[1]) return redis.call('GET', KEYS[1])"
BENCH_SCRIPT_LOOP='local s = 0 for i = 1, 100 do s = s + i end return s'
BENCH_SCRIPT_HEAVY="local s = 0 for i = 1, 10000 do s = s + i end redis.call('INCR', KEYS[1]) return s"
BENCH_LIBRARY="#!lua name=quincebench
redis.register_function('three', function(keys, args) redis.call('SET', keys[1], args[1]) redis.call('INCR', keys[1]) return redis.call('GET', keys[1]) end)"
bench_sha1() { printf '%s' "$1" | sha1sum | cut -d' ' -f1; }
is_script_test() { case $1 in eval|evalsha|script_3cmds|script_loop|fcall|script_heavy) return 0 ;; *) return 1 ;; esac; }
load_scripts() {
  local body
  for body in "$BENCH_SCRIPT_1" "$BENCH_SCRIPT_3" "$BENCH_SCRIPT_LOOP" "$BENCH_SCRIPT_HEAVY"; do
    # shellcheck disable=SC2086
    redis-cli $1 SCRIPT LOAD "$body" >/dev/null
  done
  # shellcheck disable=SC2086
  redis-cli $1 FUNCTION LOAD REPLACE "$BENCH_LIBRARY" >/dev/null
}
# load_scripts_for TESTS TARGET: load_scripts TARGET if the comma-separated TESTS hold a script test.
load_scripts_for() {
  local test
  for test in ${1//,/ }; do
    if is_script_test "$test"; then load_scripts "$2"; return; fi
  done
}
script_command() {
  local key=${2:-key:__rand_int__}
  BENCH_CMD=()
  case $1 in
    eval) BENCH_CMD=(EVAL "$BENCH_SCRIPT_1" 0) ;;
    evalsha) BENCH_CMD=(EVALSHA "$(bench_sha1 "$BENCH_SCRIPT_1")" 0) ;;
    script_3cmds) BENCH_CMD=(EVALSHA "$(bench_sha1 "$BENCH_SCRIPT_3")" 1 "$key" 1) ;;
    script_loop) BENCH_CMD=(EVALSHA "$(bench_sha1 "$BENCH_SCRIPT_LOOP")" 0) ;;
    fcall) BENCH_CMD=(FCALL three 1 "$key" 1) ;;
    script_heavy) BENCH_CMD=(EVALSHA "$(bench_sha1 "$BENCH_SCRIPT_HEAVY")" 1 "$key") ;;
  esac
}

# start_pinned_servers: quince-server ($QUINCE_BIN, --threads $QUINCE_THREADS) and
# redis-server, both pinned to $SERVER_CPU, on free ports with temporary directories; sets
# QPORT RPORT QPID RPID WORK (a scratch directory) and stops both (by pid) on exit.
start_pinned_servers() {
  QPORT=$(free_port); RPORT=$(free_port)
  QDIR=$(mktemp -d); RDIR=$(mktemp -d); WORK=$(mktemp -d)
  QPID=""; RPID=""
  trap 'kill $QPID $RPID 2>/dev/null || true; sleep 0.2; rm -rf "$QDIR" "$RDIR" "$WORK"' EXIT
  trap 'exit 130' INT; trap 'exit 143' TERM
  taskset -c "$SERVER_CPU" "$QUINCE_BIN" --port "$QPORT" --bind 127.0.0.1 --save "" --threads "$QUINCE_THREADS" --dir "$QDIR" >/dev/null 2>&1 &
  QPID=$!
  taskset -c "$SERVER_CPU" redis-server --port "$RPORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$RDIR" >/dev/null 2>&1 &
  RPID=$!
  wait_ready "$QPORT"; wait_ready "$RPORT"
}

# install_bullmq: bench/bullmq/node_modules on first use.
install_bullmq() {
  if [ ! -d "$root/bench/bullmq/node_modules/bullmq" ]; then
    (cd "$root/bench/bullmq" && npm ci --no-audit --no-fund >&2)
  fi
}

# queue_rates JSON: "ENQUEUE PROCESS" jobs/s from a queue benchmark's JSON line
# (bench/bullmq/bench.mjs, crates/queue/examples/queue_bench.rs).
queue_rates() {
  echo "$1" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["enqueue_jobs_per_s"], d["process_jobs_per_s"])'
}

# report KIND TITLE: prints "# TITLE", $SETTINGS and the table in $TABLE; unless OUT is
# "none", also writes OUT/<stamp>-KIND.md with the machine facts and $CMDLINE, and
# rewrites OUT/LATEST.md.
report() {
  local kind=$1 title=$2 base
  echo "# $title"
  echo
  echo "$SETTINGS"
  echo
  cat "$TABLE"
  [ "$OUT" != none ] || return 0
  base=$(report_base "$OUT" "$kind")
  {
    echo "# $title"
    echo
    machine_facts "$QUINCE_BIN"
    echo
    echo "Command: \`$CMDLINE\`"
    echo
    echo "Settings: $SETTINGS."
    echo
    cat "$TABLE"
  } > "$OUT/$base.md"
  write_latest "$OUT"
  echo "report: $OUT/$base.md" >&2
}
