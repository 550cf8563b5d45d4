"""The globals a module's host code computes at import, as Kiln's compiler
reads them: a kernel of a module that stays Python may read a NumPy array,
a number or a tuple of them that the module computed when it ran
(`TABLE = np.cos(np.linspace(0, np.pi, 64))`), and the compiler freezes the
value in, as Numba does (an array becomes a read-only constant array).

The dispatcher hands the running program's values to the compiler; `kiln
build` runs

    python -m kiln.host_values pkg/kernels.py

which imports the module (as `pkg.kernels`, from the folder above its
package) and prints its values as JSON. Values are keyed by the module
file's real path:

    {"/abs/pkg/kernels.py": {"TABLE": {"kind": "array", "dtype": "float64",
                                        "shape": [64], "data": "<hex>"}}}
"""

import importlib
import json
import os
import struct
import sys

_INT64 = (-(1 << 63), (1 << 63) - 1)
# NumPy's kinds of the dtypes Kiln compiles: bool, signed, unsigned, float, complex.
_NUMBER_KINDS = "biufc"


def encode(value):
    """The JSON form of one value, or None for anything a kernel cannot
    read (functions, modules, strings, lists, object arrays, ...)."""
    if isinstance(value, bool):
        return {"kind": "bool", "data": bytes([value]).hex()}
    if isinstance(value, int):
        if not _INT64[0] <= value <= _INT64[1]:
            return None
        return {"kind": "int", "data": struct.pack("=q", value).hex()}
    if isinstance(value, float):
        return {"kind": "float", "data": struct.pack("=d", value).hex()}
    if isinstance(value, complex):
        return {"kind": "complex", "data": struct.pack("=dd", value.real, value.imag).hex()}
    if isinstance(value, tuple):
        items = [encode(item) for item in value]
        if any(item is None or item["kind"] == "array" for item in items):
            return None
        return {"kind": "tuple", "items": items}
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return None
    if isinstance(value, numpy.generic):
        if value.dtype.kind not in _NUMBER_KINDS:
            return None
        native = value.astype(value.dtype.newbyteorder("="))
        return {"kind": "scalar", "dtype": native.dtype.name, "data": native.tobytes().hex()}
    if isinstance(value, numpy.ndarray):
        if value.dtype.kind not in _NUMBER_KINDS or value.dtype.fields is not None:
            return None
        native = numpy.array(value, dtype=value.dtype.newbyteorder("="), order="C")
        return {"kind": "array", "dtype": native.dtype.name, "shape": list(native.shape),
                "data": native.tobytes().hex()}
    return None


def module_values(namespace):
    """{name: JSON form} of the globals in `namespace` a kernel can read."""
    found = {}
    for name, value in list(namespace.items()):
        if name.startswith("__") and name.endswith("__"):
            continue
        encoded = encode(value)
        if encoded is not None:
            found[name] = encoded
    return found


def package_values(module):
    """{real path: values} of `module` and of the other loaded modules it
    may import kernels' globals from: those of its top-level package, or,
    for a module in no package, those beside it."""
    path = getattr(module, "__file__", None)
    if not path:
        return {}
    path = os.path.realpath(path)
    found = {path: module_values(vars(module))}
    folder = os.path.dirname(path)
    in_package = os.path.exists(os.path.join(folder, "__init__.py"))
    package = module.__name__.partition(".")[0]
    for name, other in list(sys.modules.items()):
        other_path = getattr(other, "__file__", None)
        if other is module or not isinstance(other_path, str) or not other_path.endswith(".py"):
            continue
        if in_package and module.__name__ != "__main__":
            related = name == package or name.startswith(package + ".")
        else:
            related = os.path.dirname(os.path.realpath(other_path)) == folder
        if related:
            found[os.path.realpath(other_path)] = module_values(vars(other))
    return found


def _module_name(path):
    """(the folder to import from, the dotted name) of the source at `path`:
    the folders above it that hold an __init__.py are its package."""
    folder, file = os.path.split(os.path.abspath(path))
    parts = [os.path.splitext(file)[0]]
    while os.path.exists(os.path.join(folder, "__init__.py")):
        folder, package = os.path.split(folder)
        parts.insert(0, package)
    if parts[-1] == "__init__":
        parts.pop()
    return folder, ".".join(parts)


def main(argv):
    if len(argv) != 1:
        print("usage: python -m kiln.host_values FILE.py", file=sys.stderr)
        return 2
    folder, name = _module_name(argv[0])
    sys.path.insert(0, folder)
    try:
        module = importlib.import_module(name)
    except BaseException as error:  # the module's own failure, reported as such
        print(f"importing {name} from {folder} raised {type(error).__name__}: {error}",
              file=sys.stderr)
        return 1
    json.dump(module_values(vars(module)), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
