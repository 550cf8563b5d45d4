#!/usr/bin/env bash
# Sets up and builds Kiln, then runs its main job on a bundled example:
# type-checks examples/mandelbrot.py, builds it into a Python extension
# module holding fat binaries for Kiln's default GPU architectures and host
# code, lists what the module holds, then imports it in a Python without
# Numba on the path and runs its kernel (on the CPU engine when this machine
# has no GPU), drawing the result.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
cd "$root"
printf '\033[1m==> kiln check -v examples/mandelbrot.py\033[0m\n'
.venv/bin/kiln check -v examples/mandelbrot.py
printf '\033[1m==> kiln build examples/mandelbrot.py --module mandelbrot -o build/demo -v\033[0m\n'
.venv/bin/kiln build examples/mandelbrot.py --module mandelbrot -o build/demo -v --python .venv/bin/python
printf '\033[1m==> kiln inspect build/demo/mandelbrot*.so\033[0m\n'
.venv/bin/kiln inspect build/demo/mandelbrot*.so
printf '\033[1m==> python scripts/demo_mandelbrot.py build/demo\033[0m\n'
.venv/bin/python scripts/demo_mandelbrot.py build/demo
