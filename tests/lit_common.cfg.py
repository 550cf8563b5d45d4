# Settings every lit suite of Kiln shares; each suite's lit.cfg.py loads this
# and names itself. Tests run `kiln` and LLVM's FileCheck:
#
#   # RUN: %kiln build %s --emit typed -o %t
#   # RUN: FileCheck %s < %t/NAME.typed
#   # CHECK: ...
#
# ctest passes the paths as lit parameters (tests/CMakeLists.txt); by hand:
#
#   .venv/bin/lit tests/frontend/checks tests/backend/checks \
#       --param kiln=build/driver/kiln \
#       --param filecheck=/usr/lib/llvm-19/bin/FileCheck \
#       --param exec_root=build/tests/lit
import os

import lit.formats


def required(name):
    value = lit_config.params.get(name)
    if not value:
        lit_config.fatal(f"pass --param {name}=... (see tests/lit_common.cfg.py)")
    return os.path.abspath(value)


config.test_format = lit.formats.ShTest()
config.substitutions.append(("%kiln", required("kiln")))
config.environment["PATH"] = os.pathsep.join(
    [os.path.dirname(required("filecheck")), os.environ.get("PATH", "")])
# Every test has a cache of its own suite: nothing from the user's cache.
config.environment["KILN_CACHE_DIR"] = os.path.join(required("exec_root"), "cache")
