//===- backend/codegen/llvm_types.h - How kernel values look in LLVM IR -*- C++ -*-===//
//
// Every kiln::Type has two LLVM forms:
//
//   * its value form, what SSA values of the type are: bool is i1, a
//     complex number {float, float}, an array the struct
//       { ptr data, [ndim x i64] shape, [ndim x i64] strides }
//     (strides in bytes), a tuple a struct of its elements, a record a
//     pointer to it, a range {start, stop, step};
//   * its memory form, how an array element of the type is stored: bool is
//     i8, a complex number {float, float} (NumPy's layout), a record its
//     bytes.
//
// Only scalars, complex numbers and records are array elements.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/types.h"

#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/LLVMContext.h>

namespace kiln::backend {

class LLVMTypes {
public:
  explicit LLVMTypes(llvm::LLVMContext &context) : context(context) {}

  /// The value form; null for none (functions returning none return void).
  llvm::Type *value(const Type *type);
  /// The memory form of an array element.
  llvm::Type *memory(const Type *type);
  /// The array struct for `rank` dimensions.
  llvm::StructType *array(unsigned rank);
  llvm::Type *pointer() { return llvm::PointerType::get(context, 0); }
  llvm::IntegerType *i1() { return llvm::Type::getInt1Ty(context); }
  llvm::IntegerType *i8() { return llvm::Type::getInt8Ty(context); }
  llvm::IntegerType *i32() { return llvm::Type::getInt32Ty(context); }
  llvm::IntegerType *i64() { return llvm::Type::getInt64Ty(context); }

  llvm::LLVMContext &context;
};

} // namespace kiln::backend
