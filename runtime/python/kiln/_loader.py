"""Creates the module object of a built kernel module.

A built module's PyInit_ hands its image to kiln._runtime's module loader,
which checks what `kiln audit` checks that does not grow with the number of
kernels (versions, the manifest's checksum, its JSON and its outline), then
calls create_module(image) with a ModuleImage (.name, .specializations,
.entry(index), .constants, .manifest). This makes a module with each kernel,
ufunc and reduction under its source name and the module's constants.

The manifest is parsed once at import, by the loader's bounded reader: this
module reads only the (name, kind) pairs it found, and each kernel asks
image.entry() for its own manifest entries at its first use (which checks
them as `kiln audit` does, a RuntimeError if they are damaged), so that
importing a module of 500 kernels costs about what importing one of a single
kernel does. `module.__kiln_manifest__`, the whole manifest as Python
objects, is parsed when first asked for.

When the source file the module was built from sits beside it and has
changed since, the import warns (kiln.StaleModuleWarning), once, as the
module is imported once: the module still runs the kernels it was built with.
"""

import json
import types

from kiln import _manifest
from kiln import kernel as _kernel


def _constant(entry):
    value = _manifest.constant_value(entry)
    kind = _manifest.constant_type(entry)

    def convert(value, kind):
        if isinstance(value, str) and kind != "unicode_type" and value in ("nan", "inf", "-inf"):
            return float(value)
        if kind.startswith("complex") and isinstance(value, list) and len(value) == 2:
            return complex(float(value[0]), float(value[1]))
        if kind.startswith("float") and isinstance(value, (int, float, str)):
            return float(value)  # also "nan", "inf", "-inf", as the manifest writes them
        if isinstance(value, list):
            elements = _tuple_element_types(kind, len(value))
            return tuple(convert(v, k) for v, k in zip(value, elements))
        return value

    return convert(value, kind)


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


def _manifest_reader(image, module):
    """The module's __getattr__: __kiln_manifest__, parsed at first use."""

    def module_getattr(attribute):
        if attribute != "__kiln_manifest__":
            raise AttributeError(f"module '{image.name}' has no attribute '{attribute}'")
        manifest = json.loads(image.manifest)
        module.__kiln_manifest__ = manifest
        return manifest

    return module_getattr


def _warn_if_stale(image):
    changed = image.changed_source
    if changed is None:
        return
    import os
    import warnings

    from kiln._warnings import StaleModuleWarning

    source = os.path.basename(changed)
    warnings.warn(
        f"{changed} has changed since module '{image.name}' was built from it: the module runs "
        f"the kernels as they were then. Rebuild it (in its folder: kiln build {source} "
        f"--module {image.name}, or your package's build, such as pip install -e .)",
        StaleModuleWarning,
        # Past create_module to the statement that imported the module (the
        # warnings module skips the import system's own frames).
        stacklevel=3)



def create_module(image, module=None):
    """Fills `module` (a new one if None) from `image` and returns it."""
    name = image.name
    _warn_if_stale(image)
    if module is None:
        module = types.ModuleType(name, None)
    module.__getattr__ = _manifest_reader(image, module)
    grouped = {}
    for index, key in enumerate(image.specializations):
        grouped.setdefault(key, []).append(index)
    for (kernel_name, kind), indices in grouped.items():
        kernel = _kernel.Kernel.from_image(kernel_name, image, indices, name)
        wrapper = _wrapper(kind)
        setattr(module, kernel_name, wrapper(kernel_name, kernel) if wrapper else kernel)
    constants = image.constants
    for constant in json.loads(constants) if constants is not None else ():
        setattr(module, _manifest.constant_name(constant), _constant(constant))
    return module
