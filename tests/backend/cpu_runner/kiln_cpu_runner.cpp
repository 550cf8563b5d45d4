//===- tests/backend/cpu_runner/kiln_cpu_runner.cpp - Kernels on the CPU from Python ===//
//
// A small C library, loaded with ctypes by tests/backend/kiln_cpu.py, that
// compiles a kernel module for the host with Kiln's back end, links it with
// LLD, loads it, and launches its kernels on the CPU engine. It lets the
// tests write kernels and launches as Numba users do and compare results
// with NumPy, before the real runtime (a Python extension) exists.
//
// Every module is also compiled for the GPU (sm_80 PTX, assembled by
// ptxas), so that each kernel the tests run on the CPU is known to compile
// for both targets.
//
//===----------------------------------------------------------------------===//

#include "backend/cuda_toolkit.h"
#include "backend/host_library.h"
#include "backend/host_target.h"
#include "backend/kernel_compiler.h"
#include "backend/manifest.h"
#include "backend/ptxas.h"
#include "backend/tool_options.h"
#include "frontend/emit/emit_typed_ir.h"
#include "frontend/frontend.h"
#include "runtime/cpu_engine/engine.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

struct LoadedKernel {
  std::string name;
  std::string kind; // "kernel", "ufunc", "reduction"
  std::vector<std::string> argumentTypes;
  kiln::backend::KernelInterface interface;
  kiln::cpu::KernelImage image;
};

} // namespace

struct KilnTestModule {
  void *library = nullptr;
  std::vector<LoadedKernel> kernels;
  std::string description;
};

namespace {

char *copyString(const std::string &text) {
  char *copy = static_cast<char *>(std::malloc(text.size() + 1));
  std::memcpy(copy, text.c_str(), text.size() + 1);
  return copy;
}

kiln::cpu::Engine &engine() {
  static kiln::cpu::Engine instance;
  return instance;
}

std::string describe(const KilnTestModule &module) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  llvm::json::OStream json(stream);
  json.array([&] {
    for (const LoadedKernel &kernel : module.kernels)
      json.object([&] {
        json.attribute("name", kernel.name);
        json.attribute("kind", kernel.kind);
        json.attributeArray("args", [&] {
          for (const std::string &type : kernel.argumentTypes)
            json.value(type);
        });
        json.attributeArray("params", [&] {
          for (const kiln::backend::KernelParameter &parameter : kernel.interface.parameters)
            json.object([&] {
              json.attribute("argument", parameter.argument);
              json.attribute("role", kiln::backend::roleName(parameter.role));
              json.attribute("dimension", parameter.dimension);
              json.attributeArray("path", [&] {
                for (unsigned step : parameter.path)
                  json.value(step);
              });
              json.attribute("type", parameter.machineType);
            });
        });
        json.attribute("synchronizes", kernel.interface.synchronizes);
        json.attribute("raises", kernel.interface.raises);
      });
  });
  return text;
}

} // namespace

extern "C" {

/// Compiles the kernel module at `path` into `workDirectory` and loads it.
/// On failure returns null and sets *error (free with kiln_test_free_string).
KilnTestModule *kiln_test_compile(const char *path, const char *workDirectory, char **error) {
  auto fail = [&](const std::string &message) -> KilnTestModule * {
    *error = copyString(message);
    return nullptr;
  };
  kiln::FrontendOptions options;
  options.readPyproject = false;
  llvm::Expected<std::unique_ptr<kiln::CheckedModule>> checked = kiln::checkModule(path, options);
  if (!checked)
    return fail(llvm::toString(checked.takeError()));
  kiln::CheckedModule &module = **checked;
  std::unique_ptr<kiln::ir::Module> typed;
  if (!module.hasErrors())
    typed = kiln::emitTypedIR(module, llvm::sys::path::stem(path));
  if (module.hasErrors() || !typed) {
    std::string text;
    llvm::raw_string_ostream stream(text);
    module.diags.renderText(stream, false);
    return fail(text);
  }

  static const std::optional<kiln::cuda::CudaToolkit> toolkit =
      []() -> std::optional<kiln::cuda::CudaToolkit> {
    llvm::Expected<kiln::cuda::CudaToolkit> found = kiln::cuda::findCudaToolkit();
    if (!found) {
      llvm::consumeError(found.takeError());
      return std::nullopt;
    }
    return std::move(*found);
  }();
  if (!toolkit)
    return fail("no CUDA toolkit for the GPU half of the check");
  llvm::Expected<std::string> libdevice = toolkit->require(kiln::cuda::ToolkitComponent::Libdevice);
  if (!libdevice)
    return fail(llvm::toString(libdevice.takeError()));
  auto loaded = std::make_unique<KilnTestModule>();
  kiln::backend::KernelCompiler compiler(*libdevice);
  std::vector<std::string> objects;
  for (const auto &function : typed->functions) {
    if (function->kind != kiln::ir::Function::Kind::Kernel)
      continue;
    llvm::Expected<kiln::backend::CompiledCode> ptx =
        compiler.compileForGpu(*function, 80, kiln::backend::CodeForm::Assembly);
    if (!ptx)
      return fail("GPU: " + llvm::toString(ptx.takeError()));
    if (function->options.link.empty()) {
      llvm::Expected<kiln::cuda::AssembledCubin> cubin = kiln::cuda::assemblePtx(
          *toolkit, ptx->bytes, 80, kiln::backend::ptxasOptionsFor(function->options));
      if (!cubin)
        return fail("GPU: " + llvm::toString(cubin.takeError()));
    }
    llvm::Expected<kiln::backend::CompiledCode> code =
        compiler.compileForHost(*function, kiln::backend::CodeForm::Object);
    if (!code)
      return fail(llvm::toString(code.takeError()));
    llvm::SmallString<256> object(workDirectory);
    llvm::sys::path::append(object, code->interface.entryName + ".o");
    std::error_code ec;
    llvm::raw_fd_ostream stream(object, ec);
    if (ec)
      return fail("cannot write " + object.str().str() + ": " + ec.message());
    stream << code->bytes;
    objects.push_back(object.str().str());
    LoadedKernel kernel;
    kernel.name = function->sourceName;
    kernel.kind = kiln::backend::kernelKind(*function).str();
    for (const kiln::ir::Argument *argument : function->arguments)
      kernel.argumentTypes.push_back(argument->type()->str());
    kernel.interface = std::move(code->interface);
    loaded->kernels.push_back(std::move(kernel));
  }
  llvm::SmallString<256> library(workDirectory);
  llvm::sys::path::append(library, "kernels.so");
  if (llvm::Error linkError = kiln::backend::linkSharedLibrary(objects, library))
    return fail(llvm::toString(std::move(linkError)));
  loaded->library = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!loaded->library)
    return fail(std::string("cannot load the kernels: ") + dlerror());
  for (LoadedKernel &kernel : loaded->kernels) {
    const std::string &entry = kernel.interface.entryName;
    kernel.image.threadEntry = reinterpret_cast<KilnCpuKernelEntry>(
        dlsym(loaded->library, kiln::backend::threadEntryName(entry).c_str()));
    kernel.image.blockEntry = reinterpret_cast<KilnCpuKernelEntry>(
        dlsym(loaded->library, kiln::backend::blockEntryName(entry).c_str()));
    kernel.image.staticSharedBytes = static_cast<uint32_t>(kernel.interface.staticSharedBytes);
    kernel.image.localBytesPerThread = static_cast<uint32_t>(kernel.interface.localBytes);
    kernel.image.name = kernel.name.c_str();
    if (!kernel.image.threadEntry)
      return fail("the library has no entry for " + entry);
  }
  loaded->description = describe(*loaded);
  return loaded.release();
}

/// JSON: one object per kernel specialization, with its parameters.
const char *kiln_test_describe(KilnTestModule *module) {
  return module->description.c_str();
}

/// Launches kernel `index`; 0 on success, else 1 with *error set.
int kiln_test_launch(KilnTestModule *module, int index, const unsigned *grid, const unsigned *block,
                     unsigned dynamicShared, void **args, char **error) {
  const LoadedKernel &kernel = module->kernels.at(static_cast<size_t>(index));
  kiln::cpu::LaunchConfig config;
  config.grid = {grid[0], grid[1], grid[2]};
  config.block = {block[0], block[1], block[2]};
  config.dynamicSharedBytes = dynamicShared;
  kiln::cpu::LaunchResult result = engine().launch(kernel.image, config, args);
  if (result.ok())
    return 0;
  *error = copyString(result.message());
  return 1;
}

void kiln_test_free(KilnTestModule *module) {
  delete module;
}
void kiln_test_free_string(char *text) {
  std::free(text);
}

} // extern "C"
