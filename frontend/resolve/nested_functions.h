//===- frontend/resolve/nested_functions.h ---------------------*- C++ -*-===//
//
// Functions defined inside kernels and device functions (`def inner(x):`
// in a kernel's body) compile as device functions of their own, closure
// converted: the enclosing function's variables an inner function reads
// are its captures, which every call passes after the arguments. Numba
// inlines the calls made where the function is defined and compiles a
// function passed on as a value (`consumer(inner, x)`) with what it
// captured frozen as constants; captures give both.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/resolve/module_scope.h"

#include <llvm/ADT/STLFunctionalExtras.h>

#include <memory>
#include <vector>

namespace kiln {

/// Declares the functions defined in `enclosing`'s body, and in theirs,
/// appending them to `declared`, which owns them. `readParameters` reads a
/// declaration's parameters and defaults as for a module-level function.
void declareNestedFunctions(FunctionDecl &enclosing,
                            llvm::function_ref<bool(FunctionDecl &)> readParameters,
                            DiagnosticEngine &diags,
                            std::vector<std::unique_ptr<FunctionDecl>> &declared);

} // namespace kiln
