//===- tests/backend/block_runs_test.cpp ----------------------------------===//
//
// Kernel bodies written by hand as the block entry's loop takes them, made
// into the bodies of a run of blocks: which kernels' blocks may run
// together, which take the global x index alone, and what the index error
// path tells the engine.
//
//===----------------------------------------------------------------------===//

#include "backend/host/host_block_runs.h"
#include "ir/typed_ir.h"
#include "module/cpu_kernel_abi.h"
#include "tests/backend/llvm_ir_testing.h"

#include <cstddef>
#include <optional>
#include <string>

namespace {

using kiln::backend::BlockRunBody;
using kiln::testing::contains;
using kiln::testing::isValidAfter;
using kiln::testing::parseTestIR;
using kiln::testing::textOf;

/// `source` with the KilnCpuThread and KilnCpuServices offsets (and the
/// launch index kinds) it names in capitals filled in.
std::string withOffsets(std::string source) {
  const std::pair<const char *, size_t> offsets[] = {
      {"BLOCKDIM", offsetof(KilnCpuThread, blockDim)},
      {"LAUNCH_BLOCKIDX", static_cast<size_t>(kiln::ir::Intrinsic::BlockIdx)},
      {"BLOCKIDX", offsetof(KilnCpuThread, blockIdx)},
      {"INDEX_ERROR", offsetof(KilnCpuServices, raiseIndexError)},
      {"PRINT", offsetof(KilnCpuServices, print)},
  };
  for (auto [name, offset] : offsets)
    for (size_t at; (at = source.find(name)) != std::string::npos;)
      source.replace(at, std::string(name).size(), std::to_string(offset));
  return source;
}

// out[cuda.grid(1)] = x[cuda.grid(1)] + 1, with an index check on x, as the
// lowering writes cuda.grid: 64-bit arithmetic on the sign-extended
// indices. REPLACE stands for what a variant computes the stored %result
// with.
constexpr const char *gridKernel = R"(
declare void @service(ptr, i64)

define internal void @body(ptr %thread, i32 %tx, i32 %ty, i32 %tz, i32 %lane, ptr %x, i64 %n, ptr %out) {
entry:
  %dim.field = getelementptr inbounds i8, ptr %thread, i64 BLOCKDIM
  %dim = load i32, ptr %dim.field
  %block.field = getelementptr inbounds i8, ptr %thread, i64 BLOCKIDX
  %block = load i32, ptr %block.field, !kiln.launch.index !0
  %dim.64 = sext i32 %dim to i64
  %block.64 = sext i32 %block to i64
  %tx.64 = sext i32 %tx to i64
  %start = mul i64 %dim.64, %block.64
  %i = add i64 %start, %tx.64
  %inside = icmp ult i64 %i, %n
  br i1 %inside, label %ok, label %error

error:
  store i32 %tx, ptr %thread
  call void @service(ptr %thread, i64 %i), !kiln.service !1
  unreachable

ok:
  %x.i = getelementptr inbounds float, ptr %x, i64 %i
  %value = load float, ptr %x.i
  %sum = fadd float %value, 1.0
  REPLACE
  %out.i = getelementptr inbounds float, ptr %out, i64 %i
  store float %result, ptr %out.i
  ret void
}

!0 = !{i32 LAUNCH_BLOCKIDX, i32 0}
!1 = !{i64 SERVICE}
)";

constexpr const char *justTheSum = "%result = fadd float %sum, 0.0";

std::string variant(const std::string &before, const std::string &service = "INDEX_ERROR") {
  std::string source = gridKernel;
  source.replace(source.find("REPLACE"), 7, before);
  source.replace(source.find("SERVICE"), 7, service);
  return withOffsets(source);
}

/// What makeBlockRunBody makes of @body in `source`: nullopt when the
/// kernel's blocks must run one at a time; the body's text in `text`.
std::optional<bool> globalXOnlyOf(const std::string &source, std::string *text = nullptr) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = parseTestIR(source, context);
  if (!module)
    return std::nullopt;
  std::optional<BlockRunBody> run = kiln::backend::makeBlockRunBody(*module->getFunction("body"));
  if (!run || !isValidAfter(*module, "a run body"))
    return std::nullopt;
  if (text)
    *text = textOf(*run->function);
  return run->globalXOnly;
}

TEST(BlockRuns, AKernelUsingOnlyTheGlobalIndexTakesItAlone) {
  std::string text;
  std::optional<bool> globalXOnly = globalXOnlyOf(variant(justTheSum), &text);
  ASSERT_TRUE(globalXOnly) << "a kernel calling only the index error service runs blocks together";
  EXPECT_TRUE(*globalXOnly) << "blockIdx.x * blockDim.x + threadIdx.x is the global index:\n"
                            << text;
  // Before the service: the global index, for the engine to derive the
  // thread's x indices from; the thread index itself is no longer stored.
  EXPECT_TRUE(contains(text, "store i64 %6, ptr ")) << text;
  EXPECT_FALSE(contains(text, "store i32 %1, ptr %0")) << text;
  EXPECT_TRUE(contains(text, "getelementptr inbounds i8, ptr %0, i64 " +
                                 std::to_string(offsetof(KilnCpuThread, runGlobalX))))
      << text;
}

TEST(BlockRuns, TheKernelsOwnStoresOfTheThreadIndexStay) {
  // out32[i] = cuda.threadIdx.x into an int32 array stores the index as it
  // is, the value the index error path stores into the thread.
  std::string source =
      variant(std::string(justTheSum) + "\n  %out.tx = getelementptr inbounds i32, ptr %out, i64 %i"
                                        "\n  store i32 %tx, ptr %out.tx");
  std::string text;
  std::optional<bool> globalXOnly = globalXOnlyOf(source, &text);
  ASSERT_TRUE(globalXOnly);
  EXPECT_FALSE(*globalXOnly) << "threadIdx.x is stored apart from the global index";
  EXPECT_TRUE(contains(text, "store i32 %1, ptr %out.tx"))
      << "the kernel's store of threadIdx.x into its array is gone:\n"
      << text;
  EXPECT_FALSE(contains(text, "store i32 %1, ptr %0"))
      << "the store of threadIdx.x into the thread before the service stays:\n"
      << text;
}

TEST(BlockRuns, AKernelUsingTheThreadIndexApartLoopsOverBlocksAndThreads) {
  std::optional<bool> globalXOnly =
      globalXOnlyOf(variant("%tx.f = uitofp i32 %tx to float\n  %result = fadd float %sum, %tx.f"));
  ASSERT_TRUE(globalXOnly);
  EXPECT_FALSE(*globalXOnly) << "threadIdx.x is used apart from the global index";
}

TEST(BlockRuns, AKernelUsingTheBlockIndexApartLoopsOverBlocksAndThreads) {
  std::optional<bool> globalXOnly = globalXOnlyOf(
      variant("%block.f = uitofp i32 %block to float\n  %result = fadd float %sum, %block.f"));
  ASSERT_TRUE(globalXOnly);
  EXPECT_FALSE(*globalXOnly) << "blockIdx.x is used apart from the global index";
}

TEST(BlockRuns, AtomicsKeepBlocksApart) {
  EXPECT_FALSE(globalXOnlyOf(
      variant(std::string(justTheSum) + "\n  %old = atomicrmw add ptr %out, i32 1 seq_cst")))
      << "the order of a run's atomics across blocks would differ";
}

TEST(BlockRuns, ServicesOtherThanTheIndexErrorKeepBlocksApart) {
  EXPECT_FALSE(globalXOnlyOf(variant(justTheSum, "PRINT")))
      << "the order of a run's printed lines across blocks would differ";
}

TEST(BlockRuns, TheRunLoopsTakeTheRunAndAreValid) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = parseTestIR(variant(justTheSum), context);
  ASSERT_TRUE(module);
  std::optional<BlockRunBody> run = kiln::backend::makeBlockRunBody(*module->getFunction("body"));
  ASSERT_TRUE(run);
  llvm::Type *pointer = llvm::PointerType::get(context, 0);
  auto *entryType =
      llvm::FunctionType::get(llvm::Type::getVoidTy(context),
                              {pointer, pointer, llvm::Type::getInt64Ty(context), pointer}, false);
  llvm::Function *entry =
      llvm::Function::Create(entryType, llvm::GlobalValue::ExternalLinkage, "entry", *module);
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context, "entry", entry));
  kiln::backend::emitBlockRunLoops(builder, entry->getArg(0), *run,
                                   {entry->getArg(1), entry->getArg(2), entry->getArg(3)});
  builder.CreateRetVoid();
  ASSERT_TRUE(isValidAfter(*module, "the run loops"));
  std::string text = textOf(*entry);
  EXPECT_TRUE(contains(text, "getelementptr inbounds i8, ptr %0, i64 " +
                                 std::to_string(offsetof(KilnCpuThread, blockRunLength))))
      << "the entry must tell the engine it took the run:\n"
      << text;
}

} // namespace
