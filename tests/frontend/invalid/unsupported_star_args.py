# Tests: *args on a kernel (only device functions take them), **kwargs and
# keyword-only parameters.
from numba import cuda


@cuda.jit("void(float32[::1])")
def kernel_with_star_args(x, *rest):  # expect-error: 'kernel_with_star_args' cannot take *args, **kwargs or keyword-only parameters
    x[0] = 1.0


@cuda.jit(device=True)
def keywords(x, **options):  # expect-error: 'keywords' cannot take *args, **kwargs or keyword-only parameters
    return x


@cuda.jit(device=True)
def keyword_only(x, *, scale):  # expect-error: 'keyword_only' cannot take *args, **kwargs or keyword-only parameters
    return x * scale
