//===- ir/ir_parser.h - Reading printed typed IR ----------------*- C++ -*-===//
//
// Reads the text Module::print writes (`kiln build --emit typed`) back into
// a Module: every function, block, value, type and attribute, so that
// printing what was read gives the same text. Tests use it to feed the back
// end typed IR written by hand, with no Python source behind it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/typed_ir.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <memory>

namespace kiln::ir {

/// Parses printed typed IR. Types are interned in `types`, which must
/// outlive the module. A syntax error comes back as
/// "NAME:LINE:COLUMN: message"; the result is not verified (call verify()).
llvm::Expected<std::unique_ptr<Module>> parseModule(llvm::StringRef text,
                                                    llvm::StringRef bufferName, TypeContext &types);

} // namespace kiln::ir
