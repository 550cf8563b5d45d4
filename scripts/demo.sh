#!/usr/bin/env bash
# Sets up and builds Kiln, then runs its main job on a bundled example:
# type-checks examples/mandelbrot.py, compiles its kernel to fat binaries for
# Kiln's default GPU architectures, and runs it on the CPU engine (this
# machine need not have a GPU), drawing the result.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
cd "$root"
printf '\033[1m==> kiln check -v examples/mandelbrot.py\033[0m\n'
.venv/bin/kiln check -v examples/mandelbrot.py
printf '\033[1m==> kiln build examples/mandelbrot.py --emit fatbin -o build/demo -v\033[0m\n'
.venv/bin/kiln build examples/mandelbrot.py --emit fatbin -o build/demo -v
printf '\033[1m==> create_fractal on the CPU engine\033[0m\n'
.venv/bin/python scripts/demo_mandelbrot.py
