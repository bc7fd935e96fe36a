#!/usr/bin/env bash
# The fault-injection harness's CI budget: its checkers' own tests, then short runs of
# quince-server (the binary `cargo test --workspace` built) under kills, pauses, power
# losses and a full disk. Longer runs: `go run . -help` (docs/guarantees.md).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export QUINCE_SERVER_BIN=${QUINCE_SERVER_BIN:-$root/target/debug/quince-server}
cd "$here"
go vet ./...
go test -count=1 -timeout 20m -v ./... 2>&1 | grep -v '^=== RUN'
