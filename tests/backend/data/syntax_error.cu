// Does not compile: the nvcc error test expects nvcc's message about it.
extern "C" __device__ float kiln_broken(float x) {
  return x * undefined_variable;
}
