"""A kernel module written for numba-cuda-mlir (`from numba_cuda_mlir import
cuda`, numba-cuda's successor) builds as one written for numba.cuda, as far
as its API is numba.cuda's, and its kernels give what NumPy gives."""

import numpy as np

SOURCE = '''
import math

import numba_cuda_mlir.cuda as mlir_cuda
from numba_cuda_mlir import cuda


@cuda.jit(device=True)
def gaussian(x, sigma):
    return math.exp(-0.5 * (x / sigma) ** 2)


@cuda.jit("void(float32[::1], float32[::1], float32)")
def smooth(out, x, sigma):
    i = cuda.grid(1)
    if i < x.size:
        tile = cuda.shared.array(32, dtype=mlir_cuda.float32)
        tile[cuda.threadIdx.x] = x[i]
        cuda.syncthreads()
        out[i] = tile[cuda.threadIdx.x] * gaussian(x[i], sigma)
'''


def test_a_module_written_for_numba_cuda_mlir_builds_and_runs(tmp_path, import_built):
    source = tmp_path / "mlir_kernels.py"
    source.write_text(SOURCE)
    module = import_built(source)
    x = np.linspace(-2, 2, 64, dtype=np.float32)
    out = np.zeros_like(x)
    module.smooth[2, 32](out, x, np.float32(0.75))
    np.testing.assert_allclose(out, x * np.exp(-0.5 * (x / np.float32(0.75)) ** 2), rtol=1e-6)
