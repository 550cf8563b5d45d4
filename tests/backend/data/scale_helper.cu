// A device function written in CUDA C++, for the nvJitLink tests: Kiln
// compiles it with nvcc and links it with scale_caller.ptx, which calls it.
extern "C" __device__ float kiln_test_scale(float x, float factor) {
  return x * factor + 1.0f;
}
