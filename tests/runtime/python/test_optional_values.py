"""Optional values, as Numba types them: a function that returns None on
some paths and a value on others returns OptionalType(value), and so is a
variable None on one path and a value on another; `is None` tests it at
run time; operators and builtins take the value (Numba's templates unwrap
optional operands), raising TypeError where it is None; device functions
are specialized for the optional type itself. A read of a variable that no
assignment reaches compiles where an assignment precedes it in the source,
as Numba's bytecode analysis allows. The reference is each function run as
Python."""

import numpy as np
import pytest

OPTIONAL_KERNELS = '''
from kiln import cuda


@cuda.jit(device=True)
def halved_if_even(a):
    if a % 2 == 0:
        return a // 2
    return None


@cuda.jit(device=True)
def first_above(values, limit):
    for i in range(values.size):
        if values[i] > limit:
            return values[i]


@cuda.jit(device=True)
def plus_one(v):
    return v + 1


@cuda.jit
def tested(out, values):
    i = cuda.grid(1)
    if i < values.size:
        half = halved_if_even(values[i])
        if half is None:
            out[i, 0] = -1
        else:
            out[i, 0] = half
        out[i, 1] = half is not None
        found = first_above(values, values[i])
        out[i, 2] = -1 if found is None else found


@cuda.jit
def variable(out, flags):
    i = cuda.grid(1)
    if i < flags.size:
        x = None
        if flags[i]:
            x = 5 + i
        if x is not None:
            out[i] = x
        else:
            out[i] = -7


@cuda.jit
def unwrapped(out, a):
    r = halved_if_even(a)
    out[0] = r + 1
    out[1] = max(r, 2)
    out[2] = plus_one(r)
    out[3] = -r


@cuda.jit(debug=True, opt=False)
def unwrapped_strictly(out, a):
    out[0] = halved_if_even(a) * 3


@cuda.jit(device=True)
def from_another_branch(a, c):
    if c:
        v = a
        return 0
    else:
        return v + 1


@cuda.jit
def reads_unreached(out, a, c):
    out[0] = from_another_branch(a, c)
'''


@pytest.fixture(scope="module")
def kernels(file_source_module):
    return file_source_module("optional_kernels", OPTIONAL_KERNELS)


def test_optional_results_are_tested_with_is_none_as_python_does(kernels):
    values = np.array([4, 7, 0, -6, 9, 12, 3, 5], np.int64)
    out = np.zeros((values.size, 3), np.int64)
    kernels.tested[1, values.size](out, values)
    for row, value in zip(out.tolist(), values.tolist()):
        half = value // 2 if value % 2 == 0 else None
        above = next((v for v in values.tolist() if v > value), None)
        want = [-1 if half is None else half, int(half is not None), -1 if above is None else above]
        assert row == want, f"optional results for {value}: {row}, want {want}"


def test_a_variable_none_on_one_path_is_optional(kernels):
    flags = np.array([1, 0, 1, 0], np.bool_)
    out = np.zeros(flags.size, np.int64)
    kernels.variable[1, flags.size](out, flags)
    assert out.tolist() == [5, -7, 7, -7]


def test_operators_builtins_and_device_functions_take_the_value(kernels):
    out = np.zeros(4, np.int64)
    kernels.unwrapped[1, 1](out, 10)
    assert out.tolist() == [6, 5, 6, -5]


def test_an_optional_that_is_none_raises_type_error_where_its_value_is_needed(kernels):
    out = np.zeros(1, np.int64)
    with pytest.raises(TypeError, match="expected int64, got None"):
        kernels.unwrapped_strictly[1, 1](out, 7)
    kernels.unwrapped_strictly[1, 1](out, 8)
    assert out[0] == 12


def test_without_debug_a_none_unwrapped_ends_the_kernel_as_numba_cuda_does(kernels):
    out = np.full(4, 99, np.int64)
    kernels.unwrapped[1, 1](out, 7)
    assert out.tolist() == [99, 99, 99, 99], "the kernel went on past a None it could not unwrap"


def test_a_read_no_assignment_reaches_compiles_where_an_assignment_precedes_it(kernels):
    out = np.zeros(1, np.int64)
    kernels.reads_unreached[1, 1](out, 3, 1)
    assert out[0] == 0
    kernels.reads_unreached[1, 1](out, 3, 0)
    assert out[0] == 1, "the unassigned variable reads as zero, as Numba's does in practice"


@pytest.mark.parametrize("body, name", [
    ("    out[0] = t + 1\n    t = 5\n", "t"),
    ("    e = out[0]\n    del e\n    out[1] = e\n", "e"),
])
def test_reads_before_any_assignment_or_after_del_are_still_errors(tmp_path, kiln, body, name):
    source = tmp_path / "unassigned.py"
    source.write_text(f"from kiln import cuda\n\n\n@cuda.jit('void(int64[:])')\ndef k(out):\n{body}")
    done = kiln("build", source, "--emit", "ptx", "-o", tmp_path / "out")
    assert done.returncode != 0 and f"local variable '{name}' is referenced before assignment" in done.stderr, \
        done.stderr


def test_optional_values_assemble_for_every_default_architecture(tmp_path, kiln):
    source = tmp_path / "optional_signed.py"
    text = OPTIONAL_KERNELS.replace("@cuda.jit\ndef tested(", '@cuda.jit("void(int64[:, :], int64[:])")\ndef tested(')
    text = text.replace("@cuda.jit\ndef variable(", '@cuda.jit("void(int64[:], boolean[:])")\ndef variable(')
    source.write_text(text)
    done = kiln("build", source, "--emit", "fatbin", "-o", tmp_path / "out")
    assert done.returncode == 0, f"optional values did not build for every architecture: {done.stderr}"
    typed = kiln("build", source, "--emit", "typed", "-o", tmp_path / "typed")
    assert typed.returncode == 0, typed.stderr
    text = (tmp_path / "typed" / "optional_signed.typed").read_text()
    assert "-> OptionalType(int64)" in text, "halved_if_even should return OptionalType(int64)"
    again = kiln("build", tmp_path / "typed" / "optional_signed.typed", "--emit", "ptx", "-o", tmp_path / "again")
    assert again.returncode == 0, f"the typed IR of optional values did not read back: {again.stderr}"
