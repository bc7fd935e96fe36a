#!/usr/bin/env bash
# The embedded library against Redlite and SQLite in one run (bench/embedded-peers/):
# GET and SET, single thread, in memory and on a file (quince: appendfsync everysec;
# Redlite and SQLite: WAL with synchronous=NORMAL, Redlite's own setting).
#
# Usage: bench/embedded.sh [-r ROUNDS] [-k KEYS] [-o DIR]
#   -r  best of ROUNDS one-second runs per measurement     default: 3
#   -k  keys                                                default: 1000
#   -o  report directory, or "none" for no files            default: bench/results
# Environment: REDLITE_SRC, a checkout of russellromney/redlite, and REDLITE_COMMIT, its
# commit for the report (default: a clone from GitHub into bench/embedded-peers/redlite-src). Needs cargo and network access to
# crates.io for rusqlite and Redlite's dependencies (a bench-only build, outside the
# workspace).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=3; KEYS=1000; OUT="$root/bench/results"
while getopts "r:k:o:h" opt; do
  case $opt in
    r) ROUNDS=$OPTARG ;; k) KEYS=$OPTARG ;; o) OUT=$OPTARG ;;
    *) sed -n '2,14p' "$0"; exit 2 ;;
  esac
done
peers="$root/bench/embedded-peers"
if [ ! -d "$peers/redlite-src/crates/redlite" ]; then
  rm -rf "$peers/redlite-src"
  if [ -n "${REDLITE_SRC:-}" ]; then
    cp -r "$REDLITE_SRC" "$peers/redlite-src"
    echo "${REDLITE_COMMIT:-unknown}" > "$peers/redlite-src/.bench-commit"
  else
    git clone -q --depth 1 https://github.com/russellromney/redlite "$peers/redlite-src"
    git -C "$peers/redlite-src" rev-parse --short HEAD > "$peers/redlite-src/.bench-commit"
  fi
  # Its manifest names an optional dependency by a path on its author's machine.
  sed -i '/sqlite-compress-vfs = {/d; /^compression = /d' "$peers/redlite-src/crates/redlite/Cargo.toml"
fi
commit=$(cat "$peers/redlite-src/.bench-commit" 2>/dev/null || echo unknown)
(cd "$peers" && cargo build --release -q)
table=$("$peers/target/release/embedded-peers" "$ROUNDS" "$KEYS")
report="# quince embedded vs Redlite and SQLite

- date: $(date -u '+%Y-%m-%d %H:%M UTC')
- host: $(nproc) cpus, $(uname -r)
- quince: commit $(git -C "$root" rev-parse --short HEAD); Redlite: commit $commit
- single thread, $KEYS keys, 12-byte values, best of $ROUNDS one-second runs; file mode: quince appendfsync everysec, Redlite and SQLite WAL + synchronous=NORMAL

$table"
echo "$report"
if [ "$OUT" != none ]; then
  mkdir -p "$OUT"
  f="$OUT/$(date -u +%Y-%m-%d-%H%M)-embedded.md"
  echo "$report" > "$f"
  echo "report: $f"
fi
