"""Monte Carlo estimate of pi with Numba's on-device random number generator.

Source: "Numba for CUDA Programmers", session 3, "Random generator usage",
and the "Random Number Generation" section of the session 3 notebook.

What it shows:

* calling a library device function (``xoroshiro128p_uniform_float32`` from
  ``numba.cuda.random``) with an array of RNG states and the thread index;
* a kernel argument whose element type is a record
  (``xoroshiro128p_type``, the Numba type of ``xoroshiro128p_dtype``);
* float32 ``x**2`` compared with a float64 literal, and an integer counter
  mixed into float64 arithmetic before the float32 store.

Host side: ``rng_states = create_xoroshiro128p_states(nblocks * nthreads, seed=1)``,
``out = np.zeros(nthreads * nblocks, dtype=np.float32)``, launched as
``compute_pi[nblocks, nthreads](rng_states, 10000, out)``: exactly one thread
per RNG state and output element, hence no bounds check.
"""

from numba import cuda, float32, int64, void
from numba.cuda.random import xoroshiro128p_type, xoroshiro128p_uniform_float32


@cuda.jit(void(xoroshiro128p_type[:], int64, float32[::1]))
def compute_pi(rng_states, iterations, out):
    """Estimate pi in out[tid] from `iterations` random points per thread."""
    tid = cuda.grid(1)

    # Compute pi by drawing random (x, y) points and finding what
    # fraction lie inside a unit circle
    inside = 0
    for i in range(iterations):
        x = xoroshiro128p_uniform_float32(rng_states, tid)
        y = xoroshiro128p_uniform_float32(rng_states, tid)
        if x**2 + y**2 <= 1.0:
            inside += 1

    out[tid] = 4.0 * inside / iterations
