"""kiln.cuda.jit in a module that runs as Python source: kernels specialize
on demand through Kiln's compiler, in process, and run on the runtime as a
built module's would."""

import importlib
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

KERNELS = '''
import numpy as np
from kiln import cuda

SCALE = 3


@cuda.jit(device=True)
def scaled(x):
    return SCALE * x


@cuda.jit
def scale(out, x):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = scaled(x[i])


@cuda.jit
def add_constant(out, value):
    i = cuda.grid(1)
    if i < out.size:
        out[i] += value


@cuda.jit("void(int32[::1])")
def fill_seven(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 7
'''

def import_source(tmp_path, name, source):
    """Writes `source` as tmp_path/name.py and imports it as Python source."""
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    sys.path.insert(0, str(tmp_path))
    try:
        module = importlib.import_module(name)
    finally:
        sys.path.remove(str(tmp_path))
    return module


@pytest.fixture
def kernels(tmp_path, request):
    name = f"lazy_{request.node.name.replace('[', '_').replace(']', '').replace('-', '_')}"
    yield import_source(tmp_path, name, KERNELS)
    sys.modules.pop(name, None)


def test_each_new_type_compiles_a_specialization(kernels):
    for dtype in (np.float32, np.int64, np.float64):
        x = np.arange(100, dtype=dtype)
        out = np.zeros_like(x)
        kernels.scale[4, 32](out, x)
        np.testing.assert_array_equal(out, 3 * x, err_msg=f"scale over {np.dtype(dtype).name}")
    assert kernels.scale.signatures == [
        f"(array({t}, 1d, C), array({t}, 1d, C))" for t in ("float32", "int64", "float64")
    ]


def test_scalars_are_typed_as_numba_types_them(kernels):
    out = np.zeros(8, dtype=np.float64)
    kernels.add_constant[1, 8](out, 2)          # int64
    kernels.add_constant[1, 8](out, 0.5)        # float64
    kernels.add_constant[1, 8](out, np.float32(0.25))
    np.testing.assert_array_equal(out, np.full(8, 2.75))
    assert kernels.add_constant.signatures == [
        "(array(float64, 1d, C), int64)", "(array(float64, 1d, C), float64)",
        "(array(float64, 1d, C), float32)"]


def test_layouts_are_specialized_separately(kernels):
    x = np.arange(64, dtype=np.float32)
    strided_out = np.zeros(128, dtype=np.float32)[::2]
    kernels.scale[2, 32](strided_out, x)
    np.testing.assert_array_equal(strided_out, 3 * x)
    assert kernels.scale.signatures == ["(array(float32, 1d, A), array(float32, 1d, C))"]


def test_launches_of_known_types_reuse_their_specialization(kernels):
    x = np.arange(64, dtype=np.float32)
    contiguous = np.zeros(64, dtype=np.float32)
    strided = np.zeros(128, dtype=np.float32)[::2]
    for out in (contiguous, strided, contiguous, strided):
        kernels.scale[2, 32](out, x)
    np.testing.assert_array_equal(contiguous, 3 * x)
    np.testing.assert_array_equal(strided, 3 * x)
    assert sorted(kernels.scale.overloads) == [
        "(array(float32, 1d, A), array(float32, 1d, C))", "(array(float32, 1d, C), array(float32, 1d, C))"]
    out = np.zeros(4, dtype=np.float64)
    kernels.add_constant[1, 4](out, 2**63)      # beyond int64: uint64, as Numba types it
    kernels.add_constant[1, 4](out, 1)
    assert kernels.add_constant.signatures == [
        "(array(float64, 1d, C), uint64)", "(array(float64, 1d, C), int64)"]


def test_forall_and_specialize(kernels):
    x = np.arange(300, dtype=np.int32)
    out = np.zeros_like(x)
    specialized = kernels.scale.specialize(out, x)
    assert specialized.specialized and not kernels.scale.specialized
    assert kernels.scale.signatures == ["(array(int32, 1d, C), array(int32, 1d, C))"]
    assert specialized.signatures == kernels.scale.signatures
    kernels.scale.forall(x.size)(out, x)
    np.testing.assert_array_equal(out, 3 * x)
    specialized.forall(x.size)(out, 2 * x)
    np.testing.assert_array_equal(out, 6 * x)
    with pytest.raises(TypeError, match="has no specialization for argument types"):
        specialized[1, 1](np.zeros(4, np.complex128), np.zeros(4, np.complex128))
    assert kernels.scale.signatures == ["(array(int32, 1d, C), array(int32, 1d, C))"], \
        "a specialized kernel compiles nothing more"
    assert kernels.scale.definition.signatures == kernels.scale.signatures
    kernels.scale[1, 4](np.zeros(4), np.ones(4))
    assert list(kernels.scale.definitions) == kernels.scale.signatures
    with pytest.raises(TypeError, match="definition needs exactly one"):
        kernels.scale.definition  # noqa: B018


def test_a_declared_signature_is_the_only_one(kernels):
    out = np.zeros(40, dtype=np.int32)
    kernels.fill_seven[2, 32](out)
    assert (out == 7).all()
    with pytest.raises(TypeError, match="has no specialization for argument types"):
        kernels.fill_seven[1, 32](np.zeros(4, dtype=np.float32))
    assert list(kernels.fill_seven.overloads) == ["(array(int32, 1d, C))"]


def test_device_functions_are_not_callable_from_python(kernels):
    with pytest.raises(TypeError, match="device function 'scaled' can be called only from kernels"):
        kernels.scaled(2)


def test_arguments_kernels_cannot_take_are_named(kernels):
    with pytest.raises(TypeError, match=r"argument 2 \('x'\) of 'scale' has type 'str', which kernels cannot take"):
        kernels.scale[1, 1](np.zeros(1), "x")
    with pytest.raises(TypeError, match="kernel 'scale' takes 2 arguments, but 1 was given"):
        kernels.scale[1, 1](np.zeros(1))
    with pytest.raises(ValueError, match="launch configuration was not specified"):
        kernels.scale(np.zeros(1), np.zeros(1))


def test_compile_errors_carry_kiln_diagnostics(tmp_path):
    from kiln import _compiler

    module = import_source(tmp_path, "lazy_broken", '''
        from kiln import cuda


        @cuda.jit
        def broken(out):
            out[0] = undefined_name
    ''')
    with pytest.raises(_compiler.CompileError) as error:
        module.broken[1, 1](np.zeros(1))
    assert "lazy_broken.py:7:14: error: name 'undefined_name' is not defined" in str(error.value)


def test_a_kernel_kiln_refuses_fails_only_its_own_calls(tmp_path):
    """Each build in development compiles the kernels called so far, with
    every jit call host code made: a call Kiln refuses (a pointer to tuples
    in a signature) must fail that kernel alone, not every build after it."""
    from kiln import _compiler

    module = import_source(tmp_path, "lazy_refused", '''
        from kiln import cuda
        from numba import types


        def make_refused():
            @cuda.jit(types.void(types.CPointer(types.UniTuple(types.int64, 2))))
            def refused(pointer):
                pass
            return refused


        def make_fine():
            @cuda.jit
            def fine(out):
                out[0] = 1.5
            return fine


        @cuda.jit
        def also_fine(out):
            out[1] = 2.5
    ''')
    with pytest.raises(_compiler.CompileError, match=r"CPointer\(UniTuple\(int64 x 2\)\) is not supported"):
        module.make_refused()[1, 1](np.zeros(1, np.float32))
    out = np.zeros(2)
    module.make_fine()[1, 1](out)
    module.also_fine[1, 1](out)
    np.testing.assert_array_equal(out, [1.5, 2.5])


def test_zero_dimensional_arrays_specialize_as_numba_types_them(tmp_path):
    module = import_source(tmp_path, "lazy_zero_dimensional", '''
        from kiln import cuda


        @cuda.jit
        def add_two(r, x):
            r[()] = x[()] + 2
    ''')
    result = np.zeros((), np.int64)
    module.add_two[1, 1](result, np.array(40))
    assert result[()] == 42
    single = np.zeros((), np.float32)
    module.add_two[1, 1](single, np.array(1.5, np.float32))
    assert single[()] == 3.5
    assert module.add_two.signatures == ["(array(int64, 0d, C), array(int64, 0d, C))",
                                         "(array(float32, 0d, C), array(float32, 0d, C))"]


def test_first_calls_from_many_threads_compile_once(kernels):
    x = np.arange(64, dtype=np.float32)
    outputs = [np.zeros_like(x) for _ in range(8)]
    errors = []
    start = threading.Barrier(8)
    builds = kernels.scale._builds
    made = []  # each build made now, or loaded from an earlier process

    def counted(method):
        def call(*args):
            module = method(*args)
            if module is not None:
                made.append(module)
            return module
        return call

    builds._build = counted(builds._build)
    builds._load_kept = counted(builds._load_kept)

    def call(out):
        try:
            start.wait()
            kernels.scale[2, 32](out, x)
        except Exception as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=call, args=(out,)) for out in outputs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not errors, errors
    for out in outputs:
        np.testing.assert_array_equal(out, 3 * x)
    assert len(kernels.scale.overloads) == 1, "eight first calls with one type must compile once"
    assert len(made) == 1, f"eight first calls with one type made {len(made)} builds"
    assert builds.signatures == ["scale=void(float32[::1], float32[::1])"], builds.signatures


def error_without_the_compiler(tmp_path, package_dir, name, source, call):
    """The exception's class and message lines when `call` runs, in a
    process with kiln-runtime alone (no compiler), on module `name`
    (`source`, imported as m)."""
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    script = textwrap.dedent(f'''
        import sys
        sys.modules["kiln._compiler"] = None   # kiln-runtime alone: no compiler
        import numpy as np
        import {name} as m
        try:
            {call}
        except Exception as error:
            print(type(error).__name__, error, sep="\\n")
    ''')
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(package_dir)]))
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=environment, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_without_the_compiler_the_error_says_what_to_add(tmp_path, package_dir):
    lines = error_without_the_compiler(tmp_path, package_dir, "lazy_runtime_only", KERNELS,
                                       "m.scale[1, 4](np.zeros(4, np.float32), np.ones(4, np.float32))")
    assert lines[:3] == [
        "NoSpecializationError",
        "kernel 'scale' has no specialization for (float32[::1], float32[::1]), and Kiln's compiler "
        "is not installed to compile one. Add it to the package's build, and rebuild the package:",
        "    kiln signatures add lazy_runtime_only.scale 'void(float32[::1], float32[::1])'",
    ], lines


HOST_CODE_BESIDE_KERNELS = '''
import functools
import math
import os
import numpy as np
from kiln import cuda

TPB = 32
TABLE = np.arange(8, dtype=np.float32) * 2
SCALE = 3


class Settings:
    verbose = False


def host_helper(x):
    return x + 1


@functools.lru_cache(maxsize=None)
def cached_helper(n):
    return n


@staticmethod
@functools.wraps(cached_helper)
def stacked_decorators(n):
    return n


async def coroutine():
    return 1


@cuda.jit
def scale(out, x):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = SCALE * x[i] + math.sqrt(4.0)


@cuda.jit
def uses_table(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = TABLE[i % 8]


def run(x):
    out = np.zeros_like(x)
    scale[(x.size + TPB - 1) // TPB, TPB](out, host_helper(x) - 1)
    return out


if __name__ == "__main__":
    run(np.ones(4))
'''


def test_host_code_sits_beside_the_kernels(tmp_path):
    module = import_source(tmp_path, "lazy_with_host_code", HOST_CODE_BESIDE_KERNELS)
    x = np.arange(100, dtype=np.float32)
    np.testing.assert_array_equal(module.run(x), 3 * x + 2)


def test_kernels_read_the_tables_host_code_computes(tmp_path):
    module = import_source(tmp_path, "lazy_host_table", HOST_CODE_BESIDE_KERNELS)
    out = np.zeros(16, dtype=np.float32)
    module.uses_table[1, 16](out)
    np.testing.assert_array_equal(out, np.tile(module.TABLE, 2))


def test_a_module_the_build_replaces_still_may_hold_only_kernels(tmp_path, kiln):
    source = tmp_path / "replaced.py"
    source.write_text(HOST_CODE_BESIDE_KERNELS.replace("from kiln import cuda", "from numba import cuda"))
    result = kiln("build", source, "--module", "replaced", "-o", tmp_path / "out", "-q")
    assert result.returncode != 0
    assert "function 'host_helper' has no decorator" in result.stderr
    assert "class" in result.stderr and "host code cannot be in a kernel module" in result.stderr


UFUNCS_AND_REDUCTIONS = '''
import math
from kiln import cuda, vectorize


@cuda.jit(device=True)
def polar_to_cartesian(rho, theta):
    return rho * math.cos(theta), rho * math.sin(theta)


@vectorize(["float32(float32, float32, float32, float32)"], target="cuda")
def polar_distance(rho1, theta1, rho2, theta2):
    x1, y1 = polar_to_cartesian(rho1, theta1)
    x2, y2 = polar_to_cartesian(rho2, theta2)
    return ((x1 - x2) ** 2 + (y1 - y2) ** 2) ** 0.5


@cuda.reduce
def sum_reduce(a, b):
    return a + b
'''


def test_ufuncs_and_reductions_compile_on_their_first_call(tmp_path):
    module = import_source(tmp_path, "lazy_ufuncs", UFUNCS_AND_REDUCTIONS)
    rng = np.random.default_rng(5)
    rho1, theta1, rho2, theta2 = (rng.random(1000, dtype=np.float32) for _ in range(4))
    expected = np.hypot(rho1 * np.cos(theta1) - rho2 * np.cos(theta2),
                        rho1 * np.sin(theta1) - rho2 * np.sin(theta2))
    np.testing.assert_allclose(module.polar_distance(rho1, theta1, rho2, theta2), expected,
                               rtol=1e-5, atol=1e-6)
    assert module.sum_reduce(np.arange(1000, dtype=np.int64)) == 499500
    assert module.sum_reduce(np.arange(10.0)) == 45.0
    assert "ufunc 'polar_distance'" in repr(module.polar_distance)


UFUNCS_OF_INFERRED_RETURN_TYPES = '''
from kiln import vectorize


@vectorize(["(NPDatetime('D'), NPDatetime('D'))"], target="cuda")
def days_between(start, end):
    return end - start


@vectorize(["(float32, int32)", "(int16, int16)"], target="cuda")
def scaled(x, n):
    return x * n
'''


def test_ufunc_signatures_without_a_return_type_infer_it_as_numba_does(tmp_path):
    module = import_source(tmp_path, "inferred_ufuncs", UFUNCS_OF_INFERRED_RETURN_TYPES)
    start = np.array(["2020-01-01", "2021-03-04", "NaT"], dtype="datetime64[D]")
    end = np.array(["2020-02-01", "2021-03-01", "2020-01-01"], dtype="datetime64[D]")
    between = module.days_between(start, end)
    assert between.dtype == np.dtype("timedelta64[D]")
    np.testing.assert_array_equal(between, end - start)
    x, n = np.arange(5, dtype=np.float32) / 3, np.arange(5, dtype=np.int32)
    scaled = module.scaled(x, n)
    assert scaled.dtype == np.float64  # float32 * int32, as NumPy and Numba promote
    np.testing.assert_array_equal(scaled, x.astype(np.float64) * n)
    assert module.scaled(np.int16([300]), np.int16([300])).tolist() == [90000]


def test_device_arrays_hold_datetimes_and_timedeltas():
    from kiln import cuda

    days = np.array([1, -3, 7], dtype="timedelta64[D]")
    on_device = cuda.to_device(days)
    assert on_device.dtype == days.dtype
    np.testing.assert_array_equal(on_device.copy_to_host(), days)
    empty = cuda.device_array(4, dtype="datetime64[s]")
    assert empty.dtype == np.dtype("datetime64[s]") and empty.shape == (4,)


def test_what_the_compiler_makes_can_be_inspected(kernels, capsys):
    x = np.arange(8, dtype=np.float32)
    kernels.scale[1, 8](np.zeros_like(x), x)
    [signature] = kernels.scale.signatures
    ptx = kernels.scale.inspect_asm()
    assert list(ptx) == [signature]
    assert ".target sm_80" in ptx[signature] and ".entry" in ptx[signature]
    assert kernels.scale.inspect_asm(signature) == ptx[signature]
    assert "define" in kernels.scale.inspect_llvm(signature)
    registers = kernels.scale.get_regs_per_thread()
    assert list(registers) == [signature] and registers[signature] > 0
    assert kernels.scale.get_shared_mem_per_block(signature) == 0
    kernels.scale.inspect_types()
    printed = capsys.readouterr().out
    assert "kernel @" in printed and "name('scale')" in printed and "name('add_constant')" not in printed
    with pytest.raises(ValueError, match="has no specialization"):
        kernels.scale.inspect_asm("(int8)")


def test_a_later_process_loads_the_build_an_earlier_one_kept(tmp_path, package_dir, kiln):
    source = tmp_path / "kept_builds.py"
    source.write_text(KERNELS)
    cache = tmp_path / "cache"
    script = textwrap.dedent('''
        import sys
        import numpy as np
        import kept_builds as k
        x = np.arange(16, dtype=np.float32)
        out = np.zeros_like(x)
        k.scale[1, 16](out, x)
        assert (out == 3 * x).all(), out
        print("compiled" if "kiln._compiler" in sys.modules else "loaded")
    ''')
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(package_dir)]),
                       KILN_CACHE_DIR=str(cache), KILN_TARGET="cpu")

    def first_call():
        result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                env=environment, timeout=300, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        return result.stdout.strip()

    assert first_call() == "compiled"
    assert first_call() == "loaded", "the second process must load the kept build, not compile"
    assert len(list((cache / "modules").iterdir())) == 1
    source.write_text(KERNELS.replace("SCALE = 3", "SCALE = 3  # edited"))
    assert first_call() == "compiled", "an edited source must be compiled again"
    assert first_call() == "loaded"
    cleared = kiln("cache", "clear", "--cache-dir", cache)
    assert cleared.returncode == 0, cleared.stderr
    assert first_call() == "compiled", "kiln cache clear must drop the kept builds too"
    environment["KILN_CACHE"] = "0"
    assert first_call() == "compiled"


ENUMS = '''
import enum
from enum import IntEnum, auto

import numpy as np
from kiln import cuda


class Color(IntEnum):
    RED = 1
    GREEN = 2
    BLUE = auto()


class Mode(enum.Enum):
    DOUBLE = 2
    TRIPLE = 3.5


class Settings:
    verbose = False


@cuda.jit
def paint(out, shade):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = shade * Color.BLUE + Mode.TRIPLE.value
        if shade == Color.GREEN:
            out[i] = -Color.RED.value


@cuda.jit
def uses_missing_member(out):
    out[0] = Color.PURPLE
'''


def test_enum_members_are_constants_as_numba_freezes_them(tmp_path):
    from kiln import _compiler

    module = import_source(tmp_path, "lazy_enums", ENUMS)
    out = np.zeros(4)
    module.paint[1, 4](out, 5)
    np.testing.assert_array_equal(out, 5 * 3 + 3.5)
    module.paint[1, 4](out, 2)
    np.testing.assert_array_equal(out, -1)
    with pytest.raises(_compiler.CompileError, match="enum 'Color' has no member 'PURPLE'"):
        module.uses_missing_member[1, 1](np.zeros(1, np.int64))


def test_an_enum_value_is_part_of_the_kernels_semantic_hash(tmp_path, kiln_check_json):
    source = tmp_path / "hashed_enums.py"
    hashes = []
    for value in ("3.5", "4.5"):
        source.write_text(textwrap.dedent(f'''
            import enum
            from kiln import cuda


            class Mode(enum.Enum):
                TRIPLE = {value}


            @cuda.jit("void(float64[::1])")
            def paint(out):
                out[0] = Mode.TRIPLE.value
        '''))
        status, report = kiln_check_json(source)
        assert status == 0, report
        [paint] = report["functions"]
        hashes.append(paint["specializations"][0]["semantic_hash"])
    assert hashes[0] != hashes[1], "changing an enum member's value must change the kernel's key"


CLOSURES = '''
import numpy as np
from kiln import cuda, vectorize

OFFSET = 100.0


@cuda.jit(device=True)
def doubled(x):
    return 2 * x


def make_scaler(factor, table, op):
    @cuda.jit(device=True)
    def shifted(x):
        return x + factor

    @cuda.jit
    def scale(out, x):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = op(shifted(x[i]) * factor) + table[i % table.size] + OFFSET
    return scale


def make_labelled(label):
    @cuda.jit
    def labelled(out):
        out[0] = len(label)
    return labelled


def make_random(n):
    # As numba-cuda's documentation examples import them: inside the function.
    from kiln.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

    @cuda.jit
    def uniform(states, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = xoroshiro128p_uniform_float32(states, i)

    states = create_xoroshiro128p_states(n, seed=7)
    out = np.zeros(n, np.float32)
    uniform[1, n](states, out)
    return out


def run_cpu_compatible(x, y, z):
    # numba-cuda's documentation example: one function for the CPU and, called
    # from a kernel, the GPU.
    import numba

    @numba.jit
    def business_logic(x, y, z):
        return 4 * z * (2 * x - (4 * y) / 2 * 3.14159)

    @cuda.jit
    def apply(out, x, y, z):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = business_logic(x[i], y[i], z[i])

    out = np.zeros_like(x)
    apply[1, x.size](out, x, y, z)
    return out, business_logic(x, y, z)


def make_reduction():
    # numba-cuda's Monte Carlo example defines its reduction inside a function.
    @cuda.reduce
    def sum_reduce(a, b):
        return a + b
    return sum_reduce


def make_ufunc(k):
    @vectorize(["float64(float64)"], target="cuda")
    def add_k(x):
        return x + k
    return add_k
'''


def test_closures_compile_with_the_values_they_close_over(tmp_path):
    """Each closure a kernel factory makes is a kernel of its own, frozen
    with its free variables (numbers, arrays, device functions, and device
    functions that are closures themselves), as Numba compiles them."""
    module = import_source(tmp_path, "lazy_closures", CLOSURES)
    x = np.arange(6.0)
    first = module.make_scaler(2.0, np.arange(3.0), module.doubled)
    second = module.make_scaler(3, np.array([10, 20]), module.doubled)
    for kernel, factor, table in ((first, 2.0, np.arange(3.0)), (second, 3, np.array([10, 20])),
                                  (first, 2.0, np.arange(3.0))):
        out = np.zeros_like(x)
        kernel[1, 8](out, x)
        expected = 2 * ((x + factor) * factor) + table[np.arange(6) % table.size] + 100.0
        np.testing.assert_array_equal(out, expected, err_msg=f"closure with factor={factor}")
    assert first.signatures == ["(array(float64, 1d, C), array(float64, 1d, C))"]


def test_a_closure_calls_device_functions_its_function_imported(tmp_path):
    module = import_source(tmp_path, "lazy_closure_random", CLOSURES)
    first, again = module.make_random(16), module.make_random(16)
    assert first.dtype == np.float32 and ((0 <= first) & (first < 1)).all(), first
    assert len(set(first.tolist())) == 16, "each thread draws from its own state"
    np.testing.assert_array_equal(first, again)
    # What Numba's simulator draws for seed 7, threads 0 to 3.
    np.testing.assert_array_equal(first[:4], np.float32([0.7796595096588135, 0.09631481021642685,
                                                         0.9711313843727112, 0.5329803824424744]))


def test_a_closure_calls_a_cpu_jitted_function_of_its_function(tmp_path):
    pytest.importorskip("numba")
    module = import_source(tmp_path, "lazy_closure_cpu_jit", CLOSURES)
    x = np.linspace(-3, 3, 16)
    on_the_engine, on_the_cpu = module.run_cpu_compatible(x, 2 * x, x + 1)
    np.testing.assert_allclose(on_the_engine, on_the_cpu, rtol=1e-15)


def test_a_closure_over_what_kernels_cannot_read_names_the_variable(tmp_path):
    from kiln import _compiler

    module = import_source(tmp_path, "lazy_closure_over_list", CLOSURES)
    with pytest.raises(_compiler.CompileError) as error:
        module.make_labelled(["a", "b"])[1, 1](np.zeros(1))
    assert "'label' is a variable of 'make_labelled'" in str(error.value), str(error.value)


def test_ufuncs_and_reductions_defined_inside_a_function_compile_with_what_they_close_over(tmp_path):
    module = import_source(tmp_path, "lazy_closure_ufunc", CLOSURES)
    for k in (1.0, 2.5):
        np.testing.assert_array_equal(module.make_ufunc(k)(np.arange(4.0)), np.arange(4.0) + k)
    x = np.arange(10, dtype=np.float32)
    assert module.make_reduction()(x) == x.sum()


def test_without_the_compiler_a_closure_says_why_it_cannot_run(tmp_path, package_dir):
    lines = error_without_the_compiler(tmp_path, package_dir, "closure_runtime_only", CLOSURES,
                                       "m.make_scaler(2.0, np.ones(2), m.doubled)[1, 4](np.zeros(4), np.ones(4))")
    assert lines[:2] == [
        "NoSpecializationError",
        "kernel 'scale' is defined inside 'make_scaler', and Kiln compiles such a closure when it is "
        "first called, with the values it closes over: that needs Kiln's compiler, which is not "
        "installed. To precompile the kernel, make it when closure_runtime_only is imported (a module "
        "global), or define it at the top level and pass those values as arguments",
    ], lines


def test_a_program_python_c_runs_has_its_kernels_compiled(tmp_path, package_dir):
    program = textwrap.dedent('''
        import numpy as np
        from kiln import cuda

        @cuda.jit
        def double(x):
            i = cuda.grid(1)
            if i < x.size:
                x[i] *= 2

        x = np.arange(4.0)
        double[1, 4](x)
        print(x.tolist())
    ''')
    environment = dict(os.environ, PYTHONPATH=str(package_dir), KILN_TARGET="cpu",
                       KILN_CACHE_DIR=str(tmp_path / "cache"))
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                            env=environment, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[0.0, 2.0, 4.0, 6.0]"


REGISTER_JITABLE = '''
from numba.extending import register_jitable
from kiln import cuda


@register_jitable
def clamp(x, lo, hi):
    return min(max(x, lo), hi)


@register_jitable(inline="always")
def twice(x):
    return 2 * x


@cuda.jit
def clamp_twice(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = twice(clamp(x[i], -1.0, 1.0))
'''


def test_register_jitable_functions_are_device_functions_kernels_call(tmp_path):
    pytest.importorskip("numba")
    module = import_source(tmp_path, "lazy_register_jitable", REGISTER_JITABLE)
    x = np.linspace(-2, 2, 9)
    out = np.zeros_like(x)
    module.clamp_twice[1, 16](out, x)
    np.testing.assert_array_equal(out, 2 * np.clip(x, -1, 1))
    assert module.clamp(3, 0, 1) == 1, "on the host it stays a Python function"


CONDITIONAL_IMPORT = '''
import enum

from kiln import cuda

HAS_NUMBA = True
if HAS_NUMBA:
    from numba import njit


class Color(enum.Enum):
    red = 1
    green = 2


@njit
def pick(pred):
    return Color.red if pred else Color.green


def make_kernel():
    @njit
    def inner(pred):
        return Color.red if pred else Color.green

    @cuda.jit
    def kernel(pred, out):
        out[0] = inner(pred) == Color.red
        out[1] = pick(not pred) == Color.green
    return kernel
'''


def test_decorators_imported_under_an_if_make_device_functions(tmp_path):
    """numba-cuda's tests import njit under `if HAS_NUMBA:`; the functions
    it decorates, at the top level or inside a test, are device functions."""
    pytest.importorskip("numba")
    module = import_source(tmp_path, "lazy_conditional_import", CONDITIONAL_IMPORT)
    out = np.zeros(2, np.bool_)
    module.make_kernel()[1, 1](True, out)
    assert out.tolist() == [True, True]


MONTE_CARLO = '''
import numpy as np


class Integrator:
    def integrate(self, n):
        # As numba-cuda's Monte Carlo example: the imports, the kernel and the
        # @numba.jit function it calls, defined after it, all inside a method.
        import numba
        from kiln import cuda

        @cuda.jit
        def evaluate(out):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = func(1.0 + i / out.size)

        @cuda.reduce
        def sum_reduce(a, b):
            return a + b

        @numba.jit
        def func(x):
            return 1.0 / x

        out = np.zeros(n, np.float32)
        evaluate.forall(n)(out)
        return sum_reduce(out) / n
'''


def test_a_method_defines_a_kernel_a_reduction_and_the_cpu_function_they_use(tmp_path):
    pytest.importorskip("numba")
    module = import_source(tmp_path, "lazy_monte_carlo", MONTE_CARLO)
    assert abs(module.Integrator().integrate(4096) - np.log(2)) < 1e-3


CONDITIONAL_MODULE_IMPORT = '''
from kiln import cuda

if True:
    import numba as nb


@nb.njit
def twice(x):
    return 2 * x


@cuda.jit
def kernel(out):
    out[0] = twice(21)
'''


def test_a_module_imported_under_an_if_names_decorators_too(tmp_path):
    pytest.importorskip("numba")
    module = import_source(tmp_path, "lazy_conditional_module_import", CONDITIONAL_MODULE_IMPORT)
    out = np.zeros(1)
    module.kernel[1, 1](out)
    assert out[0] == 42


def test_kernels_defined_in_module_level_blocks_are_globals(source_module):
    """`if cuda.is_available(): @cuda.jit def k(...)`, as packages guard
    their GPU code: the kernel compiles as one at the top level does."""
    module = source_module("guarded_kernels", '''
        import numpy as np
        from kiln import cuda

        try:
            FACTOR = 3
        except ImportError:
            FACTOR = 1

        if cuda.is_available():

            @cuda.jit(device=True)
            def scaled(x):
                return x * FACTOR

            @cuda.jit("void(f8[:])")
            def scale(a):
                i = cuda.grid(1)
                if i < a.size:
                    a[i] = scaled(a[i])
        else:
            def scale(a):
                raise RuntimeError("no CUDA")
    ''')
    a = np.arange(4.0)
    module.scale[1, 4](a)
    np.testing.assert_array_equal(a, [0.0, 3.0, 6.0, 9.0])


def test_fastmath_flag_sets_from_a_sibling_module_compile(source_module):
    """`fastmath=config.FLAGS` with a set of LLVM flag names that the config
    module computes at import, as stumpy writes it, on kernels and on
    host-only @njit functions beside them."""
    module = source_module("flagged", '''
        import numpy as np
        from numba import njit
        from kiln import cuda
        from flag_config import FLAGS


        @njit(fastmath=FLAGS)
        def host_only(x):
            return x + 1


        @cuda.jit(fastmath=FLAGS)
        def halve(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] = a[i] / 2.0
    ''', flag_config='DEFAULTS = {"FLAGS": {"nsz", "arcp", "contract", "afn", "reassoc"}}\n'
                      'FLAGS = DEFAULTS["FLAGS"]\n')
    a = np.arange(4.0)
    module.halve[1, 4](a)
    np.testing.assert_array_equal(a, [0.0, 0.5, 1.0, 1.5])


def test_a_kernel_factory_calls_a_static_method_jitted_in_another_module(source_module):
    """`@staticmethod @njit` in a class of another module, handed to a
    kernel factory and called by the kernel it makes, as a device function
    (sarracen's interpolation kernels take their weight function so)."""
    module = source_module("weighted", '''
        import numpy as np
        from kiln import cuda

        import splines


        def weigh(weight_function, a):
            @cuda.jit
            def kernel(a):
                i = cuda.grid(1)
                if i < a.size:
                    a[i] = weight_function(a[i], 2)
            kernel[1, a.size](a)
            return a
    ''', splines='''
from numba import njit


class Kernel:
    @staticmethod
    @njit(fastmath=True)
    def w(q, n_dims):
        return 1.0 - q * n_dims


class Spline(Kernel):
    @staticmethod
    @njit
    def w(q, n_dims):
        return q * q + n_dims
''')
    a = module.weigh(module.splines.Kernel.w, np.linspace(0.0, 1.0, 4))
    np.testing.assert_allclose(a, 1.0 - np.linspace(0.0, 1.0, 4) * 2)
    b = module.weigh(module.splines.Spline.w, np.linspace(0.0, 1.0, 4))
    np.testing.assert_allclose(b, np.linspace(0.0, 1.0, 4) ** 2 + 2)


def test_kernels_read_modules_of_packages_their_module_imports(tmp_path, source_module):
    """`from stumpy import core` in a package's tests: kernels call the
    device functions and read the constants of a module of another
    package, found where the running module imported it from, with the
    values that package computes at import."""
    package = tmp_path / "elsewhere" / "clamps"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "config.py").write_text('DEFAULTS = {"FASTMATH": True}\nFASTMATH = DEFAULTS["FASTMATH"]\n')
    (package / "core.py").write_text(textwrap.dedent('''
        from kiln import cuda

        from . import config

        LIMIT = 3


        @cuda.jit(device=True, fastmath=config.FASTMATH)
        def clamp(x):
            return min(x, LIMIT)
    '''))
    sys.path.insert(0, str(tmp_path / "elsewhere"))
    try:
        module = source_module("uses_clamps", '''
            from kiln import cuda
            from clamps import core


            @cuda.jit
            def clamp_all(a):
                i = cuda.grid(1)
                if i < a.size:
                    a[i] = core.clamp(a[i]) + core.LIMIT
        ''')
        a = np.arange(6.0)
        module.clamp_all[1, 6](a)
        np.testing.assert_array_equal(a, [3.0, 4.0, 5.0, 6.0, 6.0, 6.0])
    finally:
        sys.path.remove(str(tmp_path / "elsewhere"))
        for name in ("clamps", "clamps.config", "clamps.core"):
            sys.modules.pop(name, None)


def test_kernels_call_closures_the_factories_of_other_modules_made(source_module):
    """A kernel factory's kernel calls a function that a factory of another
    module made (sarracen's `get_column_kernel_func(samples)` returns an
    `@njit` closure over a table): each such closure is compiled with that
    module's source and the values it closes over, including the closures
    it calls in turn, and a recursive one calls itself."""
    module = source_module("applies", '''
        from kiln import cuda

        import tables


        def apply(weight_function, a):
            @cuda.jit
            def kernel(a):
                i = cuda.grid(1)
                if i < a.size:
                    a[i] = weight_function(a[i])
            kernel[1, a.size](a)
            return a
    ''', tables='''
import numpy as np
from numba import njit

from kiln import cuda


def make_lookup(samples):
    table = np.linspace(0.0, 1.0, samples)

    @njit
    def lookup(q):
        return table[int(q * (samples - 1))]
    return lookup


def make_shifted_lookup(samples, shift):
    lookup = make_lookup(samples)

    @cuda.jit(device=True)
    def shifted(q):
        return lookup(q) + shift
    return shifted


def make_fib():
    @cuda.jit("float64(float64)", device=True)
    def fib(n):
        if n < 2:
            return n
        return fib(n - 1) + fib(n - 2)
    return fib
''')
    tables = module.tables
    q = np.linspace(0.0, 1.0, 4)
    eleven, three = np.linspace(0.0, 1.0, 11), np.linspace(0.0, 1.0, 3)
    np.testing.assert_array_equal(module.apply(tables.make_lookup(11), q.copy()), eleven[[0, 3, 6, 10]])
    np.testing.assert_array_equal(module.apply(tables.make_lookup(3), q.copy()), three[[0, 0, 1, 2]])
    np.testing.assert_array_equal(module.apply(tables.make_shifted_lookup(11, 10.0), q.copy()),
                                  eleven[[0, 3, 6, 10]] + 10.0)
    np.testing.assert_array_equal(module.apply(tables.make_fib(), np.arange(8.0)),
                                  [0, 1, 1, 2, 3, 5, 8, 13])


def test_a_factory_called_again_with_the_same_values_compiles_once(source_module):
    """A host function that makes its kernel at every call (sarracen makes
    one per interpolation) compiles it once per code and values closed
    over: numbers compared by their bits, arrays by their contents, the
    closures it calls by theirs."""
    module = source_module("remade", '''
        import numpy as np
        from numba import njit
        from kiln import cuda


        def make_weight(table):
            @njit
            def weight(i):
                return table[i % table.size]
            return weight


        def run(scale, table, a):
            weight = make_weight(table)

            @cuda.jit
            def kernel(a):
                i = cuda.grid(1)
                if i < a.size:
                    a[i] = weight(i) * (scale / a[i])
            kernel[1, a.size](a)
            return kernel, a
    ''')
    table = np.array([1.0, 2.0])
    first, a = module.run(1.0, table, np.ones(4))
    again, b = module.run(1.0, np.array([1.0, 2.0]), np.ones(4))
    assert again.built_name == first.built_name, "equal values must reuse the compiled kernel"
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, [1.0, 2.0, 1.0, 2.0])
    negative, c = module.run(-0.0, table, np.ones(4))
    assert negative.built_name != first.built_name, "-0.0 is not 0.0 to a kernel"
    assert np.signbit(c).all() and (c == 0).all(), c
    table[:] = [5.0, 7.0]  # the same array, changed: frozen anew, as Numba freezes each closure
    changed, d = module.run(1.0, table, np.ones(4))
    assert changed.built_name != first.built_name
    np.testing.assert_array_equal(d, [5.0, 7.0, 5.0, 7.0])


def test_kernels_read_the_attributes_of_modules_host_code_made(source_module):
    """`mymod = ModuleType("mymod"); mymod.add = add` in a function, then
    `mymod.add(...)` in a kernel it defines (numba-cuda's device function
    tests): the module's functions, numbers and modules, as Numba reads a
    module's globals."""
    module = source_module("made_modules", '''
        from types import ModuleType

        import numpy as np
        from numba import jit
        from kiln import cuda


        def run():
            @jit
            def add(a, b):
                return a + b

            mymod = ModuleType(name="mymod")
            mymod.add = add
            mymod.K = 5
            mymod.inner = ModuleType("inner")
            mymod.inner.S = 2
            mymod.inner.outer = mymod  # a cycle: encoded once
            del add

            @cuda.jit
            def add_kernel(ary):
                i = cuda.grid(1)
                ary[i] = mymod.add(ary[i], mymod.K) * mymod.inner.S

            ary = np.arange(10)
            add_kernel[1, ary.size](ary)
            return ary
    ''')
    np.testing.assert_array_equal(module.run(), (np.arange(10) + 5) * 2)


def test_kernels_call_kernels_as_device_functions(source_module):
    """`@cuda.jit` kernels a kernel calls, at the top level or made by a
    factory, compile as device functions for the call's arguments, as
    Numba's do; the kernel called stays a kernel to launch."""
    module = source_module("kernels_calling_kernels", '''
        import numpy as np
        from kiln import cuda


        @cuda.jit
        def twice(x):
            return 2 * x


        def run(offset, a):
            @cuda.jit
            def shifted(x):
                return twice(x) + offset

            @cuda.jit
            def apply(a):
                i = cuda.grid(1)
                if i < a.size:
                    a[i] = shifted(a[i])

            apply[1, a.size](a)
            return a
    ''')
    np.testing.assert_array_equal(module.run(0.5, np.arange(4.0)), 2 * np.arange(4.0) + 0.5)


READ_PAST_THE_VIEW = '''
import warnings
import numpy as np
from kiln import cuda

warnings.simplefilter("always")


@cuda.jit(boundscheck=False)
def read(a, i, out):
    out[0] = a[i]


@cuda.jit
def read_checked(a, i, out):
    out[0] = a[i]


backing = np.arange(16, dtype=np.int32)
out = np.zeros(1, np.int32)
for kernel in (read, read_checked):
    try:
        kernel[1, 1](backing[:10], 10, out)
        print("read", int(out[0]))
    except IndexError:
        print("IndexError")
'''


@pytest.mark.parametrize("setting, expected", [
    ({}, ["read 10", "IndexError"]),
    ({"KILN_CPU_BOUNDSCHECK": "1"}, ["IndexError", "IndexError"]),
    ({"NUMBA_BOUNDSCHECK": "0"}, ["read 10", "read 10"]),
])
def test_kernels_compiled_on_their_first_call_have_the_copy_the_setting_asks_for(
        tmp_path, package_dir, setting, expected):
    environment = dict(os.environ, PYTHONPATH=str(package_dir), KILN_TARGET="cpu",
                       KILN_CACHE_DIR=str(tmp_path / "cache"))
    for name in ("KILN_CPU_BOUNDSCHECK", "NUMBA_BOUNDSCHECK"):
        environment.pop(name, None)
    environment.update(setting)
    result = subprocess.run([sys.executable, "-c", READ_PAST_THE_VIEW], capture_output=True,
                            text=True, env=environment, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == expected, (
        f"with {setting or 'no setting'}: {result.stdout}")
    assert "RuntimeWarning" not in result.stderr, (
        "a kernel compiled in this process lacks the copy its setting asks for: " + result.stderr)
