//===- frontend/typing/semantic_hash.h -------------------------*- C++ -*-===//
//
// The semantic hash of a specialization changes exactly when its compiled
// code could: it covers the function's normalized AST (no comments, no
// formatting, no docstring), its signature and options, the values of the
// module constants it reads, and the semantic hashes of the device
// functions it calls. Editing another kernel or a comment leaves it alone;
// editing a device function it calls changes it. With debug=True or
// lineinfo=True the source positions end up in the code, so they count too.
// It is the source part of the compilation cache key.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/typing/type_inference.h"

#include <array>
#include <cstdint>
#include <string>

namespace kiln {

using SemanticHash = std::array<uint8_t, 32>;

/// BLAKE3 of everything `spec` and its callees depend on. `spec` must have
/// typed without errors.
SemanticHash semanticHash(const Specialization &spec, const SourceManager &sources);

std::string toHex(const SemanticHash &hash);

} // namespace kiln
