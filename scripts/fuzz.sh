#!/usr/bin/env bash
# Builds the sanitized copies of the front end, the fat binary reader and
# the module check, and their libFuzzer fuzzers, in build-fuzz/ (a tree of
# their own, so that the everyday build stays lean), then runs their tests:
# the fuzzers (a minute for the front end, half a minute for the module
# check), the mutation and damaged-input tests under AddressSanitizer and
# UBSan.
#
#   scripts/fuzz.sh               # what CI runs (scripts/test.sh calls it)
#   scripts/fuzz.sh --minutes 60  # then a longer fuzzing campaign
#
# Needs what scripts/setup.sh installs; run that first.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

minutes=0
while (($#)); do
  case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    *) echo "usage: scripts/fuzz.sh [--minutes N]" >&2; exit 2 ;;
  esac
done

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

if [ ! -f build-fuzz/build.ninja ]; then
  say "Configuring the sanitizer and fuzzing build in build-fuzz/"
  cmake -S . -B build-fuzz -G Ninja \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DKILN_WARNINGS_AS_ERRORS=ON -DKILN_ENABLE_FUZZING=ON \
    -DPython3_EXECUTABLE="$root/.venv/bin/python"
fi
say "Building the fuzzer and the sanitized tests"
cmake --build build-fuzz --target fuzz_frontend frontend_mutation_test_sanitized \
  backend_fatbin_reader_test_sanitized fuzz_module_check module_check_test_sanitized
say "Running them"
ctest --test-dir build-fuzz --output-on-failure --parallel "$(nproc)" -L sanitizers
if ((minutes > 0)); then
  say "Fuzzing the front end for $minutes minutes"
  mkdir -p build-fuzz/tests/frontend/fuzz_corpus
  ASAN_OPTIONS=detect_leaks=0 build-fuzz/tests/frontend/fuzz_frontend \
    -max_total_time=$((minutes * 60)) -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
    build-fuzz/tests/frontend/fuzz_corpus examples tests/frontend/invalid
fi
