"""A kernel's launch_bounds on the CPU engine: a launch of blocks larger
than its first bound is refused, as a GPU's driver refuses it
(CUDA_ERROR_INVALID_VALUE), and blocks up to the bound run."""

import numpy as np
import pytest

BOUNDED = '''
from kiln import cuda


@cuda.jit(launch_bounds=(128, 2))
def fill(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = i


@cuda.jit
def unbounded(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = i
'''


@pytest.fixture
def bounded(source_module):
    return source_module("bounded_kernels", BOUNDED)


def test_blocks_up_to_the_bound_run(bounded):
    out = np.zeros(256, np.int64)
    bounded.fill[2, 128](out)
    np.testing.assert_array_equal(out, np.arange(256))


def test_a_block_above_the_bound_is_refused_as_a_gpu_refuses_it(bounded):
    out = np.zeros(256, np.int64)
    with pytest.raises(Exception, match=r"launch_bounds of 128 threads per block.*CUDA_ERROR_INVALID_VALUE"):
        bounded.fill[1, 256](out)
    assert not out.any(), "a refused launch runs no thread"
    bounded.unbounded[1, 256](out)
    np.testing.assert_array_equal(out, np.arange(256), err_msg="a kernel without launch_bounds takes any block")
