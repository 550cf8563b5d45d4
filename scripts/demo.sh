#!/usr/bin/env bash
# Sets up and builds Kiln, then runs its main job on a bundled example:
# type-checks examples/mandelbrot.py and prints its kernels with the types
# Kiln (and Numba) infer. Compiling and running kernels arrives with the
# back end and the CPU engine.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
cd "$root"
printf '\033[1m==> kiln check -v examples/mandelbrot.py\033[0m\n'
.venv/bin/kiln check -v examples/mandelbrot.py
