#!/usr/bin/env bash
# Sets up and builds Kiln, then runs its tests.
#
#   scripts/test.sh          every test: the C++ suites through ctest, the
#                            Python suites through pytest, then the fuzzer
#                            and sanitizer builds (scripts/fuzz.sh); CI runs this
#   scripts/test.sh --quick  the edit loop: the C++ suites but what is
#                            labelled slow, and the Python test files that
#                            tests/quick_tier.txt lists
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
quick=0
case "${1:-}" in
  "") ;;
  --quick) quick=1 ;;
  *) echo "usage: scripts/test.sh [--quick]" >&2; exit 2 ;;
esac
"$root/scripts/setup.sh"
cd "$root"
if ((quick)); then
  printf '\033[1m==> ctest (quick)\033[0m\n'
  ctest --test-dir build --output-on-failure --parallel "$(nproc)" -LE slow
  printf '\033[1m==> pytest (quick)\033[0m\n'
  mapfile -t quick_tests < <(grep -v '^#' tests/quick_tier.txt | grep .)
  .venv/bin/python -m pytest -q -m "not slow" "${quick_tests[@]}"
  exit 0
fi
printf '\033[1m==> ctest\033[0m\n'
ctest --test-dir build --output-on-failure --parallel "$(nproc)"
printf '\033[1m==> pytest\033[0m\n'
.venv/bin/python -m pytest -q tests
printf '\033[1m==> fuzzing and sanitizers\033[0m\n'
"$root/scripts/fuzz.sh"
