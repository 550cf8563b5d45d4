//===- frontend/typing/cuda.cpp - Typing of numba.cuda intrinsics ---------===//
//
// cuda.grid, shared and local arrays, barriers, atomics, warp collectives
// and bit manipulation, with the signatures of numba/cuda/cudadecl.py and
// numba/cuda/intrinsics.py.
//
//===----------------------------------------------------------------------===//

#include "frontend/typing/overloads.h"
#include "frontend/typing/typing_rules.h"

namespace kiln::typing {

namespace {

bool isInteger(const Type *t) {
  return llvm::isa<IntegerType>(t) || llvm::isa<IntegerLiteralType>(t);
}

/// What an atomic operation takes as an index, or a tuple index's item:
/// Numba's lowering casts each to intp, so a float truncates
/// (`cuda.atomic.add(image, (j, math.floor(x)), v)`, math.floor being a
/// float on the GPU) where indexing with `[]` refuses it.
bool isAtomicIndex(const Type *t) {
  return t->isScalar() && !llvm::isa<ComplexType>(t);
}

Resolution builtin(const Symbol &function, const Type *result,
                   std::vector<const Type *> operandTypes) {
  Resolution resolution = Resolution::make(Resolution::Kind::Builtin, result);
  resolution.builtin = function.id;
  resolution.operandTypes = std::move(operandTypes);
  return resolution;
}

/// cuda.shared.array / cuda.local.array: the shape must be an integer
/// constant or a tuple of them, the dtype a type.
Typing arrayDeclaration(TypeContext &types, const Symbol &function,
                        llvm::ArrayRef<const Type *> args, llvm::ArrayRef<std::string> keywords) {
  const Type *shape = nullptr;
  const Type *dtype = nullptr;
  const Type *alignment = nullptr;
  int shapeIndex = -1;
  size_t positional = args.size() - keywords.size();
  static const char *const parameterNames[] = {"shape", "dtype", "alignment"};
  for (size_t i = 0; i < args.size(); ++i) {
    std::string name = i < positional ? (i < 3 ? parameterNames[i] : "") : keywords[i - positional];
    if (name == "shape") {
      shape = args[i];
      shapeIndex = static_cast<int>(i);
    } else if (name == "dtype")
      dtype = args[i];
    else if (name == "alignment")
      alignment = args[i];
    else
      return Typing::error(DiagID::err_unexpected_keyword_argument,
                           {function.displayName(), name.empty() ? "?" : name});
  }
  if (!shape)
    return Typing::error(DiagID::err_missing_argument, {function.displayName(), "shape"});
  if (!dtype)
    return Typing::error(DiagID::err_missing_argument, {function.displayName(), "dtype"});
  unsigned ndim = 0;
  if (llvm::isa<IntegerLiteralType>(shape)) {
    ndim = 1;
  } else if (const auto *tuple = llvm::dyn_cast<TupleType>(shape);
             tuple && llvm::all_of(tuple->elementTypes(), [](const Type *t) {
               return llvm::isa<IntegerLiteralType>(t);
             })) {
    ndim = static_cast<unsigned>(tuple->size());
  } else {
    return Typing::errorAt(shapeIndex, DiagID::err_array_shape_not_constant,
                           {function.displayName(), shape->str()});
  }
  const auto *numberClass = llvm::dyn_cast<NumberClassType>(dtype);
  if (!numberClass)
    return Typing::error(DiagID::err_not_a_type, {dtype->str()});
  if (alignment && !llvm::isa<IntegerLiteralType>(alignment) && alignment != types.none())
    return Typing::error(DiagID::err_constant_argument_required, {"alignment"});
  // The size in bytes; one that does not fit 64 bits is too large anyway.
  std::vector<const Type *> extents;
  if (const auto *tuple = llvm::dyn_cast<TupleType>(shape))
    extents.assign(tuple->elementTypes().begin(), tuple->elementTypes().end());
  else
    extents.push_back(shape);
  std::string shapeText;
  for (const Type *extent : extents) {
    const auto *literal = llvm::cast<IntegerLiteralType>(extent);
    shapeText += (shapeText.empty() ? "" : ", ") +
                 (literal->isUnsigned() ? std::to_string(static_cast<uint64_t>(literal->bits()))
                                        : std::to_string(literal->bits()));
  }
  if (llvm::isa<TupleType>(shape))
    shapeText = "(" + shapeText + (extents.size() == 1 ? ",)" : ")");
  uint64_t bytes = itemSize(numberClass->instanceType());
  bool overflows = false;
  for (const Type *extent : extents) {
    const auto *literal = llvm::cast<IntegerLiteralType>(extent);
    if (!literal->isUnsigned() && literal->bits() < 0)
      return Typing::errorAt(shapeIndex, DiagID::err_array_shape_negative,
                             {function.displayName(), shapeText});
    overflows |= __builtin_mul_overflow(bytes, static_cast<uint64_t>(literal->bits()), &bytes);
  }
  // A thread has at most 512 KiB of local memory on every GPU Kiln targets;
  // shared memory is checked at launch, against the device's limit, but
  // its size must fit the 63 bits the runtime counts it in.
  constexpr uint64_t maxLocalBytes = 512 * 1024;
  constexpr uint64_t maxSharedBytes = INT64_MAX;
  bool local = function.is(BuiltinId::CudaLocalArray);
  if (overflows || bytes > (local ? maxLocalBytes : maxSharedBytes))
    return Typing::errorAt(shapeIndex, DiagID::err_array_too_large,
                           {function.displayName(), shapeText,
                            local ? "the 524288 bytes of local memory a thread can have"
                                  : "the 2**63 - 1 bytes a size can count"});
  Resolution resolution =
      builtin(function, types.array(numberClass->instanceType(), ndim, ArrayLayout::C), {});
  return resolution;
}

Typing atomic(TypeContext &types, const Symbol &function, llvm::ArrayRef<const Type *> args) {
  const Type *i32 = types.int32();
  const Type *u32 = types.integer(32, false);
  const Type *i64 = types.int64();
  const Type *u64 = types.uint64();
  std::vector<const Type *> supported;
  switch (function.id) {
  case BuiltinId::CudaAtomicAdd:
  case BuiltinId::CudaAtomicSub:
  case BuiltinId::CudaAtomicMax:
  case BuiltinId::CudaAtomicMin:
  case BuiltinId::CudaAtomicNanmax:
  case BuiltinId::CudaAtomicNanmin:
    supported = {types.float64(), types.float32(), i32, u32, i64, u64};
    break;
  case BuiltinId::CudaAtomicInc:
  case BuiltinId::CudaAtomicDec:
    supported = {u32, u64};
    break;
  default:
    supported = {i32, u32, i64, u64};
    break;
  }
  bool isCas = function.is(BuiltinId::CudaAtomicCas);
  bool isCompareAndSwap = function.is(BuiltinId::CudaAtomicCompareAndSwap);
  size_t arity = isCas ? 4 : 3;
  if (args.size() != arity)
    return Typing::error(
        DiagID::err_wrong_argument_count,
        {function.displayName(), countOf(arity, "argument"), std::to_string(args.size())});
  const auto *array = llvm::dyn_cast<ArrayType>(args[0]);
  if (!array || !llvm::is_contained(supported, array->elementType()))
    return noOverload(function, args);
  if (array->isReadonly())
    return Typing::error(DiagID::err_readonly_array_store, {array->str()});
  const Type *dtype = array->elementType();
  std::vector<const Type *> operands;
  if (isCompareAndSwap) {
    if (array->rank() != 1)
      return noOverload(function, args);
    operands = {nullptr, dtype, dtype};
  } else {
    const Type *index = args[1];
    if (array->rank() == 1) {
      if (!isAtomicIndex(index))
        return noOverload(function, args);
      index = types.int64();
    } else {
      const auto *tuple = llvm::dyn_cast<TupleType>(index);
      if (!tuple || tuple->size() != array->rank() ||
          !llvm::all_of(tuple->elementTypes(), isAtomicIndex))
        return Typing::error(DiagID::err_bad_array_index, {array->str(), index->str()});
      index = nullptr;
    }
    operands = {nullptr, index, dtype};
    if (isCas)
      operands.push_back(dtype);
  }
  for (size_t i = 0; i < args.size(); ++i)
    if (operands[i] && !types.canConvert(args[i], operands[i]))
      return noOverload(function, args);
  return builtin(function, dtype, operands);
}

/// cuda.ldcg(array, i) and cuda.stcs(array, i, value), as Numba's cache
/// hints: an array of integers or floats, indexed by an integer (one
/// dimension) or a tuple of as many integers as it has dimensions.
Typing cacheHinted(TypeContext &types, const Symbol &function, llvm::ArrayRef<const Type *> args) {
  bool isStore = function.name().starts_with("st");
  size_t arity = isStore ? 3 : 2;
  if (args.size() != arity)
    return Typing::error(
        DiagID::err_wrong_argument_count,
        {function.displayName(), countOf(arity, "argument"), std::to_string(args.size())});
  const auto *array = llvm::dyn_cast<ArrayType>(args[0]);
  const Type *dtype = array ? array->elementType() : nullptr;
  if (!array || !(llvm::isa<IntegerType>(dtype) || llvm::isa<FloatType>(dtype)))
    return noOverload(function, args);
  auto isInteger = [](const Type *type) {
    return llvm::isa<IntegerType>(type) || llvm::isa<IntegerLiteralType>(type);
  };
  const Type *index = args[1];
  const auto *tuple = llvm::dyn_cast<TupleType>(index);
  if (array->rank() == 1 && isInteger(index))
    index = types.int64();
  else if (tuple && tuple->size() == array->rank() &&
           llvm::all_of(tuple->elementTypes(), isInteger))
    index = nullptr; // each item converts to int64 where the call is emitted
  else
    return Typing::error(DiagID::err_bad_array_index, {array->str(), index->str()});
  if (!isStore)
    return builtin(function, dtype, {nullptr, index});
  if (array->isReadonly())
    return Typing::error(DiagID::err_readonly_array_store, {array->str()});
  if (!types.canConvert(args[2], dtype))
    return noOverload(function, args);
  return builtin(function, types.none(), {nullptr, index, dtype});
}

} // namespace

namespace {

/// The element type and count of a vector type's symbol ("vector float32 4").
std::optional<std::pair<const Type *, unsigned>> vectorTypeOf(TypeContext &types,
                                                              const Symbol &symbol) {
  llvm::StringRef detail = symbol.detail;
  if (!detail.consume_front("vector "))
    return std::nullopt;
  auto [element, count] = detail.split(' ');
  return std::make_pair(types.scalarByName(element), unsigned(count[0] - '0'));
}

/// float32x4(a, b, c, d), float32x4(float32x2, c, d), ...: as numba-cuda's
/// constructors, scalars (converted to the element type) and vectors of
/// the same element type whose elements add up to the vector's.
Typing constructVector(TypeContext &types, const Symbol &function, const Type *element,
                       unsigned count, llvm::ArrayRef<const Type *> args) {
  unsigned elements = 0;
  std::vector<const Type *> conversions;
  for (const Type *arg : args) {
    if (const auto *vector = llvm::dyn_cast<VectorType>(arg);
        vector && vector->elementType() == element) {
      elements += vector->size();
      conversions.push_back(nullptr);
    } else if (arg->isScalar() && types.canConvert(arg, element)) {
      elements += 1;
      conversions.push_back(element);
    } else {
      elements = 0;
      break;
    }
  }
  if (elements != count)
    return Typing::error(DiagID::err_no_call_overload,
                         {function.displayName(), argumentList(args)});
  return builtin(function, types.vector(element, count), std::move(conversions));
}

/// The warp's collectives: shuffles, votes and matches.
Typing callWarpCollective(TypeContext &types, const Symbol &function,
                          llvm::ArrayRef<const Type *> args) {
  const Type *i32 = types.int32();
  const Type *i64 = types.int64();
  const Type *f32 = types.float32();
  const Type *f64 = types.float64();
  CaseList cases(types);
  switch (function.id) {
  case BuiltinId::CudaShflSync:
  case BuiltinId::CudaShflUpSync:
  case BuiltinId::CudaShflDownSync:
  case BuiltinId::CudaShflXorSync: {
    // The value must already be one of these types: no conversion. An
    // integer literal is an int64, as Numba types it when it retries the
    // call without literals.
    if (args.size() != 3)
      return noOverload(function, args);
    const Type *value = types.unliteral(args[1]);
    if (value != i32 && value != i64 && value != f32 && value != f64)
      return Typing::error(DiagID::err_no_call_overload,
                           {function.displayName(), argumentList(args) +
                                                        "; the value must be int32, int64, "
                                                        "float32 or float64"});
    if (!isInteger(args[0]) || !isInteger(args[2]))
      return noOverload(function, args);
    return builtin(function, value, {nullptr, value, nullptr});
  }
  case BuiltinId::CudaAllSync:
  case BuiltinId::CudaAnySync:
  case BuiltinId::CudaEqSync:
  case BuiltinId::CudaBallotSync: {
    if (args.size() != 2 || !isInteger(args[0]))
      return noOverload(function, args);
    const Type *predicate = types.unliteral(args[1]);
    if (!llvm::isa<IntegerType>(predicate) && predicate != types.boolean())
      return noOverload(function, args);
    const Type *result = function.is(BuiltinId::CudaBallotSync) ? i32 : types.boolean();
    return builtin(function, result, {nullptr, nullptr});
  }
  case BuiltinId::CudaMatchAnySync:
    for (const Type *t : {i32, i64, f32, f64})
      cases.add(i32, {i32, t});
    return fromCases(types, function, cases, args);
  case BuiltinId::CudaMatchAllSync:
    for (const Type *t : {i32, i64, f32, f64})
      cases.add(types.tuple({i32, types.boolean()}), {i32, t});
    return fromCases(types, function, cases, args);
  default:
    llvm_unreachable("not a warp collective");
  }
}

/// numba.cuda.fp16's functions of float16 values.
Typing callHalfFunction(TypeContext &types, const Symbol &function,
                        llvm::ArrayRef<const Type *> args) {
  const Type *f16 = types.floating(16);
  CaseList cases(types);
  llvm::StringRef name = function.name();
  if (name == "hadd" || name == "hsub" || name == "hmul" || name == "hdiv" || name == "hmax" ||
      name == "hmin")
    cases.add(f16, {f16, f16});
  else if (name == "hfma")
    cases.add(f16, {f16, f16, f16});
  else if (name == "heq" || name == "hne" || name == "hgt" || name == "hge" || name == "hlt" ||
           name == "hle")
    cases.add(types.boolean(), {f16, f16});
  else
    cases.add(f16, {f16});
  return fromCases(types, function, cases, args);
}

} // namespace

Typing callCuda(TypeContext &types, const Symbol &function, llvm::ArrayRef<const Type *> args,
                llvm::ArrayRef<std::string> keywords) {
  if (auto vector = vectorTypeOf(types, function))
    return keywords.empty() ? constructVector(types, function, vector->first, vector->second, args)
                            : Typing::error(DiagID::err_unexpected_keyword_argument,
                                            {function.displayName(), keywords.front()});
  if (function.kind == Symbol::Kind::HostOnly)
    return Typing::error(DiagID::err_host_api_in_kernel, {function.displayName()});
  if (function.is(BuiltinId::CudaSharedArray) || function.is(BuiltinId::CudaLocalArray))
    return arrayDeclaration(types, function, args, keywords);
  if (!keywords.empty())
    return Typing::error(DiagID::err_unexpected_keyword_argument,
                         {function.displayName(), keywords.front()});

  const Type *i32 = types.int32();
  const Type *u32 = types.integer(32, false);
  const Type *i64 = types.int64();
  const Type *u64 = types.uint64();
  const Type *f32 = types.float32();
  const Type *f64 = types.float64();
  const Type *none = types.none();
  CaseList cases(types);

  switch (function.id) {
  case BuiltinId::CudaGrid:
  case BuiltinId::CudaGridsize: {
    const auto *ndim = args.size() == 1 ? llvm::dyn_cast<IntegerLiteralType>(args[0]) : nullptr;
    if (!ndim || ndim->bits() < 1 || ndim->bits() > 3)
      return Typing::errorAt(0, DiagID::err_grid_dimension, {function.displayName()});
    unsigned n = static_cast<unsigned>(ndim->bits());
    const Type *result = n == 1 ? i64 : types.tuple(std::vector<const Type *>(n, i64));
    Resolution resolution = builtin(function, result, {nullptr});
    resolution.index = n;
    return resolution;
  }
  case BuiltinId::CudaLdca:
  case BuiltinId::CudaLdcg:
  case BuiltinId::CudaLdcs:
  case BuiltinId::CudaLdlu:
  case BuiltinId::CudaLdcv:
  case BuiltinId::CudaStcg:
  case BuiltinId::CudaStcs:
  case BuiltinId::CudaStwb:
  case BuiltinId::CudaStwt:
    return keywords.empty() ? cacheHinted(types, function, args)
                            : Typing::error(DiagID::err_unexpected_keyword_argument,
                                            {function.displayName(), keywords.front()});
  case BuiltinId::CudaConstArrayLike:
    if (args.size() != 1 || !llvm::isa<ArrayType>(args[0]))
      return noOverload(function, args);
    return builtin(function, args[0], {nullptr});
  case BuiltinId::CudaSyncthreads:
  case BuiltinId::CudaThreadfence:
  case BuiltinId::CudaThreadfenceBlock:
  case BuiltinId::CudaThreadfenceSystem:
    cases.add(none, {});
    return fromCases(types, function, cases, args);
  case BuiltinId::CudaCgThisGrid: {
    if (!args.empty())
      return noOverload(function, args);
    const Symbol &group = BuiltinSymbols::get().symbol(BuiltinId::CudaGridGroup);
    return builtin(function, types.entity(EntityType::EntityKind::Builtin, &group, group.detail),
                   {});
  }
  case BuiltinId::CudaGridGroupSync:
    cases.add(none, {});
    return fromCases(types, function, cases, args);
  case BuiltinId::CudaSyncthreadsCount:
  case BuiltinId::CudaSyncthreadsAnd:
  case BuiltinId::CudaSyncthreadsOr:
    // Numba accepts integer predicates only (not bool).
    if (args.size() != 1 || !isInteger(args[0]))
      return noOverload(function, args);
    return builtin(function, i32, {i32});
  case BuiltinId::CudaSyncwarp:
    cases.add(none, {}).add(none, {i32});
    return fromCases(types, function, cases, args);
  case BuiltinId::CudaActivemask:
  case BuiltinId::CudaLanemaskLt:
    cases.add(u32, {});
    return fromCases(types, function, cases, args);
  case BuiltinId::CudaPopc:
  case BuiltinId::CudaClz:
    for (const Type *t : cases.signedDomain())
      cases.add(t, {t});
    for (const Type *t : cases.unsignedDomain())
      cases.add(t, {t});
    return fromCases(types, function, cases, args);
  case BuiltinId::CudaFfs:
    for (const Type *t : cases.signedDomain())
      cases.add(u32, {t});
    for (const Type *t : cases.unsignedDomain())
      cases.add(u32, {t});
    return fromCases(types, function, cases, args);
  case BuiltinId::CudaBrev:
    cases.add(u32, {u32}).add(u64, {u64});
    return fromCases(types, function, cases, args);
  case BuiltinId::CudaFma:
    cases.add(f32, {f32, f32, f32}).add(f64, {f64, f64, f64});
    return fromCases(types, function, cases, args);
  case BuiltinId::CudaCbrt:
    cases.add(f32, {f32}).add(f64, {f64});
    return fromCases(types, function, cases, args);
  case BuiltinId::CudaSelp: {
    if (args.size() != 3 || args[1] != args[2])
      return noOverload(function, args);
    const Type *value = args[1];
    std::vector<const Type *> allowed = {
        f64, f32, types.integer(16, true), types.integer(16, false), i32, u32, i64, u64};
    if (!llvm::is_contained(allowed, value))
      return noOverload(function, args);
    return builtin(function, value, {nullptr, value, value});
  }
  case BuiltinId::CudaNanosleep:
    cases.add(none, {u32});
    return fromCases(types, function, cases, args);
  case BuiltinId::CudaShflSync:
  case BuiltinId::CudaShflUpSync:
  case BuiltinId::CudaShflDownSync:
  case BuiltinId::CudaShflXorSync:
  case BuiltinId::CudaAllSync:
  case BuiltinId::CudaAnySync:
  case BuiltinId::CudaEqSync:
  case BuiltinId::CudaBallotSync:
  case BuiltinId::CudaMatchAnySync:
  case BuiltinId::CudaMatchAllSync:
    return callWarpCollective(types, function, args);
  default:
    break;
  }
  if (function.qualifiedName.starts_with("numba.cuda.atomic."))
    return atomic(types, function, args);
  if (isBFloat16Binding(function))
    return callBFloat16(types, function, args);
  if (function.qualifiedName.starts_with("numba.cuda.fp16."))
    return callHalfFunction(types, function, args);
  return Typing::error(DiagID::err_unsupported_builtin, {function.displayName()});
}

} // namespace kiln::typing
