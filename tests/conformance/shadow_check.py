"""The shadow check: in the Kiln run of numba-cuda's tests, every kernel
launch also runs on Numba's CUDA simulator, and what the two left in the
arguments is compared, so that a wrong value shows even where the test's
own assertions do not look (an element it does not check, an output it
only prints, a test that asserts nothing, a tolerance wider than a bug).

How a launch is checked (ShadowCheck.launch, under the stand-in's
launch_hook):

1. the arguments are copied before Kiln's launch, as the test gave them (a
   simulated device array stays one, so that the simulator treats it as it
   would have), arrays with their aliasing: views of one buffer become
   views of one copy of it, at the same offsets and strides;
2. Kiln launches the kernel on the originals (the test goes on with what
   Kiln computed);
3. the same Python function runs on the simulator (a FakeCUDAKernel, with
   the kernel's fastmath and debug options) over the copies, with the same
   grid, block and dynamic shared memory; what it prints is discarded;
4. every array argument (in tuples too, and records) is compared with its
   copy: bit for bit, every NaN the one NaN (payloads and signs of NaNs are
   no semantics), and every complex number with a NaN part the one complex
   NaN, as numba's own tests compare them (assertPreciseEqual asks
   cmath.isnan): C99's special values for NaN parts, which CPython's cmath
   (the simulator's) follows, are where Numba's cmath implementations, and
   Kiln's, give NaN parts instead. Where the kernel, or a device function
   it calls, calls a transcendental function (MATH_FUNCTIONS), raises to a
   power, or is compiled with fastmath, and only there, floats may differ
   by MATH_ULPS units in the last place: implementations of those functions
   round differently, and neither Numba nor the simulator promises correct
   rounding.

Launches of more than SIMULATED_THREADS threads are not run again: the
simulator runs each thread as a Python thread, and a launch of a million
would cost minutes; the report counts them. A launch Kiln refuses, or that
raises, is not run again either (the test sees that), and one the
simulator cannot run (it raises) is counted as not compared, with the
simulator's error.

Each launch writes one JSON line to the log: the test, the kernel (its
module and qualified name, file and line), the argument types of the
specialization Kiln launched, the launch configuration, the outcome
("agreed", "differed" with the first difference, "not run again",
"simulator raised", "Kiln raised") and the units in the last place
allowed. run_suite.py groups the lines by specialization and explains the
differences it can by simulator_divergences.py.
"""

import contextlib
import dis
import io
import json
import types
import warnings

import numpy as np

import kiln_stand_in

# More threads than this in one launch: not run again on the simulator.
SIMULATED_THREADS = 4096

# Functions (of math, cmath, numpy, numba.cuda.libdevice and cuda.fp16) whose
# results implementations round differently: the transcendental ones.
MATH_FUNCTIONS = frozenset("""
    sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh
    arcsin arccos arctan arctan2 arcsinh arccosh arctanh sinpi cospi sincos
    exp exp2 exp10 expm1 log log2 log10 log1p logaddexp logaddexp2 pow power
    erf erfc erfinv erfcinv gamma lgamma tgamma hypot cbrt rsqrt
    degrees radians deg2rad rad2deg
    hsin hcos hexp hexp2 hexp10 hlog hlog2 hlog10 hrsqrt hrcp
    polar rect phase
""".split())

# Units in the last place results may differ by where a kernel calls one of
# MATH_FUNCTIONS, raises to a power or uses fastmath: one for each side's
# rounding. Complex results are compared as complex numbers (their
# distance, in units in the last place of their magnitude): a complex
# function is accurate as a whole, and a part much smaller than the other
# has no accuracy of its own.
MATH_ULPS = 2


def thread_count(launch):
    """The number of threads a Kiln launch runs."""
    return int(np.prod(launch.griddim)) * int(np.prod(launch.blockdim))


def kernel_name(py_func):
    """`test_atomics.atomic_add`, `TestSync.test_x.kernel`: the function's
    module (shortened to its file's name) and qualified name; a function
    renamed after it was made with its name too (`fn (sin_usecase)`), and a
    closure with the functions it closes over (`kernel_func[device_func=
    acos_usecase]`), which make closures of one definition different
    kernels."""
    module = (py_func.__module__ or "").rsplit(".", 1)[-1]
    qualified = py_func.__qualname__.replace("<locals>.", "")
    name = f"{module}.{qualified}"
    if py_func.__name__ != qualified.rsplit(".", 1)[-1]:
        name += f" ({py_func.__name__})"
    closed_over = []
    for variable, cell in zip(py_func.__code__.co_freevars, py_func.__closure__ or ()):
        with contextlib.suppress(ValueError):  # a cell not bound yet
            inner = getattr(cell.cell_contents, "py_func", cell.cell_contents)
            if isinstance(inner, types.FunctionType):
                closed_over.append(f"{variable}={inner.__name__}")
    return name + (f"[{', '.join(closed_over)}]" if closed_over else "")


def argument_types(args):
    """'(array(float32, 1d, C), int64)': the argument types as Numba's
    typeof names them."""
    from numba import typeof

    def name(value):
        try:
            return str(typeof(value))
        except Exception:  # a value Numba has no type for
            return type(value).__name__

    return "(" + ", ".join(map(name, args)) + ")"


class AliasingCopier:
    """Copies arguments so that arrays sharing memory share it in the copy:
    each dense buffer is copied once, and each array becomes a view of that
    copy at its own offset and strides."""

    def __init__(self):
        self._buffers = {}  # id(root array) -> (root array, bytearray copy)

    def copy(self, value):
        from numba.cuda.simulator.args import ArgHint

        if isinstance(value, np.ndarray):
            return self._copy_array(value)
        if kiln_stand_in.is_device_array(value):
            return kiln_stand_in.device_array(self._copy_array(kiln_stand_in.host_value(value)))
        if isinstance(value, ArgHint):  # cuda.In(array), ...
            return type(value)(self.copy(value.value))
        if isinstance(value, np.void):
            return value.copy()
        if isinstance(value, tuple):
            items = [self.copy(item) for item in value]
            return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
        return value

    def _copy_array(self, array):
        root = array
        while isinstance(root.base, np.ndarray):
            root = root.base
        dense = root.flags.c_contiguous or root.flags.f_contiguous
        if not dense or root.nbytes == 0 or array.nbytes == 0:
            return array.copy()
        if id(root) not in self._buffers:
            self._buffers[id(root)] = (root, bytearray(root.tobytes(order="A")))
        buffer = self._buffers[id(root)][1]
        offset = array.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        copy = np.ndarray(array.shape, array.dtype, buffer=buffer, offset=offset, strides=array.strides)
        copy.flags.writeable = array.flags.writeable
        return copy


def host_arrays(value):
    """The NumPy arrays and records an argument holds (a simulated device
    array's, those of a tuple's items), in order."""
    from numba.cuda.simulator.args import ArgHint

    value = kiln_stand_in.host_value(value)
    if isinstance(value, ArgHint):
        return host_arrays(value.value)
    if isinstance(value, (np.ndarray, np.void)):
        return [value]
    if isinstance(value, tuple):
        return [array for item in value for array in host_arrays(item)]
    return []


def _parts(array):
    """The float arrays a float or complex array is made of."""
    return [array] if array.dtype.kind == "f" else [array.real, array.imag]


def _same_bits(kiln, simulated):
    """Where two float arrays hold the same bits, or both a NaN."""
    unsigned = np.dtype(f"u{kiln.dtype.itemsize}")
    return (kiln.view(unsigned) == simulated.view(unsigned)) | (np.isnan(kiln) & np.isnan(simulated))


def _has_nan(array):
    """Where a float or complex array holds a NaN (in either part)."""
    return np.logical_or.reduce([np.isnan(part) for part in _parts(array)])


def _unequal(kiln, simulated, ulps):
    """A boolean array: where `kiln` and `simulated` (arrays of one dtype
    and shape, not structured) differ; floats in their bits (NaNs, and
    complex numbers with a NaN part, aside), or, with `ulps`, by more than
    that many units in the last place of the larger magnitude (of the
    complex number, for complex parts; of each part where the complex
    number's magnitude is infinite, which would allow no difference at
    all in its finite part)."""
    if kiln.dtype.kind not in "fc":
        return kiln != simulated
    pairs = list(zip(_parts(kiln), _parts(simulated)))
    same = np.logical_and.reduce([_same_bits(ours, theirs) for ours, theirs in pairs])
    same |= _has_nan(kiln) & _has_nan(simulated)
    if ulps:
        with np.errstate(all="ignore"):
            magnitude = np.maximum(np.abs(kiln), np.abs(simulated))
            close = []
            for ours, theirs in pairs:
                scale = np.where(np.isfinite(magnitude), magnitude, np.maximum(np.abs(ours), np.abs(theirs)))
                close.append(_same_bits(ours, theirs) | (np.abs(ours - theirs) <= ulps * np.spacing(scale)))
            same |= np.logical_and.reduce(close)
    return ~same


def first_difference(kiln, simulated, ulps, where):
    """'out[3]: Kiln 7, simulator 8 (2 of 16 elements differ)', or None
    when the two arrays (or records) hold the same values."""
    if isinstance(kiln, np.void):
        kiln, simulated = np.array(kiln), np.array(simulated)
    if kiln.dtype.names:
        for field in kiln.dtype.names:
            found = first_difference(kiln[field], simulated[field], ulps, f"{where}.{field}")
            if found:
                return found
        return None
    unequal = np.asarray(_unequal(kiln, simulated, ulps))
    if not unequal.any():
        return None
    index = tuple(int(i) for i in np.argwhere(unequal)[0]) if unequal.ndim else ()
    shown = "".join(f"[{i}]" for i in index)
    return (f"{where}{shown}: Kiln {kiln[index]!r}, simulator {simulated[index]!r} "
            f"({int(unequal.sum())} of {unequal.size} elements differ)")


def _code_objects(code):
    """A function's code and the code of the functions defined in it."""
    yield code
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from _code_objects(constant)


def _raises_to_a_power(code):
    return any(instruction.opname == "BINARY_OP" and instruction.argrepr in ("**", "**=")
               for instruction in dis.get_instructions(code))


def _functions_called(py_func, names):
    """The Python functions of the kernels and device functions that
    `names` (of py_func's code) name in its globals, its closure, or the
    modules those hold."""
    scope = dict(py_func.__globals__)
    for variable, cell in zip(py_func.__code__.co_freevars, py_func.__closure__ or ()):
        with contextlib.suppress(ValueError):  # a cell not bound yet
            scope[variable] = cell.cell_contents
    values = [scope[name] for name in names if name in scope]
    for module in [value for value in values if isinstance(value, types.ModuleType)]:
        values += [getattr(module, name) for name in names if hasattr(module, name)]
    # A stand-in's function is py_func; a simulator's device function, fn.
    inner = [getattr(value, "py_func", None) or getattr(value, "fn", None) for value in values]
    return [function for function in inner if isinstance(function, types.FunctionType)]


def math_ulps(py_func, options, seen=None):
    """The units in the last place the kernel's floats may differ by from
    the simulator's: MATH_ULPS if it is compiled with fastmath, or it or a
    function it calls calls one of MATH_FUNCTIONS or raises to a power;
    else 0."""
    if options.get("fastmath"):
        return MATH_ULPS
    seen = set() if seen is None else seen
    if py_func in seen:
        return 0
    seen.add(py_func)
    codes = list(_code_objects(py_func.__code__))
    names = {name for code in codes for name in code.co_names + code.co_freevars}
    if names & MATH_FUNCTIONS or any(_raises_to_a_power(code) for code in codes):
        return MATH_ULPS
    return max([0] + [math_ulps(inner, {}, seen) for inner in _functions_called(py_func, names)])


def run_on_simulator(kernel, launch, args):
    """Runs a stand-in kernel on the simulator with a Kiln launch's
    configuration; what it prints, and NumPy's warnings, are discarded."""
    simulated = kiln_stand_in.on_simulator(kernel.py_func, options=kernel.options)
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        simulated[launch.griddim, launch.blockdim, 0, launch.sharedmem](*args)


class ShadowCheck:
    """Checks launches: Kiln's launch, then the simulator's over copies,
    compared, each written to the open file `log`. `test` names the test
    running (run_module.py sets it)."""

    def __init__(self, log):
        self._log = log
        self.test = None
        self._ulps = {}  # py_func -> math_ulps

    def launch(self, kernel, launch, args, given):
        """Launches the stand-in `kernel` on Kiln (`launch`, with the host
        `args`), then on the simulator (with copies of the arguments the test
        `given`), and writes how they compare."""
        threads = thread_count(launch)
        if threads > SIMULATED_THREADS:
            launch(*args)
            self._record(kernel, launch, args, "not run again", f"{threads} threads")
            return
        copier = AliasingCopier()
        copies = [copier.copy(value) for value in given]
        try:
            launch(*args)
        except BaseException as error:
            self._record(kernel, launch, args, "Kiln raised", f"{type(error).__name__}: "
                         f"{kiln_stand_in.first_error(error)}")
            raise
        try:
            run_on_simulator(kernel, launch, copies)
        except Exception as error:
            self._record(kernel, launch, args, "simulator raised", f"{type(error).__name__}: "
                         f"{kiln_stand_in.first_error(error)}")
            return
        self._compare(kernel, launch, args, copies)

    def _compare(self, kernel, launch, args, copies):
        ulps = self._math_ulps(kernel)
        names = kernel.py_func.__code__.co_varnames
        for position, (value, copy) in enumerate(zip(args, copies)):
            where = names[position] if position < len(names) else f"argument {position + 1}"
            for kiln, simulated in zip(host_arrays(value), host_arrays(copy)):
                difference = first_difference(kiln, simulated, ulps, where)
                if difference:
                    self._record(kernel, launch, args, "differed", f"{difference}; {_scalars(names, args)}", ulps)
                    return
        self._record(kernel, launch, args, "agreed", "", ulps)

    def _math_ulps(self, kernel):
        py_func = kernel.py_func
        if py_func not in self._ulps:
            self._ulps[py_func] = math_ulps(py_func, kernel.options)
        return self._ulps[py_func]

    @staticmethod
    def _specialization(kernel, launch, args):
        """The argument types of the specialization Kiln launched (those of
        the signature it converted the arguments to)."""
        try:
            return kernel.kiln_kernel.signatures[launch.prepare(*args)]
        except Exception:  # a specialized kernel's launch: the arguments' own
            return argument_types(args)

    def _record(self, kernel, launch, args, outcome, detail, ulps=0):
        py_func = kernel.py_func
        # A launch Kiln refused has no specialization to ask for (asking would compile again).
        launched = argument_types(args) if outcome == "Kiln raised" else self._specialization(kernel, launch, args)
        self._log.write(json.dumps({
            "test": self.test, "kernel": kernel_name(py_func), "file": py_func.__code__.co_filename,
            "line": py_func.__code__.co_firstlineno, "types": launched, "grid": list(launch.griddim),
            "block": list(launch.blockdim), "outcome": outcome, "detail": detail[:600], "ulps": ulps}) + "\n")
        self._log.flush()


def _scalars(names, args):
    """'i=0, n=3': the arguments that hold no array, for a difference's
    record (they may be what made it)."""
    shown = ", ".join(f"{name}={value!r}" for name, value in zip(names, args) if not host_arrays(value))
    return shown or "no scalars"
