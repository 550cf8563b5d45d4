//===- driver/build_command.cpp - `kiln build` ----------------------------===//
//
//   $ kiln build examples/vector_add.py --emit fatbin -o out -v
//   out/vector_add.0.fatbin
//     kernel vector_add (float32[::1], float32[::1], float32[::1])
//       sm_75: 10 registers, 0 bytes stack, 0 bytes spilled, 0 bytes shared
//       ...
//
// Work runs in three parallel phases: PTX (or LLVM IR, or host objects)
// for every specialization and PTX target; cubins for every specialization
// and real architecture (ptxas, or nvJitLink with link=[...] files); fat
// binaries per specialization. Each task has its own LLVMContext and only
// reads the typed IR. A module build (--emit module) needs host objects and
// fat binaries, which driver/module_writer.h links into one extension.
//
//===----------------------------------------------------------------------===//

#include "driver/build_command.h"

#include "backend/arch_list.h"
#include "backend/cubin_builder.h"
#include "backend/cuda_archs.h"
#include "backend/cuda_toolkit.h"
#include "backend/fatbinary.h"
#include "backend/kernel_compiler.h"
#include "backend/manifest.h"
#include "backend/target_machines.h"
#include "backend/temporary_directory.h"
#include "driver/build_cache.h"
#include "driver/bundle_writer.h"
#include "driver/depfile.h"
#include "driver/module_writer.h"
#include "driver/progress.h"
#include "driver/python_config.h"
#include "driver/version.h"
#include "frontend/emit_typed_ir.h"
#include "frontend/frontend.h"
#include "runtime/module_format.h"

#include <llvm/ADT/ScopeExit.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/ThreadPool.h>
#include <llvm/Support/Threading.h>
#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

#include <map>
#include <mutex>

namespace kiln::driver {

namespace {

/// One kernel specialization and everything built for it.
struct KernelBuild {
  const ir::Function *kernel;
  /// File names start with this: "add.0" for the first specialization.
  std::string stem;
  /// "kernel 'add' (float32[::1], int64)", for messages.
  std::string description;
  /// "add(float32[::1], int64)", for progress lines.
  std::string progressName;
  std::map<unsigned, backend::CompiledCode> ptx; // by .target
  std::map<unsigned, std::string> cubins;        // by sm_
  std::map<unsigned, cuda::ResourceUsage> usage; // by sm_
  std::string fatbin;
  std::optional<backend::CompiledCode> host;
};

std::string describe(const ir::Function &kernel) {
  std::string text = "kernel '" + kernel.sourceName + "' (";
  for (size_t i = 0; i < kernel.arguments.size(); ++i)
    text += (i ? ", " : "") + kernel.arguments[i]->type()->str();
  return text + ")";
}

std::string progressNameOf(const ir::Function &kernel) {
  std::vector<std::string> types;
  for (const auto &argument : kernel.arguments)
    types.push_back(argument->type()->str());
  return progressName(kernel.sourceName, types);
}

std::string stemOf(const ir::Function &kernel) {
  auto [qualified, number] = llvm::StringRef(kernel.symbol).rsplit('$');
  return kernel.sourceName + "." + number.str();
}

/// Errors of the parallel tasks, reported in a stable order afterwards.
class ErrorLog {
public:
  void add(std::string key, std::string message) {
    std::lock_guard<std::mutex> lock(mutex);
    messages.emplace(std::move(key), std::move(message));
  }
  bool empty() const { return messages.empty(); }
  void print() const {
    for (const auto &[key, message] : messages)
      llvm::WithColor::error(llvm::errs(), "kiln") << message << '\n';
  }

private:
  std::mutex mutex;
  std::multimap<std::string, std::string> messages;
};

std::string sortKey(size_t index, unsigned arch) {
  return llvm::formatv("{0:d6}.{1:d4}", index, arch).str();
}

llvm::Error writeFile(llvm::StringRef directory, llvm::StringRef name, llvm::StringRef bytes,
                      std::vector<std::string> &written) {
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, name);
  std::error_code error;
  llvm::raw_fd_ostream stream(path, error, llvm::sys::fs::OF_None);
  if (error)
    return llvm::createStringError(error,
                                   "cannot write '" + path.str().str() + "': " + error.message());
  stream << bytes;
  stream.close();
  if (stream.has_error())
    return llvm::createStringError(stream.error(), "cannot write '" + path.str().str() +
                                                       "': " + stream.error().message());
  written.push_back(path.str().str());
  return llvm::Error::success();
}

void applyOverrides(ir::Module &module, const BuildOptions &options) {
  for (const auto &function : module.functions) {
    JitOptions &jit = function->options;
    jit.fastmath |= options.fastmath;
    jit.debug |= options.debug;
    jit.lineinfo |= options.lineinfo;
    if (options.opt)
      jit.optimize = *options.opt != 0;
    if (options.debug)
      jit.optimize = false; // as Numba: debug code is not optimized
    if (options.maxRegisters)
      jit.maxRegisters = options.maxRegisters;
  }
}

/// Files named in link=[...], relative to the kernel module's folder.
std::vector<std::string> linkFiles(const ir::Function &kernel, llvm::StringRef modulePath) {
  std::vector<std::string> files;
  llvm::StringRef folder = llvm::sys::path::parent_path(modulePath);
  for (const std::string &file : kernel.options.link) {
    llvm::SmallString<256> path(file);
    if (llvm::sys::path::is_relative(path) && !folder.empty()) {
      path = folder;
      llvm::sys::path::append(path, file);
    }
    files.push_back(path.str().str());
  }
  return files;
}

void printUsage(const KernelBuild &build, llvm::raw_ostream &os) {
  os << "  " << build.description << '\n';
  for (const auto &[arch, usage] : build.usage) {
    const cuda::FunctionResources *resources =
        usage.function(build.ptx.begin()->second.interface.entryName);
    os << "    " << cuda::smName(arch) << ": ";
    if (!resources) {
      os << "no resource report\n";
      continue;
    }
    os << resources->registers << " registers, " << resources->stackFrameBytes << " bytes stack, "
       << resources->spillStoreBytes << " bytes spill stores, " << resources->spillLoadBytes
       << " bytes spill loads, " << resources->sharedMemoryBytes << " bytes shared\n";
  }
}

/// The module's top-level names bound to constants a manifest can hold,
/// sorted by name.
std::vector<backend::ManifestConstant> moduleConstants(const ModuleScope &scope) {
  std::vector<backend::ManifestConstant> constants;
  for (const auto &binding : scope.moduleBindings()) {
    const ModuleValue &value = binding.getValue();
    if (value.kind() == ModuleValue::Kind::Constant &&
        backend::isManifestConstant(value.constantValue()))
      constants.push_back({binding.getKey().str(), value.constantValue()});
  }
  llvm::sort(constants, [](const backend::ManifestConstant &a, const backend::ManifestConstant &b) {
    return a.name < b.name;
  });
  return constants;
}

llvm::Expected<backend::ManifestModule>
describeModule(const BuildOptions &options, const CheckedModule &module, llvm::StringRef moduleName,
               llvm::ArrayRef<backend::ManifestEntry> entries) {
  llvm::Expected<std::string> source = cuda::readFileBytes(options.file);
  if (!source)
    return source.takeError();
  backend::ManifestModule description;
  description.name = moduleName.str();
  description.kilnVersion = versionNumber();
  description.sourceFile = llvm::sys::path::filename(options.file).str();
  description.sourceChecksum = kilnChecksum(source->data(), source->size());
  description.options = {options.fastmath, options.debug,        options.lineinfo,
                         options.opt,      options.maxRegisters, options.ptxasFlags};
  for (const backend::ManifestEntry &entry : entries) {
    description.cubinArchs.insert(entry.cubinArchs.begin(), entry.cubinArchs.end());
    description.ptxArchs.insert(entry.ptxArchs.begin(), entry.ptxArchs.end());
  }
  if (module.scope)
    description.constants = moduleConstants(*module.scope);
  return description;
}

} // namespace

std::optional<std::string> takePtxasFlags(std::vector<std::string> &arguments,
                                          std::vector<std::string> &flags) {
  std::vector<std::string> kept;
  for (size_t i = 0; i < arguments.size(); ++i) {
    llvm::StringRef argument = arguments[i];
    llvm::StringRef value;
    if (argument == "-Xptxas" || argument == "--Xptxas") {
      if (i + 1 == arguments.size())
        return argument.str() + " needs a value, such as " + argument.str() + " --warn-on-spills";
      value = arguments[++i];
    } else if (argument.consume_front("-Xptxas=") || argument.consume_front("--Xptxas=")) {
      value = argument;
    } else {
      kept.push_back(arguments[i]);
      continue;
    }
    llvm::SmallVector<llvm::StringRef, 4> parts;
    value.split(parts, ',', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef part : parts)
      flags.push_back(part.str());
  }
  arguments = std::move(kept);
  return std::nullopt;
}

int runBuild(const BuildOptions &options) {
  if (options.emit == EmitKind::Module) {
    std::string name =
        options.moduleName.empty() ? llvm::sys::path::stem(options.file).str() : options.moduleName;
    if (std::optional<std::string> problem = moduleNameProblem(name)) {
      llvm::WithColor::error(llvm::errs(), "kiln")
          << *problem << (options.moduleName.empty() ? "; name the module with --module" : "")
          << '\n';
      return 2;
    }
  }
  FrontendOptions frontendOptions;
  frontendOptions.moduleName = options.moduleName;
  frontendOptions.signatureFlags = options.signatures;
  llvm::Expected<std::unique_ptr<CheckedModule>> checked =
      checkModule(options.file, frontendOptions);
  if (!checked) {
    llvm::WithColor::error(llvm::errs(), "kiln") << llvm::toString(checked.takeError()) << '\n';
    return 1;
  }
  CheckedModule &module = **checked;
  std::string moduleName =
      options.moduleName.empty() ? llvm::sys::path::stem(options.file).str() : options.moduleName;
  std::unique_ptr<ir::Module> typed;
  if (!module.hasErrors())
    typed = emitTypedIR(module, moduleName);
  module.diags.renderText(llvm::errs(), options.color);
  if (module.hasErrors() || !typed)
    return 1;
  applyOverrides(*typed, options);

  // Ask Python first: a wrong --python should fail before minutes of work.
  std::string extensionSuffix;
  if (options.emit == EmitKind::Module) {
    llvm::Expected<std::string> suffix = options.extensionSuffix
                                             ? llvm::Expected<std::string>(*options.extensionSuffix)
                                             : driver::extensionSuffix(options.python);
    if (!suffix) {
      llvm::WithColor::error(llvm::errs(), "kiln") << llvm::toString(suffix.takeError()) << '\n';
      return 1;
    }
    extensionSuffix = std::move(*suffix);
  }

  if (std::error_code error = llvm::sys::fs::create_directories(options.outputDirectory)) {
    llvm::WithColor::error(llvm::errs(), "kiln")
        << "cannot create the output folder '" << options.outputDirectory
        << "': " << error.message() << '\n';
    return 1;
  }
  std::vector<std::string> written;
  if (options.emit == EmitKind::Typed) {
    std::string text;
    llvm::raw_string_ostream stream(text);
    typed->print(stream);
    if (llvm::Error error =
            writeFile(options.outputDirectory, moduleName + ".typed", text, written)) {
      llvm::WithColor::error(llvm::errs(), "kiln") << llvm::toString(std::move(error)) << '\n';
      return 1;
    }
    if (!options.quiet)
      for (const std::string &path : written)
        llvm::outs() << path << '\n';
    return 0;
  }

  std::vector<KernelBuild> builds;
  for (const auto &function : typed->functions)
    if (function->kind == ir::Function::Kind::Kernel)
      builds.push_back({function.get(),
                        stemOf(*function),
                        describe(*function),
                        progressNameOf(*function),
                        {},
                        {},
                        {},
                        {},
                        {}});

  bool forHost = options.emit == EmitKind::Object;
  bool withHost = forHost || options.emit == EmitKind::Module;
  std::optional<cuda::CudaToolkit> toolkit;
  std::optional<cuda::ArchSelection> archs;
  ErrorLog errors;
  if (!forHost) {
    llvm::Expected<cuda::CudaToolkit> found = cuda::findCudaToolkit();
    if (!found) {
      llvm::WithColor::error(llvm::errs(), "kiln") << llvm::toString(found.takeError()) << '\n';
      return 1;
    }
    toolkit = std::move(*found);
    llvm::Expected<cuda::ArchSelection> selected = cuda::selectArchitectures(
        options.arch ? std::optional<llvm::StringRef>(*options.arch) : std::nullopt);
    if (!selected) {
      llvm::WithColor::error(llvm::errs(), "kiln") << llvm::toString(selected.takeError()) << '\n';
      return 1;
    }
    archs = std::move(*selected);
  }
  std::string libdevice;
  if (toolkit) {
    llvm::Expected<std::string> path = toolkit->require(cuda::ToolkitComponent::Libdevice);
    if (!path) {
      llvm::WithColor::error(llvm::errs(), "kiln") << llvm::toString(path.takeError()) << '\n';
      return 1;
    }
    libdevice = *path;
  }
  backend::KernelCompiler compiler(libdevice);
  // The cache, per (specialization, target); see driver/build_cache.h.
  std::unique_ptr<BuildCache> cache =
      BuildCache::open(options, toolkit ? toolkit->version.str() : std::string());
  std::vector<std::optional<std::string>> semantic(builds.size());
  if (cache)
    for (size_t i = 0; i < builds.size(); ++i)
      semantic[i] = cache->semanticKey(*builds[i].kernel);
  std::string hostTarget = backend::hostTriple();
  llvm::DefaultThreadPool pool(llvm::hardware_concurrency(options.jobs));
  std::mutex resultsMutex;
  // [done/total] per finished task (driver/progress.h), counting the tasks
  // of every phase up front.
  ProgressReporter progress(llvm::errs(),
                            chooseProgressStyle(llvm::errs(), options.quiet, options.verbose));

  bool wantFatbins = options.emit == EmitKind::Fatbin || options.emit == EmitKind::Module;
  bool wantCubins = options.emit == EmitKind::Cubin || wantFatbins ||
                    (options.verbose && options.emit == EmitKind::Ptx);
  // Phase 1: LLVM IR, PTX or host objects.
  progress.expect(
      unsigned(builds.size()) *
      ((withHost ? 1 : 0) + (forHost ? 0
                                     : unsigned(archs->archs.ptxTargets().size()) +
                                           (wantCubins ? unsigned(archs->archs.cubins.size()) : 0) +
                                           (wantFatbins ? 1 : 0))));
  for (size_t i = 0; i < builds.size(); ++i) {
    KernelBuild &build = builds[i];
    if (withHost)
      pool.async([&, i] {
        auto tick = llvm::make_scope_exit([&] { progress.finished(build.progressName + " host"); });
        std::optional<std::string> key;
        if (cache && semantic[i]) {
          key = cache->codeKey(*semantic[i], *build.kernel, "host", hostTarget);
          std::optional<backend::CompiledCode> hit = cache->lookupCode(*key);
          cache->note(hit.has_value(), "host", hostTarget, build.description);
          if (hit) {
            std::lock_guard<std::mutex> lock(resultsMutex);
            build.host = std::move(*hit);
            return;
          }
        }
        llvm::Expected<backend::CompiledCode> code =
            compiler.compileForHost(*build.kernel, backend::CodeForm::Object);
        if (!code)
          return errors.add(sortKey(i, 0),
                            build.description + ": " + llvm::toString(code.takeError()));
        if (key)
          cache->storeCode(*key, *build.kernel, "host", hostTarget, *code);
        std::lock_guard<std::mutex> lock(resultsMutex);
        build.host = std::move(*code);
      });
    if (forHost)
      continue;
    std::set<unsigned> targets = archs->archs.ptxTargets();
    for (unsigned arch : targets)
      pool.async([&, i, arch] {
        auto tick = llvm::make_scope_exit([&] {
          progress.finished(build.progressName +
                            (options.emit == EmitKind::LLVM ? " llvm " : " ptx ") +
                            cuda::smName(arch));
        });
        backend::CodeForm form = options.emit == EmitKind::LLVM ? backend::CodeForm::LLVMIR
                                                                : backend::CodeForm::Assembly;
        const char *kind = form == backend::CodeForm::LLVMIR ? "llvm" : "ptx";
        std::optional<std::string> key;
        if (cache && semantic[i]) {
          key = cache->codeKey(*semantic[i], *build.kernel, kind, cuda::smName(arch));
          std::optional<backend::CompiledCode> hit = cache->lookupCode(*key);
          cache->note(hit.has_value(), kind, cuda::smName(arch), build.description);
          if (hit) {
            std::lock_guard<std::mutex> lock(resultsMutex);
            build.ptx[arch] = std::move(*hit);
            return;
          }
        }
        llvm::Expected<backend::CompiledCode> code =
            compiler.compileForGpu(*build.kernel, arch, form);
        if (!code)
          return errors.add(sortKey(i, arch), build.description + " for " + cuda::smName(arch) +
                                                  ": " + llvm::toString(code.takeError()));
        if (key)
          cache->storeCode(*key, *build.kernel, kind, cuda::smName(arch), *code);
        std::lock_guard<std::mutex> lock(resultsMutex);
        build.ptx[arch] = std::move(*code);
      });
  }
  pool.wait();

  // Phase 2: cubins.
  if (errors.empty() && wantCubins) {
    backend::CubinBuilder cubins(*toolkit, options.ptxasFlags);
    for (size_t i = 0; i < builds.size(); ++i)
      for (unsigned arch : archs->archs.cubins)
        pool.async([&, i, arch] {
          KernelBuild &build = builds[i];
          auto tick = llvm::make_scope_exit(
              [&] { progress.finished(build.progressName + " cubin " + cuda::smName(arch)); });
          const std::string &ptx = build.ptx.at(cuda::ptxTargetForCubin(arch)).bytes;
          std::vector<std::string> links = linkFiles(*build.kernel, options.file);
          std::optional<std::string> key;
          if (cache && semantic[i]) {
            key = cache->cubinKey(*build.kernel, ptx, arch, links);
            std::optional<backend::BuiltCubin> hit = key ? cache->lookupCubin(*key) : std::nullopt;
            cache->note(hit.has_value(), "cubin", cuda::smName(arch), build.description);
            if (hit) {
              std::lock_guard<std::mutex> lock(resultsMutex);
              build.cubins[arch] = std::move(hit->cubin);
              build.usage[arch] = std::move(hit->usage);
              return;
            }
          }
          llvm::Expected<backend::BuiltCubin> cubin =
              cubins.build(build.kernel->options, ptx, build.stem + ".ptx", arch, links);
          if (!cubin)
            return errors.add(sortKey(i, arch),
                              build.description + ": " + llvm::toString(cubin.takeError()));
          if (key)
            cache->storeCubin(*key, *build.kernel, arch, *cubin);
          std::lock_guard<std::mutex> lock(resultsMutex);
          build.cubins[arch] = std::move(cubin->cubin);
          build.usage[arch] = std::move(cubin->usage);
        });
    pool.wait();
  }

  // Phase 3: fat binaries: every cubin, and PTX for the virtual archs
  // (kernels that link other device code carry cubins only: their PTX
  // alone would not load).
  if (errors.empty() && wantFatbins) {
    for (size_t i = 0; i < builds.size(); ++i)
      pool.async([&, i] {
        KernelBuild &build = builds[i];
        auto tick =
            llvm::make_scope_exit([&] { progress.finished(build.progressName + " fatbin"); });
        std::vector<cuda::FatbinImage> images;
        for (const auto &[arch, cubin] : build.cubins)
          images.push_back({cuda::FatbinImageKind::Cubin, arch, cubin});
        if (build.kernel->options.link.empty())
          for (unsigned arch : archs->archs.ptx)
            images.push_back({cuda::FatbinImageKind::Ptx, arch, build.ptx.at(arch).bytes});
        std::optional<std::string> key;
        if (cache && semantic[i]) {
          key = cache->fatbinKey(images);
          std::optional<std::string> hit = cache->lookupFatbin(*key);
          cache->note(hit.has_value(), "fatbin", "-", build.description);
          if (hit) {
            std::lock_guard<std::mutex> lock(resultsMutex);
            build.fatbin = std::move(*hit);
            return;
          }
        }
        llvm::Expected<std::string> fatbin = cuda::createFatbinary(*toolkit, images);
        if (!fatbin)
          return errors.add(sortKey(i, 0),
                            build.description + ": " + llvm::toString(fatbin.takeError()));
        if (key)
          cache->storeFatbin(*key, *build.kernel, *fatbin);
        std::lock_guard<std::mutex> lock(resultsMutex);
        build.fatbin = std::move(*fatbin);
      });
    pool.wait();
  }

  progress.done();
  if (cache)
    cache->finish(options.verbose);
  if (!errors.empty()) {
    errors.print();
    return 1;
  }

  // Write, in a stable order, then the manifest describing it all.
  llvm::Error failure = llvm::Error::success();
  std::vector<backend::ManifestEntry> manifest;
  for (KernelBuild &build : builds) {
    backend::ManifestEntry entry{
        build.kernel,
        build.ptx.empty() ? build.host->interface : build.ptx.begin()->second.interface,
        {},
        {},
        {},
        std::nullopt};
    if (build.host)
      entry.interface.hasBlockEntry = build.host->interface.hasBlockEntry;
    auto write = [&](const std::string &name, llvm::StringRef bytes) {
      if (!failure)
        failure = writeFile(options.outputDirectory, name, bytes, written);
      entry.files.push_back(name);
    };
    switch (options.emit) {
    case EmitKind::LLVM:
      for (const auto &[arch, code] : build.ptx)
        write(build.stem + "." + cuda::smName(arch) + ".ll", code.bytes);
      break;
    case EmitKind::Ptx:
      for (const auto &[arch, code] : build.ptx) {
        write(build.stem + "." + cuda::smName(arch) + ".ptx", code.bytes);
        entry.ptxArchs.insert(arch);
      }
      break;
    case EmitKind::Cubin:
      for (const auto &[arch, cubin] : build.cubins) {
        write(build.stem + "." + cuda::smName(arch) + ".cubin", cubin);
        entry.cubinArchs.insert(arch);
      }
      break;
    case EmitKind::Fatbin:
      write(build.stem + ".fatbin", build.fatbin);
      [[fallthrough]];
    case EmitKind::Module:
      for (const auto &[arch, cubin] : build.cubins)
        entry.cubinArchs.insert(arch);
      if (build.kernel->options.link.empty())
        entry.ptxArchs = archs->archs.ptx;
      break;
    case EmitKind::Object:
      write(build.stem + ".o", build.host->bytes);
      break;
    case EmitKind::Typed:
      break;
    }
    manifest.push_back(std::move(entry));
  }
  if (options.emit == EmitKind::Module) {
    std::vector<uint64_t> sizes;
    for (const KernelBuild &build : builds)
      sizes.push_back(build.fatbin.size());
    std::vector<uint64_t> offsets = payloadOffsets(sizes);
    for (size_t i = 0; i < builds.size(); ++i)
      manifest[i].fatbin = backend::ManifestBlob{
          offsets[i], sizes[i], kilnChecksum(builds[i].fatbin.data(), builds[i].fatbin.size())};
  }
  llvm::Expected<backend::ManifestModule> description =
      describeModule(options, module, moduleName, manifest);
  if (!description)
    failure = llvm::joinErrors(std::move(failure), description.takeError());
  std::string manifestText;
  if (!failure) {
    llvm::raw_string_ostream stream(manifestText);
    backend::writeManifest(stream, *description, manifest);
  }
  if (!failure && options.emit == EmitKind::Module) {
    ExtensionModuleInputs inputs;
    inputs.moduleName = moduleName;
    inputs.manifest = manifestText;
    for (KernelBuild &build : builds) {
      inputs.fatbins.push_back(std::move(build.fatbin));
      inputs.entries.push_back(
          {build.host->interface.entryName, build.host->interface.hasBlockEntry});
      inputs.hostObjects.push_back(std::move(build.host->bytes));
    }
    llvm::Expected<std::string> path =
        writeExtensionModule(inputs, options.outputDirectory, extensionSuffix);
    if (path)
      written.push_back(*path);
    else
      failure = path.takeError();
  } else if (!failure) {
    failure =
        writeFile(options.outputDirectory, moduleName + ".manifest.json", manifestText, written);
  }
  if (!failure && !options.depfile.empty()) {
    std::vector<std::string> links;
    for (const KernelBuild &build : builds)
      for (std::string &file : linkFiles(*build.kernel, options.file))
        links.push_back(std::move(file));
    failure = writeDepfile(options.depfile, written, buildInputs(options.file, links));
  }
  if (failure) {
    llvm::WithColor::error(llvm::errs(), "kiln") << llvm::toString(std::move(failure)) << '\n';
    return 1;
  }
  if (!options.quiet)
    for (const std::string &path : written)
      llvm::outs() << path << '\n';
  if (options.verbose)
    for (const KernelBuild &build : builds)
      if (!build.usage.empty())
        printUsage(build, llvm::outs());
  return 0;
}

} // namespace kiln::driver
