// Keeps 48 floats live across a loop, so that ptxas must spill them when
// registers are limited: the tests compile it to PTX with nvcc and check
// that the spills are reported.
extern "C" __global__ void register_pressure(float *x, int n) {
  float a[48];
#pragma unroll
  for (int i = 0; i < 48; ++i)
    a[i] = x[i * n + threadIdx.x];
  for (int j = 0; j < n; ++j) {
#pragma unroll
    for (int i = 0; i < 48; ++i)
      a[i] = a[i] * a[(i + 7) % 48] + x[j];
  }
  float sum = 0;
#pragma unroll
  for (int i = 0; i < 48; ++i)
    sum += a[i];
  x[threadIdx.x] = sum;
}
