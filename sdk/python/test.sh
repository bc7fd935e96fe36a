#!/usr/bin/env bash
# Builds the Python package (PyO3, maturin) into a virtualenv under target/ and runs its
# pytest suite. Needs python3 with venv and pip (maturin and pytest come from PyPI).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
venv="$root/target/python-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check "maturin>=1.5,<2" "pytest>=7,<9"
cd "$here"
VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" CARGO_TARGET_DIR="$root/target/sdk-python" \
  maturin develop --release --quiet
"$venv/bin/python" -m pytest -q tests
