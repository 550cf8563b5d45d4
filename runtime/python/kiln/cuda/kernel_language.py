"""The kernel language of `numba.cuda` as host code sees it: `cuda.grid`,
`cuda.threadIdx`, `cuda.syncthreads`, `cuda.atomic.add`,
`cuda.shared.array`, `cuda.float32x4`, ... exist here so that a module
written for Numba imports and names them as it did::

    from kiln import cuda

    @cuda.jit
    def add_one(x):
        i = cuda.grid(1)          # compiled by Kiln: the host never runs this line
        ...

These names mean something only inside kernels and device functions, which
Kiln's compiler reads from the source; the host objects stand in for them.
Using one on the host (calling it, reading `cuda.threadIdx.x`, doing
arithmetic with `cuda.warpsize`) raises KernelLanguageError, a TypeError
that names the thing and says where it can be used, where Numba's stubs
would raise an unrelated error or quietly return a meaningless object.
`literal_unroll(x)` is the exception: on the host it returns `x`, as Numba's
does, so code that calls it outside kernels keeps working.
"""

__all__ = [
    "KernelLanguageError",
    "literal_unroll",
    # Thread indexing
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "laneid",
    "warpsize",
    "grid",
    "gridsize",
    # Synchronization and memory fences
    "syncthreads",
    "syncthreads_and",
    "syncthreads_count",
    "syncthreads_or",
    "syncwarp",
    "threadfence",
    "threadfence_block",
    "threadfence_system",
    "nanosleep",
    # Warp functions
    "all_sync",
    "any_sync",
    "eq_sync",
    "ballot_sync",
    "shfl_sync",
    "shfl_up_sync",
    "shfl_down_sync",
    "shfl_xor_sync",
    "match_any_sync",
    "match_all_sync",
    "activemask",
    "lanemask_lt",
    # Bit and arithmetic intrinsics
    "brev",
    "clz",
    "ffs",
    "popc",
    "fma",
    "cbrt",
    "selp",
    # Cache-hinted loads and stores
    "ldca",
    "ldcg",
    "ldcs",
    "ldcv",
    "ldlu",
    "stcg",
    "stcs",
    "stwb",
    "stwt",
    # Namespaces
    "atomic",
    "shared",
    "local",
    "const",
    "cg",
    "fp16",
    "bf16",
    # Types of kernel-only values
    "dim3",
    "Dim3",
    "grid_group",
    "GridGroup",
    # Vector types
    "int8x1", "int8x2", "int8x3", "int8x4",
    "int16x1", "int16x2", "int16x3", "int16x4",
    "int32x1", "int32x2", "int32x3", "int32x4",
    "int64x1", "int64x2", "int64x3", "int64x4",
    "uint8x1", "uint8x2", "uint8x3", "uint8x4",
    "uint16x1", "uint16x2", "uint16x3", "uint16x4",
    "uint32x1", "uint32x2", "uint32x3", "uint32x4",
    "uint64x1", "uint64x2", "uint64x3", "uint64x4",
    "float32x1", "float32x2", "float32x3", "float32x4",
    "float64x1", "float64x2", "float64x3", "float64x4",
    "char1", "char2", "char3", "char4",
    "short1", "short2", "short3", "short4",
    "int1", "int2", "int3", "int4",
    "long1", "long2", "long3", "long4",
    "longlong1", "longlong2", "longlong3", "longlong4",
    "uchar1", "uchar2", "uchar3", "uchar4",
    "ushort1", "ushort2", "ushort3", "ushort4",
    "uint1", "uint2", "uint3", "uint4",
    "ulong1", "ulong2", "ulong3", "ulong4",
    "ulonglong1", "ulonglong2", "ulonglong3", "ulonglong4",
    "float1", "float2", "float3", "float4",
    "double1", "double2", "double3", "double4",
]


class KernelLanguageError(TypeError):
    """A name of the kernel language was used in host code."""


# Where each kind of name has a meaning, for the error's "why".
_MEANING = {
    "function": "it runs only inside kernels and device functions",
    "value": "it has a value only inside kernels and device functions",
    "namespace": "its functions run only inside kernels and device functions",
    "type": "its values exist only inside kernels and device functions",
    "vector type": "its values are made only inside kernels and device functions",
}


class _KernelOnly:
    """The host's stand-in for one name of the kernel language. Its members
    (`threadIdx.x`, `atomic.add`) are stand-ins too; reading a value member
    raises at once, reading a function member gives the function, which
    raises when called, as module-level aliases such as
    `atomic_add = cuda.atomic.add` are read at import."""

    def __init__(self, name, kind, *, values=(), functions=(), hint="", printed_as=None):
        # kiln.host_values names a module's global by its __module__ and
        # __name__ for the compiler: `add = cuda.atomic.add` is the
        # compiler's kiln.cuda.atomic.add.
        namespace, _, self.__name__ = name.rpartition(".")
        self.__qualname__ = self.__name__
        self.__module__ = f"kiln.cuda.{namespace}" if namespace else "kiln.cuda"
        self._name = name
        self._kind = kind
        self._values = frozenset(values)
        self._functions = {member: _KernelOnly(f"{name}.{member}", "function", hint=hint) for member in functions}
        self._hint = hint
        self._printed_as = printed_as

    def _refusal(self, spelling, cannot):
        hint = f"; {self._hint}" if self._hint else ""
        return (f"{spelling} is part of the kernel language: {_MEANING[self._kind]}, which Kiln compiles; "
                f"{cannot}{hint}")

    def __call__(self, *args, **kwargs):
        if self._kind == "namespace":
            raise KernelLanguageError(self._refusal(f"cuda.{self._name}", "it is not callable, and its members "
                                                    "cannot be called from host code"))
        raise KernelLanguageError(self._refusal(f"cuda.{self._name}()", "it cannot be called from host code"))

    def __getattr__(self, member):
        # Only missing attributes come here. Private and special ones are
        # plainly missing, for introspection (and for copies, which come
        # here before __init__ has set anything).
        if member.startswith("_"):
            raise AttributeError(member)
        if member in self._functions:
            return self._functions[member]
        if member in self._values:
            raise KernelLanguageError(self._refusal(f"cuda.{self._name}.{member}",
                                                    "it cannot be read in host code"))
        raise AttributeError(f"kiln.cuda.{self._name} has no attribute {member!r}")

    def __dir__(self):
        return sorted({*object.__dir__(self), *self._values, *self._functions})

    def __repr__(self):
        return f"<kernel-language {self._kind} cuda.{self._name}: {_MEANING[self._kind]}>"

    def __str__(self):
        return self._printed_as if self._printed_as is not None else repr(self)

    def _used_on_host(self, *args):
        raise KernelLanguageError(self._refusal(f"cuda.{self._name}", "it cannot be used in host code"))


# Arithmetic, comparison, conversion, indexing and iteration:
# `cuda.warpsize * 2` or `int(cuda.laneid)` on the host. Equality, hashing
# and truth stay as objects have them, so the stand-ins can be looked up in
# lists and dicts and tested by code that inspects modules.
for _operation in ("add sub mul truediv floordiv mod pow lshift rshift and or xor matmul divmod "
                   "radd rsub rmul rtruediv rfloordiv rmod rpow rlshift rrshift rand ror rxor rmatmul rdivmod "
                   "lt le gt ge neg pos abs invert int float complex index round trunc floor ceil "
                   "getitem setitem iter").split():
    setattr(_KernelOnly, f"__{_operation}__", _KernelOnly._used_on_host)
del _operation


def device_function(name):
    """The host's stand-in for the device function `cuda.<name>` of a
    module of the kernel language (`random.xoroshiro128p_next`)."""
    return _KernelOnly(name, "function")


def literal_unroll(container):
    """Inside a kernel, unrolls a loop over a heterogeneous tuple; on the
    host, as in Numba, it is the container itself."""
    return container


_ATOMIC_FUNCTIONS = ("add", "sub", "and_", "or_", "xor", "inc", "dec", "exch", "max", "min", "nanmax", "nanmin",
                     "compare_and_swap", "cas")
_FP16_FUNCTIONS = ("habs", "hadd", "hceil", "hcos", "hdiv", "heq", "hexp", "hexp10", "hexp2", "hfloor", "hfma",
                   "hge", "hgt", "hle", "hlog", "hlog10", "hlog2", "hlt", "hmax", "hmin", "hmul", "hne", "hneg",
                   "hrcp", "hrint", "hrsqrt", "hsin", "hsqrt", "hsub", "htanh", "htanh_approx", "htrunc")
# numba.cuda.bf16's functions (cuda_bf16.h's bindings and their NumPy-style names).
_BF16_FUNCTIONS = ("bfloat16_as_int16", "bfloat16_as_uint16", "bfloat16_to_float32", "bfloat16_to_int16_rd",
                   "bfloat16_to_int16_rn", "bfloat16_to_int16_ru", "bfloat16_to_int16_rz",
                   "bfloat16_to_int32_rd", "bfloat16_to_int32_rn", "bfloat16_to_int32_ru",
                   "bfloat16_to_int32_rz", "bfloat16_to_int64_rd", "bfloat16_to_int64_rn",
                   "bfloat16_to_int64_ru", "bfloat16_to_int64_rz", "bfloat16_to_int8_rz",
                   "bfloat16_to_uint16_rd", "bfloat16_to_uint16_rn", "bfloat16_to_uint16_ru",
                   "bfloat16_to_uint16_rz", "bfloat16_to_uint32_rd", "bfloat16_to_uint32_rn",
                   "bfloat16_to_uint32_ru", "bfloat16_to_uint32_rz", "bfloat16_to_uint64_rd",
                   "bfloat16_to_uint64_rn", "bfloat16_to_uint64_ru", "bfloat16_to_uint64_rz",
                   "bfloat16_to_uint8_rz", "float32_to_bfloat16", "float32_to_bfloat16_rd",
                   "float32_to_bfloat16_rn", "float32_to_bfloat16_ru", "float32_to_bfloat16_rz",
                   "float64_to_bfloat16", "habs", "hadd", "hadd_rn", "hadd_sat", "hceil", "hcos", "hdiv",
                   "heq", "hequ", "hexp", "hexp10", "hexp2", "hfloor", "hfma", "hfma_relu", "hfma_sat",
                   "hge", "hgeu", "hgt", "hgtu", "hisinf", "hisnan", "hle", "hleu", "hlog", "hlog10",
                   "hlog2", "hlt", "hltu", "hmax", "hmax_nan", "hmin", "hmin_nan", "hmul", "hmul_rn",
                   "hmul_sat", "hne", "hneg", "hneu", "hrcp", "hrint", "hrsqrt", "hsin", "hsqrt", "hsub",
                   "hsub_rn", "hsub_sat", "htanh", "htanh_approx", "htrunc", "int16_as_bfloat16",
                   "int16_to_bfloat16_rd", "int16_to_bfloat16_rn", "int16_to_bfloat16_ru",
                   "int16_to_bfloat16_rz", "int32_to_bfloat16_rd", "int32_to_bfloat16_rn",
                   "int32_to_bfloat16_ru", "int32_to_bfloat16_rz", "int64_to_bfloat16_rd",
                   "int64_to_bfloat16_rn", "int64_to_bfloat16_ru", "int64_to_bfloat16_rz",
                   "target_registry", "typing_registry", "uint16_as_bfloat16", "uint16_to_bfloat16_rd",
                   "uint16_to_bfloat16_rn", "uint16_to_bfloat16_ru", "uint16_to_bfloat16_rz",
                   "uint32_to_bfloat16_rd", "uint32_to_bfloat16_rn", "uint32_to_bfloat16_ru",
                   "uint32_to_bfloat16_rz", "uint64_to_bfloat16_rd", "uint64_to_bfloat16_rn",
                   "uint64_to_bfloat16_ru", "uint64_to_bfloat16_rz")
_VECTOR_FIELDS = ("x", "y", "z", "w")
# Element type of each CUDA vector type, and the C names numba.cuda also
# gives it (float32x4 is float4).
_VECTOR_ELEMENTS = {
    "int8": ("char",), "int16": ("short",), "int32": ("int",), "int64": ("long", "longlong"),
    "uint8": ("uchar",), "uint16": ("ushort",), "uint32": ("uint",), "uint64": ("ulong", "ulonglong"),
    "float32": ("float",), "float64": ("double",),
}

_NAMES = {
    **{name: _KernelOnly(name, "value", values=("x", "y", "z"))
       for name in ("threadIdx", "blockIdx", "blockDim", "gridDim")},
    **{name: _KernelOnly(name, "value") for name in ("laneid", "warpsize")},
    **{name: _KernelOnly(name, "function") for name in (
        "grid gridsize syncthreads syncthreads_and syncthreads_count syncthreads_or syncwarp threadfence "
        "threadfence_block threadfence_system nanosleep all_sync any_sync eq_sync ballot_sync shfl_sync "
        "shfl_up_sync shfl_down_sync shfl_xor_sync match_any_sync match_all_sync activemask lanemask_lt "
        "brev clz ffs popc fma cbrt selp ldca ldcg ldcs ldcv ldlu stcg stcs stwb stwt").split()},
    "atomic": _KernelOnly("atomic", "namespace", functions=_ATOMIC_FUNCTIONS),
    "shared": _KernelOnly("shared", "namespace", functions=("array",),
                          hint="host code makes arrays with cuda.device_array or NumPy"),
    "local": _KernelOnly("local", "namespace", functions=("array",),
                         hint="host code makes arrays with cuda.device_array or NumPy"),
    "const": _KernelOnly("const", "namespace", functions=("array_like",),
                         hint="host code copies arrays to the device with cuda.to_device"),
    "cg": _KernelOnly("cg", "namespace", functions=("this_grid",)),
    "fp16": _KernelOnly("fp16", "namespace", functions=_FP16_FUNCTIONS),
    "bf16": _KernelOnly("bf16", "namespace", functions=("bfloat16",) + _BF16_FUNCTIONS),
    "dim3": _KernelOnly("dim3", "type", printed_as="Dim3"),
    "Dim3": _KernelOnly("Dim3", "type"),
    "grid_group": _KernelOnly("grid_group", "type", printed_as="GridGroup"),
    "GridGroup": _KernelOnly("GridGroup", "type"),
    **{f"{name}{count}": _KernelOnly(f"{name}{count}", "vector type", values=_VECTOR_FIELDS[:count])
       for element, c_names in _VECTOR_ELEMENTS.items()
       for name in (f"{element}x", *c_names)
       for count in (1, 2, 3, 4)},
}

globals().update(_NAMES)
