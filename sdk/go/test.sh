#!/usr/bin/env bash
# Runs the Go module's tests against quince-server and redis-server (the binaries
# `cargo test --workspace` built; redis-server from PATH, required when QUINCE_REQUIRE_REDIS=1).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export QUINCE_SERVER_BIN=${QUINCE_SERVER_BIN:-$root/target/debug/quince-server}
export QUINCE_QUEUE_BIN=${QUINCE_QUEUE_BIN:-$root/target/debug/quince-queue}
cd "$here"
go vet ./...
go test -count=1 ./...
