//===- tests/backend/example_kernels_test.cpp - Every example, every arch --===//
//
// Each example module's kernel specializations compile to PTX for every PTX
// target of the default architecture list, ptxas accepts that PTX for every
// default cubin, the fat binary holds exactly the requested images, and
// compiling again gives the same bytes.
//
//===----------------------------------------------------------------------===//

#include "backend/codegen/kernel_compiler.h"
#include "backend/cuda_tools/arch_list.h"
#include "backend/cuda_tools/cuda_archs.h"
#include "backend/cuda_tools/fatbin_reader.h"
#include "backend/cuda_tools/fatbinary.h"
#include "backend/cuda_tools/ptx_header.h"
#include "backend/cuda_tools/ptxas.h"
#include "backend/nvptx/cubin_builder.h"
#include "backend/nvptx/tool_options.h"
#include "frontend/emit/emit_typed_ir.h"
#include "frontend/frontend.h"
#include "test_support.h"

#include <gtest/gtest.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/SourceMgr.h>

#include <set>

namespace kiln {
namespace {

using cuda_tools::testing::toolkit;

const char *const kExamples[] = {"atomics",        "haversine", "histogram",     "mandelbrot",
                                 "monte_carlo_pi", "normalize", "reciprocal",    "reductions",
                                 "rounding",       "transpose", "type_widening", "ufuncs",
                                 "vector_add"};

class ExampleKernels : public ::testing::TestWithParam<const char *> {
protected:
  void SetUp() override {
    path = std::string(KILN_SOURCE_DIR) + "/examples/" + GetParam() + ".py";
    llvm::Expected<std::unique_ptr<CheckedModule>> result = checkModule(path, FrontendOptions());
    KILN_ASSERT_OK(result);
    checked = std::move(*result);
    ASSERT_FALSE(checked->hasErrors()) << path << " has errors";
    typed = emitTypedIR(*checked, GetParam());
    ASSERT_TRUE(typed) << "no typed IR for " << path;
    llvm::Expected<std::string> found = toolkit().require(cuda_tools::ToolkitComponent::Libdevice);
    KILN_ASSERT_OK(found);
    libdevice = *found;
  }

  std::vector<const ir::Function *> kernels() const {
    std::vector<const ir::Function *> result;
    for (const auto &function : typed->functions)
      if (function->kind == ir::Function::Kind::Kernel)
        result.push_back(function.get());
    return result;
  }

  std::string path;
  std::string libdevice;
  std::unique_ptr<CheckedModule> checked;
  std::unique_ptr<ir::Module> typed;
};

TEST_P(ExampleKernels, AssembleForEveryDefaultArchitectureIntoExactFatbins) {
  cuda_tools::ArchSet archs = cuda_tools::defaultArchSet();
  backend::KernelCompiler compiler(libdevice);
  ASSERT_FALSE(kernels().empty()) << path << " has no kernels";
  for (const ir::Function *kernel : kernels()) {
    SCOPED_TRACE(kernel->symbol);
    std::map<unsigned, std::string> ptx;
    for (unsigned target : archs.ptxTargets()) {
      llvm::Expected<backend::CompiledCode> code =
          compiler.compileForGpu(*kernel, target, backend::CodeForm::Assembly);
      KILN_ASSERT_OK(code);
      llvm::Expected<cuda_tools::PtxHeader> header = cuda_tools::readPtxHeader(code->bytes);
      KILN_ASSERT_OK(header);
      EXPECT_EQ(header->targetArch, target) << "PTX for sm_" << target << " has the wrong .target";
      EXPECT_NE(code->bytes.find(".entry " + code->interface.entryName), std::string::npos)
          << "the PTX does not define the kernel entry " << code->interface.entryName;
      ptx[target] = std::move(code->bytes);
    }

    std::vector<cuda_tools::FatbinImage> images;
    for (unsigned arch : archs.cubins) {
      llvm::Expected<cuda_tools::AssembledCubin> cubin =
          cuda_tools::assemblePtx(toolkit(), ptx.at(cuda_tools::ptxTargetForCubin(arch)), arch,
                                  backend::ptxasOptionsFor(kernel->options));
      ASSERT_TRUE(static_cast<bool>(cubin))
          << "ptxas rejected " << kernel->symbol << " for " << cuda_tools::smName(arch) << ": "
          << llvm::toString(cubin.takeError());
      images.push_back({cuda_tools::FatbinImageKind::Cubin, arch, std::move(cubin->cubin)});
    }
    for (unsigned arch : archs.ptx)
      images.push_back({cuda_tools::FatbinImageKind::Ptx, arch, ptx.at(arch)});
    llvm::Expected<std::string> fatbin = cuda_tools::createFatbinary(toolkit(), images);
    KILN_ASSERT_OK(fatbin);

    llvm::Expected<std::vector<cuda_tools::FatbinEntry>> entries = cuda_tools::readFatbin(*fatbin);
    KILN_ASSERT_OK(entries);
    std::set<unsigned> cubins, ptxImages;
    for (const cuda_tools::FatbinEntry &entry : *entries) {
      if (entry.kind == cuda_tools::FatbinEntryKind::Cubin)
        EXPECT_TRUE(cubins.insert(entry.arch).second) << "two cubins for sm_" << entry.arch;
      else if (entry.kind == cuda_tools::FatbinEntryKind::Ptx)
        EXPECT_TRUE(ptxImages.insert(entry.arch).second) << "two PTX images for " << entry.arch;
      else
        ADD_FAILURE() << "unexpected image kind " << entry.rawKind;
    }
    EXPECT_EQ(cubins, archs.cubins) << "the fat binary's cubins are not the requested ones";
    EXPECT_EQ(ptxImages, archs.ptx) << "the fat binary's PTX is not the requested PTX";
  }
}

TEST_P(ExampleKernels, CompileToTheSameBytesTwice) {
  backend::KernelCompiler compiler(libdevice);
  for (const ir::Function *kernel : kernels()) {
    llvm::Expected<backend::CompiledCode> first =
        compiler.compileForGpu(*kernel, 90, backend::CodeForm::Assembly);
    llvm::Expected<backend::CompiledCode> second =
        compiler.compileForGpu(*kernel, 90, backend::CodeForm::Assembly);
    KILN_ASSERT_OK(first);
    KILN_ASSERT_OK(second);
    EXPECT_EQ(first->bytes, second->bytes)
        << "PTX of " << kernel->symbol << " differs between runs";
    llvm::Expected<backend::CompiledCode> hostFirst =
        compiler.compileForHost(*kernel, backend::CodeForm::Object);
    llvm::Expected<backend::CompiledCode> hostSecond =
        compiler.compileForHost(*kernel, backend::CodeForm::Object);
    KILN_ASSERT_OK(hostFirst);
    KILN_ASSERT_OK(hostSecond);
    EXPECT_EQ(hostFirst->bytes, hostSecond->bytes)
        << "the host object of " << kernel->symbol << " differs between runs";
  }
}

// The cuRAND example of the course's CUDA C/C++ interop section: kernels
// that call device functions from a .cu file link for every default
// architecture, and their fat binaries hold the cubins only (their PTX
// alone would not load).
// A kernel with a block entry runs its threads through `_thread` only in the
// engine's reference mode, or when its local arrays would not fit a
// worker's stack: without local arrays that entry is not optimized (it
// would cost as much to compile as the block entry); every other kernel's
// is.
TEST_P(ExampleKernels, OptimizeTheThreadEntryWhereThreadsRunThroughIt) {
  backend::KernelCompiler compiler(libdevice);
  for (const ir::Function *kernel : kernels()) {
    llvm::Expected<backend::CompiledCode> host =
        compiler.compileForHost(*kernel, backend::CodeForm::LLVMIR);
    KILN_ASSERT_OK(host);
    llvm::LLVMContext context;
    llvm::SMDiagnostic problem;
    std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(host->bytes, problem, context);
    ASSERT_TRUE(module) << problem.getMessage().str();
    const llvm::Function *thread = module->getFunction(host->interface.entryName + "_thread");
    ASSERT_TRUE(thread) << kernel->symbol << " has no thread entry";
    bool localArrays = host->interface.localBytes != 0;
    EXPECT_EQ(thread->hasOptNone(), host->interface.hasBlockEntry && !localArrays)
        << kernel->symbol << ": block entry " << host->interface.hasBlockEntry << ", local arrays "
        << localArrays;
  }
}

TEST(InteropKernels, LinkCudaCForEveryDefaultArchitecture) {
  std::string path = std::string(KILN_SOURCE_DIR) + "/examples/curand_interop/curand_kernels.py";
  llvm::Expected<std::unique_ptr<CheckedModule>> checked = checkModule(path, FrontendOptions());
  KILN_ASSERT_OK(checked);
  ASSERT_FALSE((*checked)->hasErrors());
  std::unique_ptr<ir::Module> typed = emitTypedIR(**checked, "curand_kernels");
  ASSERT_TRUE(typed);
  llvm::Expected<std::string> libdevice =
      toolkit().require(cuda_tools::ToolkitComponent::Libdevice);
  KILN_ASSERT_OK(libdevice);
  backend::KernelCompiler compiler(*libdevice);
  backend::CubinBuilder cubins(toolkit());
  std::vector<std::string> shim = {std::string(KILN_SOURCE_DIR) +
                                   "/examples/curand_interop/curand_shim.cu"};
  cuda_tools::ArchSet archs = cuda_tools::defaultArchSet();
  unsigned kernelCount = 0;
  for (const auto &function : typed->functions) {
    if (function->kind != ir::Function::Kind::Kernel)
      continue;
    ++kernelCount;
    SCOPED_TRACE(function->symbol);
    ASSERT_EQ(function->options.link, std::vector<std::string>{"curand_shim.cu"});
    std::map<unsigned, std::string> ptx;
    for (unsigned target : archs.ptxTargets()) {
      llvm::Expected<backend::CompiledCode> code =
          compiler.compileForGpu(*function, target, backend::CodeForm::Assembly);
      KILN_ASSERT_OK(code);
      EXPECT_NE(code->bytes.find(".extern .func"), std::string::npos)
          << "the PTX should declare the foreign functions it calls";
      ptx[target] = std::move(code->bytes);
    }
    std::vector<cuda_tools::FatbinImage> images;
    for (unsigned arch : archs.cubins) {
      llvm::Expected<backend::BuiltCubin> cubin = cubins.build(
          function->options, ptx.at(cuda_tools::ptxTargetForCubin(arch)), "kernel.ptx", arch, shim);
      ASSERT_TRUE(static_cast<bool>(cubin)) << "linking failed for " << cuda_tools::smName(arch)
                                            << ": " << llvm::toString(cubin.takeError());
      images.push_back({cuda_tools::FatbinImageKind::Cubin, arch, std::move(cubin->cubin)});
    }
    llvm::Expected<std::string> fatbin = cuda_tools::createFatbinary(toolkit(), images);
    KILN_ASSERT_OK(fatbin);
    llvm::Expected<std::vector<cuda_tools::FatbinEntry>> entries = cuda_tools::readFatbin(*fatbin);
    KILN_ASSERT_OK(entries);
    std::set<unsigned> found;
    for (const cuda_tools::FatbinEntry &entry : *entries) {
      EXPECT_EQ(entry.kind, cuda_tools::FatbinEntryKind::Cubin);
      found.insert(entry.arch);
    }
    EXPECT_EQ(found, archs.cubins);
  }
  EXPECT_EQ(kernelCount, 2u);
}

// An image links its kernels' optimized LLVM IR. Compiling IR and linking
// it again and again in one process, as a build of many modules does,
// every kernel stays an entry: nothing one module's compilation leaves
// behind is read by a later module that happens to be allocated at the
// same address.
TEST_P(ExampleKernels, LinkedKernelsStayEntriesHoweverOftenTheyAreCompiled) {
  backend::KernelCompiler compiler(libdevice);
  std::vector<const ir::Function *> all = kernels();
  for (int round = 0; round < 12; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::vector<std::string> ir;
    std::vector<std::string> entries;
    for (const ir::Function *kernel : all) {
      llvm::Expected<backend::CompiledCode> code =
          compiler.compileForGpu(*kernel, 80, backend::CodeForm::LLVMIR);
      KILN_ASSERT_OK(code);
      ir.push_back(std::move(code->bytes));
      entries.push_back(code->interface.entryName);
    }
    std::vector<llvm::StringRef> members(ir.begin(), ir.end());
    llvm::Expected<std::string> ptx = compiler.linkForGpu(members, 80, all.front()->options);
    KILN_ASSERT_OK(ptx);
    for (const std::string &entry : entries)
      EXPECT_NE(ptx->find(".entry " + entry + "("), std::string::npos)
          << entry << " is not an entry of the linked PTX";
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleKernels, ::testing::ValuesIn(kExamples),
                         [](const ::testing::TestParamInfo<const char *> &test) {
                           return std::string(test.param);
                         });

} // namespace
} // namespace kiln
