#!/usr/bin/env python3
"""Writes ir/libdevice_functions.def from the CUDA toolkit's libdevice.

Each `__nv_*` function libdevice defines becomes one entry, its parameter
and result types read from the bitcode's definitions (disassembled by
llvm-dis). A pointer parameter is an output: the function stores one value
through it, whose type is the output's. The table keeps the functions
numba.cuda.libdevice offers, since Numba's language is Kiln's; run it from
the repository root with numba-cuda installed in .venv:

    .venv/bin/python ir/tools/generate_libdevice_table.py \
        /usr/local/cuda/nvvm/libdevice/libdevice.10.bc > ir/libdevice_functions.def
"""

import re
import subprocess
import sys

LLVM_TYPES = {"i16": "i16", "i32": "i32", "i64": "i64", "float": "f32", "double": "f64",
              "void": "Void"}
RESULT_NAMES = {"i16": "Int16", "i32": "Int32", "i64": "Int64", "f32": "Float32",
                "f64": "Float64", "Void": "Void"}

HEADER = """\
//===- ir/libdevice_functions.def - numba.cuda.libdevice's functions -*- C++ -*-===//
//
// LIBDEVICE_FUNCTION(name, Result, parameters...): the function `__nv_<name>`
// of the CUDA toolkit's libdevice, which kernels call as
// `cuda.libdevice.<name>`. Parameters are i16/i32/i64/f32/f64 inputs, or
// out_<type> outputs: pointers the function stores a result through, which
// the call returns after the result proper (a tuple where there are
// several). Numba types every integer as signed, as this table does.
//
// Written by ir/tools/generate_libdevice_table.py from libdevice.10.bc.
//
//===----------------------------------------------------------------------===//
#ifndef LIBDEVICE_FUNCTION
#error "define LIBDEVICE_FUNCTION(NAME, RESULT, ...) before including libdevice_functions.def"
#endif
"""


def definitions(text):
    """Yields (name, result, [(type, pointer name or None)], body) per function."""
    pattern = re.compile(r"^define (?:[\w ]* )?(\w+) @__nv_(\w+)\(([^)]*)\)[^{]*\{\n(.*?)^\}",
                         re.M | re.S)
    for match in pattern.finditer(text):
        result, name, parameters, body = match.groups()
        params = []
        for parameter in filter(None, (p.strip() for p in parameters.split(","))):
            words = parameter.split()
            params.append((words[0], words[-1]))
        yield name, result, params, body


def output_type(body, pointer):
    stored = re.findall(r"store (\w+) [^,]+, ptr " + re.escape(pointer) + r"\b", body)
    if len(set(stored)) != 1:
        return None
    return LLVM_TYPES.get(stored[0])


def main():
    from numba.cuda import libdevice as numba_libdevice

    offered = {name for name in dir(numba_libdevice) if not name.startswith("_")}
    text = subprocess.run(["llvm-dis-19", sys.argv[1], "-o", "-"], check=True,
                          capture_output=True, text=True).stdout
    print(HEADER)
    for name, result, params, body in sorted(definitions(text)):
        if name not in offered:
            continue
        spelled = []
        for llvm_type, register in params:
            if llvm_type == "ptr":
                pointee = output_type(body, register)
                if pointee is None:
                    sys.exit(f"__nv_{name}: cannot tell what {register} points to")
                spelled.append("out_" + pointee)
            else:
                spelled.append(LLVM_TYPES[llvm_type])
        print(f"LIBDEVICE_FUNCTION({name}, {RESULT_NAMES[LLVM_TYPES[result]]}"
              + "".join(", " + p for p in spelled) + ")")


if __name__ == "__main__":
    main()
