#!/usr/bin/env bash
# Every test: the Rust workspace (differential tests skip without redis-server unless
# QUINCE_REQUIRE_REDIS=1; crates/sim runs 10,000 simulation seeds), the simulator's test
# build with a seeded bug it must find and replay, then the Python package in sdk/python,
# then the Go module in sdk/go, then the fault-injection harness in tests/chaos (all use
# the binaries cargo built: quince-server, quince-queue).
set -euo pipefail
cd "$(dirname "$0")"
cargo test --workspace
cargo test -p quince-sim --features seeded-bug
sdk/python/test.sh
sdk/go/test.sh
tests/chaos/test.sh
