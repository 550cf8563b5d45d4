//===- pipeline/pipeline.cpp - One kernel module, built --------------------===//

#include "pipeline/pipeline.h"

#include "backend/codegen/target_machines.h"
#include "backend/cuda_tools/arch_list.h"
#include "backend/cuda_tools/cuda_archs.h"
#include "backend/cuda_tools/cuda_toolkit.h"
#include "backend/cuda_tools/fatbinary.h"
#include "frontend/emit/emit_typed_ir.h"
#include "ir/ir_parser.h"
#include "ir/libdevice.h"
#include "pipeline/build_cache.h"
#include "pipeline/cached_step.h"
#include "pipeline/machine_tools.h"
#include "pipeline/module_writer.h"
#include "pipeline/outputs.h"
#include "pipeline/python_config.h"
#include "pipeline/python_host_values.h"
#include "pipeline/source_paths.h"
#include "support/temporary_directory.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/ScopeExit.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/ThreadPool.h>
#include <llvm/Support/Threading.h>
#include <llvm/Support/xxhash.h>

#include <mutex>
#include <set>
#include <tuple>

namespace kiln::pipeline {

char SourceDiagnosedError::ID = 0;

void SourceDiagnosedError::log(llvm::raw_ostream &os) const {
  os << "the kernel module has errors";
}

std::error_code SourceDiagnosedError::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}

namespace {

std::string describe(const ir::Function &kernel) {
  std::string text = "kernel '" + kernel.sourceName + "' (";
  for (size_t i = 0; i < kernel.arguments.size(); ++i)
    text += (i ? ", " : "") + kernel.arguments[i]->type()->str();
  return text + ")";
}

/// "saxpy(float32[::1], float32)": a kernel and its argument types, with
/// arrays written as Numba's signatures write them.
std::string progressNameOf(const ir::Function &kernel) {
  std::string text = kernel.sourceName + "(";
  for (size_t i = 0; i < kernel.arguments.size(); ++i) {
    const Type *type = kernel.arguments[i]->type();
    text += i ? ", " : "";
    if (const auto *array = llvm::dyn_cast<ArrayType>(type)) {
      text += array->elementType()->str() + "[";
      for (unsigned d = 0; d < array->rank(); ++d) {
        bool contiguous = (array->arrayLayout() == ArrayLayout::C && d + 1 == array->rank()) ||
                          (array->arrayLayout() == ArrayLayout::F && d == 0);
        text += std::string(d ? ", " : "") + (contiguous ? "::1" : ":");
      }
      text += "]";
    } else {
      text += type->str();
    }
  }
  return text + ")";
}

std::string stemOf(const ir::Function &kernel) {
  auto [qualified, number] = llvm::StringRef(kernel.symbol).rsplit('$');
  return kernel.sourceName + "." + number.str();
}

/// Errors of the parallel tasks, returned in a stable order afterwards.
class ErrorLog {
public:
  void add(size_t kernel, unsigned arch, std::string message) {
    std::lock_guard<std::mutex> lock(mutex);
    messages.emplace(llvm::formatv("{0:d6}.{1:d4}", kernel, arch).str(), std::move(message));
  }
  bool empty() const { return messages.empty(); }
  llvm::Error take() {
    llvm::Error all = llvm::Error::success();
    for (auto &[key, message] : messages)
      all = llvm::joinErrors(std::move(all),
                             llvm::createStringError(llvm::inconvertibleErrorCode(), message));
    messages.clear();
    return all;
  }

private:
  std::mutex mutex;
  std::multimap<std::string, std::string> messages;
};

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

/// Whether the build writes loadable fat binaries, whose images hold
/// every kernel that compiles with the same options, rather than files of
/// each specialization's own.
bool buildsLinkedImages(const BuildOptions &options) {
  return !options.hostOnly &&
         (options.emit == EmitKind::Fatbin || options.emit == EmitKind::Module);
}

/// At most this many kernels, on average, share an image. ptxas's memory
/// and time grow with the image (160 MB for 500 small kernels), and an
/// edited kernel costs a relink and ptxas runs of its whole image; images
/// of this size keep both small and let `-j` run ptxas on several at once,
/// for a few more ptxas starts.
constexpr size_t kernelsPerImage = 64;

/// Which of `buckets` images of the same options a kernel goes to: by a
/// hash of its symbol, so that adding or removing other kernels leaves it
/// where it was as long as the number of images stays the same.
size_t imageBucket(llvm::StringRef symbol, size_t buckets) {
  return buckets < 2 ? 0 : static_cast<size_t>(llvm::xxh3_64bits(symbol) % buckets);
}

/// The images of a build: for fat binaries, one per set of code-generation
/// options and up to about kernelsPerImage kernels (a kernel that links
/// other device code, or has debug information, has one of its own); for
/// cubins, one per specialization.
std::vector<ImageArtifacts> formImages(const BuildOptions &options, llvm::StringRef moduleName,
                                       std::vector<KernelArtifacts> &kernels) {
  std::vector<ImageArtifacts> images;
  bool wantCubins =
      !options.hostOnly && (buildsLinkedImages(options) || options.emit == EmitKind::Cubin ||
                            (options.resourceUsage && options.emit == EmitKind::Ptx));
  if (!wantCubins)
    return images;
  bool linked = buildsLinkedImages(options);
  using OptionsKey = std::tuple<bool, bool, bool, bool, std::optional<unsigned>>;
  auto optionsOf = [](const JitOptions &jit) {
    return OptionsKey{jit.fastmath, jit.debug, jit.optimize, jit.lineinfo, jit.maxRegisters};
  };
  // ptxas refuses the debug information of several compile units in one
  // module ("overlapping non-identical data"): a kernel built with debug
  // information has an image of its own, as one that links other code.
  auto shares = [&](const JitOptions &jit) { return linked && jit.link.empty() && !jit.debug; };
  std::map<OptionsKey, size_t> sharing;
  for (const KernelArtifacts &built : kernels)
    if (shares(built.kernel->options))
      ++sharing[optionsOf(built.kernel->options)];
  std::map<std::pair<OptionsKey, size_t>, size_t> byOptions;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const ir::Function &kernel = *kernels[i].kernel;
    const JitOptions &jit = kernel.options;
    OptionsKey codeOptions = optionsOf(jit);
    size_t buckets = (sharing[codeOptions] + kernelsPerImage - 1) / kernelsPerImage;
    std::pair<OptionsKey, size_t> key{codeOptions, imageBucket(kernel.symbol, buckets)};
    std::optional<size_t> into;
    if (auto found = byOptions.find(key); shares(jit) && found != byOptions.end())
      into = found->second;
    if (!into) {
      into = images.size();
      if (shares(jit))
        byOptions.emplace(key, *into);
      ImageArtifacts &image = images.emplace_back();
      image.linked = linked;
      image.options = &jit;
      image.linkFiles = linkFiles(kernel, options.file);
      if (linked) {
        image.stem = *into == 0 ? moduleName.str() : moduleName.str() + "." + std::to_string(*into);
      } else {
        image.stem = kernels[i].stem;
        image.description = kernels[i].description;
        image.progressName = kernels[i].progressName;
      }
    }
    kernels[i].image = *into;
    images[*into].members.push_back(i);
  }
  // Messages about an image of one kernel name the kernel.
  for (ImageArtifacts &image : images)
    if (image.linked && image.members.size() == 1) {
      image.description = kernels[image.members.front()].description;
      image.progressName = kernels[image.members.front()].progressName;
    } else if (image.linked) {
      std::string kernelCount = std::to_string(image.members.size()) + " kernels";
      image.description = "the image '" + image.stem + "' of " + kernelCount;
      image.progressName = image.stem + " (" + kernelCount + ")";
    }
  return images;
}

/// The parallel phases of one build, over its kernels and images.
class KernelBuilder {
public:
  /// `extensionModule`: the name of the extension module the build makes,
  /// or empty where it makes none.
  KernelBuilder(const BuildOptions &options, BuildReporter &reporter, MachineTools &tools,
                std::vector<KernelArtifacts> &kernels, std::vector<ImageArtifacts> &images,
                std::string extensionModule)
      : options(options), reporter(reporter), tools(tools), kernels(kernels), images(images),
        extensionModule(std::move(extensionModule)),
        pool(llvm::hardware_concurrency(options.jobs)) {}

  llvm::Error run();
  const std::optional<cuda_tools::ArchSelection> &architectures() const { return archs; }
  /// The extension module's object (backend/host/extension_module.h),
  /// once run() has made it.
  std::string takeExtensionObject() { return std::move(extensionObject); }

private:
  llvm::Error findTools();
  /// Makes the compiler of host code, which needs the CUDA toolkit only
  /// where a kernel calls cuda.libdevice (whose code is the toolkit's).
  void useLibdeviceForHost();
  void compileCode(size_t index, std::optional<unsigned> arch);
  void findImage(size_t index, unsigned arch);
  void linkImage(size_t index, unsigned arch);
  void buildCubin(size_t index, unsigned arch, backend::CubinBuilder &cubins);
  void buildFatbin(size_t index);
  /// The extension module's object: from the cache where it holds one for
  /// the module's name and entries, which neither moved lines nor edited
  /// bodies change, else made by LLVM.
  void makeExtensionObject();
  /// Sets the extension object's entries (the specializations' host
  /// entries, in manifest order) and its cache key, once the host code is
  /// known.
  void describeExtension();
  /// Asks the remotes at once for what the lookups of the next phase will
  /// want: the images' PTX and the kernels' host code, then the cubins
  /// (and the extension object).
  void prefetchCodeKeys(const std::set<unsigned> &targets, bool withHost);
  void prefetchCubinKeys();
  /// Whether kernel `index` is cached (its semantic key is known).
  bool cached(size_t index) const { return cache && semantic[index]; }
  /// Whether image `index` is cached: whether all its kernels are.
  bool imageCached(size_t index) const {
    return llvm::all_of(images[index].members, [&](size_t member) { return cached(member); });
  }
  /// Whether image `index`'s PTX is looked up before its kernels' IR
  /// (findImage), which is then compiled or read only where it missed.
  bool foundFirst(size_t index) const { return images[index].linked && imageCached(index); }
  /// The key of image `index`'s linked PTX for .target `arch`.
  std::string linkedCodeKey(size_t index, unsigned arch) const;
  /// The key of kernel `index`'s LLVM IR for .target `arch`.
  std::string deviceCodeKey(size_t index, unsigned arch) const;
  /// Whether kernel `index`'s LLVM IR is optimized once, for the build's
  /// lowest PTX target, and serves every target (sharedDeviceCode): the
  /// NVPTX optimizer gives the same IR for every target, except where
  /// libdevice's code asks which architecture it runs on (__CUDA_ARCH).
  /// The PTX each target's code generation makes of it still differs.
  bool sharesDeviceCode(size_t index) const {
    return index < sharedCode.size() && sharedCode[index];
  }
  llvm::Expected<backend::CompiledCode> sharedDeviceCode(size_t index);
  /// The form of the device code compiled per kernel.
  backend::CodeForm deviceCodeForm() const {
    return options.emit == EmitKind::LLVM || buildsLinkedImages(options)
               ? backend::CodeForm::LLVMIR
               : backend::CodeForm::Assembly;
  }
  /// Adds a finished step to `steps` (under resultsMutex).
  void recordStep(std::vector<BuildStep> &steps, llvm::StringRef kind, llvm::StringRef target,
                  const StepOutcome &outcome);
  /// Gives each kernel what ptxas reported for its entry function in its
  /// image's cubins.
  void shareImageResults();

  const BuildOptions &options;
  BuildReporter &reporter;
  MachineTools &tools;
  std::vector<KernelArtifacts> &kernels;
  std::vector<ImageArtifacts> &images;
  std::optional<cuda_tools::CudaToolkit> toolkit;
  std::optional<cuda_tools::ArchSelection> archs;
  std::optional<backend::KernelCompiler> compiler;
  std::unique_ptr<BuildCache> cache;
  std::vector<std::optional<std::string>> semantic;
  /// Per image: the PTX targets findImage found its PTX for.
  std::vector<std::set<unsigned>> foundTargets;
  /// Per kernel, its LLVM IR for every PTX target, optimized for the lowest
  /// once: null for a kernel that does not share it (sharesDeviceCode);
  /// empty where the build compiles no LLVM IR for two targets or more.
  struct SharedDeviceCode {
    std::once_flag once;
    std::optional<backend::CompiledCode> code;
    std::string error;
  };
  std::vector<std::unique_ptr<SharedDeviceCode>> sharedCode;
  unsigned lowestTarget = 0;
  std::string extensionModule;
  std::vector<backend::ExtensionEntry> extensionEntries;
  std::optional<std::string> extensionKey;
  std::string extensionObject;
  llvm::DefaultThreadPool pool;
  std::mutex resultsMutex;
  ErrorLog errors;
};

void KernelBuilder::useLibdeviceForHost() {
  bool needed = llvm::any_of(
      kernels, [](const KernelArtifacts &build) { return ir::callsLibdevice(*build.kernel); });
  if (!needed) {
    compiler.emplace("");
    return;
  }
  // The code generator reports what is missing, for the call that needs it.
  llvm::Expected<cuda_tools::CudaToolkit> found = tools.toolkit();
  if (!found) {
    compiler.emplace("", llvm::toString(found.takeError()));
    return;
  }
  llvm::Expected<std::string> path = found->require(cuda_tools::ToolkitComponent::Libdevice);
  if (!path) {
    compiler.emplace("", llvm::toString(path.takeError()));
    return;
  }
  toolkit = std::move(*found);
  compiler.emplace(*path);
}

llvm::Error KernelBuilder::findTools() {
  if (options.emit == EmitKind::Object || options.hostOnly) {
    useLibdeviceForHost();
    return llvm::Error::success();
  }
  llvm::Expected<cuda_tools::CudaToolkit> found = tools.toolkit();
  if (!found)
    return found.takeError();
  toolkit = std::move(*found);
  std::optional<cuda_tools::ConfiguredArchList> configured;
  if (options.project.archs)
    configured = cuda_tools::ConfiguredArchList{*options.project.archs, options.project.origin()};
  llvm::Expected<cuda_tools::ArchSelection> selected = cuda_tools::selectArchitectures(
      options.arch ? std::optional<llvm::StringRef>(*options.arch) : std::nullopt, configured);
  if (!selected)
    return selected.takeError();
  archs = std::move(*selected);
  llvm::Expected<std::string> libdevice = toolkit->require(cuda_tools::ToolkitComponent::Libdevice);
  if (!libdevice)
    return libdevice.takeError();
  compiler.emplace(*libdevice);
  return llvm::Error::success();
}

void KernelBuilder::recordStep(std::vector<BuildStep> &steps, llvm::StringRef kind,
                               llvm::StringRef target, const StepOutcome &outcome) {
  const char *origin = !outcome.source                            ? "uncached"
                       : *outcome.source == StepSource::LocalHit  ? "hit"
                       : *outcome.source == StepSource::RemoteHit ? "remote hit"
                                                                  : "miss";
  steps.push_back({kind.str(), target.str(), origin, outcome.microseconds});
}

/// Host code (no arch) or, per PTX target, PTX or LLVM IR.
void KernelBuilder::compileCode(size_t index, std::optional<unsigned> arch) {
  KernelArtifacts &build = kernels[index];
  backend::CodeForm form = arch ? deviceCodeForm() : backend::CodeForm::Object;
  const char *kind = !arch ? "host" : form == backend::CodeForm::LLVMIR ? "llvm" : "ptx";
  std::string target = arch ? cuda_tools::smName(*arch) : backend::hostTriple();
  auto tick = llvm::make_scope_exit(
      [&] { reporter.taskFinished(build.progressName + " " + kind + (arch ? " " + target : "")); });
  std::optional<std::string> key;
  if (cached(index))
    key = form == backend::CodeForm::LLVMIR && arch
              ? deviceCodeKey(index, *arch)
              : cache->codeKey(*semantic[index], *build.kernel, kind, target);
  StepOutcome outcome;
  llvm::Expected<backend::CompiledCode> code = cachedStep<backend::CompiledCode>(
      cache.get(), key, {kind, target, build.description},
      [&](const std::string &k) { return cache->lookupCode(k); },
      [&]() -> llvm::Expected<backend::CompiledCode> {
        if (!arch)
          return compiler->compileForHost(*build.kernel, form,
                                          linkFiles(*build.kernel, options.file));
        if (sharesDeviceCode(index))
          return sharedDeviceCode(index);
        return compiler->compileForGpu(*build.kernel, *arch, form);
      },
      [&](const std::string &k, const backend::CompiledCode &c) {
        cache->storeCode(k, build.kernel->symbol, kind, target, c);
      },
      outcome);
  if (!code)
    return errors.add(index, arch.value_or(0),
                      build.description + (arch ? " for " + target : std::string()) + ": " +
                          llvm::toString(code.takeError()));
  std::lock_guard<std::mutex> lock(resultsMutex);
  recordStep(build.steps, kind, target, outcome);
  if (arch)
    build.ptx[*arch] = std::move(*code);
  else
    build.host = std::move(*code);
}

llvm::Expected<backend::CompiledCode> KernelBuilder::sharedDeviceCode(size_t index) {
  SharedDeviceCode &shared = *sharedCode[index];
  std::call_once(shared.once, [&] {
    llvm::Expected<backend::CompiledCode> code =
        compiler->compileForGpu(*kernels[index].kernel, lowestTarget, backend::CodeForm::LLVMIR);
    if (code)
      shared.code = std::move(*code);
    else
      shared.error = llvm::toString(code.takeError());
  });
  if (!shared.code)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), shared.error);
  return *shared.code;
}

std::string KernelBuilder::deviceCodeKey(size_t index, unsigned arch) const {
  std::string target = cuda_tools::smName(arch);
  // The IR depends on the target it was optimized for, which the key names
  // where that is another.
  if (sharesDeviceCode(index) && arch != lowestTarget)
    target += " optimized for " + cuda_tools::smName(lowestTarget);
  return cache->codeKey(*semantic[index], *kernels[index].kernel, "llvm", target);
}

std::string KernelBuilder::linkedCodeKey(size_t index, unsigned arch) const {
  std::vector<std::string> memberKeys;
  for (size_t member : images[index].members)
    memberKeys.push_back(deviceCodeKey(member, arch));
  return cache->linkedCodeKey(memberKeys, cuda_tools::smName(arch));
}

/// Image `index`'s PTX for .target `arch` from the cache, with its kernels'
/// interfaces, which is all a build needs of their LLVM IR: a warm build
/// reads no kernel's IR. A miss is noted when linkImage compiles it.
void KernelBuilder::findImage(size_t index, unsigned arch) {
  ImageArtifacts &image = images[index];
  std::string target = cuda_tools::smName(arch);
  auto start = std::chrono::steady_clock::now();
  std::optional<CacheHit<LinkedCode>> hit =
      cache->lookupLinkedCode(linkedCodeKey(index, arch), image.members.size());
  if (!hit)
    return;
  cache->note(hit->source, "ptx", target, image.description);
  StepOutcome outcome{hit->source, microsecondsSince(start)};
  std::lock_guard<std::mutex> lock(resultsMutex);
  recordStep(image.steps, "ptx", target, outcome);
  image.ptx[arch] = std::move(hit->value.ptx);
  for (size_t i = 0; i < image.members.size(); ++i)
    kernels[image.members[i]].ptx[arch] = {std::move(hit->value.members[i]), {}};
  foundTargets[index].insert(arch);
}

/// The PTX of image `index` for .target `arch`: its kernels' LLVM IR,
/// linked, or its one kernel's PTX.
void KernelBuilder::linkImage(size_t index, unsigned arch) {
  ImageArtifacts &image = images[index];
  if (!image.linked) {
    std::lock_guard<std::mutex> lock(resultsMutex);
    image.ptx[arch] = kernels[image.members.front()].ptx.at(arch).bytes;
    return;
  }
  std::string target = cuda_tools::smName(arch);
  auto tick =
      llvm::make_scope_exit([&] { reporter.taskFinished(image.progressName + " ptx " + target); });
  std::vector<llvm::StringRef> members;
  for (size_t member : image.members)
    members.push_back(kernels[member].ptx.at(arch).bytes);
  std::optional<std::string> key;
  if (imageCached(index))
    key = linkedCodeKey(index, arch);
  StepOutcome outcome;
  llvm::Expected<LinkedCode> code = cachedStep<LinkedCode>(
      cache.get(), key, {"ptx", target, image.description},
      // findImage looked it up already.
      [](const std::string &) { return std::nullopt; },
      [&]() -> llvm::Expected<LinkedCode> {
        llvm::Expected<std::string> ptx = compiler->linkForGpu(members, arch, *image.options);
        if (!ptx)
          return ptx.takeError();
        LinkedCode linked{std::move(*ptx), {}};
        for (size_t member : image.members)
          linked.members.push_back(kernels[member].ptx.at(arch).interface);
        return linked;
      },
      [&](const std::string &k, const LinkedCode &c) {
        cache->storeLinkedCode(k, image.stem, target, c);
      },
      outcome);
  if (!code)
    return errors.add(kernels.size() + index, arch,
                      image.description + " for " + target + ": " +
                          llvm::toString(code.takeError()));
  std::lock_guard<std::mutex> lock(resultsMutex);
  recordStep(image.steps, "ptx", target, outcome);
  image.ptx[arch] = std::move(code->ptx);
  // The members' IR is not needed again; a module of hundreds of kernels
  // would otherwise hold all of it to the end of the build.
  for (size_t member : image.members)
    std::string().swap(kernels[member].ptx.at(arch).bytes);
}

void KernelBuilder::buildCubin(size_t index, unsigned arch, backend::CubinBuilder &cubins) {
  ImageArtifacts &image = images[index];
  auto tick = llvm::make_scope_exit(
      [&] { reporter.taskFinished(image.progressName + " cubin " + cuda_tools::smName(arch)); });
  const std::string &ptx = image.ptx.at(cuda_tools::ptxTargetForCubin(arch));
  std::optional<std::string> key;
  if (imageCached(index))
    key = cache->cubinKey(image.stem, *image.options, ptx, arch, image.linkFiles);
  StepOutcome outcome;
  llvm::Expected<backend::BuiltCubin> cubin = cachedStep<backend::BuiltCubin>(
      cache.get(), key, {"cubin", cuda_tools::smName(arch), image.description},
      [&](const std::string &k) { return cache->lookupCubin(k); },
      [&] { return cubins.build(*image.options, ptx, image.stem + ".ptx", arch, image.linkFiles); },
      [&](const std::string &k, const backend::BuiltCubin &c) {
        cache->storeCubin(k, image.stem, arch, c);
      },
      outcome);
  if (!cubin)
    return errors.add(kernels.size() + index, arch,
                      image.description + ": " + llvm::toString(cubin.takeError()));
  std::lock_guard<std::mutex> lock(resultsMutex);
  recordStep(image.steps, "cubin", cuda_tools::smName(arch), outcome);
  image.cubins[arch] = std::move(cubin->cubin);
  image.usage[arch] = std::move(cubin->usage);
}

void KernelBuilder::prefetchCodeKeys(const std::set<unsigned> &targets, bool withHost) {
  std::vector<std::string> keys;
  for (size_t i = 0; i < images.size(); ++i)
    if (foundFirst(i))
      for (unsigned arch : targets)
        keys.push_back(linkedCodeKey(i, arch));
  if (withHost)
    for (size_t i = 0; i < kernels.size(); ++i)
      if (cached(i))
        keys.push_back(
            cache->codeKey(*semantic[i], *kernels[i].kernel, "host", backend::hostTriple()));
  cache->prefetch(keys);
}

void KernelBuilder::prefetchCubinKeys() {
  std::vector<std::string> keys;
  if (extensionKey)
    keys.push_back(*extensionKey);
  for (size_t i = 0; i < images.size(); ++i)
    if (imageCached(i))
      for (unsigned arch : archs->archs.cubins) {
        const ImageArtifacts &image = images[i];
        const std::string &ptx = image.ptx.at(cuda_tools::ptxTargetForCubin(arch));
        if (std::optional<std::string> key =
                cache->cubinKey(image.stem, *image.options, ptx, arch, image.linkFiles))
          keys.push_back(std::move(*key));
      }
  cache->prefetch(keys);
}

/// Every cubin, and PTX for the virtual archs (images that link other
/// device code carry cubins only: their PTX alone would not load).
void KernelBuilder::buildFatbin(size_t index) {
  ImageArtifacts &image = images[index];
  auto tick = llvm::make_scope_exit([&] { reporter.taskFinished(image.progressName + " fatbin"); });
  std::vector<cuda_tools::FatbinImage> parts;
  for (const auto &[arch, cubin] : image.cubins)
    parts.push_back({cuda_tools::FatbinImageKind::Cubin, arch, cubin});
  if (image.linkFiles.empty())
    for (unsigned arch : archs->archs.ptx)
      parts.push_back({cuda_tools::FatbinImageKind::Ptx, arch, image.ptx.at(arch)});
  std::optional<std::string> key;
  if (imageCached(index))
    key = cache->fatbinKey(parts);
  StepOutcome outcome;
  llvm::Expected<std::string> fatbin = cachedStep<std::string>(
      cache.get(), key, {"fatbin", "-", image.description},
      [&](const std::string &k) { return cache->lookupFatbin(k, parts); },
      [&] { return cuda_tools::createFatbinary(*toolkit, parts); },
      [&](const std::string &k, const std::string &f) {
        cache->storeFatbin(k, image.stem, f, parts);
      },
      outcome);
  if (!fatbin)
    return errors.add(kernels.size() + index, 0,
                      image.description + ": " + llvm::toString(fatbin.takeError()));
  std::lock_guard<std::mutex> lock(resultsMutex);
  recordStep(image.steps, "fatbin", "-", outcome);
  image.fatbin = std::move(*fatbin);
  // The fat binary holds what it was made of, which a module of hundreds
  // of kernels would otherwise keep twice until it is written.
  std::map<unsigned, std::string>().swap(image.ptx);
  std::map<unsigned, std::string>().swap(image.cubins);
}

void KernelBuilder::shareImageResults() {
  for (KernelArtifacts &build : kernels) {
    if (!build.image)
      continue;
    const ImageArtifacts &image = images[*build.image];
    const std::string &entry = build.interface().entryName;
    for (const auto &[arch, report] : image.usage) {
      const cuda_tools::FunctionResources *function = report.function(entry);
      build.resources[arch] = function ? std::optional(*function) : std::nullopt;
    }
  }
}

llvm::Error KernelBuilder::run() {
  if (llvm::Error error = findTools())
    return error;
  // The tools that compile CUDA C/C++ for the host, found once for the
  // code and the cache keys of every kernel that links some.
  bool linksCudaSource = llvm::any_of(kernels, [](const KernelArtifacts &build) {
    return llvm::any_of(build.kernel->options.link, [](const std::string &file) {
      return llvm::sys::path::extension(file) == ".cu";
    });
  });
  if (linksCudaSource)
    compiler->hostCudaOptions = backend::findHostCudaTools(options.linkIncludeDirectories);
  compiler->switchableIndexChecks = options.switchableIndexChecks;
  cache = tools.cache(toolkit ? toolkit->version.str() : std::string());
  if (cache)
    cache->setHostCudaTools(compiler->hostCudaOptions);
  semantic.resize(kernels.size());
  if (cache)
    for (size_t i = 0; i < kernels.size(); ++i)
      semantic[i] = cache->semanticKey(*kernels[i].kernel);

  bool forHost = options.emit == EmitKind::Object || options.hostOnly;
  bool withHost = forHost || options.emit == EmitKind::Module;
  bool wantFatbins = buildsLinkedImages(options);
  std::set<unsigned> targets = forHost ? std::set<unsigned>() : archs->archs.ptxTargets();
  if (targets.size() > 1 && deviceCodeForm() == backend::CodeForm::LLVMIR) {
    lowestTarget = *targets.begin();
    for (const KernelArtifacts &build : kernels)
      sharedCode.push_back(
          ir::callsLibdevice(*build.kernel) ? nullptr : std::make_unique<SharedDeviceCode>());
  }
  // Images' PTX first: where it is found, its kernels' device code for
  // that target is not needed, and the task count below is exact.
  foundTargets.resize(images.size());
  if (cache)
    prefetchCodeKeys(targets, withHost);
  for (size_t i = 0; i < images.size(); ++i)
    if (foundFirst(i))
      for (unsigned arch : targets)
        pool.async([this, i, arch] { findImage(i, arch); });
  pool.wait();
  auto needsDeviceCode = [&](size_t kernel, unsigned arch) {
    const std::optional<size_t> &image = kernels[kernel].image;
    return !image || !foundTargets[*image].count(arch);
  };
  unsigned deviceCodeTasks = 0, linkedTargets = 0, cubinCount = 0;
  for (size_t i = 0; i < kernels.size(); ++i)
    for (unsigned arch : targets)
      deviceCodeTasks += needsDeviceCode(i, arch);
  for (const ImageArtifacts &image : images) {
    linkedTargets += image.linked ? unsigned(targets.size()) : 0;
    cubinCount += unsigned(archs->archs.cubins.size());
  }
  reporter.expectTasks(unsigned(kernels.size()) * (withHost ? 1 : 0) + deviceCodeTasks +
                       linkedTargets + cubinCount + (wantFatbins ? unsigned(images.size()) : 0));
  for (size_t i = 0; i < images.size(); ++i)
    for (unsigned arch : foundTargets[i])
      reporter.taskFinished(images[i].progressName + " ptx " + cuda_tools::smName(arch));

  for (size_t i = 0; i < kernels.size(); ++i) {
    if (withHost)
      pool.async([this, i] { compileCode(i, std::nullopt); });
    for (unsigned arch : targets)
      if (needsDeviceCode(i, arch))
        pool.async([this, i, arch] { compileCode(i, arch); });
  }
  pool.wait();
  if (errors.empty() && !images.empty()) {
    for (size_t i = 0; i < images.size(); ++i)
      for (unsigned arch : targets)
        if (!foundTargets[i].count(arch))
          pool.async([this, i, arch] { linkImage(i, arch); });
    pool.wait();
  }
  // The extension object is made beside the cubins, which it does not
  // need, and its key asked of the remotes with theirs.
  bool makesExtension = errors.empty() && !extensionModule.empty();
  if (makesExtension)
    describeExtension();
  std::optional<backend::CubinBuilder> cubins;
  if (errors.empty() && !images.empty()) {
    if (cache)
      prefetchCubinKeys();
    cubins.emplace(*toolkit, options.ptxasFlags, options.linkIncludeDirectories);
    for (size_t i = 0; i < images.size(); ++i)
      for (unsigned arch : archs->archs.cubins)
        pool.async([this, i, arch, &cubins] { buildCubin(i, arch, *cubins); });
  }
  if (makesExtension)
    pool.async([this] { makeExtensionObject(); });
  pool.wait();
  if (errors.empty() && wantFatbins) {
    for (size_t i = 0; i < images.size(); ++i)
      pool.async([this, i] { buildFatbin(i); });
    pool.wait();
  }
  if (cache)
    cache->finish(reporter);
  shareImageResults();
  // Phases ran in parallel: their steps are put in a stable order.
  auto phase = [](llvm::StringRef kind) {
    return kind == "host" ? 0 : kind == "cubin" ? 2 : kind == "fatbin" ? 3 : 1;
  };
  auto inOrder = [&](std::vector<BuildStep> &steps) {
    llvm::sort(steps, [&](const BuildStep &a, const BuildStep &b) {
      return std::make_tuple(phase(a.kind), a.target) < std::make_tuple(phase(b.kind), b.target);
    });
  };
  for (KernelArtifacts &build : kernels)
    inOrder(build.steps);
  for (ImageArtifacts &image : images)
    inOrder(image.steps);
  return errors.take();
}

void KernelBuilder::describeExtension() {
  for (const KernelArtifacts &build : kernels)
    extensionEntries.push_back(
        {build.host->interface.entryName, build.host->interface.hasBlockEntry});
  if (cache)
    extensionKey = cache->extensionObjectKey(extensionModule, extensionEntries);
}

void KernelBuilder::makeExtensionObject() {
  std::string description = "the module '" + extensionModule + "'";
  StepOutcome outcome;
  llvm::Expected<std::string> object = cachedStep<std::string>(
      cache.get(), extensionKey, {"extension", backend::hostTriple(), description},
      [&](const std::string &k) { return cache->lookupExtensionObject(k); },
      [&] { return backend::createExtensionObject(extensionModule, extensionEntries); },
      [&](const std::string &k, const std::string &made) {
        cache->storeExtensionObject(k, extensionModule, made);
      },
      outcome);
  if (!object)
    return errors.add(kernels.size() + images.size(), 0,
                      description + ": " + llvm::toString(object.takeError()));
  extensionObject = std::move(*object);
}

/// Reads the typed IR of a `.typed` file (what `--emit typed` writes), for
/// building IR written or edited by hand.
llvm::Error readTypedIR(const BuildOptions &options, BuildResult &result) {
  llvm::Expected<std::string> text = support::readFileBytes(options.file);
  if (!text)
    return text.takeError();
  result.types = std::make_unique<TypeContext>();
  llvm::Expected<std::unique_ptr<ir::Module>> typed =
      ir::parseModule(*text, options.file, *result.types);
  if (!typed)
    return typed.takeError();
  if (std::optional<std::string> problem = ir::verify(**typed))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   options.file + ": the typed IR is not valid: " + *problem);
  if (!options.moduleName.empty())
    (*typed)->name = options.moduleName;
  result.typed = std::move(*typed);
  return llvm::Error::success();
}

/// Checks the Python source and gives its typed IR, or reports why not.
llvm::Error typeSource(const BuildOptions &options, BuildReporter &reporter, BuildResult &result) {
  FrontendOptions frontendOptions;
  frontendOptions.moduleName = options.effectiveModuleName();
  frontendOptions.signatureFlags = options.signatures;
  frontendOptions.moduleStaysPython = options.moduleStaysPython;
  frontendOptions.closures = options.closures;
  frontendOptions.calledDecorators = options.calledDecorators;
  frontendOptions.onlyFunctions = options.onlyFunctions;
  frontendOptions.recordedPaths = recordedPathMap(options);
  PythonHostValues importedValues(options.python);
  frontendOptions.hostValues = options.hostValues ? options.hostValues : &importedValues;
  llvm::Expected<std::unique_ptr<CheckedModule>> checked =
      checkModule(options.file, frontendOptions);
  for (const std::string &problem : importedValues.problems())
    reporter.warning(problem);
  if (!checked)
    return checked.takeError();
  result.checked = std::move(*checked);
  CheckedModule &module = *result.checked;
  if (!module.hasErrors())
    result.typed = emitTypedIR(module, options.effectiveModuleName());
  reporter.sourceDiagnostics(module.diags);
  if (module.hasErrors() || !result.typed)
    return llvm::make_error<SourceDiagnosedError>();
  return llvm::Error::success();
}

} // namespace

std::string BuildOptions::effectiveModuleName() const {
  if (!moduleName.empty())
    return moduleName;
  std::string name = llvm::sys::path::stem(file).str();
  if (!moduleStaysPython)
    return name;
  // A module that runs as Python is known by its name in its package, the
  // name `import` gives it and its signatures are recorded under.
  llvm::SmallString<256> folder(file);
  llvm::sys::fs::make_absolute(folder);
  llvm::sys::path::remove_filename(folder);
  for (;;) {
    llvm::SmallString<256> marker(folder);
    llvm::sys::path::append(marker, "__init__.py");
    if (!llvm::sys::fs::exists(marker) || !llvm::sys::path::has_filename(folder))
      return name;
    name = llvm::sys::path::filename(folder).str() + "." + name;
    llvm::sys::path::remove_filename(folder);
  }
}

bool isTypedIRFile(llvm::StringRef path) {
  return path.ends_with(".typed");
}

std::map<unsigned, cuda_tools::FunctionResources> KernelArtifacts::entryResources() const {
  std::map<unsigned, cuda_tools::FunctionResources> reported;
  for (const auto &[arch, function] : resources)
    if (function)
      reported[arch] = *function;
  return reported;
}

llvm::Expected<BuildResult> buildModule(const BuildOptions &options, BuildReporter &reporter) {
  // Looks for the toolkit and opens the cache while the front end reads
  // the module.
  MachineTools tools(options, reporter);
  BuildResult result;
  if (llvm::Error error = isTypedIRFile(options.file) ? readTypedIR(options, result)
                                                      : typeSource(options, reporter, result))
    return error;
  std::string moduleName = result.typed->name;
  applyOverrides(*result.typed, options);

  // Name the module first: a wrong --python-abi or --python should fail
  // before minutes of work.
  std::string extensionSuffix;
  if (options.emit == EmitKind::Module) {
    llvm::Expected<std::string> suffix =
        options.extensionSuffix ? llvm::Expected<std::string>(*options.extensionSuffix)
                                : pipeline::extensionSuffix(options.pythonAbi, options.python,
                                                            llvm::Triple(backend::hostTriple()));
    if (!suffix)
      return suffix.takeError();
    extensionSuffix = std::move(*suffix);
  }
  // all_all: the folders get the mode the user's umask asks for.
  if (std::error_code error = llvm::sys::fs::create_directories(
          options.outputDirectory, /*IgnoreExisting=*/true, llvm::sys::fs::all_all))
    return llvm::createStringError(error, "cannot create the output folder '" +
                                              options.outputDirectory + "': " + error.message());
  if (options.emit == EmitKind::Typed) {
    if (llvm::Error error = writeTypedIR(options, *result.typed, result.written))
      return error;
    return result;
  }

  for (const auto &function : result.typed->functions)
    if (function->kind == ir::Function::Kind::Kernel)
      result.kernels.push_back({function.get(),
                                stemOf(*function),
                                describe(*function),
                                progressNameOf(*function),
                                {},
                                {},
                                {},
                                {},
                                {}});
  result.images = formImages(options, moduleName, result.kernels);
  KernelBuilder builder(options, reporter, tools, result.kernels, result.images,
                        options.emit == EmitKind::Module ? extensionModuleName(options, moduleName)
                                                         : std::string());
  if (llvm::Error error = builder.run())
    return error;
  if (llvm::Error error = writeOutputs(
          options, result.checked.get(), moduleName, extensionSuffix,
          builder.architectures() ? &*builder.architectures() : nullptr, result.kernels,
          result.images, builder.takeExtensionObject(), result.written))
    return error;
  if (options.emit == EmitKind::Module)
    for (const std::string &path : result.written)
      for (const std::string &other : shadowingBuilds(path))
        reporter.warning("'" + other + "' is beside the module just built, '" + path +
                         "', and the CPython it is named for imports it instead; delete it if "
                         "it is an older build");
  return result;
}

} // namespace kiln::pipeline
