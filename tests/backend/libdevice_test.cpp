//===- tests/backend/libdevice_test.cpp -----------------------------------===//
//
// Linking NVIDIA's libdevice into a kernel's module for NVPTX: the
// questions its code asks through __nvvm_reflect are answered for the
// architecture compiled for, whatever pipeline then runs.
//
//===----------------------------------------------------------------------===//

#include "backend/codegen/optimize.h"
#include "backend/codegen/target_machines.h"
#include "backend/nvptx/libdevice.h"
#include "tests/backend/llvm_ir_testing.h"
#include "tests/backend/test_support.h"

namespace {

using kiln::cuda_tools::testing::toolkit;
using kiln::testing::contains;
using kiln::testing::parseTestIR;
using kiln::testing::textOf;

// What libdevice's functions ask, and a call of one of them (__nv_sin asks
// __CUDA_ARCH too).
constexpr const char *asksTheArchitecture = R"(
target triple = "nvptx64-nvidia-cuda"

@arch = private unnamed_addr constant [12 x i8] c"__CUDA_ARCH\00"

define i32 @kernel(ptr %out, double %x) {
  %sine = call double @__nv_sin(double %x)
  store double %sine, ptr %out
  %answer = call i32 @__nvvm_reflect(ptr @arch)
  ret i32 %answer
}

declare i32 @__nvvm_reflect(ptr)
declare double @__nv_sin(double)
)";

/// The module after linking libdevice for sm_`arch` and the GPU pipeline.
std::string compiledFor(unsigned arch) {
  llvm::Expected<std::string> libdevice =
      toolkit().require(kiln::cuda_tools::ToolkitComponent::Libdevice);
  if (!libdevice) {
    ADD_FAILURE() << llvm::toString(libdevice.takeError());
    return "";
  }
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = parseTestIR(asksTheArchitecture, context);
  if (!module)
    return "";
  if (llvm::Error error = kiln::backend::linkLibdevice(*module, *libdevice, "kernel", arch,
                                                       /*fastmath=*/false)) {
    ADD_FAILURE() << llvm::toString(std::move(error));
    return "";
  }
  kiln::backend::initializeTargets();
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      kiln::backend::createNvptxMachine(arch, kiln::JitOptions());
  if (!machine) {
    ADD_FAILURE() << llvm::toString(machine.takeError());
    return "";
  }
  kiln::backend::PipelineTuning gpu;
  gpu.speculativeHoisting = false;
  if (llvm::Error error = kiln::backend::optimizeModule(*module, **machine, true, gpu)) {
    ADD_FAILURE() << llvm::toString(std::move(error));
    return "";
  }
  return textOf(*module);
}

TEST(Libdevice, TheArchitectureItAsksForIsTheOneCompiledFor) {
  for (unsigned arch : {75u, 80u, 90u}) {
    std::string result = compiledFor(arch);
    EXPECT_TRUE(contains(result, "ret i32 " + std::to_string(arch * 10))) << "sm_" << arch << ":\n"
                                                                          << result;
    EXPECT_FALSE(contains(result, "__nvvm_reflect")) << "a question is left:\n" << result;
  }
}

} // namespace
