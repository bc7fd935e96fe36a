#!/usr/bin/env bash
# Builds the Python package's abi3 wheel (PyO3, maturin), installs it into a virtualenv
# under target/ and runs its pytest suite against it. Needs python3 with venv and pip (maturin and pytest come from PyPI).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
venv="$root/target/python-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check "maturin>=1.5,<2" "pytest>=7,<9" "redis>=5,<9" "pytest-timeout>=2,<3"
cd "$here"
# The abi3 wheel as users install it (not an in-place build): built, installed, tested.
wheels="$root/target/sdk-python/wheels"
rm -rf "$wheels"
VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" CARGO_TARGET_DIR="$root/target/sdk-python" \
  maturin build --release --quiet --out "$wheels"
"$venv/bin/pip" install -q --disable-pip-version-check --force-reinstall "$wheels"/quince-*-abi3-*.whl
rm -f python/quince/_quince*.so
# The queue's cross-language tests use the Rust binaries `cargo test --workspace` built.
export QUINCE_SERVER_BIN=${QUINCE_SERVER_BIN:-$root/target/debug/quince-server}
export QUINCE_QUEUE_BIN=${QUINCE_QUEUE_BIN:-$root/target/debug/quince-queue}
# From the tests' directory, so `import quince` finds the installed wheel, not python/.
cd tests
"$venv/bin/python" -m pytest -q --timeout=300 .
