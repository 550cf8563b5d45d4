"""What kernels use of cuda.bindings.runtime: cudaRoundMode, the rounding
mode numba-cuda's FP8 conversions to E8M0 take."""

from enum import IntEnum


class cudaRoundMode(IntEnum):
    cudaRoundNearest = 0
    cudaRoundZero = 1
    cudaRoundPosInf = 2
    cudaRoundMinInf = 3
