#!/usr/bin/env bash
# Every test: the Rust workspace (differential tests skip without redis-server unless
# QUINCE_REQUIRE_REDIS=1), then the Python package in sdk/python, then the Go module in
# sdk/go, then the fault-injection harness in tests/chaos (all use the binaries cargo
# built: quince-server, quince-queue).
set -euo pipefail
cd "$(dirname "$0")"
cargo test --workspace
sdk/python/test.sh
sdk/go/test.sh
tests/chaos/test.sh
