//===- backend/codegen/lower_arrays.cpp - Arrays, tuples, records and ranges ------===//
//
// An array value is { data, shape[n], strides[n] } (llvm_types.h). Element
// addresses of C- and F-ordered arrays are computed from the shape, as
// Numba does, so their stride parameters cost nothing; other arrays use
// their strides. Negative indices count from the end, as in Python.
//
// Where the target checks indices (the CPU engine), every integer index of
// an element access, an atomic or a view is checked against its extent
// after counting from the end: an index outside is an IndexError that
// names the array, the index, the axis, the shape and the line, as Numba's
// simulator raises one. Slice bounds are clamped, as in Python, and need
// no check.
//
//===----------------------------------------------------------------------===//

#include "backend/codegen/function_lowering.h"

#include <llvm/IR/MDBuilder.h>

namespace kiln::backend {

/// How an IndexError names the array an access reads: the argument's
/// name, or where the array comes from.
static std::string describeArray(const ir::Value *array) {
  if (const auto *argument = llvm::dyn_cast<ir::Argument>(array))
    return "array '" + argument->name + "'";
  const auto *instruction = llvm::dyn_cast<ir::Instruction>(array);
  if (!instruction)
    return "an array";
  switch (instruction->opcode) {
  case ir::Opcode::SharedArray:
    return "a shared array";
  case ir::Opcode::DynamicSharedArray:
    return "the dynamic shared array";
  case ir::Opcode::LocalArray:
    return "a local array";
  case ir::Opcode::ConstArray:
    return "a constant array";
  case ir::Opcode::ArrayAt:
    return "a captured device array";
  case ir::Opcode::RecordGet:
    return "the array in record field '" + instruction->text + "'";
  case ir::Opcode::ArrayView:
  case ir::Opcode::ArrayTranspose:
  case ir::Opcode::ArrayReshape:
  case ir::Opcode::ArrayViewAs:
  case ir::Opcode::ArrayComplexPart:
    return "a view of " + describeArray(instruction->operands[0]);
  default:
    return "an array";
  }
}

void FunctionLowering::checkIndices(llvm::Value *array, const ArrayType *type,
                                    llvm::ArrayRef<CheckedIndex> checked,
                                    const ir::Instruction &access) {
  if (!hooks.checksIndices() || checked.empty())
    return;
  // One unsigned comparison per index: a wrapped index below zero is huge.
  std::vector<llvm::Value *> outside;
  llvm::Value *anyOutside = nullptr;
  for (const CheckedIndex &index : checked) {
    llvm::Value *extent = builder.CreateExtractValue(array, {1, index.axis});
    outside.push_back(builder.CreateICmpUGE(index.wrapped, extent));
    anyOutside = anyOutside ? builder.CreateOr(anyOutside, outside.back()) : outside.back();
  }
  HookSite here = site(access.location);
  llvm::Value *fails = builder.CreateAnd(hooks.indexChecksEnabled(here), anyOutside);
  llvm::LLVMContext &context = lowered.getContext();
  llvm::BasicBlock *fail = llvm::BasicBlock::Create(context, "index_error", &lowered);
  llvm::BasicBlock *next = llvm::BasicBlock::Create(context, "index_ok", &lowered);
  builder.CreateCondBr(fails, fail, next, llvm::MDBuilder(context).createUnlikelyBranchWeights());
  builder.SetInsertPoint(fail);
  // The first index outside, as Python reports it.
  llvm::Value *index = checked.back().index;
  llvm::Value *axis = i32(static_cast<int32_t>(checked.back().axis));
  for (size_t i = checked.size() - 1; i-- > 0;) {
    index = builder.CreateSelect(outside[i], checked[i].index, index);
    axis = builder.CreateSelect(outside[i], i32(static_cast<int32_t>(checked[i].axis)), axis);
  }
  std::vector<llvm::Value *> shape;
  for (unsigned d = 0; d < type->rank(); ++d)
    shape.push_back(builder.CreateExtractValue(array, {1, d}));
  HookSite failing = site(access.location);
  hooks.raiseIndexError(failing, describeArray(access.operands[0]), index, axis, shape);
  builder.SetInsertPoint(next);
}

llvm::Value *FunctionLowering::elementAddress(llvm::Value *array, const ArrayType *type,
                                              llvm::ArrayRef<llvm::Value *> indices,
                                              const ir::Instruction &access) {
  llvm::Value *data = builder.CreateExtractValue(array, {0});
  unsigned rank = type->rank();
  std::vector<llvm::Value *> wrapped;
  std::vector<CheckedIndex> checked;
  for (unsigned d = 0; d < indices.size(); ++d) {
    llvm::Value *index = indices[d];
    llvm::Value *extent = builder.CreateExtractValue(array, {1, d});
    if (auto *known = llvm::dyn_cast<llvm::ConstantInt>(index); known && !known->isNegative())
      wrapped.push_back(index);
    else
      wrapped.push_back(builder.CreateSelect(builder.CreateICmpSLT(index, i64(0)),
                                             builder.CreateAdd(index, extent), index));
    checked.push_back({index, wrapped.back(), d});
  }
  checkIndices(array, type, checked, access);
  if (rank == 0)
    return data;
  uint64_t size = itemSize(type->elementType());
  llvm::Value *offset = nullptr;
  switch (type->arrayLayout()) {
  case ArrayLayout::C: {
    // ((i0 * n1 + i1) * n2 + i2) * itemsize
    llvm::Value *linear = wrapped[0];
    for (unsigned d = 1; d < rank; ++d)
      linear = builder.CreateAdd(
          builder.CreateMul(linear, builder.CreateExtractValue(array, {1, d}), "", true, true),
          wrapped[d], "", true, true);
    offset = builder.CreateMul(linear, i64(static_cast<int64_t>(size)), "", true, true);
    break;
  }
  case ArrayLayout::F: {
    llvm::Value *linear = wrapped[rank - 1];
    for (unsigned d = rank - 1; d-- > 0;)
      linear = builder.CreateAdd(
          builder.CreateMul(linear, builder.CreateExtractValue(array, {1, d}), "", true, true),
          wrapped[d], "", true, true);
    offset = builder.CreateMul(linear, i64(static_cast<int64_t>(size)), "", true, true);
    break;
  }
  case ArrayLayout::A:
    for (unsigned d = 0; d < rank; ++d) {
      // Strides may be negative (reversed views): no unsigned-wrap flags.
      llvm::Value *term =
          builder.CreateNSWMul(wrapped[d], builder.CreateExtractValue(array, {2, d}));
      offset = offset ? builder.CreateNSWAdd(offset, term) : term;
    }
    break;
  }
  return builder.CreateInBoundsGEP(types.i8(), data, offset);
}

llvm::Value *FunctionLowering::loadElement(llvm::Value *address, const Type *elementType) {
  llvm::LoadInst *load = builder.CreateAlignedLoad(types.memory(elementType), address,
                                                   llvm::Align(itemAlignment(elementType)));
  if (llvm::isa<BooleanType>(elementType))
    return builder.CreateICmpNE(load, builder.getInt8(0));
  return load;
}

void FunctionLowering::storeElement(llvm::Value *address, llvm::Value *value,
                                    const Type *elementType) {
  if (llvm::isa<BooleanType>(elementType))
    value = builder.CreateZExt(value, types.i8());
  builder.CreateAlignedStore(value, address, llvm::Align(itemAlignment(elementType)));
}

llvm::Value *FunctionLowering::contiguousArray(llvm::Value *data,
                                               llvm::ArrayRef<llvm::Value *> shape,
                                               const ArrayType *type) {
  unsigned rank = type->rank();
  llvm::Value *result = llvm::PoisonValue::get(types.array(rank));
  result = builder.CreateInsertValue(result, data, {0});
  for (unsigned d = 0; d < rank; ++d)
    result = builder.CreateInsertValue(result, shape[d], {1, d});
  llvm::Value *stride = i64(static_cast<int64_t>(itemSize(type->elementType())));
  bool fortran = type->arrayLayout() == ArrayLayout::F;
  for (unsigned k = 0; k < rank; ++k) {
    unsigned d = fortran ? k : rank - 1 - k;
    result = builder.CreateInsertValue(result, stride, {2, d});
    stride = builder.CreateMul(stride, shape[d]);
  }
  return result;
}

llvm::Value *FunctionLowering::lowerArrayOperation(const ir::Instruction &instruction) {
  using Op = ir::Opcode;
  auto operand = [&](size_t i) { return valueOf(instruction.operands[i]); };
  switch (instruction.opcode) {
  case Op::ArrayLoad:
  case Op::ArrayStore:
    return lowerArrayAccess(instruction);
  case Op::PointerLoad:
  case Op::PointerStore:
    return lowerPointerAccess(instruction);

  case Op::ArrayView:
    return arrayView(instruction);
  case Op::ArrayTranspose:
    return transpose(instruction);
  case Op::ArrayReshape:
    return reshape(instruction);
  case Op::ArrayViewAs:
    return viewAs(instruction);
  case Op::ArrayComplexPart:
    return complexPartView(instruction);
  case Op::ArrayShape:
    return builder.CreateExtractValue(operand(0), {1, instruction.index});
  case Op::ArrayStride:
    return builder.CreateExtractValue(operand(0), {2, instruction.index});
  case Op::ArraySize: {
    unsigned rank = llvm::cast<ArrayType>(instruction.operands[0]->type())->rank();
    llvm::Value *size = i64(1);
    for (unsigned d = 0; d < rank; ++d)
      size = builder.CreateMul(size, builder.CreateExtractValue(operand(0), {1, d}));
    return size;
  }

  case Op::TupleMake:
  case Op::TupleGet:
  case Op::TupleGetDynamic:
    return lowerTupleOperation(instruction);

  case Op::IsNone:
    return builder.CreateNot(builder.CreateExtractValue(operand(0), {1}));

  case Op::ComplexMake:
    return makeComplex(operand(0), operand(1));
  case Op::ComplexReal:
    return builder.CreateExtractValue(operand(0), {0});
  case Op::ComplexImag:
    return builder.CreateExtractValue(operand(0), {1});

  case Op::RecordGet:
  case Op::RecordSet:
    return lowerRecordField(instruction);

  case Op::RangeMake:
  case Op::RangeLength:
  case Op::RangeItem:
    return lowerRangeOperation(instruction);

  case Op::SharedArray:
  case Op::LocalArray:
  case Op::ConstArray:
  case Op::ArrayAt:
  case Op::DynamicSharedArray:
    return lowerArrayCreation(instruction);
  default:
    return nullptr;
  }
}

//===----------------------------------------------------------------------===//
// Loads and stores
//===----------------------------------------------------------------------===//

llvm::Value *FunctionLowering::lowerArrayAccess(const ir::Instruction &instruction) {
  auto operand = [&](size_t i) { return valueOf(instruction.operands[i]); };
  const auto *arrayType = llvm::cast<ArrayType>(instruction.operands[0]->type());
  size_t indexCount = arrayType->rank();
  std::vector<llvm::Value *> indices;
  for (size_t i = 1; i <= indexCount; ++i)
    indices.push_back(operand(i));
  llvm::Value *address = elementAddress(operand(0), arrayType, indices, instruction);
  const Type *element = arrayType->elementType();
  if (instruction.opcode == ir::Opcode::ArrayLoad)
    // A record element is a reference into the array.
    return llvm::isa<RecordType>(element) ? address : loadElement(address, element);
  llvm::Value *value = operand(indexCount + 1);
  if (const auto *record = llvm::dyn_cast<RecordType>(element))
    builder.CreateMemCpy(address, llvm::Align(record->byteAlignment()), value,
                         llvm::Align(record->byteAlignment()), record->byteSize());
  else
    storeElement(address, value, element);
  return nullptr;
}

llvm::Value *FunctionLowering::lowerPointerAccess(const ir::Instruction &instruction) {
  auto operand = [&](size_t i) { return valueOf(instruction.operands[i]); };
  const Type *pointee = llvm::cast<PointerType>(instruction.operands[0]->type())->pointeeType();
  llvm::Value *address = builder.CreateGEP(types.memory(pointee), operand(0), {operand(1)});
  if (instruction.opcode == ir::Opcode::PointerLoad)
    return loadElement(address, pointee);
  storeElement(address, operand(2), pointee);
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Views
//===----------------------------------------------------------------------===//

namespace {

/// Python's slice.indices() for one dimension of `length` items.
struct SliceBounds {
  llvm::Value *start;
  llvm::Value *length;
  llvm::Value *step;
};

} // namespace

static SliceBounds sliceBounds(llvm::IRBuilder<> &builder, llvm::Value *start, llvm::Value *stop,
                               llvm::Value *step, llvm::Value *length) {
  llvm::Type *i64 = builder.getInt64Ty();
  auto constant = [&](int64_t v) { return llvm::ConstantInt::getSigned(i64, v); };
  // A zero step raises ValueError in Python; a GPU cannot raise, so it
  // behaves as 1.
  if (!step)
    step = constant(1);
  step = builder.CreateSelect(builder.CreateICmpEQ(step, constant(0)), constant(1), step);
  llvm::Value *forward = builder.CreateICmpSGT(step, constant(0));
  llvm::Value *lower = builder.CreateSelect(forward, constant(0), constant(-1));
  llvm::Value *upper =
      builder.CreateSelect(forward, length, builder.CreateSub(length, constant(1)));
  auto clampBound = [&](llvm::Value *bound, llvm::Value *absent) -> llvm::Value * {
    if (!bound)
      return absent;
    llvm::Value *negative = builder.CreateICmpSLT(bound, constant(0));
    llvm::Value *fromEnd = builder.CreateAdd(bound, length);
    llvm::Value *adjusted = builder.CreateSelect(negative, fromEnd, bound);
    llvm::Value *belowLower = builder.CreateICmpSLT(adjusted, lower);
    llvm::Value *aboveUpper = builder.CreateICmpSGT(adjusted, upper);
    return builder.CreateSelect(belowLower, lower,
                                builder.CreateSelect(aboveUpper, upper, adjusted));
  };
  llvm::Value *first = clampBound(start, builder.CreateSelect(forward, lower, upper));
  llvm::Value *last = clampBound(stop, builder.CreateSelect(forward, upper, lower));
  // Items: ceil((last - first) / step) when positive.
  llvm::Value *span =
      builder.CreateSelect(forward, builder.CreateSub(last, first), builder.CreateSub(first, last));
  llvm::Value *magnitude = builder.CreateSelect(forward, step, builder.CreateNeg(step));
  llvm::Value *count = builder.CreateAdd(
      builder.CreateSDiv(builder.CreateSub(span, constant(1)), magnitude), constant(1));
  count = builder.CreateSelect(builder.CreateICmpSGT(span, constant(0)), count, constant(0));
  return {first, count, step};
}

llvm::Value *FunctionLowering::arrayView(const ir::Instruction &instruction) {
  auto operand = [&](size_t i) { return valueOf(instruction.operands[i]); };
  const auto *from = llvm::cast<ArrayType>(instruction.operands[0]->type());
  const auto *to = llvm::cast<ArrayType>(instruction.type());
  llvm::Value *array = operand(0);
  llvm::Value *data = builder.CreateExtractValue(array, {0});
  llvm::Value *offset = i64(0);
  std::vector<llvm::Value *> shape, strides;
  std::vector<CheckedIndex> checked;
  size_t next = 1;
  unsigned dimension = 0;
  for (const ir::ViewItem &item : instruction.viewItems) {
    llvm::Value *extent = builder.CreateExtractValue(array, {1, dimension});
    llvm::Value *stride = builder.CreateExtractValue(array, {2, dimension});
    ++dimension;
    if (!item.isSlice) {
      llvm::Value *index = operand(next++);
      llvm::Value *wrapped = builder.CreateSelect(builder.CreateICmpSLT(index, i64(0)),
                                                  builder.CreateAdd(index, extent), index);
      checked.push_back({index, wrapped, dimension - 1});
      offset = builder.CreateAdd(offset, builder.CreateMul(wrapped, stride));
      continue;
    }
    llvm::Value *start = item.hasStart ? operand(next++) : nullptr;
    llvm::Value *stop = item.hasStop ? operand(next++) : nullptr;
    llvm::Value *step = item.hasStep ? operand(next++) : nullptr;
    SliceBounds bounds = sliceBounds(builder, start, stop, step, extent);
    offset = builder.CreateAdd(offset, builder.CreateMul(bounds.start, stride));
    shape.push_back(bounds.length);
    strides.push_back(builder.CreateMul(stride, bounds.step));
  }
  for (; dimension < from->rank(); ++dimension) {
    shape.push_back(builder.CreateExtractValue(array, {1, dimension}));
    strides.push_back(builder.CreateExtractValue(array, {2, dimension}));
  }
  checkIndices(array, from, checked, instruction);
  llvm::Value *result = llvm::PoisonValue::get(types.array(to->rank()));
  result = builder.CreateInsertValue(result, builder.CreateGEP(types.i8(), data, offset), {0});
  for (unsigned d = 0; d < to->rank(); ++d) {
    result = builder.CreateInsertValue(result, shape[d], {1, d});
    result = builder.CreateInsertValue(result, strides[d], {2, d});
  }
  return result;
}

llvm::Value *FunctionLowering::transpose(const ir::Instruction &instruction) {
  unsigned rank = llvm::cast<ArrayType>(instruction.type())->rank();
  llvm::Value *array = valueOf(instruction.operands[0]);
  llvm::Value *result = builder.CreateInsertValue(llvm::PoisonValue::get(types.array(rank)),
                                                  builder.CreateExtractValue(array, {0}), {0});
  for (unsigned d = 0; d < rank; ++d) {
    result = builder.CreateInsertValue(result, builder.CreateExtractValue(array, {1, d}),
                                       {1, rank - 1 - d});
    result = builder.CreateInsertValue(result, builder.CreateExtractValue(array, {2, d}),
                                       {2, rank - 1 - d});
  }
  return result;
}

llvm::Value *FunctionLowering::complexPartView(const ir::Instruction &instruction) {
  // The same shape and strides, from the element's real or imaginary part.
  const auto *parts = llvm::cast<ArrayType>(instruction.type());
  llvm::Value *array = valueOf(instruction.operands[0]);
  auto offset = static_cast<int64_t>(instruction.index * itemSize(parts->elementType()));
  return builder.CreateInsertValue(
      array,
      builder.CreateConstInBoundsGEP1_64(types.i8(), builder.CreateExtractValue(array, {0}),
                                         static_cast<uint64_t>(offset)),
      {0});
}

llvm::Value *FunctionLowering::reshape(const ir::Instruction &instruction) {
  const auto *from = llvm::cast<ArrayType>(instruction.operands[0]->type());
  const auto *to = llvm::cast<ArrayType>(instruction.type());
  llvm::Value *array = valueOf(instruction.operands[0]);
  llvm::Value *size = i64(1);
  for (unsigned d = 0; d < from->rank(); ++d)
    size = builder.CreateMul(size, builder.CreateExtractValue(array, {1, d}));
  // NumPy's rule: at most one extent is negative, and it takes the size
  // the others leave.
  std::vector<llvm::Value *> extents, unknown;
  llvm::Value *known = i64(1);
  llvm::Value *unknownCount = i64(0);
  for (unsigned d = 0; d < to->rank(); ++d) {
    llvm::Value *extent = valueOf(instruction.operands[d + 1]);
    llvm::Value *negative = builder.CreateICmpSLT(extent, i64(0));
    extents.push_back(extent);
    unknown.push_back(negative);
    known = builder.CreateMul(known, builder.CreateSelect(negative, i64(1), extent));
    unknownCount = builder.CreateAdd(unknownCount, builder.CreateZExt(negative, types.i64()));
  }
  llvm::Value *knownNonZero = builder.CreateICmpNE(known, i64(0));
  llvm::Value *divisor = builder.CreateSelect(knownNonZero, known, i64(1));
  llvm::Value *inferred = builder.CreateSDiv(size, divisor);
  llvm::Value *exact = builder.CreateICmpEQ(known, size);
  llvm::Value *fits = builder.CreateAnd(
      knownNonZero, builder.CreateICmpEQ(builder.CreateSRem(size, divisor), i64(0)));
  llvm::Value *valid =
      builder.CreateSelect(builder.CreateICmpEQ(unknownCount, i64(0)), exact,
                           builder.CreateAnd(builder.CreateICmpEQ(unknownCount, i64(1)), fits));
  raiseUnless(valid, "ValueError", "total size of new array must be unchanged",
              instruction.location);

  llvm::Value *result = llvm::PoisonValue::get(types.array(to->rank()));
  result = builder.CreateInsertValue(result, builder.CreateExtractValue(array, {0}), {0});
  for (unsigned d = 0; d < to->rank(); ++d)
    extents[d] = builder.CreateSelect(unknown[d], inferred, extents[d]);
  // Strides of the layout the array keeps: C from the last dimension in, F
  // from the first.
  llvm::Value *stride = i64(static_cast<int64_t>(itemSize(to->elementType())));
  bool fortran = to->arrayLayout() == ArrayLayout::F;
  for (unsigned i = 0; i < to->rank(); ++i) {
    unsigned d = fortran ? i : to->rank() - 1 - i;
    result = builder.CreateInsertValue(result, extents[d], {1, d});
    result = builder.CreateInsertValue(result, stride, {2, d});
    stride = builder.CreateMul(stride, extents[d]);
  }
  return result;
}

llvm::Value *FunctionLowering::viewAs(const ir::Instruction &instruction) {
  // NumPy's rule for arr.view(dtype), as Numba's _change_dtype: items of
  // another size change the extent of the dimension that is contiguous (the
  // last for C order, the first for F; an A array is checked at run time).
  const auto *from = llvm::cast<ArrayType>(instruction.operands[0]->type());
  const auto *to = llvm::cast<ArrayType>(instruction.type());
  llvm::Value *array = valueOf(instruction.operands[0]);
  auto oldSize = static_cast<int64_t>(itemSize(from->elementType()));
  auto newSize = static_cast<int64_t>(itemSize(to->elementType()));
  unsigned rank = from->rank();
  if (oldSize == newSize || rank == 0) {
    if (oldSize != newSize)
      raiseUnless(builder.getFalse(), "ValueError", "new type not compatible with array",
                  instruction.location);
    return array;
  }
  unsigned last = rank - 1;
  llvm::Value *lastContiguous =
      builder.CreateICmpEQ(builder.CreateExtractValue(array, {2, last}), i64(oldSize));
  llvm::Value *firstContiguous =
      builder.CreateICmpEQ(builder.CreateExtractValue(array, {2, 0}), i64(oldSize));
  // Which dimension changes: C's last, F's first; A's whichever is contiguous.
  llvm::Value *useLast = from->arrayLayout() == ArrayLayout::C   ? builder.getTrue()
                         : from->arrayLayout() == ArrayLayout::F ? builder.getFalse()
                                                                 : lastContiguous;
  llvm::Value *contiguous = from->arrayLayout() == ArrayLayout::A
                                ? builder.CreateOr(lastContiguous, firstContiguous)
                                : builder.getTrue();
  llvm::Value *extent = builder.CreateSelect(useLast, builder.CreateExtractValue(array, {1, last}),
                                             builder.CreateExtractValue(array, {1, 0}));
  llvm::Value *bytes = builder.CreateMul(extent, i64(oldSize));
  llvm::Value *fits = builder.CreateICmpEQ(builder.CreateSRem(bytes, i64(newSize)), i64(0));
  raiseUnless(builder.CreateAnd(contiguous, fits), "ValueError",
              "new type not compatible with array", instruction.location);
  llvm::Value *newExtent = builder.CreateSDiv(bytes, i64(newSize));
  llvm::Value *result = array;
  auto update = [&](unsigned d, llvm::Value *chosen) {
    result = builder.CreateInsertValue(
        result, builder.CreateSelect(chosen, newExtent, builder.CreateExtractValue(array, {1, d})),
        {1, d});
    result = builder.CreateInsertValue(
        result,
        builder.CreateSelect(chosen, i64(newSize), builder.CreateExtractValue(array, {2, d})),
        {2, d});
  };
  if (rank == 1) {
    update(0, builder.getTrue());
  } else {
    update(last, useLast);
    update(0, builder.CreateNot(useLast));
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Tuples, records and ranges
//===----------------------------------------------------------------------===//

llvm::Value *FunctionLowering::lowerTupleOperation(const ir::Instruction &instruction) {
  using Op = ir::Opcode;
  const Type *type = instruction.type();
  auto operand = [&](size_t i) { return valueOf(instruction.operands[i]); };
  switch (instruction.opcode) {
  case Op::TupleMake: {
    llvm::Value *result = llvm::PoisonValue::get(types.value(type));
    for (unsigned i = 0; i < instruction.operands.size(); ++i)
      if (llvm::Value *element = operand(i))
        result = builder.CreateInsertValue(result, element, {i});
    return result;
  }
  case Op::TupleGet:
    if (!types.value(type))
      return nullptr;
    return builder.CreateExtractValue(operand(0), {instruction.index});
  case Op::TupleGetDynamic:
    return tupleItemAt(instruction);
  default:
    return nullptr;
  }
}

llvm::Value *FunctionLowering::tupleItemAt(const ir::Instruction &instruction) {
  const auto *tuple = llvm::cast<TupleType>(instruction.operands[0]->type());
  llvm::Type *element = types.value(tuple->elementTypes()[0]);
  auto *arrayType = llvm::ArrayType::get(element, tuple->size());
  llvm::Value *value = valueOf(instruction.operands[0]);
  llvm::AllocaInst *&slots = tupleSlots[value];
  if (!slots) {
    slots = entryAlloca(arrayType, 8, "tuple");
    // Right after the tuple's definition, which dominates every use.
    llvm::IRBuilder<> fill(lowered.getContext());
    if (auto *definition = llvm::dyn_cast<llvm::Instruction>(value))
      fill.SetInsertPoint(definition->getParent(),
                          llvm::isa<llvm::PHINode>(definition)
                              ? definition->getParent()->getFirstInsertionPt()
                              : std::next(definition->getIterator()));
    else
      fill.SetInsertPoint(allocaBlock, std::next(slots->getIterator()));
    for (unsigned i = 0; i < tuple->size(); ++i)
      fill.CreateStore(fill.CreateExtractValue(value, {i}),
                       fill.CreateConstInBoundsGEP2_64(arrayType, slots, 0, i));
  }
  llvm::Value *index = valueOf(instruction.operands[1]);
  auto size = static_cast<int64_t>(tuple->size());
  raiseUnless(builder.CreateAnd(builder.CreateICmpSGE(index, i64(-size)),
                                builder.CreateICmpSLT(index, i64(size))),
              "IndexError", "tuple index out of range", instruction.location);
  index = builder.CreateSelect(builder.CreateICmpSLT(index, i64(0)),
                               builder.CreateAdd(index, i64(static_cast<int64_t>(tuple->size()))),
                               index);
  return builder.CreateLoad(element, builder.CreateInBoundsGEP(arrayType, slots, {i64(0), index}));
}

llvm::Value *FunctionLowering::lowerRecordField(const ir::Instruction &instruction) {
  using Op = ir::Opcode;
  auto operand = [&](size_t i) { return valueOf(instruction.operands[i]); };
  const auto *record = llvm::cast<RecordType>(instruction.operands[0]->type());
  const RecordType::Field *field = nullptr;
  for (const RecordType::Field &candidate : record->recordFields())
    if (candidate.name == instruction.text)
      field = &candidate;
  llvm::Value *address = builder.CreateConstInBoundsGEP1_64(types.i8(), operand(0), field->offset);
  if (instruction.opcode == Op::RecordGet && field->isNestedArray()) {
    // A C array over the field's bytes.
    auto rank = static_cast<unsigned>(field->shape.size());
    llvm::Value *view = llvm::PoisonValue::get(types.array(rank));
    view = builder.CreateInsertValue(view, address, {0});
    auto stride = static_cast<int64_t>(itemSize(field->type));
    for (unsigned d = rank; d-- > 0;) {
      view = builder.CreateInsertValue(view, i64(static_cast<int64_t>(field->shape[d])), {1, d});
      view = builder.CreateInsertValue(view, i64(stride), {2, d});
      stride *= static_cast<int64_t>(field->shape[d]);
    }
    return view;
  }
  if (instruction.opcode == Op::RecordGet)
    return llvm::isa<RecordType>(field->type) ? address : loadElement(address, field->type);
  storeElement(address, operand(1), field->type);
  return nullptr;
}

llvm::Value *FunctionLowering::lowerRangeOperation(const ir::Instruction &instruction) {
  using Op = ir::Opcode;
  const Type *type = instruction.type();
  auto operand = [&](size_t i) { return valueOf(instruction.operands[i]); };
  switch (instruction.opcode) {
  case Op::RangeMake:
    return builder.CreateInsertValue(
        builder.CreateInsertValue(
            builder.CreateInsertValue(llvm::PoisonValue::get(types.value(type)), operand(0), {0}),
            operand(1), {1}),
        operand(2), {2});
  case Op::RangeLength:
    return rangeLength(operand(0), llvm::cast<IntegerType>(type)->signedness());
  case Op::RangeItem: {
    llvm::Value *range = operand(0);
    llvm::Value *start = builder.CreateExtractValue(range, {0});
    llvm::Value *step = builder.CreateExtractValue(range, {2});
    llvm::Value *counter = builder.CreateIntCast(operand(1), start->getType(), true);
    return builder.CreateAdd(start, builder.CreateMul(counter, step));
  }
  default:
    return nullptr;
  }
}

llvm::Value *FunctionLowering::rangeLength(llvm::Value *range, bool isSigned) {
  // Unsigned arithmetic on the distance, so that ranges spanning more
  // than half the integer type still count right.
  llvm::Value *start = builder.CreateExtractValue(range, {0});
  llvm::Value *stop = builder.CreateExtractValue(range, {1});
  llvm::Value *step = builder.CreateExtractValue(range, {2});
  llvm::Type *intType = start->getType();
  llvm::Value *zero = llvm::ConstantInt::get(intType, 0);
  llvm::Value *one = llvm::ConstantInt::get(intType, 1);
  llvm::Value *forward =
      isSigned ? builder.CreateICmpSGT(step, zero) : builder.CreateICmpNE(step, zero);
  llvm::Value *nonEmpty = builder.CreateSelect(
      forward, isSigned ? builder.CreateICmpSLT(start, stop) : builder.CreateICmpULT(start, stop),
      builder.CreateICmpSGT(start, stop));
  nonEmpty = builder.CreateAnd(nonEmpty, builder.CreateICmpNE(step, zero));
  llvm::Value *distance =
      builder.CreateSelect(forward, builder.CreateSub(stop, start), builder.CreateSub(start, stop));
  llvm::Value *magnitude = builder.CreateSelect(forward, step, builder.CreateNeg(step));
  magnitude = builder.CreateSelect(builder.CreateICmpEQ(magnitude, zero), one, magnitude);
  llvm::Value *count =
      builder.CreateAdd(builder.CreateUDiv(builder.CreateSub(distance, one), magnitude), one);
  return builder.CreateSelect(nonEmpty, count, zero);
}

//===----------------------------------------------------------------------===//
// Arrays the kernel makes
//===----------------------------------------------------------------------===//

llvm::Value *FunctionLowering::lowerArrayCreation(const ir::Instruction &instruction) {
  using Op = ir::Opcode;
  const auto *arrayType = llvm::cast<ArrayType>(instruction.type());
  switch (instruction.opcode) {
  case Op::SharedArray:
  case Op::LocalArray: {
    const Type *element = arrayType->elementType();
    uint64_t count = 1;
    std::vector<llvm::Value *> shape;
    for (uint64_t extent : instruction.shape) {
      count *= extent;
      shape.push_back(i64(static_cast<int64_t>(extent)));
    }
    uint64_t bytes = count * itemSize(element);
    uint64_t alignment = std::max<uint64_t>(itemAlignment(element), 16);
    llvm::Value *data;
    if (instruction.opcode == Op::SharedArray) {
      const SharedSlot &slot = module.sharedSlot(instruction, lowered.getName(),
                                                 std::max<uint64_t>(bytes, 1), alignment);
      HookSite here = site(instruction.location);
      data = hooks.sharedArray(here, slot);
    } else {
      data = entryAlloca(llvm::ArrayType::get(types.i8(), std::max<uint64_t>(bytes, 1)), alignment,
                         "local");
    }
    return contiguousArray(data, shape, arrayType);
  }
  case Op::ConstArray: {
    std::vector<llvm::Value *> shape;
    for (uint64_t extent : instruction.shape)
      shape.push_back(i64(static_cast<int64_t>(extent)));
    llvm::GlobalVariable *global = module.constantArray(
        instruction, std::max<uint64_t>(itemAlignment(arrayType->elementType()), 16));
    return contiguousArray(builder.CreateAddrSpaceCast(global, builder.getPtrTy()), shape,
                           arrayType);
  }
  case Op::ArrayAt: {
    unsigned rank = arrayType->rank();
    llvm::Value *result = llvm::PoisonValue::get(types.array(rank));
    result = builder.CreateInsertValue(
        result,
        builder.CreateIntToPtr(i64(static_cast<int64_t>(instruction.address)), builder.getPtrTy()),
        {0});
    for (unsigned d = 0; d < rank; ++d) {
      result = builder.CreateInsertValue(result, i64(static_cast<int64_t>(instruction.shape[d])),
                                         {1, d});
      result = builder.CreateInsertValue(result, i64(instruction.strides[d]), {2, d});
    }
    return result;
  }
  case Op::DynamicSharedArray: {
    HookSite here = site(instruction.location);
    auto [data, bytes] = hooks.dynamicSharedMemory(here);
    llvm::Value *count =
        builder.CreateUDiv(builder.CreateZExt(bytes, types.i64()),
                           i64(static_cast<int64_t>(itemSize(arrayType->elementType()))));
    return contiguousArray(data, {count}, arrayType);
  }
  default:
    return nullptr;
  }
}

} // namespace kiln::backend
