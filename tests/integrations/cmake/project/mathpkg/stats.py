from numba import cuda, float32


@cuda.jit("void(float32[::1], float32[::1])")
def block_sums(x, out):
    # One partial sum per block, through shared memory.
    partial = cuda.shared.array(128, dtype=float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    partial[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    stride = 64
    while stride > 0:
        if t < stride:
            partial[t] += partial[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = partial[0]
