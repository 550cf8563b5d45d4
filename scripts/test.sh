#!/usr/bin/env bash
# Sets up and builds Kiln, then runs every test: the C++ suites through
# ctest, then the Python suites through pytest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
cd "$root"
printf '\033[1m==> ctest\033[0m\n'
ctest --test-dir build --output-on-failure --parallel "$(nproc)"
printf '\033[1m==> pytest\033[0m\n'
.venv/bin/python -m pytest -q tests
