//===- frontend/typing/subscripts.cpp - Typing of `value[index]` ----------===//
//
// Basic indexing of arrays as in Numba's arraydecl.get_array_index_type:
// integers select, slices keep a dimension, and the result's layout stays C
// (or F) only when the indexing provably keeps it contiguous. Tuples are
// indexed with constants, or with any integer when all elements share a
// type once their literals are dropped. Records are indexed with a constant field name.
//
//===----------------------------------------------------------------------===//

#include "frontend/typing/typing_rules.h"

namespace kiln::typing {

namespace {

bool isIndexInteger(const Type *type) {
  return llvm::isa<IntegerType>(type) || llvm::isa<IntegerLiteralType>(type);
}

/// The field a record's subscript names: r["x"], or r[0] by position.
const RecordType::Field *recordFieldAt(const RecordType &record, const Type *index) {
  llvm::ArrayRef<RecordType::Field> fields = record.recordFields();
  if (isStrLiteral(index)) {
    const auto *name = llvm::cast<StringLiteralType>(index);
    for (const RecordType::Field &field : fields)
      if (field.name == name->stringValue())
        return &field;
    return nullptr;
  }
  if (const auto *position = llvm::dyn_cast<IntegerLiteralType>(index))
    if (!position->isUnsigned() && position->bits() >= 0 &&
        static_cast<uint64_t>(position->bits()) < fields.size())
      return &fields[static_cast<size_t>(position->bits())];
  return nullptr;
}

/// The index items of `a[index]`: a tuple's elements, or the index itself.
std::vector<const Type *> indexItems(const Type *index) {
  if (const auto *tuple = llvm::dyn_cast<TupleType>(index))
    return {tuple->elementTypes().begin(), tuple->elementTypes().end()};
  return {index};
}

/// Numba's keeps_contiguity / check_contiguity.
bool keepsContiguity(const Type *item, bool innermost) {
  if (isIndexInteger(item))
    return true;
  const auto *slice = llvm::dyn_cast<SliceType>(item);
  return innermost && slice && !slice->hasStep();
}

bool checkContiguity(llvm::ArrayRef<const Type *> outerToInner) {
  for (size_t i = 0; i + 1 < outerToInner.size(); ++i)
    if (!keepsContiguity(outerToInner[i], false))
      return false;
  return outerToInner.empty() || keepsContiguity(outerToInner.back(), true);
}

} // namespace

Typing getItem(TypeContext &types, const Type *object, const Type *index) {
  if (const auto *pointer = llvm::dyn_cast<PointerType>(object)) {
    if (!isIndexInteger(index))
      return Typing::error(DiagID::err_bad_array_index, {pointer->str(), index->str()});
    Resolution resolution = Resolution::make(Resolution::Kind::PointerItem, pointer->pointeeType());
    resolution.operandTypes = {nullptr, types.int64()};
    return resolution;
  }
  if (const auto *array = llvm::dyn_cast<ArrayType>(object)) {
    std::vector<const Type *> items = indexItems(index);
    unsigned integers = 0;
    for (const Type *item : items) {
      if (isIndexInteger(item)) {
        ++integers;
      } else if (!llvm::isa<SliceType>(item)) {
        return Typing::error(DiagID::err_bad_array_index, {array->str(), index->str()});
      }
    }
    if (items.size() > array->rank())
      return Typing::error(DiagID::err_too_many_indices,
                           {array->str(), std::to_string(items.size())});
    Resolution resolution;
    resolution.operandTypes.assign(2, nullptr);
    if (integers == array->rank()) {
      resolution.kind = Resolution::Kind::ArrayItem;
      resolution.result = array->elementType();
      return resolution;
    }
    ArrayLayout layout = array->arrayLayout();
    if (layout == ArrayLayout::C) {
      if (!checkContiguity(items))
        layout = ArrayLayout::A;
    } else if (layout == ArrayLayout::F) {
      if (items.size() == array->rank()) {
        std::vector<const Type *> reversed(items.rbegin(), items.rend());
        if (!checkContiguity(reversed))
          layout = ArrayLayout::A;
      } else {
        layout = ArrayLayout::A; // leading indices never keep F order
      }
    }
    resolution.kind = Resolution::Kind::ArrayView;
    resolution.result = types.arrayLike(array, array->rank() - integers, layout);
    return resolution;
  }

  if (const auto *tuple = llvm::dyn_cast<TupleType>(object)) {
    if (const auto *literal = llvm::dyn_cast<IntegerLiteralType>(index)) {
      int64_t position = literal->bits();
      int64_t size = static_cast<int64_t>(tuple->size());
      if (literal->isUnsigned() || position >= size || position < -size)
        return Typing::error(DiagID::err_tuple_index_out_of_range, {literal->str(), tuple->str()});
      if (position < 0)
        position += size;
      Resolution resolution = Resolution::make(
          Resolution::Kind::TupleItem, tuple->elementTypes()[static_cast<size_t>(position)]);
      resolution.index = static_cast<unsigned>(position);
      return resolution;
    }
    if (isIndexInteger(index) || llvm::isa<BooleanType>(index)) {
      // Numba tries getitem with the literals dropped first, so a tuple of
      // different literals, (1, 2, 3), counts as UniTuple(int64 x 3).
      const auto *plain = llvm::cast<TupleType>(types.unliteral(tuple));
      if (!plain->isHomogeneous())
        return Typing::error(DiagID::err_tuple_index_not_constant, {tuple->str()});
      Resolution resolution =
          Resolution::make(Resolution::Kind::TupleDynamicItem, plain->elementTypes()[0]);
      resolution.operandTypes = {nullptr, types.int64()};
      return resolution;
    }
    return Typing::error(DiagID::err_bad_array_index, {tuple->str(), index->str()});
  }

  if (const auto *record = llvm::dyn_cast<RecordType>(object)) {
    if (const RecordType::Field *field = recordFieldAt(*record, index))
      return getAttribute(types, record, field->name);
    if (isStrLiteral(index)) // reports the missing field
      return getAttribute(types, record, llvm::cast<StringLiteralType>(index)->stringValue());
    return Typing::error(DiagID::err_bad_array_index, {record->str(), index->str()});
  }
  return Typing::error(DiagID::err_not_subscriptable, {object->str()});
}

Typing setItem(TypeContext &types, const Type *object, const Type *index, const Type *value) {
  if (const auto *pointer = llvm::dyn_cast<PointerType>(object)) {
    if (!isIndexInteger(index))
      return Typing::error(DiagID::err_bad_array_index, {pointer->str(), index->str()});
    if (!types.canConvert(value, pointer->pointeeType()))
      return Typing::error(DiagID::err_array_store, {value->str(), pointer->str()});
    Resolution resolution = Resolution::make(Resolution::Kind::PointerStore, types.none());
    resolution.operandTypes = {nullptr, types.int64(), pointer->pointeeType()};
    return resolution;
  }
  if (const auto *array = llvm::dyn_cast<ArrayType>(object)) {
    Typing target = getItem(types, object, index);
    if (!target)
      return target;
    if (array->isReadonly())
      return Typing::error(DiagID::err_readonly_array_store, {array->str()});
    if (target->kind == Resolution::Kind::ArrayView) {
      // A scalar fills the view; an array is broadcast onto it, as NumPy's
      // assignment to a slice.
      const auto *view = llvm::cast<ArrayType>(target->result);
      const auto *source = llvm::dyn_cast<ArrayType>(value);
      const Type *element = source ? source->elementType() : value;
      if ((source && source->rank() > view->rank()) || !element->isScalar() ||
          !types.canConvert(element, view->elementType()))
        return Typing::error(DiagID::err_array_store, {value->str(), view->str()});
      Resolution resolution = Resolution::make(Resolution::Kind::ArraySliceStore, types.none());
      resolution.operandTypes = {view, nullptr, nullptr};
      return resolution;
    }
    // Numba allows any conversion that exists, truncating if need be.
    const Type *dtype = array->elementType();
    if (!types.canConvert(value, dtype))
      return Typing::error(DiagID::err_array_store, {value->str(), array->str()});
    Resolution resolution = Resolution::make(Resolution::Kind::ArrayStore, types.none());
    resolution.operandTypes = {nullptr, nullptr, dtype};
    return resolution;
  }
  if (const auto *record = llvm::dyn_cast<RecordType>(object)) {
    if (const RecordType::Field *field = recordFieldAt(*record, index)) {
      Typing store = setAttribute(types, record, field->name, value);
      if (store)
        store->operandTypes = {nullptr, nullptr, store->operandTypes[1]};
      return store;
    }
  }
  if (llvm::isa<TupleType>(object))
    return Typing::error(DiagID::err_tuple_immutable, {object->str()});
  return Typing::error(DiagID::err_not_subscriptable, {object->str()});
}

Typing iterCount(TypeContext &types, const Type *iterable) {
  Resolution resolution;
  resolution.kind = Resolution::Kind::LoopOperation;
  if (const auto *range = llvm::dyn_cast<RangeType>(iterable)) {
    resolution.result = range->elementType();
    resolution.detail = "range";
    return resolution;
  }
  if (const auto *array = llvm::dyn_cast<ArrayType>(iterable); array && array->rank() > 0) {
    resolution.result = types.int64();
    resolution.detail = "array";
    return resolution;
  }
  // As for getitem, getiter sees the tuple with its literals dropped.
  if (const auto *tuple = llvm::dyn_cast<TupleType>(iterable);
      tuple &&
      (llvm::cast<TupleType>(types.unliteral(tuple))->isHomogeneous() || tuple->size() == 0)) {
    resolution.result = types.int64();
    resolution.detail = "tuple";
    return resolution;
  }
  return Typing::error(DiagID::err_not_iterable, {iterable->str()});
}

Typing iterItem(TypeContext &types, const Type *iterable, const Type *counter) {
  Resolution resolution;
  resolution.kind = Resolution::Kind::LoopOperation;
  if (const auto *range = llvm::dyn_cast<RangeType>(iterable)) {
    resolution.result = range->elementType();
    resolution.detail = "range";
    return resolution;
  }
  if (const auto *array = llvm::dyn_cast<ArrayType>(iterable)) {
    Typing item = getItem(types, array, counter);
    if (!item)
      return item;
    resolution.result = item->result;
    resolution.detail = "array";
    return resolution;
  }
  if (const auto *tuple = llvm::dyn_cast<TupleType>(iterable)) {
    const auto *plain = llvm::cast<TupleType>(types.unliteral(tuple));
    resolution.result = plain->size() ? plain->elementTypes()[0] : types.none();
    resolution.detail = "tuple";
    return resolution;
  }
  return Typing::error(DiagID::err_not_iterable, {iterable->str()});
}

} // namespace kiln::typing
