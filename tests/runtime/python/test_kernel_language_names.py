"""numba.cuda's kernel-language and type names in Kiln
(kiln.cuda.kernel_language, kiln.cuda.numba_types), checked against
numba.cuda itself: every name it has in these categories is here, host
code that uses a kernel-only name is told why it cannot, types print as
Numba's, and a kernel declared with type objects is the kernel its
signature string declares, run on the CPU engine."""

import importlib

import numpy as np
import pytest

from kiln import host_values
from kiln.cuda import kernel_language, numba_types
from kiln.cuda.kernel_language import KernelLanguageError
from kiln.decorators import _signature_text

# numba.cuda.types names whose values exist only in kernels: the type of
# threadIdx and that of a cooperative grid group.
KERNEL_VALUE_TYPES = {"Dim3", "GridGroup", "dim3", "grid_group"}
# Names here that numba.cuda does not export: Kiln's compiler takes
# numba.cuda.float16, numba.cuda.fp16 and numba.cuda.bf16 (`from numba.cuda
# import fp16` imports the submodule), and the error host use raises.
KILN_ONLY = {"float16", "fp16", "bf16", "KernelLanguageError"}
HOST_USABLE = {"KernelLanguageError", "literal_unroll"}
# Numba's types of CFFI objects: Kiln kernels cannot call CFFI functions, and
# kiln.cuda says so where they are asked for.
NOT_IN_KILN = {"ffi", "ffi_forced_object"}


@pytest.fixture(scope="module")
def numba_cuda():
    return pytest.importorskip("numba.cuda")


def numba_type(numba_cuda, name):
    """numba.cuda's object for `name` (numba.types' for a name numba.cuda lacks)."""
    if hasattr(numba_cuda, name):
        return getattr(numba_cuda, name)
    import numba

    return getattr(numba.types, name)


def numba_kernel_language_names(numba_cuda):
    """The names numba.cuda exports for use inside kernels: its stubs,
    intrinsics, cache-hinted loads and stores, cooperative groups and
    literal_unroll, and the types of kernel-only values."""
    from numba.cuda import stubs
    from numba.cuda.extending import _Intrinsic

    names = set(KERNEL_VALUE_TYPES)
    for name in dir(numba_cuda):
        value = getattr(numba_cuda, name)
        if ((isinstance(value, type) and issubclass(value, stubs.Stub)) or isinstance(value, _Intrinsic)
                or getattr(value, "__module__", None) in ("numba.cuda.cache_hints", "numba.cuda.misc.special")
                or value is getattr(numba_cuda, "cg", object())):
            names.add(name)
    return names


def numba_type_names(numba_cuda):
    import numba.cuda.types

    return set(numba.cuda.types.__all__) - KERNEL_VALUE_TYPES - NOT_IN_KILN


def public_members(namespace):
    return {name for name in dir(namespace) if not name.startswith("_")}


class _Subscript:
    """S[:, ::1] is the subscript `[:, ::1]`, to apply to Kiln's type and Numba's alike."""

    def __getitem__(self, subscript):
        return subscript


S = _Subscript()


# --- every name -----------------------------------------------------------


def test_every_kernel_language_name_of_numba_cuda_is_in_kernel_language(numba_cuda):
    expected = numba_kernel_language_names(numba_cuda)
    # The classification must find numba.cuda's kernel language, or this test proves nothing.
    assert {"syncthreads", "threadIdx", "atomic", "shared", "float32x4", "float4", "ldca", "cg", "grid",
            "literal_unroll"} <= expected, f"numba.cuda's kernel language was not recognised: {sorted(expected)}"
    missing = sorted(expected - set(kernel_language.__all__))
    assert not missing, f"kiln.cuda.kernel_language lacks numba.cuda's {missing}"
    absent = sorted(name for name in kernel_language.__all__ if not hasattr(kernel_language, name))
    assert not absent, f"kernel_language.__all__ names {absent}, which the module does not define"


def test_every_type_name_of_numba_cuda_is_in_numba_types(numba_cuda):
    expected = numba_type_names(numba_cuda)
    assert {"float32", "int_", "void", "optional"} <= expected, f"numba.cuda.types.__all__ is {sorted(expected)}"
    missing = sorted(expected - set(numba_types.__all__))
    assert not missing, f"kiln.cuda.numba_types lacks numba.cuda's {missing}"
    absent = sorted(name for name in numba_types.__all__ if not hasattr(numba_types, name))
    assert not absent, f"numba_types.__all__ names {absent}, which the module does not define"


def test_no_name_is_made_up(numba_cuda):
    made_up = sorted((set(kernel_language.__all__) | set(numba_types.__all__))
                     - numba_kernel_language_names(numba_cuda) - numba_type_names(numba_cuda) - KILN_ONLY)
    assert not made_up, f"names numba.cuda does not have: {made_up}"


def test_namespaces_have_numba_cudas_members(numba_cuda):
    fp16 = importlib.import_module("numba.cuda.fp16")
    bf16 = importlib.import_module("numba.cuda.bf16")
    expected = {
        "atomic": public_members(numba_cuda.atomic),
        "shared": public_members(numba_cuda.shared),
        "local": public_members(numba_cuda.local),
        "const": public_members(numba_cuda.const),
        "cg": {"this_grid"} & public_members(numba_cuda.cg),
        "fp16": {name for name in public_members(fp16) if name.startswith("h") and callable(getattr(fp16, name))},
        "bf16": set(bf16.__all__),
    }
    assert expected["atomic"] >= {"add", "cas", "compare_and_swap", "nanmax"} and expected["cg"] == {"this_grid"}
    missing = {namespace: sorted(members - public_members(getattr(kernel_language, namespace)))
               for namespace, members in expected.items()}
    assert not any(missing.values()), f"namespace members missing: {missing}"


def test_reading_a_field_of_a_kernel_only_value_is_refused_for_every_field_numba_has(numba_cuda):
    checked, not_refused = [], []
    for name in sorted(numba_kernel_language_names(numba_cuda)):
        stub = getattr(numba_cuda, name, None)
        for field in (field for field in "xyzw" if isinstance(stub, type) and hasattr(stub, field)):
            checked.append(f"{name}.{field}")
            try:
                getattr(getattr(kernel_language, name), field)
            except KernelLanguageError as error:
                if f"cuda.{name}.{field} is part of the kernel language" not in str(error):
                    not_refused.append(f"{name}.{field} (message: {error})")
            else:
                not_refused.append(f"{name}.{field} (read without error)")
    assert {"threadIdx.x", "gridDim.z", "float32x4.w", "char1.x"} <= set(checked), (
        f"numba.cuda's fields were not found: {checked}")
    assert not not_refused, f"fields readable on the host: {not_refused}"


# --- host use of the kernel language ----------------------------------------


@pytest.mark.parametrize("name", sorted(set(kernel_language.__all__) - HOST_USABLE))
def test_calling_a_kernel_language_name_on_the_host_says_it_runs_only_in_kernels(name):
    with pytest.raises(KernelLanguageError) as raised:
        getattr(kernel_language, name)(1)
    message = str(raised.value)
    assert isinstance(raised.value, TypeError), f"cuda.{name}(): {type(raised.value).__name__} is no TypeError"
    assert f"cuda.{name}" in message and "is part of the kernel language" in message and "host code" in message, (
        f"cuda.{name}() on the host: the message does not name it and say why: {message!r}")


def test_the_syncthreads_message_in_full():
    with pytest.raises(KernelLanguageError) as raised:
        kernel_language.syncthreads()
    assert str(raised.value) == (
        "cuda.syncthreads() is part of the kernel language: it runs only inside kernels and device functions, "
        "which Kiln compiles; it cannot be called from host code")


@pytest.mark.parametrize("call, named", [
    (lambda: kernel_language.atomic.add(np.zeros(1), 0, 1), "cuda.atomic.add()"),
    (lambda: kernel_language.atomic.compare_and_swap(np.zeros(1), 0, 1), "cuda.atomic.compare_and_swap()"),
    (lambda: kernel_language.shared.array(32, numba_types.float32), "cuda.shared.array()"),
    (lambda: kernel_language.local.array(4, numba_types.int32), "cuda.local.array()"),
    (lambda: kernel_language.const.array_like(np.zeros(4)), "cuda.const.array_like()"),
    (lambda: kernel_language.cg.this_grid(), "cuda.cg.this_grid()"),
    (lambda: kernel_language.fp16.hadd(1, 2), "cuda.fp16.hadd()"),
    (lambda: kernel_language.float4(1, 2, 3, 4), "cuda.float4()"),
    (lambda: kernel_language.warpsize * 2, "cuda.warpsize"),
    (lambda: int(kernel_language.laneid), "cuda.laneid"),
    (lambda: range(kernel_language.warpsize), "cuda.warpsize"),
    (lambda: kernel_language.threadIdx.x + 1, "cuda.threadIdx.x"),
    (lambda: list(kernel_language.blockDim), "cuda.blockDim"),
    (lambda: kernel_language.dim3(), "cuda.dim3()"),
])
def test_host_use_of_namespace_members_values_and_vector_types_is_refused_by_name(call, named):
    with pytest.raises(KernelLanguageError, match="is part of the kernel language") as raised:
        call()
    assert str(raised.value).startswith(f"{named} is part"), f"{named}: the message names another thing: {raised.value}"


def test_array_allocation_messages_point_host_code_to_its_own_allocators():
    with pytest.raises(KernelLanguageError, match="cuda.device_array"):
        kernel_language.shared.array(32, numba_types.float32)
    with pytest.raises(KernelLanguageError, match="cuda.to_device"):
        kernel_language.const.array_like(np.zeros(4))


def test_namespace_members_can_be_named_at_import_as_numba_allows():
    atomic_add = kernel_language.atomic.add  # `add = cuda.atomic.add` at module level
    assert atomic_add is kernel_language.atomic.add
    assert "cuda.atomic.add" in repr(atomic_add)


def test_names_a_kernel_language_object_lacks_are_attribute_errors_so_introspection_works():
    assert not hasattr(kernel_language.syncthreads, "__wrapped__")
    assert not hasattr(kernel_language.threadIdx, "w")
    with pytest.raises(AttributeError, match="atomic has no attribute 'mul'"):
        kernel_language.atomic.mul  # noqa: B018
    assert kernel_language.grid in [kernel_language.grid] and {kernel_language.grid: 1}[kernel_language.grid] == 1
    assert set(dir(kernel_language.threadIdx)) >= {"x", "y", "z"}
    assert set(dir(kernel_language.atomic)) >= {"add", "cas", "nanmin"}


def test_repr_says_what_the_object_is_and_where_it_works():
    assert repr(kernel_language.syncthreads) == (
        "<kernel-language function cuda.syncthreads: it runs only inside kernels and device functions>")
    assert "cuda.float32x4" in repr(kernel_language.float32x4)


def test_types_of_kernel_only_values_print_as_numbas(numba_cuda):
    for name in ("dim3", "grid_group"):
        assert str(getattr(kernel_language, name)) == str(getattr(numba_cuda, name)), f"str(cuda.{name})"


def test_literal_unroll_returns_its_argument_on_the_host_as_numbas_does(numba_cuda):
    values = (1, 2.0, "three")
    assert kernel_language.literal_unroll(values) is values
    assert numba_cuda.literal_unroll(values) is values


def test_host_values_name_kernel_language_globals_as_kiln_cuda_exports_them():
    """A module-level alias (`add = cuda.atomic.add`) reaches the compiler
    as the name it would import."""
    assert host_values.symbol(kernel_language.atomic.add) == {"kind": "symbol", "name": "kiln.cuda.atomic.add"}
    assert host_values.symbol(kernel_language.float4) == {"kind": "symbol", "name": "kiln.cuda.float4"}
    assert host_values.symbol(kernel_language.syncthreads) == {"kind": "symbol", "name": "kiln.cuda.syncthreads"}
    assert host_values.symbol(numba_types.float32) == {"kind": "symbol", "name": "kiln.cuda.float32"}
    assert host_values.symbol(numba_types.int_) == {"kind": "symbol", "name": "kiln.cuda.int64"}
    assert host_values.symbol(numba_types.void) == {"kind": "symbol", "name": "kiln.cuda.void"}


# --- types ------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(set(numba_types.__all__) - {"optional", "deferred_type"}))
def test_each_type_prints_as_numbas(numba_cuda, name):
    ours, numbas = getattr(numba_types, name), numba_type(numba_cuda, name)
    assert (str(ours), repr(ours)) == (str(numbas), repr(numbas)), f"cuda.{name} prints unlike Numba's"


@pytest.mark.parametrize("subscript", [S[:], S[::1], S[::2], S[:, :], S[:, ::1], S[::1, :], S[::1, ::1], S[:, :, :],
                                       S[:, :, ::1], S[::1, :, :], S[:, ::1, :], S[::1,]],
                         ids=lambda subscript: repr(subscript).replace(" ", ""))
@pytest.mark.parametrize("dtype", ["float32", "int64", "complex128", "bool_", "uint8"])
def test_subscripting_a_type_makes_numbas_array_type(numba_cuda, dtype, subscript):
    ours, numbas = getattr(numba_types, dtype)[subscript], numba_type(numba_cuda, dtype)[subscript]
    assert (str(ours), repr(ours)) == (str(numbas), repr(numbas)), f"{dtype}{subscript}"
    assert (str(ours.dtype), ours.ndim, ours.layout) == (str(numbas.dtype), numbas.ndim, numbas.layout), (
        f"{dtype}{subscript}: dtype, ndim or layout unlike Numba's")


@pytest.mark.parametrize("subscript", [S[1], S[1:], S[:, 2], S[::1, 1:]], ids=repr)
def test_subscripts_numba_refuses_raise_keyerror_as_in_numba(numba_cuda, subscript):
    with pytest.raises(KeyError):
        numba_cuda.float32[subscript]
    with pytest.raises(KeyError, match="Can only index numba types with slices"):
        numba_types.float32[subscript]


def test_array_types_of_array_types_are_refused():
    with pytest.raises(TypeError, match="no arrays of arrays"):
        numba_types.float32[:][:]


def test_types_that_print_alike_are_equal():
    assert numba_types.int_ == numba_types.int64 and numba_types.double is numba_types.float64
    assert numba_types.float32[::1] == numba_types.float32[::1]
    assert hash(numba_types.float32[::1]) == hash(numba_types.float32[::1])
    assert numba_types.float32[::1] != numba_types.float32[:]
    assert numba_types.void(numba_types.int32) == numba_types.none(numba_types.int32)


SIGNATURES = [
    lambda t: t.void(t.float32[::1], t.int32),
    lambda t: t.float32(t.float32, t.float32),
    lambda t: t.void(t.float64[:, ::1], t.float64[::1, :], t.float64[:, :, :]),
    lambda t: t.void(t.int_[:], t.intp, t.uintp, t.size_t),
    lambda t: t.int64(t.int8, t.uint8, t.int16, t.uint16, t.uint32),
    lambda t: t.boolean(t.b1[::1]),
    lambda t: t.void(t.complex64[:, ::1], t.c16),
    lambda t: t.double(t.double[:], t.f4, t.f8),
    lambda t: t.none(),
    lambda t: t.void(t.uchar[::1], t.char, t.short, t.ushort, t.longlong, t.ulonglong),
    lambda t: t.float32[::1](t.int32),
    lambda t: t.uint64(t.byte[:, :], t.intc, t.uintc, t.long_, t.ulong, t.ssize_t, t.uint),
    lambda t: (t.float32[:], t.int32),
    lambda t: t.int16[:, ::1],
]


@pytest.mark.parametrize("make", SIGNATURES, ids=range(len(SIGNATURES)))
def test_a_signature_of_kiln_types_is_written_out_as_numbas_is(numba_cuda, make):
    ours, numbas = make(numba_types), make(numba_cuda)
    assert _signature_text(ours) == _signature_text(numbas), f"{numbas}: kiln.decorators writes it out differently"
    assert str(ours) == str(numbas), f"{numbas}: prints unlike Numba's"
    if hasattr(numbas, "args"):
        assert [str(arg) for arg in ours.args] == [str(arg) for arg in numbas.args]
        assert str(ours.return_type) == str(numbas.return_type)


def test_a_signature_is_not_callable_so_jit_takes_it_for_a_signature():
    assert not callable(numba_types.void(numba_types.float32[::1]))
    assert _signature_text(numba_types.void(numba_types.float32[::1])) == "void(float32[::1])"


@pytest.mark.parametrize("name, value", [("float32", 1.5), ("float64", 2.25), ("int8", 127), ("uint64", 5),
                                         ("complex64", 1), ("bool_", 1), ("intc", -3)])
def test_a_type_called_with_a_value_converts_it_as_numba_does(numba_cuda, name, value):
    ours, numbas = getattr(numba_types, name)(value), numba_type(numba_cuda, name)(value)
    assert type(ours) is type(numbas) and ours == numbas, f"cuda.{name}({value!r}) is {ours!r}, Numba's {numbas!r}"


def test_types_without_host_values_refuse_conversion():
    for kind in (numba_types.void, numba_types.bfloat16):
        with pytest.raises(TypeError, match="has no host values"):
            kind(1)


def test_optional_and_deferred_types_print_and_define_as_numbas(numba_cuda):
    for make in (lambda t: t.optional(t.float32), lambda t: t.optional(t.int64[:, ::1])):
        assert str(make(numba_types)) == str(make(numba_cuda))
    assert numba_types.optional(numba_types.float32).type is numba_types.float32
    deferred = numba_types.deferred_type()
    assert str(deferred).startswith("DeferredType#") and str(numba_cuda.deferred_type()).startswith("DeferredType#")
    with pytest.raises(RuntimeError, match="not defined"):
        deferred.get()
    deferred.define(numba_types.int32)
    assert deferred.get() is numba_types.int32
    with pytest.raises(TypeError, match="already defined"):
        deferred.define(numba_types.int64)


# --- kernels declared with type objects --------------------------------------


KERNELS = '''
import numpy as np
from kiln import cuda


@cuda.jit("void(float32[::1], int32)")
def fill_from_string(out, value):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = value


@cuda.jit(cuda.void(cuda.float32[::1], cuda.int32))
def fill_from_objects(out, value):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = value


@cuda.jit("float64(float64, float64)", device=True)
def hypot_from_string(a, b):
    return (a * a + b * b) ** 0.5


@cuda.jit(cuda.float64(cuda.float64, cuda.float64), device=True)
def hypot_from_objects(a, b):
    return (a * a + b * b) ** 0.5


@cuda.jit("void(float64[:, ::1], float64[:, ::1])")
def norms_from_string(out, xy):
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = hypot_from_string(xy[i, j], j)


@cuda.jit(cuda.void(cuda.float64[:, ::1], cuda.float64[:, ::1]))
def norms_from_objects(out, xy):
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = hypot_from_objects(xy[i, j], j)


def _fill_plus_one(out, value):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = value + 1


fill_plus_one = cuda.jit(cuda.void(cuda.float32[::1], cuda.int32))(_fill_plus_one)

# Computed at import, so the compiler reads them from the running module.
DTYPE = getattr(cuda, "float" + "32")
atomic_add = getattr(cuda.atomic, "a" + "dd")


@cuda.jit
def sum_of_halves(out):
    halves = cuda.shared.array(32, DTYPE)
    halves[cuda.threadIdx.x] = 0.5
    cuda.syncthreads()
    atomic_add(out, 0, halves[cuda.threadIdx.x])
'''


@pytest.fixture(scope="module")
def kernels(file_source_module):
    """The kernels above, which name both modules' names on kiln.cuda, as
    kernel modules do (`cuda.void`, `cuda.atomic`)."""
    return file_source_module("typed_signature_kernels", KERNELS)


def test_a_kernel_declared_with_type_objects_runs_as_the_one_declared_with_a_string(kernels):
    results = {}
    for kernel in (kernels.fill_from_string, kernels.fill_from_objects):
        out = np.zeros(20, dtype=np.float32)
        kernel[2, 16](out, 3.7)  # converted to the declared int32, as Numba converts
        results[kernel.__name__] = out
    np.testing.assert_array_equal(results["fill_from_objects"], np.full(20, 3, dtype=np.float32),
                                  err_msg="fill_from_objects, declared void(float32[::1], int32) as objects")
    np.testing.assert_array_equal(results["fill_from_string"], results["fill_from_objects"])
    assert kernels.fill_from_objects.signatures == kernels.fill_from_string.signatures == [
        "(array(float32, 1d, C), int32)"]


def test_device_functions_and_2d_arrays_declared_with_type_objects_run_as_declared_with_strings(kernels):
    xy = np.arange(12.0).reshape(3, 4)
    expected = np.hypot(xy, np.arange(4.0))
    for kernel in (kernels.norms_from_string, kernels.norms_from_objects):
        out = np.zeros_like(xy)
        kernel[(1, 1), (4, 4)](out, xy)
        np.testing.assert_allclose(out, expected, err_msg=f"{kernel.__name__}")
    assert kernels.norms_from_objects.signatures == ["(array(float64, 2d, C), array(float64, 2d, C))"]


def test_a_kernel_made_by_calling_jit_with_a_signature_object_compiles_that_signature(kernels):
    out = np.zeros(8, dtype=np.float32)
    kernels.fill_plus_one[1, 8](out, 2)
    np.testing.assert_array_equal(out, np.full(8, 3, dtype=np.float32))
    assert kernels.fill_plus_one.signatures == ["(array(float32, 1d, C), int32)"]


def test_types_and_kernel_functions_computed_at_import_reach_the_compiler(kernels):
    out = np.zeros(1, dtype=np.float32)
    kernels.sum_of_halves[1, 32](out)
    assert out[0] == 16.0, f"32 threads adding 0.5 each gave {out[0]}"
