//===- backend/codegen/llvm_types.cpp - How kernel values look in LLVM IR ---------===//

#include "backend/codegen/llvm_types.h"

#include <llvm/Support/Casting.h>
#include <llvm/Support/ErrorHandling.h>

namespace kiln::backend {

static llvm::Type *floatType(llvm::LLVMContext &context, unsigned bits) {
  switch (bits) {
  case 16:
    return llvm::Type::getHalfTy(context);
  case 32:
    return llvm::Type::getFloatTy(context);
  default:
    return llvm::Type::getDoubleTy(context);
  }
}

llvm::Type *LLVMTypes::value(const Type *type) {
  switch (type->kind()) {
  case Type::Kind::None:
    return nullptr;
  case Type::Kind::Boolean:
  case Type::Kind::BooleanLiteral:
    return i1();
  case Type::Kind::Integer:
    return llvm::IntegerType::get(context, llvm::cast<IntegerType>(type)->bitwidth());
  case Type::Kind::IntegerLiteral:
    return i64();
  case Type::Kind::Float:
    if (llvm::cast<FloatType>(type)->isBFloat16())
      return llvm::Type::getBFloatTy(context);
    return floatType(context, llvm::cast<FloatType>(type)->bitwidth());
  case Type::Kind::Complex: {
    llvm::Type *part = value(llvm::cast<ComplexType>(type)->elementType());
    return llvm::StructType::get(context, {part, part});
  }
  case Type::Kind::Array:
    return array(llvm::cast<ArrayType>(type)->rank());
  case Type::Kind::Tuple: {
    std::vector<llvm::Type *> elements;
    for (const Type *element : llvm::cast<TupleType>(type)->elementTypes())
      elements.push_back(value(element));
    return llvm::StructType::get(context, elements);
  }
  case Type::Kind::Vector: {
    const auto *vector = llvm::cast<VectorType>(type);
    return llvm::StructType::get(
        context, std::vector<llvm::Type *>(vector->size(), value(vector->elementType())));
  }
  case Type::Kind::Record:
    return pointer();
  case Type::Kind::Range: {
    llvm::Type *element = value(llvm::cast<RangeType>(type)->elementType());
    return llvm::StructType::get(context, {element, element, element});
  }
  case Type::Kind::DateTime:
    return llvm::Type::getInt64Ty(context);
  case Type::Kind::Fp8:
    return i8();
  case Type::Kind::Optional: {
    llvm::Type *held = value(llvm::cast<OptionalType>(type)->valueType());
    return llvm::StructType::get(context, {held, i1()});
  }
  case Type::Kind::Pointer:
    return pointer();
  case Type::Kind::EnumMember:
    return value(llvm::cast<EnumMemberType>(type)->valueType());
  case Type::Kind::CharSequence: {
    const auto *chars = llvm::cast<CharSequenceType>(type);
    return llvm::ArrayType::get(llvm::IntegerType::get(context, chars->unitBytes() * 8),
                                chars->length());
  }
  case Type::Kind::StringLiteral:
  case Type::Kind::NumberClass:
  case Type::Kind::Entity:
  case Type::Kind::Slice:
    break;
  }
  llvm_unreachable("compile-time-only types have no run-time value");
}

llvm::Type *LLVMTypes::memory(const Type *type) {
  if (llvm::isa<BooleanType>(type))
    return i8();
  if (const auto *record = llvm::dyn_cast<RecordType>(type))
    return llvm::ArrayType::get(i8(), record->byteSize());
  return value(type);
}

llvm::StructType *LLVMTypes::array(unsigned rank) {
  llvm::Type *dims = llvm::ArrayType::get(i64(), rank);
  return llvm::StructType::get(context, {pointer(), dims, dims});
}

} // namespace kiln::backend
