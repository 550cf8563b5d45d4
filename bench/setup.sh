#!/usr/bin/env bash
# Creates bench/.venv, the benchmark environment with Numba's CUDA target
# (the yardstick of the scripts in bench/; bench/run.py runs this first).
# Idempotent: a second run only checks it.
#
#   bash bench/setup.sh
#
# Numba compiles PTX without a GPU; it finds NVVM and libdevice through
# CUDA_HOME (default /usr/local/cuda), which the benchmarks set for it.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv"
python="${PYTHON:-python3}"
packages=(numba==0.68.1 numba-cuda==0.30.4 numpy matplotlib)

cuda_home="${CUDA_HOME:-${CUDA_PATH:-/usr/local/cuda}}"
if [ ! -x "$cuda_home/bin/ptxas" ]; then
  echo "error: no CUDA toolkit at $cuda_home (set CUDA_HOME): the benchmarks need its ptxas and NVVM" >&2
  exit 1
fi

if [ ! -x "$venv/bin/python" ]; then
  echo "==> Creating $venv"
  "$python" -m venv "$venv"
fi
stamp="$venv/.kiln-bench-packages"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "${packages[*]}" ]; then
  echo "==> Installing ${packages[*]}"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet "${packages[@]}"
  echo "${packages[*]}" > "$stamp"
fi

CUDA_HOME="$cuda_home" "$venv/bin/python" - <<'PY'
from importlib.metadata import version
import numba.cuda  # noqa: F401 - the CUDA target imports
print(f"bench/.venv: numba {version('numba')}, numba-cuda {version('numba-cuda')}, numpy {version('numpy')}, "
      f"matplotlib {version('matplotlib')}")
PY
