"""What `kiln build` runs to learn the globals a kernel module's host code
computes at import (see kiln.host_values):

    python -m kiln.import_host_values pkg/kernels.py

runs the module (as `pkg.kernels`, from the folder above its package,
without running the package's __init__.py) and prints its values as JSON
on standard output; what the module itself prints goes to standard
error."""

import importlib.util
import json
import os
import sys
import types

from kiln import host_values


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


def _import_alone(path):
    """Runs the module at `path` under its dotted name, as `import` would,
    but without running its packages' __init__.py: at build time they may
    import what is not built yet (the package's other kernel modules). Its
    packages are stand-ins whose __path__ finds their modules, so that
    relative imports of sibling modules work."""
    folder, name = _module_name(path)
    sys.path.insert(0, folder)
    parts = name.split(".")
    for depth in range(1, len(parts)):
        package = ".".join(parts[:depth])
        if package not in sys.modules:
            stand_in = types.ModuleType(package)
            stand_in.__path__ = [os.path.join(folder, *parts[:depth])]
            stand_in.__package__ = package
            sys.modules[package] = stand_in
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def main(argv):
    if len(argv) != 1:
        print("usage: python -m kiln.import_host_values FILE.py", file=sys.stderr)
        return 2
    path = os.path.realpath(argv[0])
    # Standard output carries the values alone: what the module prints, from
    # Python or from C, goes to standard error.
    sys.stdout.flush()
    output = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    try:
        module = _import_alone(path)
    except BaseException as error:  # the module's own failure, reported as such
        print(f"running {argv[0]} raised {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    values = host_values.module_values(vars(module), path)
    # A device array lives in this process, which ends here: the build
    # learns what it is, not where.
    for encoded in values.values():
        if encoded.get("kind") == "device_array":
            del encoded["address"]
    json.dump(values, output)
    output.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
