"""Kernels read what their module's host code computed at import, as Numba's
do: NumPy arrays are frozen into the code as read-only constant arrays, and
numbers, NumPy scalars and tuples of them as constants. In development the
running module's values are compiled in; `kiln build` imports the module to
read them."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from kiln import _compiler


@pytest.fixture
def import_module(source_module):
    """import_module(name, source, **siblings) -> the module."""
    return source_module


TABLES = '''
import numpy as np
from kiln import cuda

SQUARES = np.arange(16, dtype=np.int64) ** 2
RAMP = np.linspace(0.0, 1.0, 5).astype(np.float32)
GRID = np.arange(12, dtype=np.uint16).reshape(3, 4)
MASK = np.array([True, False, True])
PHASES = np.exp(1j * np.arange(4))
COLUMNS = np.asfortranarray(np.arange(6.0).reshape(2, 3))
ZERO_D = np.array(2.5)
BIG_ENDIAN = np.arange(3, dtype=">i4")


@cuda.jit(device=True)
def total(table):
    s = 0.0
    for v in table:
        s += v
    return s


@cuda.jit
def read_tables(out):
    out[0] = SQUARES[5]
    out[1] = RAMP[RAMP.shape[0] - 1]
    out[2] = GRID[2, 3] + GRID.ndim + GRID.size
    out[3] = MASK[2] + MASK[1]
    out[4] = PHASES[1].imag
    out[5] = COLUMNS[1, 2]
    out[6] = ZERO_D.size + ZERO_D.ndim
    out[7] = BIG_ENDIAN[2]
    out[8] = total(RAMP)
    out[9] = len(SQUARES[3:])
    out[10] = SQUARES[3:][0]
'''


def test_numpy_arrays_computed_at_import_are_frozen_into_kernels(import_module):
    module = import_module("frozen_tables", TABLES)
    out = np.zeros(11)
    module.read_tables[1, 1](out)
    expected = [25, 1.0, 11 + 2 + 12, 1, np.sin(1.0), 5.0, 1, 2, 2.5, 13, 9]
    np.testing.assert_allclose(out, expected, rtol=1e-15)


def test_a_frozen_array_has_numbas_readonly_type(import_module, capsys):
    module = import_module("frozen_types", TABLES)
    module.read_tables[1, 1](np.zeros(11))
    module.read_tables.inspect_types()
    typed = capsys.readouterr().out
    for shown in ("readonly array(int64, 1d, C)", "readonly array(uint16, 2d, C)",
                  "readonly array(float64, 0d, C)", "readonly array(float64, 2d, F)"):
        assert shown in typed, f"{shown} is not in the typed IR:\n{typed}"


NUMBERS = '''
import math
import numpy as np
from kiln import cuda

SCALE = math.sqrt(2.0) * 3
COUNT = int(np.prod([2, 3, 4]))
EPSILON = np.float32(1e-3)
FLAGS = tuple(i % 2 == 0 for i in range(3))
SIZES = tuple(range(2, 5))
ENABLED = len(SIZES) > 2


@cuda.jit
def read_numbers(out):
    out[0] = SCALE
    out[1] = COUNT
    out[2] = EPSILON
    out[3] = FLAGS[2]
    out[4] = SIZES[0] + SIZES[2]
    if ENABLED:
        out[5] = 1
'''


def test_numbers_numpy_scalars_and_tuples_computed_at_import_are_constants(import_module):
    module = import_module("frozen_numbers", NUMBERS)
    out = np.zeros(6)
    module.read_numbers[1, 1](out)
    np.testing.assert_allclose(out, [np.sqrt(2.0) * 3, 24, np.float32(1e-3), 1, 6, 1], rtol=1e-15)


NAMED_TUPLES = '''
import typing
from collections import namedtuple
from kiln import cuda

Params = namedtuple("Params", ["scale", "offset"])
PARAMS = Params(2.5, 1)


class Window(typing.NamedTuple):
    low: int
    high: float


WINDOW = Window(-3, 7.5)


@cuda.jit
def read_named(out):
    out[0] = PARAMS.scale * 2 + PARAMS.offset
    out[1] = PARAMS[1]
    low, high = WINDOW
    out[2] = high - low + WINDOW.high
'''


def test_named_tuples_computed_at_import_keep_their_fields(import_module):
    module = import_module("frozen_named_tuples", NAMED_TUPLES)
    out = np.zeros(3)
    module.read_named[1, 1](out)
    np.testing.assert_array_equal(out, [6.0, 1, 18.0])


def test_tables_come_from_sibling_modules_too(import_module):
    tables = '''
        import numpy as np

        WEIGHTS = np.array([0.25, 0.5, 0.25])
        BIAS = float(np.pi)
    '''
    module = import_module("uses_sibling_table", '''
        from kiln import cuda
        from sibling_tables import WEIGHTS, BIAS


        @cuda.jit
        def smooth(out, x):
            i = cuda.grid(1)
            if 0 < i < x.size - 1:
                out[i] = WEIGHTS[0] * x[i - 1] + WEIGHTS[1] * x[i] + WEIGHTS[2] * x[i + 1] + BIAS
    ''', sibling_tables=tables)
    x = np.arange(8.0) ** 2
    out = np.zeros_like(x)
    module.smooth[1, 8](out, x)
    expected = 0.25 * x[:-2] + 0.5 * x[1:-1] + 0.25 * x[2:] + np.pi
    np.testing.assert_allclose(out[1:-1], expected, rtol=1e-15)


def test_storing_into_a_frozen_array_is_a_compile_error(import_module):
    module = import_module("stores_into_table", '''
        import numpy as np
        from kiln import cuda

        TABLE = np.zeros(4)


        @cuda.jit
        def overwrite(x):
            TABLE[0] = x[0]


        @cuda.jit
        def overwrite_a_view(x):
            view = TABLE[1:]
            view[0] = x[0]


        @cuda.jit
        def add_atomically(x):
            cuda.atomic.add(TABLE, 0, x[0])


        @cuda.jit
        def ufunc_output(x):
            np.sin(x, TABLE)
    ''')
    for kernel in (module.overwrite, module.overwrite_a_view, module.add_atomically,
                   module.ufunc_output):
        with pytest.raises(_compiler.CompileError) as error:
            kernel[1, 1](np.ones(1))
        assert ("cannot modify readonly array of type: readonly array(float64, 1d, " in str(error.value)
                and "is frozen into the kernel as a constant" in str(error.value)), str(error.value)


def test_host_objects_kernels_cannot_read_are_named(import_module):
    module = import_module("reads_a_list", '''
        from kiln import cuda

        LABELS = [str(i) for i in range(3)]
        LIMITS = {"low": 0, "high": 10}


        @cuda.jit
        def uses_list(out):
            out[0] = len(LABELS)


        @cuda.jit
        def uses_dict(out):
            out[0] = LIMITS["low"]
    ''')
    for kernel, name in ((module.uses_list, "LABELS"), (module.uses_dict, "LIMITS")):
        with pytest.raises(_compiler.CompileError) as error:
            kernel[1, 1](np.zeros(1))
        assert f"'{name}' is a value computed at import, which the module's host code makes" in str(
            error.value)
        assert "NumPy arrays of numbers" in str(error.value)


RECORD_TABLES = '''
import numpy as np
from kiln import cuda

PACKED = np.array([(1.0, 2), (3.0, 4)], dtype=[("x", np.float64), ("y", np.int64)])
ALIGNED = np.array([(1, 2.5, 7), (3, 4.5, 9)],
                   dtype=np.dtype([("a", np.uint8), ("b", np.float32), ("c", ">i2")], align=True))
NESTED = np.zeros(2, dtype=[("v", np.float32, (3,))])
NESTED["v"] = [[0.5, 1.5, 2.5], [3.5, 4.5, 5.5]]


@cuda.jit
def read(out):
    i = cuda.grid(1)
    if i < PACKED.size:
        rows = cuda.const.array_like(PACKED)
        out[i, 0] = rows[i]["x"]
        out[i, 1] = rows[i].y
        out[i, 2] = ALIGNED[i]["a"] + ALIGNED[i].b + ALIGNED[i].c


@cuda.jit
def read_nested(out):
    out[0] = NESTED[0].v[1]
'''


def test_record_arrays_computed_at_import_are_frozen_into_kernels(import_module):
    """Structured arrays of numbers, packed or aligned, any byte order, as
    Numba freezes them (numba-cuda's constant-memory tests read them with
    cuda.const.array_like)."""
    module = import_module("record_tables", RECORD_TABLES)
    out = np.zeros((2, 3))
    module.read[1, 2](out)
    aligned = module.ALIGNED
    expected = np.stack([module.PACKED["x"], module.PACKED["y"],
                         aligned["a"] + aligned["b"] + aligned["c"]], axis=1)
    np.testing.assert_array_equal(out, expected)


def test_a_record_array_with_array_fields_is_frozen_with_them(import_module):
    module = import_module("record_tables_nested", RECORD_TABLES)
    out = np.zeros(1)
    module.read_nested[1, 1](out)
    assert out[0] == 1.5


CHANGING_TABLE = '''
import os
import numpy as np
from kiln import cuda

TABLE = np.full(4, float(os.environ["TABLE_VALUE"]))


@cuda.jit
def read(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = TABLE[i]


out = np.zeros(4)
read[1, 4](out)
print(out[0])
'''


def test_a_table_that_changes_between_runs_is_compiled_again(tmp_path, package_dir):
    """The build a process keeps for the next is keyed by the values frozen
    into it, as is the specialization cache."""
    script = tmp_path / "changing_table.py"
    script.write_text(CHANGING_TABLE)
    environment = dict(os.environ, PYTHONPATH=str(package_dir), KILN_TARGET="cpu",
                       KILN_CACHE_DIR=str(tmp_path / "cache"))
    printed = []
    for value in ("1.5", "2.5", "1.5"):
        result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                                env=dict(environment, TABLE_VALUE=value), timeout=300)
        assert result.returncode == 0, result.stderr
        printed.append(result.stdout.strip())
    assert printed == ["1.5", "2.5", "1.5"]


def test_kiln_build_imports_the_module_to_read_its_tables(tmp_path, kiln, package_dir):
    package = tmp_path / "tablepkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "kernels.py").write_text(textwrap.dedent('''
        import numpy as np
        from kiln import cuda

        TABLE = np.cos(np.linspace(0.0, np.pi, 16))


        @cuda.jit("void(float64[::1])")
        def read(out):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = TABLE[i]
    '''))
    environment = dict(os.environ, PYTHONPATH=str(package_dir))
    built = kiln("build", package / "kernels.py", "--arch", "80", "--python", sys.executable,
                 cwd=tmp_path, env=environment)
    assert built.returncode == 0, built.stderr

    # The companion runs where there is no compiler, and holds the table.
    script = textwrap.dedent('''
        import sys
        sys.modules["kiln._compiler"] = None
        import numpy as np
        from tablepkg import kernels
        out = np.zeros(16)
        kernels.read[1, 16](out)
        np.testing.assert_allclose(out, np.cos(np.linspace(0.0, np.pi, 16)), rtol=1e-15)
        print("ok")
    ''')
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                            cwd=tmp_path, env=dict(environment, KILN_TARGET="cpu"))
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_a_module_that_fails_to_import_is_reported_by_kiln_build(tmp_path, kiln, package_dir):
    source = tmp_path / "broken_import.py"
    source.write_text(textwrap.dedent('''
        import numpy as np
        from kiln import cuda

        TABLE = np.arange(4.0)
        raise RuntimeError("no configuration file")


        @cuda.jit("void(float64[::1])")
        def read(out):
            out[0] = TABLE[0]
    '''))
    built = kiln("build", source, "--arch", "80", "--python", sys.executable, cwd=tmp_path,
                 env=dict(os.environ, PYTHONPATH=str(package_dir)))
    assert built.returncode != 0
    assert ("cannot read the globals" in built.stderr and "broken_import.py computes at import" in built.stderr
            and "RuntimeError: no configuration file" in built.stderr), built.stderr
    assert "error: 'TABLE' is a value computed at import" in built.stderr, built.stderr


FACTORY = '''
import numpy as np
from kiln import cuda

GAINS = np.linspace(1.0, 2.0, 4)


@cuda.jit(device=True)
def doubled(x):
    return 2 * x


def make_kernel(op, offset):
    @cuda.jit(device=True)
    def shifted(x):
        return op(x) + offset

    @cuda.jit
    def apply(out, x):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = shifted(x[i]) * GAINS[i % 4]
    return apply


double_plus_one = make_kernel(doubled, 1.0)


def make_op(k):
    @cuda.jit(device=True)
    def op(x):
        return x * k
    return op


tripled = make_op(3)


@cuda.jit
def triple_all(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = tripled(x[i])


# What a module prints when it runs is no part of the values the build reads.
print("factorypkg.kernels ran")
'''

RUN_FACTORY_KERNEL = '''
import sys
if "--no-compiler" in sys.argv:
    sys.modules["kiln._compiler"] = None
import numpy as np
from factorypkg import kernels
x = np.arange(8.0)
out = np.zeros(8)
kernels.double_plus_one[1, 8](out, x)
np.testing.assert_allclose(out, (2 * x + 1) * np.linspace(1.0, 2.0, 4)[np.arange(8) % 4])
kernels.triple_all[1, 8](out, x)
np.testing.assert_array_equal(out, 3 * x)
print("ok")
'''


def test_a_closure_a_factory_makes_at_import_is_recorded_and_precompiled(tmp_path, kiln, package_dir):
    """A kernel factory's closure bound to a module global is a kernel a
    build can hold: its signatures are recorded under the global's name,
    and `kiln build` compiles it, with the device functions it closes over,
    into the companion, which runs it without a compiler. So is a device
    function a factory made, called by its global name."""
    package = tmp_path / "factorypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "kernels.py").write_text(FACTORY)
    (tmp_path / "run.py").write_text(RUN_FACTORY_KERNEL)
    environment = dict(os.environ, PYTHONPATH=str(package_dir), KILN_TARGET="cpu",
                       KILN_RECORD_SIGNATURES=str(tmp_path / "kiln-signatures.toml"))

    def run(*flags):
        return subprocess.run([sys.executable, "run.py", *flags], capture_output=True, text=True,
                              cwd=tmp_path, env=environment, timeout=300)

    recorded = run()
    assert recorded.returncode == 0 and recorded.stdout.split()[-1] == "ok", recorded.stderr
    signatures = (tmp_path / "kiln-signatures.toml").read_text()
    assert '"factorypkg.kernels.double_plus_one" = [\n    "void(float64[::1], float64[::1])",' in signatures

    built = kiln("build", package / "kernels.py", "--arch", "80", "--python", sys.executable,
                 cwd=tmp_path, env=environment)
    assert built.returncode == 0, built.stderr
    precompiled = run("--no-compiler")
    assert precompiled.returncode == 0 and precompiled.stdout.split()[-1] == "ok", precompiled.stderr


def test_enums_and_numbers_imported_from_other_packages_are_read(tmp_path, import_module):
    # A module Kiln does not compile (not beside the kernel's): the values
    # the running module imported from it.
    library = tmp_path / "elsewhere"
    library.mkdir()
    (library / "shape_names.py").write_text(textwrap.dedent('''
        import enum

        class Shape(enum.IntEnum):
            circle = 2
            square = 500

        class Color(enum.Enum):
            red = 1
            green = 2

        SCALE = 1.5
    '''))
    sys.path.insert(0, str(library))
    try:
        module = import_module("reads_other_packages", '''
            from kiln import cuda
            from shape_names import Color, SCALE, Shape


            @cuda.jit
            def read(x, out):
                out[0] = x + Shape.square
                out[1] = Color["green"].value
                out[2] = Color.red == Color.green
                out[3] = Shape["circle"] * SCALE
        ''')
        out = np.zeros(4)
        module.read[1, 1](7, out)
    finally:
        sys.path.remove(str(library))
        sys.modules.pop("shape_names", None)
    np.testing.assert_array_equal(out, [507, 2, 0, 3.0])


CAPTURES = '''
import numpy as np
from kiln import cuda

PRICES = cuda.to_device(np.array([10.0, 25.0, 5.0, 15.0, 30.0], dtype=np.float32))


@cuda.jit
def priced(quantities, totals):
    i = cuda.grid(1)
    if i < totals.size:
        totals[i] = quantities[i] * PRICES[i]


def make_counter(counts):
    @cuda.jit
    def count(keys):
        i = cuda.grid(1)
        if i < keys.size:
            cuda.atomic.add(counts, keys[i], 1)
    return count


def make_reader(table):
    @cuda.jit
    def read(out):
        i, j = cuda.grid(2)
        if i < table.shape[0] and j < table.shape[1]:
            out[i, j] = table[i, j]
    return read
'''


def test_device_arrays_are_captured_by_reference(import_module):
    """As Numba captures them: the kernel reads the array as it is when it
    runs, and its writes land in it."""
    from kiln import cuda

    module = import_module("captured_arrays", CAPTURES)
    quantities = np.ones(5, dtype=np.float32)
    totals = np.zeros(5, dtype=np.float32)
    module.priced[1, 32](quantities, totals)
    np.testing.assert_array_equal(totals, [10, 25, 5, 15, 30])
    module.PRICES.copy_to_device(np.array([20, 50, 10, 30, 60], dtype=np.float32))
    module.priced[1, 32](quantities, totals)
    np.testing.assert_array_equal(totals, [20, 50, 10, 30, 60])

    counts = cuda.to_device(np.zeros(4, dtype=np.int64))
    module.make_counter(counts)[1, 64](np.arange(64, dtype=np.int64) % 4)
    np.testing.assert_array_equal(counts.copy_to_host(), [16, 16, 16, 16])

    # Strides as the array has them: every other column of a C array.
    table = cuda.to_device(np.arange(24.0).reshape(4, 6))[:, ::2]
    out = np.zeros((4, 3))
    module.make_reader(table)[1, (8, 8)](out)
    np.testing.assert_array_equal(out, np.arange(24.0).reshape(4, 6)[:, ::2])


def test_kiln_build_says_a_device_array_cannot_be_captured_ahead_of_time(tmp_path, kiln,
                                                                         package_dir):
    source = tmp_path / "device_global.py"
    source.write_text(textwrap.dedent('''
        import numpy as np
        from kiln import cuda

        PRICES = cuda.to_device(np.arange(4.0))


        @cuda.jit("void(float64[::1])")
        def read(out):
            out[0] = PRICES[0]
    '''))
    built = kiln("build", source, "--arch", "80", "--python", sys.executable, cwd=tmp_path,
                 env=dict(os.environ, PYTHONPATH=str(package_dir), KILN_TARGET="cpu"))
    assert built.returncode != 0
    assert "'PRICES' is a device array, which a kernel captures by its address in the process " \
           "that made it; a kernel built ahead of time cannot (pass the array as an argument " \
           "instead)" in built.stderr, built.stderr


def test_kiln_build_reads_decorator_options_the_package_computes_at_import(tmp_path, kiln, package_dir):
    """`fastmath=config.FLAGS` where the package's config builds the set of
    flags at import, as stumpy does: `kiln build` reads the value the
    imported module holds, and the companion runs without the compiler."""
    package = tmp_path / "flagpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "config.py").write_text('DEFAULTS = {"FLAGS": {"nsz", "arcp", "contract"}}\n'
                                       'FLAGS = DEFAULTS["FLAGS"]\n')
    (package / "kernels.py").write_text(textwrap.dedent('''
        from kiln import cuda

        from . import config


        @cuda.jit("void(float64[::1])", fastmath=config.FLAGS)
        def halve(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] = a[i] / 2.0
    '''))
    environment = dict(os.environ, PYTHONPATH=str(package_dir))
    built = kiln("build", package / "kernels.py", "--arch", "80", "--python", sys.executable,
                 cwd=tmp_path, env=environment)
    assert built.returncode == 0, f"kiln build failed:\n{built.stderr}"
    script = textwrap.dedent('''
        import sys
        sys.modules["kiln._compiler"] = None
        import numpy as np
        from flagpkg import kernels
        a = np.arange(4.0)
        kernels.halve[1, 4](a)
        assert a.tolist() == [0.0, 0.5, 1.0, 1.5], a
        print("ok")
    ''')
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                            cwd=tmp_path, env=dict(environment, KILN_TARGET="cpu"))
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr
