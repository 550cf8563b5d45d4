// Device-side cuRAND for Python kernels, as in the "C / C++ Interop -
// cuRAND Device-side API example" of the Numba for CUDA course (session 3).
//
// Both functions follow Numba's ABI for foreign device functions: the
// return value goes through the first pointer, and the int result reports
// "no Python exception" (0).

#include <curand_kernel.h>

extern "C" __device__ int _numba_curand_init(int *numba_return_value, curandState *states,
                                             unsigned long long index, unsigned long long seed,
                                             unsigned long long sequence,
                                             unsigned long long offset) {
  curand_init(seed, sequence, offset, &states[index]);
  *numba_return_value = 0;
  return 0;
}

extern "C" __device__ int _numba_curand(unsigned int *numba_return_value, curandState *states,
                                        unsigned long long index) {
  *numba_return_value = curand(&states[index]);
  return 0;
}
