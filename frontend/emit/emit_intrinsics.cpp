//===- frontend/emit/emit_intrinsics.cpp - CUDA intrinsics ----------------===//
//
// Calls of numba.cuda's builtins: thread and grid positions, shared and
// local arrays, synchronization, warp functions, bit and math intrinsics,
// loads and stores with cache hints, atomics, vector type constructors and
// the float16 bindings.
//
//===----------------------------------------------------------------------===//

#include "frontend/emit/function_emitter.h"
#include "frontend/typing/compile_time_shape.h"

namespace kiln::emit {

using ssa::Op;

namespace {

/// The intrinsic of a load or store with a cache hint (cuda.ldcg,
/// cuda.stwb, ...); none for other builtins.
std::optional<ir::Intrinsic> cacheHintedAccess(BuiltinId id) {
  using I = ir::Intrinsic;
  static const std::map<BuiltinId, I> cacheHints = {
      {BuiltinId::CudaLdca, I::LoadCa},  {BuiltinId::CudaLdcg, I::LoadCg},
      {BuiltinId::CudaLdcs, I::LoadCs},  {BuiltinId::CudaLdlu, I::LoadLu},
      {BuiltinId::CudaLdcv, I::LoadCv},  {BuiltinId::CudaStcg, I::StoreCg},
      {BuiltinId::CudaStcs, I::StoreCs}, {BuiltinId::CudaStwb, I::StoreWb},
      {BuiltinId::CudaStwt, I::StoreWt}};
  auto hinted = cacheHints.find(id);
  if (hinted == cacheHints.end())
    return std::nullopt;
  return hinted->second;
}

} // namespace

ir::Value *FunctionEmitter::emitCuda(const ssa::Instr *instr, BuiltinId id,
                                     const Resolution &resolution,
                                     llvm::ArrayRef<ir::Value *> args) {
  using I = ir::Intrinsic;
  const Type *result = resolution.result ? plain(resolution.result) : nullptr;
  const Type *int32 = types.int32();
  const Type *uint32 = types.integer(32, false);
  auto markSynchronizes = [&] { function.synchronizes = true; };
  if (const auto *vector = llvm::dyn_cast_or_null<VectorType>(result))
    return emitVectorConstructor(vector, args);
  switch (id) {
  case BuiltinId::CudaThreadIdx:
  case BuiltinId::CudaBlockIdx:
  case BuiltinId::CudaBlockDim:
  case BuiltinId::CudaGridDim: {
    unsigned dimension = static_cast<unsigned>(resolution.detail[0] - 'x');
    return intrinsic(dim3Intrinsic(id), int32, {}, dimension);
  }
  case BuiltinId::CudaLaneid:
    return intrinsic(I::LaneId, int32, {});
  case BuiltinId::CudaWarpsize:
    return intrinsic(I::WarpSize, int32, {});
  case BuiltinId::CudaGrid:
  case BuiltinId::CudaGridsize:
    return emitGridPosition(id, resolution.index, result);
  case BuiltinId::CudaSharedArray:
  case BuiltinId::CudaLocalArray: {
    // The shape is a constant: an integer literal or a tuple of them; none
    // for the dynamic shared memory the launch sizes.
    std::optional<std::vector<uint64_t>> shape =
        typing::compileTimeShape(instr, [&](const ssa::Instr *operand) { return typeOf(operand); });
    ir::Instruction *array = emit(!shape ? ir::Opcode::DynamicSharedArray
                                  : id == BuiltinId::CudaSharedArray ? ir::Opcode::SharedArray
                                                                     : ir::Opcode::LocalArray,
                                  result, {});
    if (shape)
      array->shape = std::move(*shape);
    return array;
  }
  case BuiltinId::CudaConstArrayLike:
    return args[0];
  case BuiltinId::CudaSyncthreads:
    markSynchronizes();
    return intrinsic(I::SyncThreads, nullptr, {});
  case BuiltinId::CudaSyncthreadsCount:
  case BuiltinId::CudaSyncthreadsAnd:
  case BuiltinId::CudaSyncthreadsOr:
    markSynchronizes();
    return intrinsic(id == BuiltinId::CudaSyncthreadsCount ? I::SyncThreadsCount
                     : id == BuiltinId::CudaSyncthreadsAnd ? I::SyncThreadsAnd
                                                           : I::SyncThreadsOr,
                     int32, {convert(args[0], int32)});
  case BuiltinId::CudaSyncwarp:
    markSynchronizes();
    return intrinsic(I::SyncWarp, nullptr,
                     {args.empty() ? constant(uint32, ConstantValue::integer(0xFFFFFFFF))
                                   : convert(args[0], uint32)});
  case BuiltinId::CudaCgThisGrid:
    // As in Numba, asking for the grid group makes a kernel cooperative;
    // the group itself is known at compile time and has no value.
    function.cooperative = true;
    return nullptr;
  case BuiltinId::CudaGridGroupSync:
    markSynchronizes();
    function.cooperative = true;
    return intrinsic(I::GridSync, nullptr, {});
  case BuiltinId::CudaThreadfence:
    return intrinsic(I::ThreadFence, nullptr, {});
  case BuiltinId::CudaThreadfenceBlock:
    return intrinsic(I::ThreadFenceBlock, nullptr, {});
  case BuiltinId::CudaThreadfenceSystem:
    return intrinsic(I::ThreadFenceSystem, nullptr, {});
  case BuiltinId::CudaNanosleep:
    return intrinsic(I::Nanosleep, nullptr, {convert(args[0], uint32)});
  case BuiltinId::CudaShflSync:
  case BuiltinId::CudaShflUpSync:
  case BuiltinId::CudaShflDownSync:
  case BuiltinId::CudaShflXorSync:
    markSynchronizes();
    return intrinsic(id == BuiltinId::CudaShflSync       ? I::ShflIdx
                     : id == BuiltinId::CudaShflUpSync   ? I::ShflUp
                     : id == BuiltinId::CudaShflDownSync ? I::ShflDown
                                                         : I::ShflXor,
                     result, {convert(args[0], uint32), args[1], convert(args[2], uint32)});
  case BuiltinId::CudaAllSync:
  case BuiltinId::CudaAnySync:
  case BuiltinId::CudaEqSync:
  case BuiltinId::CudaBallotSync:
    markSynchronizes();
    return intrinsic(id == BuiltinId::CudaAllSync   ? I::VoteAll
                     : id == BuiltinId::CudaAnySync ? I::VoteAny
                     : id == BuiltinId::CudaEqSync  ? I::VoteUni
                                                    : I::VoteBallot,
                     result, {convert(args[0], uint32), convert(args[1], types.boolean())});
  case BuiltinId::CudaMatchAnySync:
  case BuiltinId::CudaMatchAllSync:
    markSynchronizes();
    return intrinsic(id == BuiltinId::CudaMatchAnySync ? I::MatchAny : I::MatchAll, result,
                     {convert(args[0], uint32), args[1]});
  case BuiltinId::CudaActivemask:
    return intrinsic(I::ActiveMask, result, {});
  case BuiltinId::CudaLanemaskLt:
    return intrinsic(I::LanemaskLt, result, {});
  case BuiltinId::CudaPopc:
    // Also int.bit_count(), an attribute call on the value itself.
    return intrinsic(I::Popc, result,
                     {instr->op != Op::Call ? valueOf(instr->operands[0])
                      : args.empty()        ? methodReceiver(instr)
                                            : args[0]});
  case BuiltinId::CudaBrev:
    return intrinsic(I::Brev, result, args);
  case BuiltinId::CudaClz:
    return intrinsic(I::Clz, result, args);
  case BuiltinId::CudaFfs:
    return intrinsic(I::Ffs, result, args);
  case BuiltinId::CudaFma:
    return intrinsic(I::Fma, result, args);
  case BuiltinId::CudaCbrt:
    return intrinsic(I::Cbrt, result, args);
  case BuiltinId::CudaSelp:
    return emit(ir::Opcode::Select, result, {convert(args[0], types.boolean()), args[1], args[2]});
  default:
    break;
  }
  if (std::optional<I> hint = cacheHintedAccess(id))
    return emitCacheHintedAccess(instr, *hint, result, args);
  if (BuiltinSymbols::get().symbol(id).qualifiedName.starts_with("numba.cuda.atomic."))
    return emitAtomic(instr, id, result, args);
  // cuda.fp16: cuda_fp16.h's functions, as cuda_bf16.h's of the same names.
  return emitHalfBinding(BuiltinSymbols::get().symbol(id).name(), result, args);
}

ir::Value *FunctionEmitter::emitVectorConstructor(const VectorType *vector,
                                                  llvm::ArrayRef<ir::Value *> args) {
  std::vector<ir::Value *> elements;
  for (ir::Value *arg : args) {
    const auto *part = llvm::dyn_cast<VectorType>(arg->type());
    if (!part) {
      elements.push_back(convert(arg, vector->elementType()));
      continue;
    }
    for (unsigned i = 0; i < part->size(); ++i) {
      ir::Instruction *get = emit(ir::Opcode::TupleGet, part->elementType(), {arg});
      get->index = i;
      elements.push_back(get);
    }
  }
  return emit(ir::Opcode::TupleMake, vector, elements);
}

ir::Value *FunctionEmitter::emitGridPosition(BuiltinId id, unsigned dimensions,
                                             const Type *result) {
  using I = ir::Intrinsic;
  const Type *int32 = types.int32();
  const Type *int64 = types.int64();
  // As Numba: 64-bit arithmetic on the sign-extended 32-bit registers.
  std::vector<ir::Value *> dims;
  for (unsigned d = 0; d < dimensions; ++d) {
    ir::Value *blockDim = convert(intrinsic(I::BlockDim, int32, {}, d), int64);
    if (id == BuiltinId::CudaGrid) {
      ir::Value *thread = convert(intrinsic(I::ThreadIdx, int32, {}, d), int64);
      ir::Value *block = convert(intrinsic(I::BlockIdx, int32, {}, d), int64);
      dims.push_back(
          emit(ir::Opcode::Add, int64, {emit(ir::Opcode::Mul, int64, {blockDim, block}), thread}));
    } else {
      ir::Value *gridDim = convert(intrinsic(I::GridDim, int32, {}, d), int64);
      dims.push_back(emit(ir::Opcode::Mul, int64, {blockDim, gridDim}));
    }
  }
  return dims.size() == 1 ? dims[0] : emit(ir::Opcode::TupleMake, result, dims);
}

ir::Value *FunctionEmitter::emitCacheHintedAccess(const ssa::Instr *instr, ir::Intrinsic hint,
                                                  const Type *result,
                                                  llvm::ArrayRef<ir::Value *> args) {
  const auto *arrayType = llvm::cast<ArrayType>(args[0]->type());
  std::vector<ir::Value *> operands{args[0]};
  for (ir::Value *index : indexValues(instr->operands[2]))
    operands.push_back(index);
  if (args.size() == 3)
    operands.push_back(convert(args[2], arrayType->elementType()));
  return intrinsic(hint, args.size() == 3 ? nullptr : result, operands, arrayType->rank());
}

ir::Value *FunctionEmitter::emitAtomic(const ssa::Instr *instr, BuiltinId id, const Type *result,
                                       llvm::ArrayRef<ir::Value *> args) {
  using I = ir::Intrinsic;
  static const std::map<BuiltinId, I> atomics = {
      {BuiltinId::CudaAtomicAdd, I::AtomicAdd},
      {BuiltinId::CudaAtomicSub, I::AtomicSub},
      {BuiltinId::CudaAtomicAnd, I::AtomicAnd},
      {BuiltinId::CudaAtomicOr, I::AtomicOr},
      {BuiltinId::CudaAtomicXor, I::AtomicXor},
      {BuiltinId::CudaAtomicInc, I::AtomicInc},
      {BuiltinId::CudaAtomicDec, I::AtomicDec},
      {BuiltinId::CudaAtomicExch, I::AtomicExch},
      {BuiltinId::CudaAtomicMax, I::AtomicMax},
      {BuiltinId::CudaAtomicMin, I::AtomicMin},
      {BuiltinId::CudaAtomicNanmax, I::AtomicNanMax},
      {BuiltinId::CudaAtomicNanmin, I::AtomicNanMin},
      {BuiltinId::CudaAtomicCas, I::AtomicCas},
      {BuiltinId::CudaAtomicCompareAndSwap, I::AtomicCas}};
  ir::Value *array = args[0];
  const auto *arrayType = llvm::cast<ArrayType>(array->type());
  std::vector<ir::Value *> operands{array};
  if (id == BuiltinId::CudaAtomicCompareAndSwap) {
    operands.push_back(intConstant(types.int64(), 0)); // compare_and_swap works on element 0
  } else {
    for (ir::Value *index : indexValues(instr->operands[2]))
      operands.push_back(index);
  }
  size_t firstValue = id == BuiltinId::CudaAtomicCompareAndSwap ? 1 : 2;
  for (size_t i = firstValue; i < args.size(); ++i)
    operands.push_back(convert(args[i], arrayType->elementType()));
  return intrinsic(atomics.at(id), result, operands, arrayType->rank());
}

} // namespace kiln::emit
