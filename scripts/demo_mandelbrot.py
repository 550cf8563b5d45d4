"""Runs examples/mandelbrot.py's kernel on Kiln's CPU engine and draws it.

Until the Python runtime arrives (issue 4), kernels reach the CPU engine
through the library the back-end tests use (tests/backend/kiln_cpu.py):
the module is compiled for the host by Kiln's back end, linked, and
launched as Numba would launch it.
"""

import pathlib
import sys

import numpy as np

root = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(root / "tests" / "backend"))
import kiln_cpu  # noqa: E402

module = kiln_cpu.compile_module(root / "examples" / "mandelbrot.py")
image = np.zeros((24, 72), dtype=np.uint8)
blocks, threads = (3, 2), (32, 16)  # 96 x 32 threads cover the 72 x 24 image
module.create_fractal[blocks, threads](-2.0, 1.0, -1.0, 1.0, image, 20)

shades = " .:-=+*#%@"
for row in image:
    print("".join(shades[min(int(v) * len(shades) // 256, len(shades) - 1)] for v in row))
