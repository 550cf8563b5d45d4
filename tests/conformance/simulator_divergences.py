"""Why the shadow check (shadow_check.py) may find Kiln and Numba's
simulator disagreeing on a specialization when Kiln is right: the
simulator is not Numba's compiled semantics. It runs the kernel as Python
over NumPy scalars (NumPy 2's scalar rules, NEP 50, are not Numba's
typing; CPython's math functions are not the ones compiled kernels call),
one Python thread per CUDA thread, in an order no GPU keeps, and its
shared and local arrays start as whatever np.empty holds.

Each entry names the specializations it explains (a pattern matched
against "<kernel> <argument types>", as the report shows them) and says
why, with what settles it: Numba's compiled semantics (numba.njit of the
kernel's body, numba.cuda.compile_ptx's typing), which Kiln matches. A
difference no entry explains is a wrong value: a finding.
"""

from numba_internals import reason_in

_UNWRITTEN_SHARED = (
    "reads shared memory no thread of the kernel writes, whose contents CUDA leaves undefined: the "
    "simulator's shared arrays are np.empty's leftovers, Kiln's are zeroed")

# (pattern matched against "<kernel> <argument types>", reason)
DIVERGENCES = [
    (r"test_intrinsics\.simple_round_to \(array\(float64, 1d, A\), float64, int32\)",
     "`round(x, ndigits)` of a float64: the simulator runs Python's round, which rounds the decimal "
     "value correctly; Numba compiles its round_ndigits, which scales by 10**(ndigits - 22) and "
     "1e22 (ndigits > 22), rounds and scales back, so the last bit may differ: for "
     "round(1.2345678987654321e-15, 23), numba.njit gives 1.2345678999999998e-15, as Kiln does, "
     "where Python gives 1.2345679e-15 (the test itself compares with prec='double')"),
    (r"test_math\.math_lgamma .*",
     "`math.lgamma`: the simulator runs CPython's own lgamma (a Lanczos approximation in "
     "mathmodule.c), which loses relative accuracy near lgamma's zeros at 1 and 2 (265 units in "
     "the last place at x = 0.98); Kiln gives the C library's lgamma on every input of the test, "
     "as numba.njit does (on the GPU, Numba calls libdevice's, a third implementation)"),
    (r"test_math\.math_gamma .*",
     "`math.gamma`: the simulator runs CPython's own gamma (a Lanczos approximation in "
     "mathmodule.c), a few units in the last place from the C library's tgamma, which Kiln gives "
     "on every input of the test, as numba.njit does (on the GPU, Numba calls libdevice's)"),
    (r"test_math\.math_pow \(array\(float(32|64), 1d, C\), array\(int32, 1d, C\), .*",
     "`math.pow(x, n)` with an int32 `n`: numba-cuda calls libdevice's powi (powif for float32; "
     "impl_pow_int in numba/cuda/mathimpl.py), which multiplies by squaring, so its last bits "
     "differ from a correctly rounded power by a few units (822.9456 against 822.94543 for "
     "float32); the simulator runs Python's math.pow. numba.cuda.compile_ptx of the kernel has "
     "powi's squaring loop and no pow, as Kiln's PTX; Kiln's CPU engine runs libdevice's powi too"),
    (r"test_py2_div_issue\.TestCudaPy2Div\.test_py2_div_issue\.preCalc .*",
     "`float32(1.001 * float32(i))`: NumPy 2 (NEP 50) keeps a float32 times a Python float in "
     "float32, so the simulator rounds 1.001 to float32 first (3.0030003 for i = 3); Numba types "
     "the product as float64 (numba.cuda.compile_ptx: cvt.f64.f32, mul.f64, cvt.rn.f32.f64; "
     "numba.njit gives 3.003000020980835 before the cast), as Kiln does"),
    (r"test_freevar\.TestFreeVar\.test_freevar\.foo .*", _UNWRITTEN_SHARED),
    (r"test_sm_creation\.udt_global_(constants|build_tuple|build_list|constant_tuple) .*",
     _UNWRITTEN_SHARED),
    (r"test_sm\.TestSharedMemoryIssue\.test_issue_2393\.costs_func .*",
     _UNWRITTEN_SHARED + "; and every block stores to d_block_costs[0], so which value stays "
     "depends on the order blocks run in"),
]


def divergence_reason(kernel, types):
    """Why the simulator may disagree with Kiln on this specialization
    (kernel name and argument types as shadow_check.py writes them), or
    None: then a disagreement is a wrong value."""
    return reason_in(DIVERGENCES, f"{kernel} {types}")
