//===- frontend/emit/emit_arrays.cpp - Arrays and tuples ------------------===//

#include "frontend/emit/function_emitter.h"
#include "frontend/typing/compile_time_shape.h"

namespace kiln::emit {

using ssa::Op;

ir::Value *FunctionEmitter::emitArrayAttribute(const ssa::Instr *instr,
                                               const Resolution &resolution) {
  ir::Value *array = valueOf(instr->operands[0]);
  const auto *arrayType = llvm::cast<ArrayType>(array->type());
  if (resolution.detail == "shape" || resolution.detail == "strides") {
    bool shape = resolution.detail == "shape";
    std::vector<ir::Value *> dims;
    for (unsigned d = 0; d < arrayType->rank(); ++d) {
      ir::Instruction *dim =
          emit(shape ? ir::Opcode::ArrayShape : ir::Opcode::ArrayStride, types.int64(), {array});
      dim->index = d;
      dims.push_back(dim);
    }
    return emit(ir::Opcode::TupleMake, plain(resolution.result), dims);
  }
  ir::Value *size = emit(ir::Opcode::ArraySize, types.int64(), {array});
  if (resolution.detail == "size")
    return size;
  // nbytes
  Typing itemsize = typing::getAttribute(types, arrayType, "itemsize");
  return emit(ir::Opcode::Mul, types.int64(), {size, constant(types.int64(), *itemsize->constant)});
}

ir::Value *FunctionEmitter::compileTimeItem(const ssa::Instr *item) {
  // A tuple with no run-time value (one holding None) is a BuildTuple or a
  // constant somewhere up a chain of items; follow the chain up, then take
  // the elements down again.
  std::vector<unsigned> path;
  const ssa::Instr *tuple = item;
  while (!valueOf(tuple) && spec.resolutions[tuple->id].kind == Resolution::Kind::TupleItem) {
    path.insert(path.begin(), spec.resolutions[tuple->id].index);
    tuple = tuple->operands[0];
  }
  for (size_t step = 0; step < path.size(); ++step) {
    if (tuple->op == Op::BuildTuple) {
      tuple = tuple->operands[path[step]];
      continue;
    }
    if (tuple->op != Op::Constant)
      return nullptr;
    ConstantValue element = *tuple->constant;
    for (; step < path.size(); ++step)
      element = ConstantValue(element.elements()[path[step]]);
    const Type *result = plain(typeOf(item));
    return result->isCompileTimeOnly() ? nullptr : constant(result, std::move(element));
  }
  return valueOf(tuple);
}

ir::Value *FunctionEmitter::emitGetItem(const ssa::Instr *instr, const Resolution &resolution) {
  const Type *result = plain(resolution.result);
  ir::Value *object = valueOf(instr->operands[0]);
  switch (resolution.kind) {
  case Resolution::Kind::ArrayItem: {
    std::vector<ir::Value *> operands{object};
    for (ir::Value *index : indexValues(instr->operands[1]))
      operands.push_back(index);
    return emit(ir::Opcode::ArrayLoad, result, operands);
  }
  case Resolution::Kind::ArrayView: {
    if (resolution.detail == "T")
      return emit(ir::Opcode::ArrayTranspose, result, {object});
    if (resolution.detail == "self")
      return object;
    if (resolution.detail == "real" || resolution.detail == "imag") {
      ir::Instruction *part = emit(ir::Opcode::ArrayComplexPart, result, {object});
      part->index = resolution.detail == "imag" ? 1 : 0;
      return part;
    }
    const ssa::Instr *index = instr->operands[1];
    std::vector<const ssa::Instr *> items;
    if (index->op == Op::BuildTuple)
      items.assign(index->operands.begin(), index->operands.end());
    else
      items.push_back(index);
    ir::Instruction *view = emit(ir::Opcode::ArrayView, result, {object});
    for (const ssa::Instr *item : items) {
      if (item->op != Op::BuildSlice) {
        // Tuple-valued index items other than built tuples: index values.
        for (ir::Value *value : indexValues(item)) {
          view->operands.push_back(value);
          view->viewItems.push_back({false});
        }
        continue;
      }
      ir::ViewItem viewItem{true};
      bool *present[3] = {&viewItem.hasStart, &viewItem.hasStop, &viewItem.hasStep};
      for (size_t part = 0; part < 3; ++part) {
        const ssa::Instr *bound = item->operands[part];
        if (typeOf(bound) == types.none())
          continue;
        *present[part] = true;
        view->operands.push_back(convert(valueOf(bound), types.int64()));
      }
      view->viewItems.push_back(viewItem);
    }
    return view;
  }
  case Resolution::Kind::TupleItem: {
    if (!object)
      return compileTimeItem(instr);
    ir::Instruction *get = emit(ir::Opcode::TupleGet, result, {object});
    get->index = resolution.index;
    return get;
  }
  case Resolution::Kind::TupleSlice: {
    if (result->isCompileTimeOnly())
      return nullptr;
    std::vector<ir::Value *> elements;
    const auto *tuple = llvm::cast<TupleType>(plain(typeOf(instr->operands[0])));
    for (const ConstantValue &picked : resolution.constant->elements()) {
      auto i = static_cast<unsigned>(picked.intValue128());
      ir::Instruction *get = emit(ir::Opcode::TupleGet, plain(tuple->elementTypes()[i]), {object});
      get->index = i;
      elements.push_back(get);
    }
    return emit(ir::Opcode::TupleMake, result, elements);
  }
  case Resolution::Kind::TupleDynamicItem:
    function.raises = true; // an index out of range
    return emit(ir::Opcode::TupleGetDynamic, result,
                {object, convert(valueOf(instr->operands[1]), types.int64())});
  case Resolution::Kind::RecordField: {
    ir::Instruction *get = emit(ir::Opcode::RecordGet, result, {object});
    get->text = resolution.detail;
    return get;
  }
  default:
    return nullptr;
  }
}

ir::Value *FunctionEmitter::emitReshape(const ssa::Instr *instr, const Resolution &resolution) {
  std::vector<ir::Value *> operands{methodReceiver(instr)};
  // The extents: the arguments, or the items of a single tuple argument.
  if (instr->operands.size() == 2 && llvm::isa<TupleType>(typeOf(instr->operands[1]))) {
    for (ir::Value *extent : indexValues(instr->operands[1]))
      operands.push_back(extent);
  } else {
    for (size_t i = 1; i < instr->operands.size(); ++i)
      operands.push_back(convert(valueOf(instr->operands[i]), types.int64()));
  }
  function.raises = true; // a shape of another size
  return emit(ir::Opcode::ArrayReshape, plain(resolution.result), operands);
}

ir::Value *FunctionEmitter::emitViewAs(const ssa::Instr *instr, const Resolution &resolution) {
  function.raises = true; // an array the new dtype does not fit
  return emit(ir::Opcode::ArrayViewAs, plain(resolution.result), {methodReceiver(instr)});
}

ir::Value *FunctionEmitter::emitArrayCopy(const ssa::Instr *instr, const Resolution &resolution) {
  ir::Value *source = methodReceiver(instr);
  std::optional<std::vector<uint64_t>> shape = typing::compileTimeShape(
      instr->operands[0]->operands[0], [&](const ssa::Instr *operand) { return typeOf(operand); });
  ir::Instruction *copy = emit(ir::Opcode::LocalArray, plain(resolution.result), {});
  copy->shape = std::move(*shape);
  const Type *elementType = llvm::cast<ArrayType>(source->type())->elementType();
  emitLoopNest(copy, [&](llvm::ArrayRef<ir::Value *> index) {
    std::vector<ir::Value *> load{source};
    load.insert(load.end(), index.begin(), index.end());
    std::vector<ir::Value *> store{copy};
    store.insert(store.end(), index.begin(), index.end());
    store.push_back(emit(ir::Opcode::ArrayLoad, elementType, load));
    emit(ir::Opcode::ArrayStore, nullptr, store);
  });
  return copy;
}

void FunctionEmitter::emitNestedArrayStore(ir::Value *record, llvm::StringRef field,
                                           ir::Value *source) {
  const auto *recordType = llvm::cast<RecordType>(record->type());
  const RecordType::Field *nested = nullptr;
  for (const RecordType::Field &candidate : recordType->recordFields())
    if (candidate.name == field)
      nested = &candidate;
  const auto *view =
      types.array(nested->type, static_cast<unsigned>(nested->shape.size()), ArrayLayout::C);
  ir::Instruction *target = emit(ir::Opcode::RecordGet, view, {record});
  target->text = field.str();
  const auto *sourceType = llvm::cast<ArrayType>(source->type());
  emitLoopNest(target, [&](llvm::ArrayRef<ir::Value *> index) {
    std::vector<ir::Value *> load{source};
    load.insert(load.end(), index.begin(), index.end());
    ir::Value *element = emit(ir::Opcode::ArrayLoad, sourceType->elementType(), load);
    std::vector<ir::Value *> store{target};
    store.insert(store.end(), index.begin(), index.end());
    store.push_back(convert(element, nested->type));
    emit(ir::Opcode::ArrayStore, nullptr, store);
  });
}

void FunctionEmitter::emitSliceStore(const ssa::Instr *instr, const Resolution &resolution) {
  Resolution viewing = Resolution::make(Resolution::Kind::ArrayView, resolution.operandTypes[0]);
  ir::Value *target = emitGetItem(instr, viewing);
  const auto *targetType = llvm::cast<ArrayType>(target->type());
  ir::Value *value = valueOf(instr->operands[2]);
  const auto *sourceType = llvm::dyn_cast<ArrayType>(value->type());
  if (!sourceType) {
    ir::Value *element = convert(value, targetType->elementType());
    emitLoopNest(target, [&](llvm::ArrayRef<ir::Value *> index) {
      std::vector<ir::Value *> store{target};
      store.insert(store.end(), index.begin(), index.end());
      store.push_back(element);
      emit(ir::Opcode::ArrayStore, nullptr, store);
    });
    return;
  }
  // Each dimension of the source matches the view's, or has extent 1; else
  // NumPy's ValueError.
  const Type *boolean = types.boolean();
  ir::Value *fits = constant(boolean, ConstantValue::boolean(true));
  size_t offset = targetType->rank() - sourceType->rank();
  for (unsigned d = 0; d < sourceType->rank(); ++d) {
    ir::Instruction *extent = emit(ir::Opcode::ArrayShape, types.int64(), {value});
    extent->index = d;
    ir::Instruction *wanted = emit(ir::Opcode::ArrayShape, types.int64(), {target});
    wanted->index = static_cast<unsigned>(offset + d);
    ir::Value *matches =
        emit(ir::Opcode::Or, boolean,
             {emit(ir::Opcode::Eq, boolean, {extent, wanted}),
              emit(ir::Opcode::Eq, boolean, {extent, intConstant(types.int64(), 1)})});
    fits = emit(ir::Opcode::And, boolean, {fits, matches});
  }
  ir::Block *mismatch = function.insertBlockAfter(current);
  ir::Block *copy = function.insertBlockAfter(mismatch);
  ir::branch(current, fits, copy, mismatch);
  mismatch->terminator.kind = ir::Terminator::Kind::Raise;
  mismatch->terminator.exceptionClass = "ValueError";
  mismatch->terminator.message = "cannot assign slice from input of different size";
  mismatch->terminator.location = irLocation(location);
  function.raises = true;
  current = copy;
  emitLoopNest(target, [&](llvm::ArrayRef<ir::Value *> index) {
    std::vector<ir::Value *> store{target};
    store.insert(store.end(), index.begin(), index.end());
    store.push_back(convert(broadcastElement(value, index), targetType->elementType()));
    emit(ir::Opcode::ArrayStore, nullptr, store);
  });
}

} // namespace kiln::emit
