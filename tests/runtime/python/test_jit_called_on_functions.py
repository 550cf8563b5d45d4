"""Kernels and device functions host code makes by calling cuda.jit on a
function (`kernel = cuda.jit(f)`, `add = cuda.jit(device=True)(plain_add)`)
rather than by decorating it, as Numba code often does, and a module whose
kernels compile one by one: a kernel that does not compile fails only the
calls that need it."""

import importlib
import sys
import textwrap

import numpy as np
import pytest

HELPERS = '''
def halve(x):
    return x / 2
'''

KERNELS = '''
import numpy as np
from kiln import cuda

from jit_called_helpers import halve


def plain_add(a, b):
    return a + b


add = cuda.jit(device=True)(plain_add)
halved = cuda.jit("float64(float64)", device=True)(halve)


def fused(x, y, z):
    return x * y + z


# Argument types alone: the return type is inferred.
fused_from_types = cuda.jit((cuda.float64, cuda.float64, cuda.float64), device=True)(fused)


@cuda.jit
def fuse_all(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = fused_from_types(x[i], 2.0, 1.0)


def scale(out, x, factor):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = add(x[i] * factor, 1.0)


scale_lazily = cuda.jit(scale)
scale_eagerly = cuda.jit("void(float64[::1], float64[::1], float64)", fastmath=True)(scale)


def halve_all(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = halved(x[i])


halve_all_kernel = cuda.jit(halve_all)


def make_kernel(offset):
    def shift(out, x):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] + offset

    return cuda.jit(shift)


def make_lazy_and_eager(offset):
    def shift(out, x):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] + offset

    return cuda.jit(shift), cuda.jit("void(float64[::1], float64[::1])")(shift)


@cuda.jit
def does_not_compile(out):
    out[0] = undefined_name


@cuda.jit
def fill(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 7
'''


@pytest.fixture
def module(tmp_path):
    (tmp_path / "jit_called_helpers.py").write_text(textwrap.dedent(HELPERS))
    (tmp_path / "jit_called_kernels.py").write_text(textwrap.dedent(KERNELS))
    sys.path.insert(0, str(tmp_path))
    try:
        yield importlib.import_module("jit_called_kernels")
    finally:
        sys.path.remove(str(tmp_path))
        for name in ("jit_called_kernels", "jit_called_helpers"):
            sys.modules.pop(name, None)


def test_a_function_jitted_by_a_call_is_a_kernel(module):
    x = np.arange(10.0)
    out = np.zeros_like(x)
    module.scale_lazily[1, 32](out, x, 2.0)
    np.testing.assert_array_equal(out, 2 * x + 1)


def test_a_function_jitted_again_in_another_way_is_a_kernel_of_its_own(module):
    x = np.arange(10.0)
    lazily, eagerly = np.zeros_like(x), np.zeros_like(x)
    module.scale_lazily[1, 32](lazily, x, 2.0)
    module.scale_eagerly[1, 32](eagerly, x, 3.0)
    np.testing.assert_array_equal(lazily, 2 * x + 1)
    np.testing.assert_array_equal(eagerly, 3 * x + 1)
    assert module.scale_eagerly.signatures == [
        "(array(float64, 1d, C), array(float64, 1d, C), float64)"], "the call's signature is eager"


def test_a_device_function_of_a_sibling_module_jitted_by_a_call(module):
    x = np.arange(10.0)
    out = np.zeros_like(x)
    module.halve_all_kernel[1, 32](out, x)
    np.testing.assert_array_equal(out, x / 2)


def test_a_device_function_jitted_with_argument_types_alone_returns_what_it_computes(module):
    x = np.arange(10.0)
    out = np.zeros_like(x)
    module.fuse_all[1, 32](out, x)
    np.testing.assert_array_equal(out, 2 * x + 1)


def test_a_closure_jitted_by_a_call_is_a_kernel(module):
    x = np.arange(10.0)
    for offset in (1.0, 5.0):
        out = np.zeros_like(x)
        module.make_kernel(offset)[1, 32](out, x)
        np.testing.assert_array_equal(out, x + offset, err_msg=f"offset {offset}")


def test_a_kernel_that_does_not_compile_fails_only_its_own_calls(module):
    from kiln import _compiler

    with pytest.raises(_compiler.CompileError) as error:
        module.does_not_compile[1, 1](np.zeros(1))
    assert "undefined_name" in str(error.value)
    out = np.zeros(4, dtype=np.int64)
    module.fill[1, 4](out)
    np.testing.assert_array_equal(out, 7)
    x = np.arange(4.0)
    scaled = np.zeros_like(x)
    module.scale_lazily[1, 4](scaled, x, 1.0)
    np.testing.assert_array_equal(scaled, x + 1)


def test_numba_signature_objects_are_written_as_signature_strings():
    numba = pytest.importorskip("numba")
    from kiln.decorators import _decorator_call

    float32, int64, void = numba.float32, numba.int64, numba.void
    assert _decorator_call([void(float32[::1], int64[:, :], float32[::1, :])], False, {}) == (
        "jit(['void(float32[::1], int64[:, :], float32[::1, :])'])")
    # A tuple of argument types leaves the return type to be inferred.
    assert _decorator_call([(float32[:],)], True, {"fastmath": True}) == (
        "jit(['(float32[:])'], device=True, fastmath=True)")
    # So does a signature object without one, as numba.cuda.vectorize makes
    # to compile a ufunc's core.
    from numba.core.typing import signature

    assert _decorator_call([signature(None, float32, int64)], True, {}) == (
        "jit(['(float32, int64)'], device=True)")


RECURSIVE_CLOSURE = '''
from kiln import cuda


def make():
    @cuda.jit(device=True)
    def countdown(n):
        return 0 if n <= 0 else countdown(n - 1)

    @cuda.jit
    def kernel(out):
        out[0] = countdown(3)

    return kernel
'''


def test_a_closure_that_calls_itself_compiles_without_recursing_in_python(tmp_path):
    (tmp_path / "recursive_closure.py").write_text(RECURSIVE_CLOSURE)
    sys.path.insert(0, str(tmp_path))
    try:
        kernel = importlib.import_module("recursive_closure").make()
        out = np.full(1, -1, dtype=np.int64)
        kernel[1, 1](out)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("recursive_closure", None)
    assert out[0] == 0


EXEC_SOURCE = '''
def double_plus_one(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = float64(2) * x[i] + math.sqrt(np.float64(1))
'''


def _exec_kernel(keep_source):
    """A kernel exec makes from a string, its globals given to exec, as in
    a notebook cell whose imports ran in another cell."""
    import linecache
    import math

    import numba
    from kiln import cuda

    name = f"<cell {keep_source}>"
    if keep_source:
        linecache.cache[name] = (len(EXEC_SOURCE), None, EXEC_SOURCE.splitlines(True), name)
    namespace = {}
    exec(compile(EXEC_SOURCE, name, "exec"),
         {"cuda": cuda, "float64": numba.float64, "np": np, "math": math}, namespace)
    return cuda.jit(namespace["double_plus_one"])


def test_a_kernel_whose_text_linecache_keeps_compiles_with_its_globals():
    kernel = _exec_kernel(keep_source=True)
    x = np.arange(6.0)
    out = np.zeros_like(x)
    kernel[1, 8](out, x)
    np.testing.assert_array_equal(out, 2 * x + 1)


def test_a_kernel_without_source_text_says_why_it_cannot_compile():
    from kiln import _compiler

    kernel = _exec_kernel(keep_source=False)
    with pytest.raises(_compiler.CompileError, match="compiles kernels from their source text"):
        kernel[1, 8](np.zeros(2), np.zeros(2))


CLOSURE_OPTIONS = '''
from kiln import cuda


def make_checked_division(debug, message):
    @cuda.jit(debug=debug, opt=not debug)
    def divide(out, x, y):
        if y[0] == 0:
            raise ValueError(message)
        out[0] = x[0] / y[0]

    return divide
'''


def test_a_closures_decorator_and_body_read_the_enclosing_functions_values(tmp_path):
    (tmp_path / "closure_options.py").write_text(CLOSURE_OPTIONS)
    sys.path.insert(0, str(tmp_path))
    try:
        divide = importlib.import_module("closure_options").make_checked_division(True, "y is zero")
        out = np.zeros(1)
        divide[1, 1](out, np.array([6.0]), np.array([3.0]))
        assert out[0] == 2.0
        with pytest.raises(ValueError, match="y is zero"):
            divide[1, 1](out, np.array([6.0]), np.array([0.0]))
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("closure_options", None)


EMPTY_TUPLES = '''
from kiln import cuda


@cuda.jit
def lengths(out, empty, nested):
    out[0] = len(empty)
    out[1] = len(nested)


@cuda.jit("void(int64[::1], Tuple(()))")
def declared(out, empty):
    out[0] = len(empty) + 5
'''


def test_empty_tuples_are_arguments_of_type_tuple_of_nothing(tmp_path, kiln):
    (tmp_path / "empty_tuples.py").write_text(EMPTY_TUPLES)
    sys.path.insert(0, str(tmp_path))
    try:
        module = importlib.import_module("empty_tuples")
        out = np.ones(2, dtype=np.int64)
        module.lengths[1, 1](out, (), ((), ()))
        assert out.tolist() == [0, 2]
        module.declared[1, 1](out, ())
        assert out[0] == 5
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("empty_tuples", None)
    built = kiln("build", tmp_path / "empty_tuples.py", "--emit", "fatbin", "-o", tmp_path / "out",
                 "--no-cache")
    assert built.returncode == 0, built.stderr


def test_a_closure_jitted_again_in_another_way_is_a_kernel_of_its_own(module):
    x = np.arange(10.0)
    lazy, eager = module.make_lazy_and_eager(2.0)
    for kernel in (lazy, eager, lazy):
        out = np.zeros_like(x)
        kernel[1, 32](out, x)
        np.testing.assert_array_equal(out, x + 2.0)
    assert eager.signatures == ["(array(float64, 1d, C), array(float64, 1d, C))"]
    assert lazy.built_name != eager.built_name, "each call of jit is a kernel of its own"
