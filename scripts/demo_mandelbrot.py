"""Imports the mandelbrot module `kiln build` made and draws its kernel's output.

    python scripts/demo_mandelbrot.py build/demo

Only the built module and the `kiln` runtime are imported: no Numba, no
compiler. Without a GPU the kernel runs on Kiln's CPU engine (a warning
says so once).
"""

import sys

import numpy as np

sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else "build/demo")
from mandelbrot import create_fractal  # noqa: E402

image = np.zeros((24, 72), dtype=np.uint8)
blocks, threads = (3, 2), (32, 16)  # 96 x 32 threads cover the 72 x 24 image
create_fractal[blocks, threads](-2.0, 1.0, -1.0, 1.0, image, 20)

shades = " .:-=+*#%@"
for row in image:
    print("".join(shades[min(int(v) * len(shades) // 256, len(shades) - 1)] for v in row))
print("numba imported:", "numba" in sys.modules)
