from kiln import cuda

COEFFS = (0.25, 0.5, 0.25)


@cuda.jit(device=True)
def lerp(a, b, t):
    return a + (b - a) * t
