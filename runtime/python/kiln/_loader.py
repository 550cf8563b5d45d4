"""Creates the module object of a built kernel module.

A built module's PyInit_ hands its image to kiln._runtime's module loader,
which checks the whole module as `kiln audit` does (versions, checksums,
every fat binary, the manifest's keys and their types, each parameter
layout), then calls create_module(image) with a ModuleImage (.name,
.manifest, .blob(offset, size), .checksum(offset, size)). This makes a
module with each kernel, ufunc and reduction under its source name and the
module's constants.
"""

import json
import types

from kiln import kernel as _kernel


class _Damaged(Exception):
    pass


def _damaged(name, what):
    return ImportError(f"kiln: module '{name}' is damaged: {what}; rebuild it with kiln build", name=name)


def _constant(entry):
    value = entry["value"]
    kind = entry.get("type", "")

    def convert(value, kind):
        if isinstance(value, str) and kind != "unicode_type" and value in ("nan", "inf", "-inf"):
            return float(value)
        if kind.startswith("complex") and isinstance(value, list) and len(value) == 2:
            return complex(_float(value[0]), _float(value[1]))
        if kind.startswith("float") and isinstance(value, (int, float, str)):
            return _float(value)
        if isinstance(value, list):
            elements = _tuple_element_types(kind, len(value))
            return tuple(convert(v, k) for v, k in zip(value, elements))
        return value

    return convert(value, kind)


def _float(value):
    if isinstance(value, str):
        return float(value)
    return float(value)


def _tuple_element_types(kind, count):
    from kiln._types import split_top_level

    if kind.startswith("UniTuple(") and kind.endswith(")"):
        element = kind[len("UniTuple(") : -1].rpartition(" x ")[0]
        return [element] * count
    if kind.startswith("Tuple(") and kind.endswith(")"):
        parts = split_top_level(kind[len("Tuple(") : -1])
        if len(parts) == count:
            return parts
    return [""] * count


def _wrapper(kind):
    if kind == "ufunc":
        try:
            from kiln.ufunc import Ufunc
        except ImportError:
            return None
        return Ufunc
    if kind == "reduction":
        try:
            from kiln.reduction import Reduction
        except ImportError:
            return None
        return Reduction
    return None


def create_module(image, module=None):
    """Fills `module` (a new one if None) from `image` and returns it."""
    name = image.name
    try:
        manifest = json.loads(image.manifest.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise _damaged(name, f"its manifest cannot be read ({error})") from None
    specializations = manifest["specializations"]

    if module is None:
        module = types.ModuleType(name, None)
    module.__kiln_manifest__ = manifest
    grouped = {}
    for index, entry in enumerate(specializations):
        grouped.setdefault((entry["name"], entry.get("kind", "kernel")), []).append((image, index, entry))
    for (kernel_name, kind), members in grouped.items():
        arg_names = members[0][2].get("arg_names")
        try:
            kernel = _kernel.Kernel(kernel_name, members, arg_names, module=name)
        except (ValueError, TypeError) as error:
            raise _damaged(name, f"the manifest entry of '{kernel_name}' is inconsistent ({error})") from None
        wrapper = _wrapper(kind)
        setattr(module, kernel_name, wrapper(kernel_name, kernel) if wrapper else kernel)
    for constant in manifest.get("constants", ()):
        setattr(module, constant["name"], _constant(constant))
    return module
