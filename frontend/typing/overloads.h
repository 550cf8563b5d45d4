//===- frontend/typing/overloads.h -----------------------------*- C++ -*-===//
//
// Most of Numba's typing is a list of concrete signatures per operation (a
// ConcreteTemplate): `+` has (int64, int64) -> int64, (uint64, uint64) ->
// uint64, (float32, float32) -> float32, ... Given actual argument types,
// each case is rated by how many arguments need a promotion, a safe or an
// unsafe conversion; the best rating wins and ties go to the earliest case
// (numba/cuda/typing/context.py, resolve_overload). Reproducing that exactly
// is what makes `float32 * 2` come out float64, as in Numba.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/types.h"

#include <llvm/ADT/ArrayRef.h>

#include <optional>
#include <vector>

namespace kiln {

struct OverloadCase {
  const Type *result;
  std::vector<const Type *> args;
};

/// Numba's resolve_overload. With `allowUnsafe` false, cases that need an
/// unsafe conversion are not candidates.
const OverloadCase *resolveOverload(TypeContext &types, llvm::ArrayRef<OverloadCase> cases,
                                    llvm::ArrayRef<const Type *> args, bool allowUnsafe = true);

/// Builds case lists the way Numba's templates spell them.
class CaseList {
public:
  explicit CaseList(TypeContext &types) : types(types) {}

  CaseList &add(const Type *result, std::vector<const Type *> args) {
    cases.push_back({result, std::move(args)});
    return *this;
  }
  /// Numba's integer_binop_cases: every pair of int64/uint64 with the NBEP 1
  /// result (int64 unless both are unsigned).
  CaseList &integerBinary();
  /// (T, T) -> T for each of `domain`.
  CaseList &sameType(llvm::ArrayRef<const Type *> domain);
  /// (T, T) -> result for each of `domain`.
  CaseList &sameTypeTo(llvm::ArrayRef<const Type *> domain, const Type *result);

  std::vector<const Type *> signedDomain() const;   // int8 .. int64
  std::vector<const Type *> unsignedDomain() const; // uint8 .. uint64
  std::vector<const Type *> realDomain() const;     // float32, float64
  std::vector<const Type *> complexDomain() const;  // complex64, complex128

  llvm::ArrayRef<OverloadCase> list() const { return cases; }
  operator llvm::ArrayRef<OverloadCase>() const { return cases; }

private:
  TypeContext &types;
  std::vector<OverloadCase> cases;
};

} // namespace kiln
