"""Every example kernel module in examples/ built with `kiln build --module`,
imported, and run on the CPU engine with realistic inputs, launched the way
the course does, and compared with a NumPy reference that follows Numba's
typing (float32 data widened to float64 by float literals, int32 data
computed in int64, and so on), so that most results compare exactly.
"""

import math
import pathlib
import sys

import numpy as np
import pytest

from kiln.cuda.random import create_xoroshiro128p_states

# The reference xoroshiro128p generator of the kernel tests, itself checked
# bit for bit against Numba's.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "kernels"))
from xoroshiro128p_reference import uniform_float32  # noqa: E402

EXAMPLES = pathlib.Path(__file__).resolve().parents[3] / "examples"


@pytest.fixture(scope="module")
def examples(example):
    return example


def test_every_example_is_covered():
    covered = {"atomics", "haversine", "histogram", "mandelbrot", "monte_carlo_pi", "normalize", "reciprocal",
               "reductions", "rounding", "transpose", "type_widening", "ufuncs", "vector_add"}
    assert {p.stem for p in EXAMPLES.glob("*.py")} == covered


def test_mandelbrot(examples):
    module = examples("mandelbrot")
    height, width, iterations = 96, 144, 20
    image = np.zeros((height, width), dtype=np.uint8)
    blocks = ((width + 31) // 32, (height + 31) // 32)
    module.create_fractal[blocks, (32, 32)](-2.0, 1.0, -1.0, 1.0, image, iterations)

    expected = np.zeros_like(image)
    pixel_x = (1.0 - -2.0) / width
    pixel_y = (1.0 - -1.0) / height
    for y in range(height):
        for x in range(width):
            c = complex(-2.0 + x * pixel_x, -1.0 + y * pixel_y)
            z = 0j
            color = 255
            for i in range(iterations):
                z = z * z + c
                if z.real * z.real + z.imag * z.imag >= 4:
                    color = 255 * i // iterations
                    break
            expected[y, x] = color
    np.testing.assert_array_equal(image, expected, err_msg="create_fractal colours")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_haversine(examples, dtype):
    module = examples("haversine")
    rng = np.random.default_rng(1)
    n = 1000
    lat1 = rng.uniform(-90, 90, n).astype(dtype)
    lon1 = rng.uniform(-180, 180, n).astype(dtype)
    out = np.zeros(n, dtype=dtype)
    t = np.dtype(dtype).type
    target_lat, target_lon = t(48.8566), t(2.3522)
    module.haversine[4, 64](lat1, lon1, target_lat, target_lon, out)
    # math.pi / 180 is a float64: the computation is float64 for both types.
    x1, y1 = math.pi / 180 * lat1.astype(np.float64), math.pi / 180 * lon1.astype(np.float64)
    x2, y2 = math.pi / 180 * np.float64(target_lat), math.pi / 180 * np.float64(target_lon)
    a = np.sin((x2 - x1) / 2) ** 2 + np.cos(x1) * np.cos(x2) * np.sin((y2 - y1) / 2) ** 2
    expected = (2 * np.arcsin(np.sqrt(a)) * 6371).astype(dtype)
    np.testing.assert_allclose(out, expected, rtol={"float32": 1e-6, "float64": 1e-12}[dtype],
                               err_msg=f"haversine distances in {dtype}")


def histogram_reference(x, xmin, xmax, nbins):
    # (xmax - xmin) is float32; dividing by the int64 bin count gives float64.
    bin_width = np.float64(np.float32(xmax - xmin)) / nbins
    bins = np.trunc((x - xmin).astype(np.float64) / bin_width)
    bins = bins[(bins >= 0) & (bins < nbins)].astype(np.int64)
    return np.bincount(bins, minlength=nbins).astype(np.int32)


@pytest.mark.parametrize("kernel", ["cuda_histogram", "cuda_histogram_shared"])
def test_histogram(examples, kernel):
    module = examples("histogram")
    x = np.random.default_rng(2).normal(size=10000).astype(np.float32)
    x[:4] = [-4.0, 3.9999998, 4.0, -4.0000005]  # the edges of [xmin, xmax)
    xmin, xmax = np.float32(-4.0), np.float32(4.0)
    out = np.zeros(64, dtype=np.int32)
    getattr(module, kernel)[8, 128](x, xmin, xmax, out)
    np.testing.assert_array_equal(out, histogram_reference(x, xmin, xmax, 64), err_msg=kernel)


def test_normalize(examples):
    module = examples("normalize")
    x = np.arange(32 * 3).astype(np.float32).reshape((32, 3)) + 1
    original = x.copy()
    module.normalize[1, 32](x)
    mean = np.zeros(32, dtype=np.float32)
    for j in range(3):
        mean = mean + original[:, j]  # float32 accumulation
    mean = mean / 3  # float32 / int64: float64
    expected = (original / mean[:, None]).astype(np.float32)
    np.testing.assert_array_equal(x, expected, err_msg="rows divided by their means")


@pytest.mark.parametrize("kernel", ["transpose", "tile_transpose"])
def test_transpose(examples, kernel):
    module = examples("transpose")
    size = 256
    a = np.arange(size * size, dtype=np.int32).reshape((size, size))
    out = np.zeros_like(a)
    getattr(module, kernel)[(size // 32, size // 32), (32, 8)](a, out)
    np.testing.assert_array_equal(out, a.T, err_msg=kernel)


def test_rounding(examples):
    module = examples("rounding")
    values = np.random.default_rng(3).random(1000)
    values[:6] = [0.0125, 0.0135, 2.5e-3, 0.9995, 0.5, 1.2345]  # halfway cases and friends
    out = np.zeros_like(values)
    module.gpu_round[8, 128](values, out, 3)
    scaled = values * 1000  # 10 ** 3 is the int64 1000
    y = np.floor(scaled)
    r = scaled - y
    y = np.where(r > 0.5, y + 1.0, y)
    halfway = r == 0.5
    y = np.where(halfway & (y - 2.0 * np.floor(0.5 * y) == 1.0), y + 1.0, y)
    np.testing.assert_array_equal(out, y / 1000, err_msg="gpu_round(x, 3)")


def test_type_widening(examples):
    module = examples("type_widening")
    x = np.zeros(1, dtype=np.float32)
    module.assign_constant[1, 1](x)
    assert x[0] == 2.0, "assign_constant"
    x = np.full(1, 0.1, dtype=np.float32)
    module.add_constant[1, 1](x)
    assert x[0] == np.float32(np.float64(np.float32(0.1)) + 2.0), "add_constant: float32 += float64"
    x = np.full(1, 0.1, dtype=np.float32)
    y = np.full(1, 0.7, dtype=np.float32)
    module.add_constant_widening[1, 1](x, y)
    widened = np.float32(np.float64(np.float32(0.1)) + (np.float64(np.float32(0.7)) + 2.0))
    assert x[0] == widened, "add_constant_widening computes in float64"
    x = np.full(1, 0.1, dtype=np.float32)
    module.add_constant_narrow[1, 1](x, y)
    assert x[0] == np.float32(0.1) + (np.float32(0.7) + np.float32(2.0)), "add_constant_narrow stays float32"

    x = np.zeros(1, dtype=np.float32)
    y = np.array([5, 7, 13, 3, 4], dtype=np.int32)
    module.add_constant_2[1, 1](x, y, np.int32(0))
    a, b, c, d, e = 5, 2.0, 7 / 6, 13 % 8, 3 * 4
    acc = np.float32(0)
    for _ in range(5):
        a += 2
        b -= c
        e *= d
        acc = np.float32(np.float64(acc) + (a * b + c * d - e))
    assert x[0] == acc, "add_constant_2"

    for kernel in ("index_computation", "index_computation_int32"):
        x = np.zeros((1024, 3), dtype=np.int32)
        getattr(module, kernel)[8, 128](x)
        i, j = np.meshgrid(np.arange(1024), np.arange(3), indexing="ij")
        np.testing.assert_array_equal(x, i * 2 + j * 3, err_msg=kernel)


def test_reciprocal(examples):
    module = examples("reciprocal")
    x = np.array([1.0, -2.0, 0.5, 3.0, 1e-300, -7.25, 1e300, 10.0, 4.0, 0.1])
    expected = 1 / x
    module.reciprocal[1, 32](x)
    np.testing.assert_array_equal(x, expected, err_msg="reciprocal (debug=True, opt=0)")


@pytest.mark.parametrize("kernel", ["add_kernel", "add_kernel_grid", "vector_add"])
def test_vector_add(examples, kernel):
    module = examples("vector_add")
    n = 100000
    x = np.arange(n).astype(np.float32)
    y = x * 2
    out = np.zeros_like(x)
    if kernel == "vector_add":
        module.vector_add[30, 128](out, x, y)
    else:
        getattr(module, kernel)[30, 128](x, y, out)
    np.testing.assert_array_equal(out, x + y, err_msg=kernel)


def test_increment_kernel(examples):
    module = examples("vector_add")
    data = np.arange(4096, dtype=np.int32)
    module.increment_kernel[4096 // 256, 256](data, np.int32(26))
    np.testing.assert_array_equal(data, np.arange(4096) + 26, err_msg="increment_kernel")


def test_atomics(examples):
    module = examples("atomics")
    counter = np.zeros(1, dtype=np.int32)
    module.thread_counter_safe[64, 64](counter)
    assert counter[0] == 4096, "thread_counter_safe counts every thread"
    counter = np.zeros(1, dtype=np.int32)
    module.thread_counter_race[64, 64](counter)
    assert 1 <= counter[0] <= 4096, "thread_counter_race loses updates but stays in range"


def test_ufuncs(examples):
    module = examples("ufuncs")
    rng = np.random.default_rng(4)
    x = rng.uniform(-3, 3, 1000).astype(np.float32)
    mean, sigma = np.float32(0.5), np.float32(1.5)
    got = module.gaussian_pdf(x, mean, sigma)
    sqrt_2pi = np.float32((2 * math.pi) ** 0.5)
    z = (x - mean) / sigma  # float32
    expected = (np.exp(-0.5 * (z * z).astype(np.float64)) / np.float32(sigma * sqrt_2pi)).astype(np.float32)
    np.testing.assert_allclose(got, expected, rtol=2e-7, err_msg="gaussian_pdf (broadcast scalars)")

    rho1, theta1, rho2, theta2 = (rng.uniform(0, 2, 500).astype(np.float32) for _ in range(4))
    got = module.polar_distance(rho1, theta1, rho2, theta2)
    x1, y1 = rho1 * np.cos(theta1), rho1 * np.sin(theta1)
    x2, y2 = rho2 * np.cos(theta2), rho2 * np.sin(theta2)
    squares = ((x1 - x2) * (x1 - x2) + (y1 - y2) * (y1 - y2)).astype(np.float64)
    np.testing.assert_allclose(got, (squares ** 0.5).astype(np.float32), rtol=1e-5, atol=1e-6,
                               err_msg="polar_distance (a device function returning a tuple)")

    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    np.testing.assert_array_equal(module.add_ufunc(a, a[0]), a + a[0], err_msg="add_ufunc float32, broadcast rows")
    ints = np.arange(-10, 10, dtype=np.int64)
    np.testing.assert_array_equal(module.add_ufunc(ints, ints * 3), ints * 4, err_msg="add_ufunc int64")

    for dtype in (np.float32, np.float64):
        p = rng.uniform(1, 2, 300).astype(dtype)
        q = rng.uniform(1, 2, 300).astype(dtype)
        # The int64 literal 2 widens float32 operands to float64.
        expected = (2 * (p - q).astype(np.float64) / (p + q).astype(np.float64)).astype(dtype)
        np.testing.assert_array_equal(module.rel_diff(p, q), expected, err_msg=f"rel_diff {dtype.__name__}")


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_reductions(examples, dtype):
    module = examples("reductions")
    values = np.arange(1234, dtype=dtype) + 1
    assert module.sum_reduce(values) == values.sum(), f"sum_reduce of 1..1234 in {dtype}"
    assert module.sum_reduce(values, init=10) == values.sum() + 10, "sum_reduce with init"
    shuffled = np.random.default_rng(5).permutation(values)
    assert module.max_reduce(shuffled) == 1234, f"max_reduce in {dtype}"
    # Numba folds `init` (default 0) into every reduction, even a max.
    assert module.max_reduce(-shuffled) == 0, "max_reduce of negatives with the default init=0"
    assert module.max_reduce(-shuffled, init=-5000) == -1, "max_reduce of negatives with a lower init"
    if dtype.startswith("float"):
        noisy = np.random.default_rng(6).normal(size=100000).astype(dtype)
        total = module.sum_reduce(noisy)
        # A tree of additions: within log2(n) roundings of the magnitudes.
        bound = math.log2(noisy.size) * float(np.finfo(dtype).eps) * float(np.abs(noisy).sum())
        assert abs(float(total) - float(noisy.astype(np.float64).sum())) <= bound, f"sum_reduce of noise in {dtype}"


def test_monte_carlo_pi(examples):
    module = examples("monte_carlo_pi")
    blocks, threads, iterations = 4, 32, 500
    states = create_xoroshiro128p_states(blocks * threads, seed=1)
    reference = states.copy_to_host()
    out = np.zeros(blocks * threads, dtype=np.float32)
    module.compute_pi[blocks, threads](states, iterations, out)
    inside = np.zeros(blocks * threads, dtype=np.int64)
    for _ in range(iterations):
        x = uniform_float32(reference)
        y = uniform_float32(reference)
        # float32 x**2 + y**2 compared with the float64 1.0.
        inside += (x * x + y * y).astype(np.float64) <= 1.0
    expected = (4.0 * inside / iterations).astype(np.float32)
    np.testing.assert_array_equal(out, expected, err_msg="compute_pi per thread, same random streams")
    assert abs(out.mean() - math.pi) < 0.05


def test_curand_interop_runs_curands_device_api_on_the_cpu_engine(import_built):
    """The shim compiles as host C++ against the toolkit's cuRAND headers:
    each thread's subsequence is its own, the same seed gives the same
    draws, and their low bits are fair coins (4.5 sigma: 10000 draws a
    thread, 64 threads)."""
    module = import_built(EXAMPLES / "curand_interop" / "curand_kernels.py")

    def low_bit_counts(seed):
        states = np.zeros(64 * 48, dtype=np.uint8)
        module.init_states[2, 32](states, seed)
        assert len({bytes(states[i * 48:(i + 1) * 48]) for i in range(64)}) == 64, \
            "every thread gets a state of its own subsequence"
        counts = np.zeros(64, dtype=np.int32)
        module.count_low_bits_native[2, 32](states, 10000, counts)
        return counts

    counts = low_bit_counts(1234)
    np.testing.assert_array_equal(counts, low_bit_counts(1234), err_msg="a seed's draws are the same every run")
    assert np.all(np.abs(counts - 5000) < 4.5 * 50), counts
    assert len(set(counts.tolist())) > 1, "the threads' streams differ"
    assert not np.array_equal(counts, low_bit_counts(99)), "another seed, other draws"
