#!/usr/bin/env bash
# The device check: what a first session on a GPU machine runs, as one
# command. The GPU machine has Python, NumPy and the CUDA driver, but no
# Kiln compiler: everything it runs is built here first, into a bundle.
#
#   scripts/gpu-check.sh --prepare [--programs N]
#       here: builds the bundle into build-gpu-check/ (the kiln-runtime
#       wheel, the examples, vector_add as single-image builds, the check's
#       own kernels, N programs of the differential tester with the CPU
#       engine's outputs; default 1,000): scripts/gpu_check/prepare.py
#   scripts/gpu-check.sh [--out DIR]
#       on the GPU machine, from the repository's root, with
#       build-gpu-check/ carried there: runs every check on the CUDA driver
#       (kiln.cuda's host API with CuPy and PyTorch, and Kiln against
#       numba-cuda, among them) and writes DIR/gpu-check.json (default:
#       $OUT, else gpu-check-out/): scripts/gpu_check/device_checks.py
#   scripts/gpu-check.sh --dry-run [--programs N]
#       here: the same steps on a machine without a GPU (a bundle in a
#       temporary folder, kernels on the CPU engine, the image choice
#       against the stand-in driver the tests build; default 100 programs),
#       then how many bytes would travel: the repository's files and the
#       bundle, against the device tool's 64 MiB
#
# The device command is then `scripts/gpu-check.sh` with carry
# ["build-gpu-check"].
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode=check
programs=""
out="${OUT:-$root/gpu-check-out}"
while (($#)); do
  case "$1" in
    --prepare) mode=prepare; shift ;;
    --dry-run) mode=dry-run; shift ;;
    --programs) programs="$2"; shift 2 ;;
    --out) out="$(realpath -m "$2")"; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-check.sh: error: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
if [ -n "$programs" ] && ! [[ "$programs" =~ ^[0-9]+$ ]]; then
  echo "gpu-check.sh: error: --programs takes a number, not '$programs'" >&2
  exit 2
fi

python="${PYTHON:-}"
if [ -z "$python" ]; then
  if [ -x "$root/.venv/bin/python" ]; then python="$root/.venv/bin/python"; else python=python3; fi
fi
export PYTHONUNBUFFERED=1

case "$mode" in
  prepare)
    exec "$python" "$root/scripts/gpu_check/prepare.py" "$root/build-gpu-check" \
      --programs "${programs:-1000}"
    ;;
  check)
    if ! [ -f "$root/build-gpu-check/manifest.json" ]; then
      echo "gpu-check.sh: error: no bundle in build-gpu-check/: run scripts/gpu-check.sh --prepare here first, and carry build-gpu-check" >&2
      exit 1
    fi
    exec "$python" "$root/scripts/gpu_check/device_checks.py" "$root/build-gpu-check" --out "$out"
    ;;
  dry-run)
    build_dir="${KILN_BUILD_DIR:-$root/build}"
    stand_in="$build_dir/tests/runtime/stand_in_driver/libkiln_stand_in_cuda_driver.so"
    if ! [ -f "$stand_in" ]; then
      echo "gpu-check.sh: error: no stand-in driver at $stand_in; run scripts/setup.sh" >&2
      exit 1
    fi
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    "$python" "$root/scripts/gpu_check/prepare.py" "$work/build-gpu-check" \
      --programs "${programs:-100}" ${KILN_GPU_CHECK_RUNTIME_WHEEL:+--runtime-wheel "$KILN_GPU_CHECK_RUNTIME_WHEEL"}
    KILN_STAND_IN_LOG="$work/stand-in.log" "$python" "$root/scripts/gpu_check/device_checks.py" \
      "$work/build-gpu-check" --out "$out" --target cpu --driver "$stand_in"
    repository=$(cd "$root" && git ls-files -z --cached --others --exclude-standard \
      | xargs -0 -r stat -c %s -- 2>/dev/null | awk '{ total += $1 } END { print total + 0 }')
    bundle=$(find "$work/build-gpu-check" -type f -printf '%s\n' | awk '{ total += $1 } END { print total + 0 }')
    echo "would travel: $((repository + bundle)) bytes (repository $repository, bundle $bundle with ${programs:-100} programs) of 67108864"
    ;;
esac
