//===- backend/host/host_target.cpp - Target hooks for the CPU engine ----------===//
//
// The hooks the lowering calls, the marks they leave (services, launch
// indices, index checks, the thread parameter), and the copies of a kernel
// body the entry points call (host_kernel_entries.h writes those).
//
//===----------------------------------------------------------------------===//

#include "backend/host/host_target.h"

#include "backend/codegen/math_functions.h"
#include "backend/host/host_barrier_regions.h"
#include "backend/host/host_kernel_entries.h"
#include "backend/host/host_narrow_float_conversions.h"
#include "ir/reachable_functions.h"
#include "module/cpu_kernel_abi.h"

#include <llvm/ADT/SetVector.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/LoopUtils.h>

#include <cstddef>

namespace kiln::backend {

using I = ir::Intrinsic;

/// The function whose calls stand for "this copy of the code checks
/// indices" until splitIndexChecks() resolves them (in a build of both
/// copies; otherwise the checks are the constant the kernel's option says).
static constexpr llvm::StringLiteral indexChecksMarker = "kiln.index_checks";

std::string threadEntryName(llvm::StringRef kernelName) {
  return kernelName.str() + "_thread";
}
std::string blockEntryName(llvm::StringRef kernelName) {
  return kernelName.str() + "_block";
}

void HostTargetHooks::configureModule(llvm::Module &module, const ir::Function &kernel) {
  module.setTargetTriple(triple);
  module.setDataLayout(dataLayout);
  reportsExceptions = kernel.options.debug;
  checksByDefault = kernel.options.boundscheck;
  checksAnyIndex = false;
}

/// A field of the KilnCpuThread the site's function received.
llvm::Value *threadFieldAddress(llvm::IRBuilder<> &builder, llvm::Value *thread, size_t offset) {
  return builder.CreateConstInBoundsGEP1_64(builder.getInt8Ty(), thread, offset);
}

static llvm::Value *threadField(HookSite &site, size_t offset) {
  return threadFieldAddress(site.builder, site.threadContext, offset);
}

static llvm::Value *loadThreadField(HookSite &site, llvm::Type *type, size_t offset) {
  return site.builder.CreateAlignedLoad(type, threadField(site, offset),
                                        llvm::Align(type->isPointerTy() ? 8 : 4));
}

/// Calls of engine services carry this mark, naming the service by its
/// offset in KilnCpuServices.
static constexpr llvm::StringLiteral serviceMarker = "kiln.service";

std::optional<size_t> serviceOffsetOf(const llvm::CallInst &call) {
  const llvm::MDNode *node = call.getMetadata(serviceMarker);
  if (!node)
    return std::nullopt;
  return llvm::mdconst::extract<llvm::ConstantInt>(node->getOperand(0))->getZExtValue();
}

llvm::CallInst *callHostService(llvm::IRBuilder<> &builder, llvm::Value *thread, size_t offset,
                                llvm::Type *result, llvm::ArrayRef<llvm::Value *> arguments) {
  llvm::Value *services = builder.CreateAlignedLoad(
      builder.getPtrTy(), threadFieldAddress(builder, thread, offsetof(KilnCpuThread, services)),
      llvm::Align(8));
  llvm::Value *slot = builder.CreateConstInBoundsGEP1_64(builder.getInt8Ty(), services, offset);
  llvm::Value *function = builder.CreateAlignedLoad(builder.getPtrTy(), slot, llvm::Align(8));
  std::vector<llvm::Value *> values{thread};
  values.insert(values.end(), arguments.begin(), arguments.end());
  std::vector<llvm::Type *> parameterTypes;
  for (llvm::Value *value : values)
    parameterTypes.push_back(value->getType());
  auto *type = llvm::FunctionType::get(result, parameterTypes, false);
  llvm::CallInst *call = builder.CreateCall(type, function, values);
  call->setMetadata(serviceMarker,
                    llvm::MDNode::get(builder.getContext(),
                                      llvm::ConstantAsMetadata::get(builder.getInt64(offset))));
  // Like their NVPTX counterparts: calls that other threads take part in
  // must not be merged across branches or hoisted out of them (activemask
  // tells its call sites apart).
  call->addFnAttr(llvm::Attribute::Convergent);
  return call;
}

/// Calls the engine service at `offset` in KilnCpuServices with the site's
/// thread and `arguments`.
static llvm::CallInst *callService(HookSite &site, size_t offset, llvm::Type *result,
                                   llvm::ArrayRef<llvm::Value *> arguments) {
  return callHostService(site.builder, site.threadContext, offset, result, arguments);
}

/// Loads of launch indices and dimensions that the kernel's code reads carry
/// this mark: !{i32 which, i32 dimension}, `which` an ir::Intrinsic. The
/// plain thread entry reads them as they are; the fast paths take the
/// thread's indices in registers (specializeForThreadLoop), a run of
/// blocks blockIdx.x too (host_block_runs.h), and tell LLVM the ranges the
/// launch limits give the rest (setLaunchIndexRanges).
static constexpr llvm::StringLiteral launchIndexMarker = "kiln.launch.index";
static constexpr unsigned laneSlot = 3;

namespace {

/// What a marked load reads.
struct LaunchIndexRead {
  I which;
  unsigned dimension;
};

} // namespace

static std::optional<LaunchIndexRead> launchIndexOf(const llvm::LoadInst &load) {
  const llvm::MDNode *node = load.getMetadata(launchIndexMarker);
  if (!node)
    return std::nullopt;
  auto field = [&](unsigned i) {
    return llvm::mdconst::extract<llvm::ConstantInt>(node->getOperand(i))->getZExtValue();
  };
  return LaunchIndexRead{static_cast<I>(field(0)), static_cast<unsigned>(field(1))};
}

bool readsBlockIndexX(const llvm::LoadInst &load) {
  std::optional<LaunchIndexRead> read = launchIndexOf(load);
  return read && read->which == I::BlockIdx && read->dimension == 0;
}

/// The slot of specializeForThreadLoop's parameters that replaces `read`:
/// threadIdx.x, .y, .z or laneId; nullopt for what all threads of a block
/// share.
static std::optional<unsigned> threadIndexSlot(const LaunchIndexRead &read) {
  if (read.which == I::ThreadIdx)
    return read.dimension;
  if (read.which == I::LaneId)
    return laneSlot;
  return std::nullopt;
}

/// [lowest, highest] of a launch index or dimension, by the launch limits.
static std::pair<uint32_t, uint32_t> indexRange(I which, unsigned dimension) {
  static constexpr uint32_t blockLimits[3] = {KILN_CPU_MAX_BLOCK_DIM_X, KILN_CPU_MAX_BLOCK_DIM_Y,
                                              KILN_CPU_MAX_BLOCK_DIM_Z};
  static constexpr uint32_t gridLimits[3] = {KILN_CPU_MAX_GRID_DIM_X, KILN_CPU_MAX_GRID_DIM_Y,
                                             KILN_CPU_MAX_GRID_DIM_Z};
  switch (which) {
  case I::ThreadIdx:
    return {0, blockLimits[dimension] - 1};
  case I::BlockIdx:
    return {0, gridLimits[dimension] - 1};
  case I::BlockDim:
    return {1, blockLimits[dimension]};
  case I::GridDim:
    return {1, gridLimits[dimension]};
  case I::LaneId:
    return {0, KILN_CPU_WARP_SIZE - 1};
  default:
    return {KILN_CPU_WARP_SIZE, KILN_CPU_WARP_SIZE};
  }
}

/// Tells LLVM the range `load` of index `which` lies in: indices are never
/// negative, so Numba's wraparound of negative array indices folds away.
static void setIndexRange(llvm::LoadInst &load, I which, unsigned dimension) {
  auto [lowest, highest] = indexRange(which, dimension);
  load.setMetadata(
      llvm::LLVMContext::MD_range,
      llvm::MDBuilder(load.getContext())
          .createRange(llvm::APInt(32, lowest), llvm::APInt(32, uint64_t(highest) + 1)));
}

void setLaunchIndexRanges(llvm::Function &fastPath) {
  for (llvm::Instruction &instruction : llvm::instructions(fastPath))
    if (auto *load = llvm::dyn_cast<llvm::LoadInst>(&instruction))
      if (std::optional<LaunchIndexRead> read = launchIndexOf(*load))
        setIndexRange(*load, read->which, read->dimension);
}

/// A load of launch index or dimension `which` of `thread`, as it is.
static llvm::LoadInst *loadLaunchField(llvm::IRBuilder<> &builder, llvm::Value *thread, I which,
                                       unsigned dimension) {
  size_t offset;
  switch (which) {
  case I::ThreadIdx:
    offset = offsetof(KilnCpuThread, threadIdx) + 4 * dimension;
    break;
  case I::BlockIdx:
    offset = offsetof(KilnCpuThread, blockIdx) + 4 * dimension;
    break;
  case I::BlockDim:
    offset = offsetof(KilnCpuThread, blockDim) + 4 * dimension;
    break;
  case I::GridDim:
    offset = offsetof(KilnCpuThread, gridDim) + 4 * dimension;
    break;
  case I::LaneId:
    offset = offsetof(KilnCpuThread, laneId);
    break;
  default:
    offset = offsetof(KilnCpuThread, warpSize);
    break;
  }
  return builder.CreateAlignedLoad(builder.getInt32Ty(),
                                   threadFieldAddress(builder, thread, offset), llvm::Align(4));
}

llvm::LoadInst *loadLaunchIndex(llvm::IRBuilder<> &builder, llvm::Value *thread, I which,
                                unsigned dimension) {
  llvm::LoadInst *load = loadLaunchField(builder, thread, which, dimension);
  setIndexRange(*load, which, dimension);
  return load;
}

llvm::Value *HostTargetHooks::readIndex(HookSite &site, I which, unsigned dimension) {
  llvm::LoadInst *load = loadLaunchField(site.builder, site.threadContext, which, dimension);
  llvm::Type *i32 = site.builder.getInt32Ty();
  load->setMetadata(
      launchIndexMarker,
      llvm::MDNode::get(
          load->getContext(),
          {llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(i32, static_cast<uint64_t>(which))),
           llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(i32, dimension))}));
  return load;
}

void HostTargetHooks::syncThreads(HookSite &site) {
  markBarrier(
      *callService(site, offsetof(KilnCpuServices, syncthreads), site.builder.getVoidTy(), {}),
      KILN_BARRIER_SYNC);
}

llvm::Value *HostTargetHooks::syncThreadsReduce(HookSite &site, I which, llvm::Value *predicate) {
  uint32_t mode = which == I::SyncThreadsCount ? KILN_BARRIER_COUNT
                  : which == I::SyncThreadsAnd ? KILN_BARRIER_AND
                                               : KILN_BARRIER_OR;
  llvm::CallInst *call =
      callService(site, offsetof(KilnCpuServices, syncthreadsReduce), site.builder.getInt32Ty(),
                  {site.builder.getInt32(mode), predicate});
  markBarrier(*call, mode);
  reducesAtBarriers = true;
  return call;
}

void HostTargetHooks::syncWarp(HookSite &site, llvm::Value *mask) {
  usesWarpCollectives = true;
  callService(site, offsetof(KilnCpuServices, syncwarp), site.builder.getVoidTy(), {mask});
}

void HostTargetHooks::gridSync(HookSite &site) {
  waitsForOthers = true;
  callService(site, offsetof(KilnCpuServices, syncGrid), site.builder.getVoidTy(), {});
}

void HostTargetHooks::fence(HookSite &site, I) {
  site.builder.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent);
}

void HostTargetHooks::nanosleep(HookSite &site, llvm::Value *nanoseconds) {
  waitsForOthers = true;
  callService(site, offsetof(KilnCpuServices, nanosleep), site.builder.getVoidTy(), {nanoseconds});
}

llvm::Value *HostTargetHooks::shuffle32(HookSite &site, I mode, llvm::Value *mask,
                                        llvm::Value *value, llvm::Value *lane) {
  usesWarpCollectives = true;
  llvm::IRBuilder<> &builder = site.builder;
  uint32_t which = mode == I::ShflIdx    ? KILN_SHFL_IDX
                   : mode == I::ShflUp   ? KILN_SHFL_UP
                   : mode == I::ShflDown ? KILN_SHFL_DOWN
                                         : KILN_SHFL_BFLY;
  // The same c operand as on the GPU (see NvptxTargetHooks::shuffle32).
  uint32_t clamp = mode == I::ShflUp ? 0 : 0x1f;
  llvm::Value *result =
      callService(site, offsetof(KilnCpuServices, shuffle), builder.getInt64Ty(),
                  {mask, builder.getInt32(which), builder.CreateZExt(value, builder.getInt64Ty()),
                   lane, builder.getInt32(clamp)});
  return builder.CreateTrunc(result, builder.getInt32Ty());
}

llvm::Value *HostTargetHooks::vote(HookSite &site, I which, llvm::Value *mask,
                                   llvm::Value *predicate) {
  usesWarpCollectives = true;
  llvm::IRBuilder<> &builder = site.builder;
  uint32_t mode = which == I::VoteAll   ? KILN_VOTE_ALL
                  : which == I::VoteAny ? KILN_VOTE_ANY
                  : which == I::VoteUni ? KILN_VOTE_UNI
                                        : KILN_VOTE_BALLOT;
  llvm::Value *result = callService(
      site, offsetof(KilnCpuServices, vote), builder.getInt32Ty(),
      {mask, builder.getInt32(mode), builder.CreateZExt(predicate, builder.getInt32Ty())});
  if (which == I::VoteBallot)
    return result;
  return builder.CreateICmpNE(result, builder.getInt32(0));
}

llvm::Value *HostTargetHooks::matchAny(HookSite &site, llvm::Value *mask, llvm::Value *value) {
  usesWarpCollectives = true;
  return callService(site, offsetof(KilnCpuServices, matchAny), site.builder.getInt32Ty(),
                     {mask, site.builder.CreateZExt(value, site.builder.getInt64Ty())});
}

std::pair<llvm::Value *, llvm::Value *> HostTargetHooks::matchAll(HookSite &site, llvm::Value *mask,
                                                                  llvm::Value *value) {
  usesWarpCollectives = true;
  llvm::IRBuilder<> &builder = site.builder;
  llvm::Function *function = builder.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&function->getEntryBlock(), function->getEntryBlock().begin());
  llvm::AllocaInst *predicate = entry.CreateAlloca(builder.getInt32Ty());
  llvm::Value *lanes =
      callService(site, offsetof(KilnCpuServices, matchAll), builder.getInt32Ty(),
                  {mask, builder.CreateZExt(value, builder.getInt64Ty()), predicate});
  llvm::Value *agreed = builder.CreateICmpNE(builder.CreateLoad(builder.getInt32Ty(), predicate),
                                             builder.getInt32(0));
  return {lanes, agreed};
}

llvm::Value *HostTargetHooks::activeMask(HookSite &site) {
  waitsForOthers = true;
  return callService(site, offsetof(KilnCpuServices, activeMask), site.builder.getInt32Ty(), {});
}

llvm::Value *HostTargetHooks::lanemaskLt(HookSite &site) {
  llvm::IRBuilder<> &builder = site.builder;
  llvm::Value *lane = readIndex(site, I::LaneId, 0);
  return builder.CreateSub(builder.CreateShl(builder.getInt32(1), lane), builder.getInt32(1));
}

llvm::Value *HostTargetHooks::sharedArray(HookSite &site, const SharedSlot &slot) {
  llvm::Value *base =
      loadThreadField(site, site.builder.getPtrTy(), offsetof(KilnCpuThread, sharedMemory));
  return site.builder.CreateConstInBoundsGEP1_64(site.builder.getInt8Ty(), base, slot.offset);
}

// The host has no cache operators: a plain load or store.
llvm::Value *HostTargetHooks::cacheHintedLoad(HookSite &site, ir::Intrinsic, llvm::Value *address,
                                              llvm::Type *type, llvm::Align alignment) {
  return site.builder.CreateAlignedLoad(type, address, alignment);
}

void HostTargetHooks::cacheHintedStore(HookSite &site, ir::Intrinsic, llvm::Value *address,
                                       llvm::Value *value, llvm::Align alignment) {
  site.builder.CreateAlignedStore(value, address, alignment);
}

unsigned HostTargetHooks::constantDataAddressSpace() const {
  return 0;
}

std::pair<llvm::Value *, llvm::Value *> HostTargetHooks::dynamicSharedMemory(HookSite &site) {
  return {
      loadThreadField(site, site.builder.getPtrTy(), offsetof(KilnCpuThread, dynamicSharedMemory)),
      loadThreadField(site, site.builder.getInt32Ty(),
                      offsetof(KilnCpuThread, dynamicSharedBytes))};
}

std::optional<std::string> HostTargetHooks::mathFunction(I which, unsigned bits, bool) {
  if (which == I::Rsqrt)
    return std::nullopt; // no C function: 1 / sqrt(x)
  return mathBaseName(which).str() + (bits == 32 ? "f" : "");
}

std::optional<std::string> HostTargetHooks::externalCallProblem(llvm::StringRef symbol) const {
  if (!cudaCode)
    return std::string("it is defined in PTX or device code, which only a GPU runs");
  return cudaCode->callProblem(symbol);
}

static llvm::Value *constantString(HookSite &site, llvm::StringRef text) {
  return site.builder.CreateGlobalStringPtr(text, "str", 0,
                                            site.builder.GetInsertBlock()->getModule());
}

void HostTargetHooks::print(HookSite &site, llvm::ArrayRef<PrintArgument> arguments) {
  // An array of KilnPrintItem: {u32 kind, u32 flags, 8-byte value, f64 imag}.
  llvm::IRBuilder<> &builder = site.builder;
  llvm::LLVMContext &context = builder.getContext();
  auto *item = llvm::StructType::get(context, {builder.getInt32Ty(), builder.getInt32Ty(),
                                               builder.getInt64Ty(), builder.getDoubleTy()});
  static_assert(sizeof(KilnPrintItem) == 24, "KilnPrintItem layout");
  auto *arrayType = llvm::ArrayType::get(item, std::max<size_t>(arguments.size(), 1));
  llvm::Function *function = builder.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&function->getEntryBlock(), function->getEntryBlock().begin());
  llvm::AllocaInst *items = entry.CreateAlloca(arrayType);
  items->setAlignment(llvm::Align(8));
  for (unsigned i = 0; i < arguments.size(); ++i) {
    const PrintArgument &argument = arguments[i];
    uint32_t kind = KILN_PRINT_STRING;
    llvm::Value *bits = nullptr;
    switch (argument.kind) {
    case PrintArgument::Kind::Text:
      bits = builder.CreatePtrToInt(constantString(site, argument.text), builder.getInt64Ty());
      break;
    case PrintArgument::Kind::Int64:
      kind = KILN_PRINT_INT64;
      bits = argument.value;
      break;
    case PrintArgument::Kind::UInt64:
      kind = KILN_PRINT_UINT64;
      bits = argument.value;
      break;
    case PrintArgument::Kind::Float64:
      kind = KILN_PRINT_FLOAT64;
      bits = builder.CreateBitCast(argument.value, builder.getInt64Ty());
      break;
    case PrintArgument::Kind::Bool:
      kind = KILN_PRINT_BOOL;
      bits = builder.CreateZExt(argument.value, builder.getInt64Ty());
      break;
    }
    llvm::Value *slot = builder.CreateConstInBoundsGEP2_32(arrayType, items, 0, i);
    builder.CreateStore(builder.getInt32(kind), builder.CreateStructGEP(item, slot, 0));
    builder.CreateStore(builder.getInt32(argument.joined ? KILN_PRINT_JOINED : 0),
                        builder.CreateStructGEP(item, slot, 1));
    builder.CreateStore(bits, builder.CreateStructGEP(item, slot, 2));
    builder.CreateStore(llvm::ConstantFP::get(builder.getDoubleTy(), 0.0),
                        builder.CreateStructGEP(item, slot, 3));
  }
  callService(site, offsetof(KilnCpuServices, print), builder.getVoidTy(),
              {items, builder.getInt32(static_cast<uint32_t>(arguments.size()))});
}

void HostTargetHooks::raise(HookSite &site, llvm::StringRef exceptionClass,
                            llvm::StringRef message) {
  // As in Numba, where a raise in any function returns an error status up
  // to the kernel, the kernel's debug=True decides whether the launch
  // reports it; otherwise the thread just ends.
  if (reportsExceptions)
    callService(site, offsetof(KilnCpuServices, raiseException), site.builder.getVoidTy(),
                {constantString(site, exceptionClass), constantString(site, message)});
  else
    callService(site, offsetof(KilnCpuServices, exitThread), site.builder.getVoidTy(), {});
  site.builder.CreateUnreachable();
}

void HostTargetHooks::raiseUnsupported(HookSite &site, llvm::StringRef message) {
  callService(site, offsetof(KilnCpuServices, raiseException), site.builder.getVoidTy(),
              {constantString(site, "NotImplementedError"), constantString(site, message)});
  site.builder.CreateUnreachable();
}

llvm::Value *HostTargetHooks::indexChecksEnabled(HookSite &site) {
  checksAnyIndex = true;
  if (!switchableIndexChecks)
    return site.builder.getInt1(checksByDefault);
  llvm::Module &module = *site.builder.GetInsertBlock()->getModule();
  llvm::FunctionCallee marker = module.getOrInsertFunction(
      indexChecksMarker, llvm::FunctionType::get(site.builder.getInt1Ty(), false));
  return site.builder.CreateCall(marker);
}

IndexCheckCopies HostTargetHooks::indexCheckCopies() const {
  if (!checksAnyIndex || switchableIndexChecks)
    return IndexCheckCopies::Both;
  return checksByDefault ? IndexCheckCopies::Checked : IndexCheckCopies::Unchecked;
}

void HostTargetHooks::raiseIndexError(HookSite &site, llvm::StringRef array, llvm::Value *index,
                                      llvm::Value *axis, llvm::ArrayRef<llvm::Value *> shape) {
  llvm::IRBuilder<> &builder = site.builder;
  llvm::Function *function = builder.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&function->getEntryBlock(), function->getEntryBlock().begin());
  auto *shapeType = llvm::ArrayType::get(builder.getInt64Ty(), std::max<size_t>(shape.size(), 1));
  llvm::AllocaInst *extents = entry.CreateAlloca(shapeType);
  extents->setAlignment(llvm::Align(8));
  for (unsigned d = 0; d < shape.size(); ++d)
    builder.CreateStore(shape[d], builder.CreateConstInBoundsGEP2_32(shapeType, extents, 0, d));
  callService(site, offsetof(KilnCpuServices, raiseIndexError), builder.getVoidTy(),
              {constantString(site, array), builder.getInt32(messageSite(site.operation)), index,
               axis, builder.getInt32(static_cast<uint32_t>(shape.size())), extents});
  builder.CreateUnreachable();
}

uint32_t HostTargetHooks::messageSite(uint32_t operation) {
  auto [found, added] = siteIndices.try_emplace(operation, static_cast<uint32_t>(sites.size()));
  if (added)
    sites.push_back(operation);
  return found->second;
}

/// Marks the KilnCpuThread parameter (the first) of the entries and of every
/// function the lowering made, not the helpers the back end adds (half
/// conversions). On the parameter: the optimizer may remove a parameter a
/// function does not use, and the mark goes with it; the function's own
/// mark says that it took the thread.
static constexpr llvm::StringLiteral threadParameterAttribute = "kiln-thread-context";
static constexpr llvm::StringLiteral threadFunctionAttribute = "kiln-takes-thread";

void markTakesThread(llvm::Function &function) {
  function.addParamAttr(0, llvm::Attribute::get(function.getContext(), threadParameterAttribute));
  function.addFnAttr(threadFunctionAttribute);
}

void unmarkTakesThread(llvm::Function &function) {
  function.removeParamAttr(0, threadParameterAttribute);
  function.removeFnAttr(threadFunctionAttribute);
}

bool takesThread(const llvm::Function &function) {
  return function.arg_size() > 0 &&
         function.getAttributes().hasParamAttr(0, threadParameterAttribute);
}

bool tookThread(const llvm::Function &function) {
  return function.hasFnAttribute(threadFunctionAttribute);
}

//===----------------------------------------------------------------------===//
// The kernel's bodies for its entry points
//===----------------------------------------------------------------------===//

/// Gives every function of `module` an unchecked copy when any has index
/// checks, resolving the marker calls to true in the originals and false in
/// the copies. Returns the copy of `kernel`, or null when nothing checks.
static llvm::Function *splitIndexChecks(llvm::Module &module, llvm::Function &kernel) {
  llvm::Function *marker = module.getFunction(indexChecksMarker);
  if (!marker)
    return nullptr;
  if (marker->use_empty()) {
    marker->eraseFromParent();
    return nullptr;
  }
  std::vector<llvm::Function *> originals;
  for (llvm::Function &function : module)
    if (!function.isDeclaration())
      originals.push_back(&function);
  llvm::ValueToValueMapTy map;
  std::vector<llvm::Function *> copies;
  for (llvm::Function *original : originals) {
    llvm::Function *copy =
        llvm::Function::Create(original->getFunctionType(), llvm::GlobalValue::InternalLinkage,
                               original->getName() + ".unchecked", module);
    map[original] = copy;
    copies.push_back(copy);
  }
  for (size_t i = 0; i < originals.size(); ++i) {
    llvm::Function::arg_iterator argument = copies[i]->arg_begin();
    for (llvm::Argument &from : originals[i]->args())
      map[&from] = &*argument++;
    llvm::SmallVector<llvm::ReturnInst *, 4> returns;
    // GlobalChanges: each copy gets a debug-info subprogram of its own.
    llvm::CloneFunctionInto(copies[i], originals[i], map,
                            llvm::CloneFunctionChangeType::GlobalChanges, returns);
    copies[i]->setLinkage(llvm::GlobalValue::InternalLinkage);
  }
  llvm::SmallPtrSet<llvm::Function *, 8> unchecked(copies.begin(), copies.end());
  llvm::LLVMContext &context = module.getContext();
  for (llvm::Use &use : llvm::make_early_inc_range(marker->uses())) {
    auto *call = llvm::cast<llvm::CallInst>(use.getUser());
    call->replaceAllUsesWith(unchecked.contains(call->getFunction())
                                 ? llvm::ConstantInt::getFalse(context)
                                 : llvm::ConstantInt::getTrue(context));
    call->eraseFromParent();
  }
  marker->eraseFromParent();
  return llvm::cast<llvm::Function>(map[&kernel]);
}

/// More inlined calls than any kernel has: past it, a call is recursive.
static constexpr unsigned maxInlinedCalls = 10000;

bool inlineAllCalls(llvm::Function &function) {
  for (unsigned inlined = 0; inlined < maxInlinedCalls; ++inlined) {
    llvm::CallBase *call = nullptr;
    for (llvm::Instruction &instruction : llvm::instructions(function))
      if (auto *candidate = llvm::dyn_cast<llvm::CallBase>(&instruction))
        if (llvm::Function *callee = candidate->getCalledFunction();
            callee && !callee->isDeclaration()) {
          call = candidate;
          break;
        }
    if (!call)
      return true;
    llvm::InlineFunctionInfo info;
    if (!llvm::InlineFunction(*call, info).isSuccess())
      return false;
  }
  return false;
}

llvm::Function *specializeForThreadLoop(llvm::Function &body) {
  llvm::Module &module = *body.getParent();
  llvm::LLVMContext &context = module.getContext();
  llvm::Type *i32 = llvm::Type::getInt32Ty(context);
  std::vector<llvm::Type *> parameters{body.getFunctionType()->getParamType(0), i32, i32, i32, i32};
  for (unsigned i = 1; i < body.arg_size(); ++i)
    parameters.push_back(body.getFunctionType()->getParamType(i));
  auto *type = llvm::FunctionType::get(body.getReturnType(), parameters, false);
  llvm::Function *loopBody = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage,
                                                    body.getName() + ".loop", module);
  llvm::ValueToValueMapTy map;
  map[body.getArg(0)] = loopBody->getArg(0);
  for (unsigned i = 1; i < body.arg_size(); ++i)
    map[body.getArg(i)] = loopBody->getArg(i + laneSlot + 1);
  llvm::SmallVector<llvm::ReturnInst *, 4> returns;
  llvm::CloneFunctionInto(loopBody, &body, map, llvm::CloneFunctionChangeType::GlobalChanges,
                          returns);
  loopBody->setLinkage(llvm::GlobalValue::InternalLinkage);
  if (!inlineAllCalls(*loopBody)) {
    loopBody->eraseFromParent();
    return nullptr;
  }
  llvm::Value *thread = loopBody->getArg(0);
  std::vector<llvm::LoadInst *> reads;
  std::vector<llvm::CallInst *> calls;
  for (llvm::Instruction &instruction : llvm::instructions(*loopBody)) {
    if (auto *load = llvm::dyn_cast<llvm::LoadInst>(&instruction))
      if (std::optional<LaunchIndexRead> read = launchIndexOf(*load);
          read && threadIndexSlot(*read))
        reads.push_back(load);
    // A barrier needs no indices: region loops remove it.
    if (auto *call = llvm::dyn_cast<llvm::CallInst>(&instruction);
        call && llvm::is_contained(call->args(), thread) && !barrierModeOf(*call))
      calls.push_back(call);
  }
  for (llvm::LoadInst *read : reads) {
    read->replaceAllUsesWith(loopBody->getArg(1 + *threadIndexSlot(*launchIndexOf(*read))));
    read->eraseFromParent();
  }
  setLaunchIndexRanges(*loopBody);
  for (llvm::CallInst *call : calls) {
    llvm::IRBuilder<> builder(call);
    for (unsigned slot = 0; slot <= laneSlot; ++slot) {
      size_t offset = slot == laneSlot ? offsetof(KilnCpuThread, laneId)
                                       : offsetof(KilnCpuThread, threadIdx) + 4 * slot;
      builder.CreateAlignedStore(loopBody->getArg(1 + slot),
                                 threadFieldAddress(builder, thread, offset), llvm::Align(4));
    }
  }
  return loopBody;
}

void HostTargetHooks::finishKernel(llvm::Function &kernel, const ir::Function &function,
                                   llvm::ArrayRef<KernelParameter> parameters) {
  llvm::Module &module = *kernel.getParent();
  llvm::Function *uncheckedKernel = splitIndexChecks(module, kernel);
  for (llvm::Function &lowered : module)
    if (!lowered.isDeclaration())
      markTakesThread(lowered);
  if (usesHalf(module))
    defineHalfConversions(module);
  if (usesBFloat16(module))
    defineBFloat16Conversions(module);
  KernelEntryNeeds needs;
  needs.hasBlockEntry = !function.raises && !waitsForOthers && !usesWarpCollectives;
  needs.synchronizes = function.synchronizes;
  needs.reducesAtBarriers = reducesAtBarriers;
  needs.checksByDefault = checksByDefault;
  needs.hasLocalArrays = !ir::localArrays(function).empty();
  writeKernelEntries(kernel, uncheckedKernel, parameters, needs);
}

} // namespace kiln::backend
