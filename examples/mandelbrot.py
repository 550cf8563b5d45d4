"""Mandelbrot set: a device function called from a 2D-grid kernel.

Source: "Numba for CUDA Programmers", session 1, "Example 1 - CUDA JIT" and
"Example 1 continued - caller CUDA JIT". The per-pixel ``mandelbrot`` function
becomes a device function and the doubly nested image loop of the CPU version
is flattened so that each thread handles one pixel, using ``cuda.grid(2)``.

What it shows:

* complex arithmetic (``complex(x, y)``, ``0j``, ``.real`` / ``.imag``);
* an early ``return`` from inside a ``for`` loop in a device function;
* a device function specialized from its call site (no signature);
* ``cuda.grid(2)`` tuple unpacking and a bounds guard on a 2D launch.

The course launches it with 32x32-thread blocks covering the image,
``create_fractal[(nblocksx, nblocksy), (32, 32)](-2.0, 1.0, -1.0, 1.0, image, 20)``,
so the scalars are Python floats / ints (float64 / int64 in Numba) and the
image is a fresh C-contiguous 2D ``np.uint8`` array.
"""

from numba import cuda


@cuda.jit(device=True)
def mandelbrot(x, y, max_iters):
    """Return a 0..255 colour: how quickly the point (x, y) escapes.

    Points that never escape within ``max_iters`` iterations are considered
    to be inside the Mandelbrot set and get 255.
    """
    c = complex(x, y)
    z = 0j
    for i in range(max_iters):
        z = z * z + c
        if z.real * z.real + z.imag * z.imag >= 4:
            return 255 * i // max_iters

    return 255


@cuda.jit("void(float64, float64, float64, float64, uint8[:, ::1], int64)")
def create_fractal(min_x, max_x, min_y, max_y, image, iters):
    """Colour every pixel of ``image`` (indexed [row, column]); one thread per pixel."""
    height = image.shape[0]
    width = image.shape[1]

    pixel_size_x = (max_x - min_x) / width
    pixel_size_y = (max_y - min_y) / height

    x, y = cuda.grid(2)  # x = blockIdx.x * blockDim.x + threadIdx.x, same for y
    if x < width and y < height:
        real = min_x + x * pixel_size_x
        imag = min_y + y * pixel_size_y
        color = mandelbrot(real, imag, iters)
        image[y, x] = color
