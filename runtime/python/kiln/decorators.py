"""The decorators of a module that stays Python: `kiln.cuda.jit` (kernels
and device functions), `kiln.vectorize`, `kiln.cuda.reduce` and
`cuda.declare_device`, as Numba spells them; what they make is
kiln.dispatcher's."""

import sys

from kiln._module_builds import ModuleBuilds
from kiln.dispatcher import BuiltOnFirstCall, DeviceFunction, LazyKernel


def vectorize(signatures=None, target="cuda", **options):
    """@vectorize(["float32(float32, float32)"], target="cuda"): a ufunc."""
    del signatures, target, options  # the compiler reads the decorator from the source

    def decorate(py_func):
        return BuiltOnFirstCall(py_func, "ufunc")

    return decorate


def reduce(function):
    """@cuda.reduce: a reduction, called as Numba's: r(array, size=None, res=None, init=0, stream=0)."""
    return BuiltOnFirstCall(function, "reduction")


class DeclaredDeviceFunction:
    """`cuda.declare_device(name, sig, link=None)`: a device function
    implemented in CUDA C/C++ or PTX. The compiler reads the declaration
    from the source and links the files `link=` names; here it is a name
    only kernels can call."""

    def __init__(self, name, sig, link=None, use_cooperative=False, abi="numba"):
        if abi not in ("numba", "c"):
            raise NotImplementedError(f"Unsupported ABI: {abi}")
        text = _signature_text(sig)
        if text.startswith("("):
            raise TypeError("Return type must be provided for device declarations")
        self.name = name
        self.sig = _numba_signature(sig)
        self.signature_text = text
        self.link = link
        self.use_cooperative = use_cooperative
        self.abi = abi

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.name!r} is a device function implemented in CUDA C/C++ or PTX "
                        "(cuda.declare_device): only kernels and device functions can call it")

    def __repr__(self):
        return f"<declared device function {self.name!r} {self.sig}>"


def _numba_signature(signature):
    """Numba's Signature object of a signature string, as numba-cuda's
    declarations hold it (`decl.sig.args`), where the process has imported
    Numba; the string itself elsewhere."""
    if not isinstance(signature, str) or "numba" not in sys.modules:
        return signature
    try:
        from numba.core import sigutils

        args, return_type = sigutils.normalize_signature(signature)
    except Exception:  # Numba's errors about a signature Kiln reads itself
        return signature
    return return_type(*args)


def declare_device(name, sig, link=None, use_cooperative=False, abi="numba"):
    return DeclaredDeviceFunction(name, sig, link, use_cooperative, abi)


def _type_text(numba_type):
    """A Numba type object in signature-string syntax: arrays as
    `float32[:, ::1]`, records as numba.types.Record(...) makes them, every
    other type as Numba prints it."""
    if all(hasattr(numba_type, field) for field in ("fields", "size", "aligned")):
        fields = ", ".join(f"({name!r}, {{'type': {_type_text(field.type)}, 'offset': {field.offset}}})"
                           for name, field in numba_type.fields.items())
        return f"Record([{fields}], {numba_type.size}, {numba_type.aligned})"
    if all(hasattr(numba_type, field) for field in ("dtype", "shape", "layout")):
        return f"NestedArray({_type_text(numba_type.dtype)}, {tuple(numba_type.shape)})"
    if type(numba_type).__name__ in ("CharSeq", "UnicodeCharSeq"):
        return f"{type(numba_type).__name__}({numba_type.count})"
    if type(numba_type).__name__ == "UniTuple":
        return f"UniTuple({_type_text(numba_type.dtype)}, {numba_type.count})"
    if type(numba_type).__name__ == "CPointer":
        return f"CPointer({_type_text(numba_type.dtype)})"
    if type(numba_type).__name__ in ("NPDatetime", "NPTimedelta"):
        return f"{type(numba_type).__name__}({numba_type.unit!r})"
    if all(hasattr(numba_type, field) for field in ("dtype", "ndim", "layout")):
        dimensions = [":"] * numba_type.ndim
        if dimensions and numba_type.layout == "C":
            dimensions[-1] = "::1"
        elif dimensions and numba_type.layout == "F":
            dimensions[0] = "::1"
        return f"{_type_text(numba_type.dtype)}[{', '.join(dimensions)}]"
    return str(numba_type)


def _signature_text(signature):
    """A signature as the compiler parses it: a string as given; Numba's
    signature objects (`void(float32[:])`) and tuples of argument types
    written out, the latter without a return type, which the compiler infers
    as Numba does (`(float64, float64)` for a device function)."""
    if isinstance(signature, str):
        return signature
    if hasattr(signature, "args") and hasattr(signature, "return_type"):
        # Numba's signature(None, *args) leaves the return type to inference
        # (numba.cuda.vectorize compiles a ufunc's core with one).
        if signature.return_type is None:
            return f"({', '.join(map(_type_text, signature.args))})"
        result = "void" if str(signature.return_type) == "none" else _type_text(signature.return_type)
        return f"{result}({', '.join(map(_type_text, signature.args))})"
    if isinstance(signature, tuple):
        return f"({', '.join(map(_type_text, signature))})"
    return _type_text(signature)


def _decorator_call(signatures, device, options):
    """The text of the jit call that makes a function what it is, for the
    compiler to read as the function's decorator when the source has none
    (`kernel = cuda.jit(f)`): `jit(["void(float32[:])"], fastmath=True)`."""
    arguments = []
    if signatures:
        arguments.append(repr([_signature_text(signature) for signature in signatures]))
    if device:
        arguments.append("device=True")
    arguments += [f"{name}={value!r}" for name, value in sorted(options.items())]
    return f"jit({', '.join(arguments)})"


def _made(py_func, signatures, device, options):
    builds = ModuleBuilds.of_function(py_func)
    name = builds.called(py_func, _decorator_call(signatures, device, options))
    return DeviceFunction(py_func, name) if device else LazyKernel(py_func, signatures, options, name)


def jit(func_or_signature=None, device=False, **options):
    """@cuda.jit, @cuda.jit(), @cuda.jit("void(float32[:])"), @cuda.jit(device=True), ...

    Arguments are Numba's. The compiler reads the decorator from the source,
    so options take effect as Numba defines them; a function the source does
    not decorate (`kernel = cuda.jit(f)`) compiles as this call makes it."""
    if callable(func_or_signature) and not isinstance(func_or_signature, (str, list, tuple)):
        return _made(func_or_signature, [], device, options)
    if func_or_signature is None:
        signatures = []
    elif isinstance(func_or_signature, list):
        signatures = list(func_or_signature)
    else:
        signatures = [func_or_signature]

    def decorate(py_func):
        return _made(py_func, signatures, device, options)

    return decorate
