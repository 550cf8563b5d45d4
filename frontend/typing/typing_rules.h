//===- frontend/typing/typing_rules.h - Numba's typing rules ----*- C++ -*-===//
//
// The typing of each kind of operation, one file per group, as in Numba's
// typing registries: operators (typing/builtins.py), attributes and
// subscripts of arrays and tuples (arraydecl.py), Python builtins, math and
// cmath (cudamath.py, mathdecl.py), NumPy scalar types (npydecl.py) and the
// CUDA intrinsics (cudadecl.py, intrinsics.py). Each returns a Resolution
// or the diagnostic Numba's failure corresponds to.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/typing/overloads.h"
#include "frontend/typing/type_inference.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

#include <string>

namespace kiln::typing {

// operators.cpp
Typing binaryOperator(TypeContext &types, ast::BinaryOp op, const Type *lhs, const Type *rhs);
Typing unaryOperator(TypeContext &types, ast::UnaryOp op, const Type *operand);
Typing compareOperator(TypeContext &types, ast::CompareOp op, const Type *lhs, const Type *rhs);
/// An IntEnum member is an integer to everything but `is` (Numba's
/// IntEnumMember converts to its value's integer type): the member's
/// integer type for one, any other type itself.
const Type *integerOfIntEnum(const Type *type);
Typing truth(TypeContext &types, const Type *operand);

// datetime_operators.cpp: operators on datetime64 and timedelta64 values.
bool involvesDateTime(const Type *lhs, const Type *rhs = nullptr);
Typing dateTimeBinary(TypeContext &types, ast::BinaryOp op, const Type *lhs, const Type *rhs);
Typing dateTimeUnary(TypeContext &types, ast::UnaryOp op, const Type *operand);
Typing dateTimeCompare(TypeContext &types, ast::CompareOp op, const Type *lhs, const Type *rhs);

// attributes.cpp: `object.name` for values and entities.
Typing getAttribute(TypeContext &types, const Type *object, llvm::StringRef name);
Typing setAttribute(TypeContext &types, const Type *object, llvm::StringRef name,
                    const Type *value);
/// The names a Numba type is known by where methods are registered for it
/// (numba.extending.overload_method): its own ("float64"), then its Numba
/// type classes' from the most specific ("Float", "Number").
std::vector<std::string> numbaTypeNames(const Type *type);

// subscripts.cpp: `object[index]` and `object[index] = value`.
Typing getItem(TypeContext &types, const Type *object, const Type *index);
Typing setItem(TypeContext &types, const Type *object, const Type *index, const Type *value);
/// `for x in iterable`: the iteration count and each item.
Typing iterCount(TypeContext &types, const Type *iterable);
Typing iterItem(TypeContext &types, const Type *iterable, const Type *counter);

// calls.cpp: calls to builtin functions, dtypes and methods.
Typing callBuiltin(TypeContext &types, const Symbol &function, llvm::ArrayRef<const Type *> args,
                   llvm::ArrayRef<std::string> keywords);
Typing callNumberClass(TypeContext &types, const Type *dtype, llvm::ArrayRef<const Type *> args);
Typing callMethod(TypeContext &types, const EntityType &method, llvm::ArrayRef<const Type *> args);

// math.cpp: math and cmath functions.
Typing callMath(TypeContext &types, const Symbol &function, llvm::ArrayRef<const Type *> args);

// ufuncs.cpp: NumPy ufuncs on scalars, and on arrays with an output array.
Typing callUfunc(TypeContext &types, const Symbol &ufunc, llvm::ArrayRef<const Type *> args,
                 llvm::ArrayRef<std::string> keywords);
/// NumPy's "safe" and "same_kind" casts between scalar types.
bool ufuncCastsSafely(const Type *from, const Type *to);
bool ufuncCastsWithinKind(const Type *from, const Type *to);

// bfloat16.cpp: numba-cuda's bfloat16 bindings (numba.cuda.bf16, cuda_bf16.h).
bool isBFloat16Binding(const Symbol &function);
Typing callBFloat16(TypeContext &types, const Symbol &function, llvm::ArrayRef<const Type *> args);

// cuda.cpp: numba.cuda intrinsics.
Typing callCuda(TypeContext &types, const Symbol &function, llvm::ArrayRef<const Type *> args,
                llvm::ArrayRef<std::string> keywords);

/// The call of builtin `function` that `cases` (Numba's template) resolve
/// for `args`, or the error that none accepts them.
Typing fromCases(TypeContext &types, const Symbol &function, llvm::ArrayRef<OverloadCase> cases,
                 llvm::ArrayRef<const Type *> args, bool allowUnsafe = true);
/// "no implementation of 'f' accepts (args)".
Typing noOverload(const Symbol &function, llvm::ArrayRef<const Type *> args);

/// Whether a value of `valueType` is an instance of the class `classType`
/// stands for, as Numba's ol_isinstance decides it; nothing for a class
/// Kiln cannot judge.
std::optional<bool> isInstanceOfClass(TypeContext &types, const Type *valueType,
                                      const Type *classType);
/// Whether `type` is a class isinstance can test against.
bool isClass(TypeContext &types, const Type *type);

/// "float32, array(int64, 1d, C)": argument types as diagnostics list them.
std::string argumentList(llvm::ArrayRef<const Type *> args);

/// The symbol of a Builtin entity type, or null.
const Symbol *builtinOf(const Type *type);
/// The function declaration of a Function or Closure entity type, or null.
const FunctionDecl *functionOf(const Type *type);
/// The types of what a Closure entity type captured; null for other types.
const TupleType *capturesOf(const Type *type);

} // namespace kiln::typing
