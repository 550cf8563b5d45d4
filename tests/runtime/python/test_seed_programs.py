"""The course's host code, run on built kernel modules with one change:
`import kiln.cuda as cuda` instead of `from numba import cuda`.

Each program below is the host code of a seed program of the course Kiln grew from, as the course
shows it, in the order it appears there; the kernels come from examples/ or
from seed_programs/ (kernels the course defines inline, with the signatures
Numba infers for that host code). After a program runs, the test checks its
variables against NumPy.
"""

import pathlib
import textwrap

import numpy as np
import pytest

SEED_KERNELS = pathlib.Path(__file__).resolve().parent / "seed_programs"


@pytest.fixture(scope="module")
def run():
    """run(program, preamble) executes `preamble` (the kernel imports), then
    `program`, and returns the program's variables."""

    def execute(program, preamble=""):
        namespace = {}
        code = "import numpy as np\nimport kiln.cuda as cuda\n" + textwrap.dedent(preamble) + textwrap.dedent(program)
        exec(compile(code, "<seed program>", "exec"), namespace)
        return namespace

    return execute


def test_mandelbrot_call_site(run, example):
    example("mandelbrot")
    names = run(
        """
        height, width = 96, 144
        image = np.zeros((height, width), dtype=np.uint8)
        # Create grid of 32x32 blocks, one thread per pixel
        nthreads = 32
        nblocksy = (height // nthreads) + 1
        nblocksx = (width // nthreads) + 1

        config = (nblocksx, nblocksy), (nthreads, nthreads)
        create_fractal[config](-2.0, 1.0, -1.0, 1.0, image, 20)
        """,
        "from mandelbrot import create_fractal\n",
    )
    image = names["image"]
    # The set's interior never escapes: colour 255; the corner escapes at once.
    assert image[48, 96] == 255, "a point inside the Mandelbrot set should keep colour 255"
    assert image[0, 0] == 0, "a point far outside should escape in the first iteration"
    assert len(np.unique(image)) > 5, "the fractal should have several escape-time colours"


def test_memory_management(run, import_built):
    import_built(SEED_KERNELS / "memory_management.py")
    names = run(
        """
        config = 1, 32
        # Create arrays on host
        x = np.arange(10)
        y = x * 2
        r = np.zeros_like(x)

        # Transfers to and from host memory implied
        add[config](r, x, y)
        implied = r.copy()

        d_x = cuda.to_device(x)
        d_y = cuda.to_device(y)
        d_r = cuda.device_array_like(x)

        # No transfer implied
        add[config](d_r, d_x, d_y)

        # Bring data back when needed
        r = d_r.copy_to_host()

        # 1024 x 2048 matrix of float32
        arr = cuda.device_array((1024, 2048), dtype=np.float32)
        """,
        "from memory_management import add\n",
    )
    np.testing.assert_array_equal(names["implied"], np.arange(10) * 3, err_msg="add with host arrays")
    np.testing.assert_array_equal(names["r"], np.arange(10) * 3, err_msg="add with device arrays")
    arr = names["arr"]
    assert arr.shape == (1024, 2048) and arr.dtype == np.float32


def test_type_widening_programs(run, example):
    example("type_widening")
    names = run(
        """
        x = np.zeros(1, dtype=np.float32)
        assign_constant[1, 1](x)

        xi = np.zeros((1024, 3), dtype=np.int32)
        index_computation[32, 32](xi)
        """,
        "from type_widening import assign_constant, index_computation\n",
    )
    assert names["x"][0] == np.float32(2.0)
    i, j = np.meshgrid(np.arange(1024), np.arange(3), indexing="ij")
    np.testing.assert_array_equal(names["xi"], i * 2 + j * 3)


def test_streams_and_events(run, example):
    example("vector_add")
    names = run(
        """
        import time

        # Create a stream - differs from CUDA C++ example
        stream = cuda.stream()

        # Allocate host memory
        n = 16 * 1024 * 1024
        a = cuda.pinned_array(n, dtype=np.int32)
        a[:] = 0

        # Allocate device memory
        d_a = cuda.device_array_like(a, stream)

        # Kernel configuration
        nthreads = 512
        nblocks = n // nthreads

        # Create event handles
        start = cuda.event()
        stop = cuda.event()

        value = 26

        # Run the kernel to make sure compilation happens outside the async portion
        d_a.copy_to_device(a, stream=stream)
        increment_kernel[nblocks, nthreads, stream](d_a, -value)
        increment_kernel[nblocks, nthreads, stream](d_a, value)

        # Stage 1: Asynchronously issue work
        cuda.synchronize()
        start_time = time.time()
        start.record(stream=stream)
        d_a.copy_to_device(a, stream=stream)
        increment_kernel[nblocks, nthreads, stream](d_a, value)
        d_a.copy_to_host(a)
        stop.record(stream=stream)
        stop_time = time.time()

        # Stage 2: Have CPU do some work while waiting for stage 1 to finish
        counter = 0
        while not stop.query():
            counter += 1

        gpu_time = start.elapsed_time(stop)
        cpu_time = (stop_time - start_time) * 1000
        """,
        "from vector_add import increment_kernel\n",
    )
    a = names["a"]
    assert a.shape == (16 * 1024 * 1024,) and a.dtype == np.int32
    assert np.all(a == 26), "every element should be incremented by 26 exactly once"
    assert names["gpu_time"] >= 0.0


def test_monte_carlo_pi(run, example):
    example("monte_carlo_pi")
    names = run(
        """
        from kiln.cuda.random import create_xoroshiro128p_states

        nblocks, nthreads = 16, 64
        out = np.zeros(nblocks * nthreads, dtype=np.float32)
        state_size = nblocks * nthreads
        rng_states = create_xoroshiro128p_states(state_size, seed=1)
        compute_pi[nblocks, nthreads](rng_states, 10000, out)
        """,
        "from monte_carlo_pi import compute_pi\n",
    )
    estimate = names["out"].mean()
    assert abs(estimate - np.pi) < 0.01, f"pi estimated as {estimate}"


def test_forall(run, example):
    example("rounding")
    names = run(
        """
        # in_data and out_data are device arrays
        in_data = cuda.to_device(np.random.random(10))
        out_data = cuda.device_array_like(in_data)
        nelems = len(in_data)

        # Round all elements to 3 d.p.
        gpu_round.forall(nelems)(in_data, out_data, 3)
        """,
        "from rounding import gpu_round\n",
    )
    np.testing.assert_allclose(
        names["out_data"].copy_to_host(), np.round(names["in_data"].copy_to_host(), 3), rtol=0, atol=1e-12
    )


def test_ufuncs_on_device_arrays(run, example):
    example("ufuncs")
    names = run(
        """
        n = 100000
        x = np.arange(n).astype(np.float32)
        y = 2 * x

        host_result = add_ufunc(x, y)

        x_device = cuda.to_device(x)
        y_device = cuda.to_device(y)

        # Similar to np.empty()
        out_device = cuda.device_array(shape=(n,), dtype=np.float32)
        add_ufunc(x_device, y_device, out=out_device)
        out_host = out_device.copy_to_host()
        """,
        "from ufuncs import add_ufunc\n",
    )
    np.testing.assert_array_equal(names["host_result"], np.arange(100000, dtype=np.float32) * 3)
    np.testing.assert_array_equal(names["out_host"], np.arange(100000, dtype=np.float32) * 3)


def test_vector_add_with_device_arrays_and_synchronize(run, example):
    example("vector_add")
    names = run(
        """
        n = 100000
        x = np.arange(n).astype(np.float32)
        y = 2 * x
        out = np.empty_like(x)
        threads_per_block = 128
        blocks_per_grid = 30

        add_kernel[blocks_per_grid, threads_per_block](x, y, out)

        x_device = cuda.to_device(x)
        y_device = cuda.to_device(y)
        out_device = cuda.device_array_like(x)

        # GPU input/output arrays, include explicit synchronization in timing
        cuda.synchronize()
        add_kernel[blocks_per_grid, threads_per_block](x_device, y_device, out_device)
        cuda.synchronize()
        from_device = out_device.copy_to_host()
        """,
        "from vector_add import add_kernel\n",
    )
    np.testing.assert_array_equal(names["out"], np.arange(100000, dtype=np.float32) * 3)
    np.testing.assert_array_equal(names["from_device"], np.arange(100000, dtype=np.float32) * 3)


def test_atomic_counter(run, example):
    example("atomics")
    names = run(
        """
        # This works correctly
        global_counter = cuda.to_device(np.array([0], dtype=np.int32))
        thread_counter_safe[64, 64](global_counter)
        safe = global_counter.copy_to_host()
        """,
        "from atomics import thread_counter_safe\n",
    )
    assert names["safe"][0] == 64 * 64


def test_transpose(run, example):
    example("transpose")
    names = run(
        """
        TILE_DIM = 32
        BLOCK_ROWS = 8
        size = 128
        a_in = cuda.to_device(np.arange(size*size, dtype=np.int32).reshape((size, size)))
        a_out = cuda.device_array_like(a_in)
        grid_shape = (int(size/TILE_DIM), int(size/TILE_DIM))

        transpose[grid_shape,(TILE_DIM, BLOCK_ROWS)](a_in, a_out); cuda.synchronize()
        plain = a_out.copy_to_host()

        a_out = cuda.device_array_like(a_in) # replace with new array
        tile_transpose[grid_shape,(TILE_DIM, BLOCK_ROWS)](a_in, a_out); cuda.synchronize()
        tiled = a_out.copy_to_host()
        """,
        "from transpose import transpose, tile_transpose\n",
    )
    expected = np.arange(128 * 128, dtype=np.int32).reshape((128, 128)).T
    np.testing.assert_array_equal(names["plain"], expected, err_msg="transpose")
    np.testing.assert_array_equal(names["tiled"], expected, err_msg="tile_transpose")


def test_reductions(run, example):
    example("reductions")
    names = run(
        """
        A = (np.arange(1234, dtype=np.float64)) + 1
        on_host = sum_reduce(A)

        r = cuda.device_array(1, dtype=np.float64)
        sum_reduce(A, res=r)
        into_res = r.copy_to_host()[0]

        # Does not(!) overwrite device array
        A_d = cuda.to_device(A)
        sum_reduce(A_d, res=r)
        unchanged = np.all(np.allclose(A, A_d.copy_to_host()))
        """,
        "from reductions import sum_reduce\n",
    )
    assert names["on_host"] == 1234 * 1235 / 2
    assert names["into_res"] == 1234 * 1235 / 2
    assert names["unchanged"]


def test_normalize(run, example):
    example("normalize")
    names = run(
        """
        x = np.arange(32 * 3).astype(np.float32).reshape((32, 3))
        normalize[1, 32](x)
        """,
        "from normalize import normalize\n",
    )
    original = np.arange(32 * 3).astype(np.float32).reshape((32, 3))
    np.testing.assert_allclose(names["x"], original / original.mean(axis=1, keepdims=True), rtol=1e-6)


def test_array_interface(run, import_built):
    import_built(SEED_KERNELS / "array_interface.py")
    names = run(
        """
        # Host memory stands in for cudaMalloc: on the CPU engine, device
        # pointers are host addresses.
        from ctypes import c_float, addressof

        FLOAT32_SIZE = 4
        class MyFloatArray:
            def __init__(self, size):
                self._size = size
                self._typestr = 'f4'
                self._memory = (c_float * size)()
                self._ptr = addressof(self._memory)

            @property
            def __cuda_array_interface__(self):
                return {
                    'shape': (self._size,),
                    'typestr': self._typestr,
                    'data': (self._ptr, False),
                    'version': 3,
                    'strides': None,
                    'stream': None,
                }

        nelems = 32
        arr = MyFloatArray(nelems)
        arr_cai = arr.__cuda_array_interface__
        initialize[1, 32](arr)
        initialized = cuda.as_cuda_array(arr).copy_to_host()

        x = np.arange(10)
        x_numba = cuda.to_device(x)
        add_one[1, 32](x_numba)
        incremented = x_numba.copy_to_host()

        a = cuda.to_device(np.arange(10))
        b = cuda.to_device(np.arange(10) * 2)
        out = cuda.device_array_like(a)
        add[1, 32](a, b, out)
        summed = out.copy_to_host()
        """,
        "from array_interface import add, add_one, initialize\n",
    )
    np.testing.assert_array_equal(names["initialized"], np.full(32, 3.14, dtype=np.float32))
    np.testing.assert_array_equal(names["incremented"], np.arange(10) + 1)
    np.testing.assert_array_equal(names["summed"], np.arange(10) * 3)


def test_debug_reciprocal_raises_zero_division(run, example):
    example("reciprocal")
    with pytest.raises(ZeroDivisionError, match=r"tid=\[0, 0, 0\] ctaid=\[0, 0, 0\]"):
        run(
            """
            x = np.zeros(10)
            reciprocal[1, 32](x)
            """,
            "from reciprocal import reciprocal\n",
        )


def test_talk_vector_add(run, example):
    example("vector_add")
    names = run(
        """
        n = 4096
        x = np.arange(n).astype(np.float32)
        y = 2 * x
        r = np.empty_like(x)
        grid_dim, block_dim = 4, 256
        vector_add[grid_dim, block_dim](r, x, y)
        """,
        "from vector_add import vector_add\n",
    )
    np.testing.assert_array_equal(names["r"], np.arange(4096, dtype=np.float32) * 3)
