"""The public names of numba.cuda that kiln.cuda does not have, each with
why and what to do instead: `kiln.cuda.<name>` raises an AttributeError
saying so, rather than Python's bare "has no attribute".

Most are Numba's compiler, which `kiln build` replaces ahead of time, and
modules numba.cuda's namespace shows only because it imports them.
"""

__all__ = ["explanation"]

_BUILD_INSTEAD = (
    "Kiln compiles ahead of time, so {what} are not built at run time. Instead, keep the kernels in a "
    "module written for Numba, build it with `kiln build kernels.py --module kernels -o DIR` and import "
    "the built module (from DIR) to get its kernels, ufuncs and reductions.")

_RUN_TIME_COMPILATION = {
    "compile": "compiled kernels and device functions",
    "compile_all": "compiled kernels and device functions",
    "compile_for_current_device": "compiled kernels and device functions",
    "compile_ptx": "PTX compilations",
    "compile_ptx_for_current_device": "PTX compilations",
    "guvectorize": "@guvectorize ufuncs",
}

# Modules of Numba's compiler: the front end, typing, lowering, code
# generation, NVVM, and the machinery of its dispatchers.
_COMPILER_MODULES = """
    api_util cache_hints cext cgutils codegen compiler core cpython cuda_paths datamodel debuginfo
    decorators descriptor device_init deviceufunc dispatcher extending flags initialize intrinsics
    itanium_mangler launchconfig literal locks lowering mathimpl memory_management misc models np
    nvvm nvvmutils serialize simulator stubs target typeconv types typing ufuncs utils vectorizers
""".split()

# Modules of the standard library (and one vendored) that numba.cuda's
# namespace shows because it imports them.
_IMPORTED_MODULES = "cloudpickle contextlib importlib os sys warnings".split()

_OTHER = {
    "api": "numba.cuda.api is the module numba.cuda's host functions come from; use them from kiln.cuda "
           "itself instead (kiln.cuda.to_device, kiln.cuda.device_array, ...)",
    "kernels": "numba.cuda.kernels holds Numba's reduction kernel; use kiln.cuda.reduce (or Reduce) "
               "instead, built with the module by `kiln build`",
    "reduction": "numba.cuda.reduction is the module of Numba's reduction kernel; use kiln.cuda.reduce "
                 "(or Reduce) instead, built with the module by `kiln build`",
    "ffi": "numba.cuda.ffi is Numba's type of CFFI objects, and Kiln kernels cannot call CFFI functions; "
           "instead, call the C function from host code, or declare a device function implemented in "
           "CUDA C++ with cuda.declare_device and link=",
    "ffi_forced_object": "numba.cuda.ffi_forced_object is Numba's type of CFFI objects, and Kiln kernels "
                         "cannot call CFFI functions; instead, call the C function from host code",
    "alias": "numba.cuda.alias is not part of numba.cuda's API: its module leaves the name behind from a "
             "loop over the vector types; use the vector types instead (kiln.cuda.float32x4, ...)",
    "implementation": "numba.cuda.implementation is not part of numba.cuda's API: its module leaves the "
                      "name behind; use kiln.cuda.detect() instead to see what runs kernels",
}


def explanation(name):
    """Why kiln.cuda has no `name` and what to do instead; None if numba.cuda has no such name either."""
    if name in _RUN_TIME_COMPILATION:
        return f"kiln.cuda has no {name!r}: " + _BUILD_INSTEAD.format(what=_RUN_TIME_COMPILATION[name])
    if name in _COMPILER_MODULES:
        return (f"kiln.cuda has no {name!r}: numba.cuda.{name} is part of Numba's compiler, which Kiln "
                "replaces ahead of time (`kiln build`); a package that uses it needs Numba itself: "
                f"import numba.cuda.{name} from numba instead")
    if name in _IMPORTED_MODULES:
        return (f"kiln.cuda has no {name!r}: numba.cuda.{name} is the module {name}, which numba.cuda "
                f"imports; import {name} instead")
    if name in _OTHER:
        return f"kiln.cuda has no {name!r}: {_OTHER[name]}"
    return None
