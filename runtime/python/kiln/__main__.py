"""python -m kiln: where Kiln is, for build systems; else the kiln command.

    python -m kiln --cmake-dir     the folder holding KilnConfig.cmake, for
                                   cmake -DKiln_DIR=$(python -m kiln --cmake-dir)
    python -m kiln --executable    the kiln command's path
    python -m kiln ARGS...         runs `kiln ARGS...`

Installed with the compiler (`pip install kiln-compiler`, `cmake --install`), not with
the runtime alone.
"""

import os
import shutil
import sys
import sysconfig


def _paths():
    try:
        from kiln import _paths
    except ImportError:
        return None
    return _paths


def _resolve(relative):
    package = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(package, relative))


def cmake_dir():
    """The folder holding KilnConfig.cmake, or None when there is none."""
    paths = _paths()
    candidates = [_resolve(paths.CMAKE_DIR)] if paths is not None else []
    candidates.append(_resolve("cmake"))
    for candidate in candidates:
        if os.path.isfile(os.path.join(candidate, "KilnConfig.cmake")):
            return candidate
    return None


def executable():
    """The kiln command, or None when it cannot be found."""
    paths = _paths()
    candidates = []
    if paths is not None and paths.EXECUTABLE:
        candidates.append(_resolve(paths.EXECUTABLE))
    candidates.append(os.path.join(sysconfig.get_path("scripts"), "kiln"))
    for candidate in candidates:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("kiln")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv in (["--cmake-dir"], ["--executable"]):
        found = cmake_dir() if argv[0] == "--cmake-dir" else executable()
        if found is None:
            what = "KilnConfig.cmake" if argv[0] == "--cmake-dir" else "the kiln executable"
            print(f"python -m kiln: cannot find {what}: is Kiln's compiler installed?",
                  file=sys.stderr)
            return 1
        print(found)
        return 0
    command = executable()
    if command is None:
        print("python -m kiln: cannot find the kiln executable", file=sys.stderr)
        return 1
    os.execv(command, [command, *argv])
    return 1  # not reached


if __name__ == "__main__":
    sys.exit(main())
