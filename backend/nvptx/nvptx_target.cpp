//===- backend/nvptx/nvptx_target.cpp - Target hooks for NVIDIA GPUs ------------===//

#include "backend/nvptx/nvptx_target.h"

#include "backend/codegen/math_functions.h"

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <set>

namespace kiln::backend {

using I = ir::Intrinsic;

void NvptxTargetHooks::configureModule(llvm::Module &module, const ir::Function &kernel) {
  module.setTargetTriple(kNvptxTriple);
  module.setDataLayout(kNvptxDataLayout);
  // libdevice asks __nvvm_reflect("__CUDA_FTZ") whether to flush
  // subnormals; fastmath says yes, as in Numba.
  module.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", kernel.options.fastmath ? 1 : 0);
  reportsExceptions = kernel.options.debug;
}

static llvm::Value *callIntrinsic(HookSite &site, llvm::Intrinsic::ID id,
                                  llvm::ArrayRef<llvm::Value *> arguments = {}) {
  llvm::Module *module = site.builder.GetInsertBlock()->getModule();
  return site.builder.CreateCall(llvm::Intrinsic::getDeclaration(module, id), arguments);
}

static llvm::Value *inlineAsm(HookSite &site, llvm::Type *result, llvm::StringRef text,
                              llvm::StringRef constraints,
                              llvm::ArrayRef<llvm::Value *> arguments) {
  std::vector<llvm::Type *> parameterTypes;
  for (llvm::Value *argument : arguments)
    parameterTypes.push_back(argument->getType());
  auto *type = llvm::FunctionType::get(result, parameterTypes, false);
  return site.builder.CreateCall(llvm::InlineAsm::get(type, text, constraints, true), arguments);
}

llvm::Value *NvptxTargetHooks::readIndex(HookSite &site, I which, unsigned dimension) {
  using namespace llvm::Intrinsic;
  static const ID registers[4][3] = {
      {nvvm_read_ptx_sreg_tid_x, nvvm_read_ptx_sreg_tid_y, nvvm_read_ptx_sreg_tid_z},
      {nvvm_read_ptx_sreg_ctaid_x, nvvm_read_ptx_sreg_ctaid_y, nvvm_read_ptx_sreg_ctaid_z},
      {nvvm_read_ptx_sreg_ntid_x, nvvm_read_ptx_sreg_ntid_y, nvvm_read_ptx_sreg_ntid_z},
      {nvvm_read_ptx_sreg_nctaid_x, nvvm_read_ptx_sreg_nctaid_y, nvvm_read_ptx_sreg_nctaid_z}};
  switch (which) {
  case I::ThreadIdx:
    return callIntrinsic(site, registers[0][dimension]);
  case I::BlockIdx:
    return callIntrinsic(site, registers[1][dimension]);
  case I::BlockDim:
    return callIntrinsic(site, registers[2][dimension]);
  case I::GridDim:
    return callIntrinsic(site, registers[3][dimension]);
  case I::LaneId:
    return callIntrinsic(site, nvvm_read_ptx_sreg_laneid);
  default:
    return callIntrinsic(site, nvvm_read_ptx_sreg_warpsize);
  }
}

void NvptxTargetHooks::syncThreads(HookSite &site) {
  callIntrinsic(site, llvm::Intrinsic::nvvm_barrier0);
}

llvm::Value *NvptxTargetHooks::syncThreadsReduce(HookSite &site, I which, llvm::Value *predicate) {
  llvm::Intrinsic::ID id = which == I::SyncThreadsCount ? llvm::Intrinsic::nvvm_barrier0_popc
                           : which == I::SyncThreadsAnd ? llvm::Intrinsic::nvvm_barrier0_and
                                                        : llvm::Intrinsic::nvvm_barrier0_or;
  return callIntrinsic(site, id, {predicate});
}

void NvptxTargetHooks::syncWarp(HookSite &site, llvm::Value *mask) {
  callIntrinsic(site, llvm::Intrinsic::nvvm_bar_warp_sync, {mask});
}

void NvptxTargetHooks::gridSync(HookSite &site) {
  // The grid barrier of CUDA's cooperative groups. The driver gives each
  // cooperative launch a workspace, whose address is in %envreg1 (high
  // word) and %envreg2 (low word); its second 32-bit word counts arrivals.
  // After a block barrier, each block's first thread adds 1, and block
  // (0, 0, 0)'s adds 2^31 - (blocks - 1), so that the word's top bit flips
  // exactly when the last block arrives: every first thread waits for the
  // flip, then releases its block with a second block barrier. The word is
  // never reset, and need not be: each round flips the bit once more.
  using namespace llvm::Intrinsic;
  llvm::IRBuilder<> &builder = site.builder;
  llvm::LLVMContext &context = builder.getContext();
  llvm::Function *function = builder.GetInsertBlock()->getParent();
  llvm::Type *i32 = builder.getInt32Ty();
  llvm::Type *i64 = builder.getInt64Ty();
  auto anyNonZero = [&](ID x, ID y, ID z) {
    return builder.CreateICmpNE(
        builder.CreateOr(builder.CreateOr(callIntrinsic(site, x), callIntrinsic(site, y)),
                         callIntrinsic(site, z)),
        builder.getInt32(0));
  };

  callIntrinsic(site, nvvm_barrier0);
  llvm::BasicBlock *arrive = llvm::BasicBlock::Create(context, "grid_sync.arrive", function);
  llvm::BasicBlock *wait = llvm::BasicBlock::Create(context, "grid_sync.wait", function);
  llvm::BasicBlock *leave = llvm::BasicBlock::Create(context, "grid_sync.leave", function);
  llvm::BasicBlock *release = llvm::BasicBlock::Create(context, "grid_sync.release", function);
  builder.CreateCondBr(
      anyNonZero(nvvm_read_ptx_sreg_tid_x, nvvm_read_ptx_sreg_tid_y, nvvm_read_ptx_sreg_tid_z),
      release, arrive);

  builder.SetInsertPoint(arrive);
  llvm::Value *workspace = builder.CreateOr(
      builder.CreateShl(builder.CreateZExt(callIntrinsic(site, nvvm_read_ptx_sreg_envreg1), i64),
                        32),
      builder.CreateZExt(callIntrinsic(site, nvvm_read_ptx_sreg_envreg2), i64));
  llvm::Value *arrivals = builder.CreateIntToPtr(builder.CreateAdd(workspace, builder.getInt64(4)),
                                                 builder.getPtrTy(1));
  llvm::Value *blocks =
      builder.CreateMul(builder.CreateMul(callIntrinsic(site, nvvm_read_ptx_sreg_nctaid_x),
                                          callIntrinsic(site, nvvm_read_ptx_sreg_nctaid_y)),
                        callIntrinsic(site, nvvm_read_ptx_sreg_nctaid_z));
  llvm::Value *firstBlockAdds = builder.CreateSub(builder.getInt32(0x80000000u),
                                                  builder.CreateSub(blocks, builder.getInt32(1)));
  llvm::Value *adds =
      builder.CreateSelect(anyNonZero(nvvm_read_ptx_sreg_ctaid_x, nvvm_read_ptx_sreg_ctaid_y,
                                      nvvm_read_ptx_sreg_ctaid_z),
                           builder.getInt32(1), firstBlockAdds);
  callIntrinsic(site, nvvm_membar_gl); // this block's writes before its arrival
  llvm::Value *before =
      builder.CreateAtomicRMW(llvm::AtomicRMWInst::Add, arrivals, adds, llvm::MaybeAlign(4),
                              llvm::AtomicOrdering::Monotonic);
  builder.CreateBr(wait);

  builder.SetInsertPoint(wait);
  llvm::LoadInst *now = builder.CreateAlignedLoad(i32, arrivals, llvm::MaybeAlign(4));
  now->setVolatile(true);
  llvm::Value *flipped = builder.CreateICmpNE(
      builder.CreateAnd(builder.CreateXor(before, now), builder.getInt32(0x80000000u)),
      builder.getInt32(0));
  builder.CreateCondBr(flipped, leave, wait);

  builder.SetInsertPoint(leave);
  callIntrinsic(site, nvvm_membar_gl); // the other blocks' writes after their arrival
  builder.CreateBr(release);

  builder.SetInsertPoint(release);
  callIntrinsic(site, nvvm_barrier0);
}

void NvptxTargetHooks::fence(HookSite &site, I which) {
  callIntrinsic(site, which == I::ThreadFenceBlock    ? llvm::Intrinsic::nvvm_membar_cta
                      : which == I::ThreadFenceSystem ? llvm::Intrinsic::nvvm_membar_sys
                                                      : llvm::Intrinsic::nvvm_membar_gl);
}

void NvptxTargetHooks::nanosleep(HookSite &site, llvm::Value *nanoseconds) {
  callIntrinsic(site, llvm::Intrinsic::nvvm_nanosleep, {nanoseconds});
}

llvm::Value *NvptxTargetHooks::shuffle32(HookSite &site, I mode, llvm::Value *mask,
                                         llvm::Value *value, llvm::Value *lane) {
  // The c operand: up clamps at lane 0 (c = 0), the others at lane 31 with
  // the whole warp as one segment (c = 0x1f), as Numba passes it.
  llvm::Intrinsic::ID id = mode == I::ShflIdx    ? llvm::Intrinsic::nvvm_shfl_sync_idx_i32
                           : mode == I::ShflUp   ? llvm::Intrinsic::nvvm_shfl_sync_up_i32
                           : mode == I::ShflDown ? llvm::Intrinsic::nvvm_shfl_sync_down_i32
                                                 : llvm::Intrinsic::nvvm_shfl_sync_bfly_i32;
  llvm::Value *clamp = site.builder.getInt32(mode == I::ShflUp ? 0 : 0x1f);
  return callIntrinsic(site, id, {mask, value, lane, clamp});
}

llvm::Value *NvptxTargetHooks::vote(HookSite &site, I which, llvm::Value *mask,
                                    llvm::Value *predicate) {
  llvm::Intrinsic::ID id = which == I::VoteAll   ? llvm::Intrinsic::nvvm_vote_all_sync
                           : which == I::VoteAny ? llvm::Intrinsic::nvvm_vote_any_sync
                           : which == I::VoteUni ? llvm::Intrinsic::nvvm_vote_uni_sync
                                                 : llvm::Intrinsic::nvvm_vote_ballot_sync;
  return callIntrinsic(site, id, {mask, predicate});
}

llvm::Value *NvptxTargetHooks::matchAny(HookSite &site, llvm::Value *mask, llvm::Value *value) {
  return callIntrinsic(site,
                       value->getType()->isIntegerTy(64) ? llvm::Intrinsic::nvvm_match_any_sync_i64
                                                         : llvm::Intrinsic::nvvm_match_any_sync_i32,
                       {mask, value});
}

std::pair<llvm::Value *, llvm::Value *>
NvptxTargetHooks::matchAll(HookSite &site, llvm::Value *mask, llvm::Value *value) {
  llvm::Value *pair =
      callIntrinsic(site,
                    value->getType()->isIntegerTy(64) ? llvm::Intrinsic::nvvm_match_all_sync_i64p
                                                      : llvm::Intrinsic::nvvm_match_all_sync_i32p,
                    {mask, value});
  return {site.builder.CreateExtractValue(pair, {0}), site.builder.CreateExtractValue(pair, {1})};
}

llvm::Value *NvptxTargetHooks::activeMask(HookSite &site) {
  return callIntrinsic(site, llvm::Intrinsic::nvvm_activemask);
}

llvm::Value *NvptxTargetHooks::lanemaskLt(HookSite &site) {
  return callIntrinsic(site, llvm::Intrinsic::nvvm_read_ptx_sreg_lanemask_lt);
}

static constexpr unsigned kSharedAddressSpace = 3;
static constexpr unsigned kGlobalAddressSpace = 1;

llvm::Value *NvptxTargetHooks::sharedArray(HookSite &site, const SharedSlot &slot) {
  llvm::Module &module = *site.builder.GetInsertBlock()->getModule();
  llvm::GlobalVariable *global = module.getGlobalVariable(slot.name, true);
  if (!global) {
    auto *type = llvm::ArrayType::get(site.builder.getInt8Ty(), slot.bytes);
    global = new llvm::GlobalVariable(module, type, false, llvm::GlobalValue::InternalLinkage,
                                      llvm::UndefValue::get(type), slot.name, nullptr,
                                      llvm::GlobalValue::NotThreadLocal, kSharedAddressSpace);
    global->setAlignment(llvm::Align(slot.alignment));
  }
  return site.builder.CreateAddrSpaceCast(global, site.builder.getPtrTy());
}

/// The PTX instruction of a cache-hinted load or store of `bits`-bit
/// elements: "ld.global.cg.b32" for LoadCg, spelled "ldcg".
static std::string cacheHintedInstruction(ir::Intrinsic which, unsigned bits) {
  llvm::StringRef spelled = ir::spelling(which);
  return (spelled.take_front(2) + ".global." + spelled.drop_front(2) + ".b" + llvm::Twine(bits))
      .str();
}

/// The inline-assembly register constraint and width of an element of
/// `type` moved as raw bits: PTX loads and stores bytes through 32-bit
/// registers, and Kiln moves floats as integers of their width.
static std::pair<llvm::StringRef, llvm::IntegerType *> bitsRegister(llvm::IRBuilder<> &builder,
                                                                    llvm::Type *type) {
  unsigned bits = type->getPrimitiveSizeInBits();
  if (bits == 8)
    return {"r", builder.getInt32Ty()};
  if (bits == 16)
    return {"h", builder.getInt16Ty()};
  if (bits == 32)
    return {"r", builder.getInt32Ty()};
  return {"l", builder.getInt64Ty()};
}

// ld.global.<operator> and st.global.<operator> through inline PTX, as
// Numba emits them; the element's generic address is converted to a global
// one first.
llvm::Value *NvptxTargetHooks::cacheHintedLoad(HookSite &site, ir::Intrinsic which,
                                               llvm::Value *address, llvm::Type *type,
                                               llvm::Align) {
  llvm::IRBuilder<> &builder = site.builder;
  llvm::Value *global = builder.CreateAddrSpaceCast(address, builder.getPtrTy(kGlobalAddressSpace));
  auto [constraint, registerType] = bitsRegister(builder, type);
  unsigned bits = type->getPrimitiveSizeInBits();
  std::string text = cacheHintedInstruction(which, bits) + " $0, [$1];";
  auto *load =
      llvm::InlineAsm::get(llvm::FunctionType::get(registerType, {global->getType()}, false), text,
                           ("=" + constraint + ",l").str(), /*hasSideEffects=*/true);
  llvm::Value *raw = builder.CreateCall(load, {global});
  llvm::Value *narrowed = builder.CreateTrunc(raw, builder.getIntNTy(bits));
  return builder.CreateBitCast(narrowed, type);
}

void NvptxTargetHooks::cacheHintedStore(HookSite &site, ir::Intrinsic which, llvm::Value *address,
                                        llvm::Value *value, llvm::Align) {
  llvm::IRBuilder<> &builder = site.builder;
  llvm::Value *global = builder.CreateAddrSpaceCast(address, builder.getPtrTy(kGlobalAddressSpace));
  unsigned bits = value->getType()->getPrimitiveSizeInBits();
  auto [constraint, registerType] = bitsRegister(builder, value->getType());
  llvm::Value *raw =
      builder.CreateZExt(builder.CreateBitCast(value, builder.getIntNTy(bits)), registerType);
  std::string text = cacheHintedInstruction(which, bits) + " [$0], $1;";
  auto *store = llvm::InlineAsm::get(
      llvm::FunctionType::get(builder.getVoidTy(), {global->getType(), registerType}, false), text,
      ("l," + constraint + ",~{memory}").str(), /*hasSideEffects=*/true);
  builder.CreateCall(store, {global, raw});
}

// Global rather than constant memory: constant memory holds 64 KiB per
// module, and a table indexed by thread is read faster through the
// read-only data cache than serialized through the constant cache.
unsigned NvptxTargetHooks::constantDataAddressSpace() const {
  return kGlobalAddressSpace;
}

std::pair<llvm::Value *, llvm::Value *> NvptxTargetHooks::dynamicSharedMemory(HookSite &site) {
  llvm::Module &module = *site.builder.GetInsertBlock()->getModule();
  static constexpr llvm::StringLiteral name = "_kiln_dynamic_shared";
  llvm::GlobalVariable *global = module.getGlobalVariable(name, true);
  if (!global) {
    auto *type = llvm::ArrayType::get(site.builder.getInt8Ty(), 0);
    global = new llvm::GlobalVariable(module, type, false, llvm::GlobalValue::ExternalLinkage,
                                      nullptr, name, nullptr, llvm::GlobalValue::NotThreadLocal,
                                      kSharedAddressSpace);
    global->setAlignment(llvm::Align(16));
  }
  llvm::Value *bytes =
      inlineAsm(site, site.builder.getInt32Ty(), "mov.u32 $0, %dynamic_smem_size;", "=r", {});
  return {site.builder.CreateAddrSpaceCast(global, site.builder.getPtrTy()), bytes};
}

/// cvt.rzi from float32 or float64 to a 32- or 64-bit integer saturates
/// and turns NaN into 0 by itself; NVVM's intrinsics for it say so, where
/// LLVM's saturating conversions would compare and select around a plain
/// cvt. Narrower integers and other floats take LLVM's.
llvm::Value *NvptxTargetHooks::saturatingFloatToInteger(llvm::IRBuilder<> &builder,
                                                        llvm::Value *value, llvm::IntegerType *to,
                                                        bool isSigned) {
  namespace nvvm = llvm::Intrinsic;
  bool fromDouble = value->getType()->isDoubleTy();
  bool fromFloat = value->getType()->isFloatTy();
  unsigned bits = to->getBitWidth();
  if ((fromDouble || fromFloat) && (bits == 32 || bits == 64)) {
    llvm::Intrinsic::ID id =
        bits == 32 ? (fromDouble ? (isSigned ? nvvm::nvvm_d2i_rz : nvvm::nvvm_d2ui_rz)
                                 : (isSigned ? nvvm::nvvm_f2i_rz : nvvm::nvvm_f2ui_rz))
                   : (fromDouble ? (isSigned ? nvvm::nvvm_d2ll_rz : nvvm::nvvm_d2ull_rz)
                                 : (isSigned ? nvvm::nvvm_f2ll_rz : nvvm::nvvm_f2ull_rz));
    return builder.CreateIntrinsic(id, {}, {value});
  }
  return TargetHooks::saturatingFloatToInteger(builder, value, to, isSigned);
}

std::optional<std::string> NvptxTargetHooks::mathFunction(I which, unsigned bits, bool fastmath) {
  std::string base = mathBaseName(which).str();
  if (bits == 32 && fastmath) {
    // libdevice's approximate single-precision functions, which Numba uses
    // under fastmath.
    static const std::set<std::string> fast = {"sin", "cos",  "tan",   "exp", "exp10",
                                               "log", "log2", "log10", "pow"};
    if (fast.count(base))
      return "__nv_fast_" + base + "f";
  }
  return "__nv_" + base + (bits == 32 ? "f" : "");
}

/// A constant string in global memory, as a generic pointer.
static llvm::Value *globalString(HookSite &site, llvm::StringRef text) {
  llvm::Module &module = *site.builder.GetInsertBlock()->getModule();
  llvm::Constant *data = llvm::ConstantDataArray::getString(module.getContext(), text);
  auto *global = new llvm::GlobalVariable(module, data->getType(), true,
                                          llvm::GlobalValue::PrivateLinkage, data, "str", nullptr,
                                          llvm::GlobalValue::NotThreadLocal, kGlobalAddressSpace);
  global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  return site.builder.CreateAddrSpaceCast(global, site.builder.getPtrTy());
}

static void escapePercent(std::string &format, llvm::StringRef text) {
  for (char c : text) {
    format += c;
    if (c == '%')
      format += '%';
  }
}

void NvptxTargetHooks::print(HookSite &site, llvm::ArrayRef<PrintArgument> arguments) {
  // vprintf(format, buffer): every value widened to 8 bytes, as Numba does.
  llvm::IRBuilder<> &builder = site.builder;
  std::string format;
  std::vector<llvm::Value *> values;
  for (const PrintArgument &argument : arguments) {
    if (!format.empty() && !argument.joined)
      format += ' ';
    switch (argument.kind) {
    case PrintArgument::Kind::Text:
      escapePercent(format, argument.text);
      break;
    case PrintArgument::Kind::Int64:
      format += "%lld";
      values.push_back(argument.value);
      break;
    case PrintArgument::Kind::UInt64:
      format += "%llu";
      values.push_back(argument.value);
      break;
    case PrintArgument::Kind::Float64:
      format += "%f";
      values.push_back(argument.value);
      break;
    case PrintArgument::Kind::Bool:
      format += "%s";
      values.push_back(builder.CreateSelect(argument.value, globalString(site, "True"),
                                            globalString(site, "False")));
      break;
    }
  }
  format += '\n';
  llvm::Module &module = *builder.GetInsertBlock()->getModule();
  llvm::FunctionCallee vprintf = module.getOrInsertFunction(
      "vprintf", llvm::FunctionType::get(builder.getInt32Ty(),
                                         {builder.getPtrTy(), builder.getPtrTy()}, false));
  llvm::Value *buffer = llvm::ConstantPointerNull::get(builder.getPtrTy());
  if (!values.empty()) {
    std::vector<llvm::Type *> fields;
    for (llvm::Value *value : values)
      fields.push_back(value->getType());
    auto *layout = llvm::StructType::get(module.getContext(), fields);
    llvm::Function *function = builder.GetInsertBlock()->getParent();
    llvm::IRBuilder<> entry(&function->getEntryBlock(), function->getEntryBlock().begin());
    llvm::AllocaInst *slot = entry.CreateAlloca(layout);
    slot->setAlignment(llvm::Align(8));
    for (unsigned i = 0; i < values.size(); ++i)
      builder.CreateStore(values[i], builder.CreateStructGEP(layout, slot, i));
    buffer = slot;
  }
  builder.CreateCall(vprintf, {globalString(site, format), buffer});
}

void NvptxTargetHooks::raise(HookSite &site, llvm::StringRef exceptionClass,
                             llvm::StringRef message) {
  // Without debug, as in Numba, the thread just stops; with debug, it says
  // why first. The kernel's option decides, also for a raise in a device
  // function, as in Numba where the raise returns an error status up to
  // the kernel.
  if (reportsExceptions) {
    std::string text = exceptionClass.str();
    if (!message.empty())
      text += ": " + message.str();
    if (std::string where = site.describeLocation(); !where.empty())
      text = where + ": " + text;
    print(site, {PrintArgument{PrintArgument::Kind::Text, nullptr, text}});
  }
  callIntrinsic(site, llvm::Intrinsic::nvvm_exit);
  site.builder.CreateUnreachable();
}

llvm::Value *NvptxTargetHooks::indexChecksEnabled(HookSite &site) {
  return site.builder.getFalse();
}

void NvptxTargetHooks::raiseIndexError(HookSite &site, llvm::StringRef array, llvm::Value *,
                                       llvm::Value *, llvm::ArrayRef<llvm::Value *>) {
  raise(site, "IndexError", "index out of bounds in " + array.str());
}

void NvptxTargetHooks::finishKernel(llvm::Function &kernel, const ir::Function &function,
                                    llvm::ArrayRef<KernelParameter>) {
  llvm::Module &module = *kernel.getParent();
  llvm::LLVMContext &context = module.getContext();
  llvm::NamedMDNode *annotations = module.getOrInsertNamedMetadata("nvvm.annotations");
  auto annotate = [&](llvm::StringRef key, unsigned value) {
    annotations->addOperand(llvm::MDNode::get(
        context, {llvm::ValueAsMetadata::get(&kernel), llvm::MDString::get(context, key),
                  llvm::ValueAsMetadata::get(
                      llvm::ConstantInt::get(llvm::Type::getInt32Ty(context), value))}));
  };
  annotate("kernel", 1);
  if (function.options.fastmath)
    for (llvm::Function &defined : module)
      if (!defined.isDeclaration())
        defined.addFnAttr("denormal-fp-math-f32", "preserve-sign,preserve-sign"); // .ftz
  if (function.options.maxRegisters)
    annotate("maxnreg", *function.options.maxRegisters);
  // launch_bounds=(max threads per block, min blocks per SM, max blocks
  // per cluster), as numba-cuda takes it.
  const std::vector<unsigned> &bounds = function.options.launchBounds;
  if (bounds.size() > 0)
    annotate("maxntidx", bounds[0]);
  if (bounds.size() > 1)
    annotate("minctasm", bounds[1]);
  if (bounds.size() > 2)
    annotate("maxclusterrank", bounds[2]);
}

} // namespace kiln::backend
