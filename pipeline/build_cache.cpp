//===- pipeline/build_cache.cpp ---------------------------------------------===//

#include "pipeline/build_cache.h"

#include "backend/codegen/target_machines.h"
#include "backend/cuda_tools/cuda_toolkit.h"
#include "cache/cache_location.h"
#include "cache/remote/tier_setup.h"
#include "ir/libdevice.h"
#include "module/cpu_kernel_abi.h"
#include "pipeline/cuda_includes.h"
#include "pipeline/outputs.h"
#include "pipeline/version.h"
#include "support/temporary_directory.h"

#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <limits>
#include <tuple>

namespace kiln::pipeline {

namespace {

using llvm::json::Array;
using llvm::json::Object;
using llvm::json::Value;

Value interfaceToJson(const backend::KernelInterface &interface) {
  Array parameters;
  for (const backend::KernelParameter &parameter : interface.parameters) {
    Array path;
    for (unsigned step : parameter.path)
      path.push_back(step);
    parameters.push_back(Object{{"argument", parameter.argument},
                                {"role", static_cast<unsigned>(parameter.role)},
                                {"dimension", parameter.dimension},
                                {"path", std::move(path)},
                                {"type", parameter.machineType},
                                {"size", parameter.size},
                                {"alignment", parameter.alignment}});
  }
  Array sites;
  for (uint32_t site : interface.messageSites)
    sites.push_back(site);
  return Object{{"entry", interface.entryName},
                {"parameters", std::move(parameters)},
                {"shared", interface.staticSharedBytes},
                {"local", interface.localBytes},
                {"synchronizes", interface.synchronizes},
                {"raises", interface.raises},
                {"cooperative", interface.cooperative},
                {"block_entry", interface.hasBlockEntry},
                {"message_sites", std::move(sites)},
                {"index_checks", backend::spellingOf(interface.indexChecks)}};
}

unsigned uintOf(const Object &object, llvm::StringRef name) {
  return static_cast<unsigned>(object.getInteger(name).value_or(0));
}

std::optional<backend::KernelInterface> interfaceFromJson(const Value *value) {
  const Object *object = value ? value->getAsObject() : nullptr;
  const Array *parameters = object ? object->getArray("parameters") : nullptr;
  if (!object || !parameters || !object->getString("entry"))
    return std::nullopt;
  backend::KernelInterface interface;
  interface.entryName = object->getString("entry")->str();
  for (const Value &item : *parameters) {
    const Object *parameter = item.getAsObject();
    if (!parameter)
      return std::nullopt;
    backend::KernelParameter result{};
    result.argument = uintOf(*parameter, "argument");
    result.role = static_cast<backend::KernelParameter::Role>(uintOf(*parameter, "role"));
    result.dimension = uintOf(*parameter, "dimension");
    if (const Array *path = parameter->getArray("path"))
      for (const Value &step : *path)
        result.path.push_back(static_cast<unsigned>(step.getAsInteger().value_or(0)));
    result.machineType = parameter->getString("type").value_or("").str();
    result.size = uintOf(*parameter, "size");
    result.alignment = uintOf(*parameter, "alignment");
    interface.parameters.push_back(std::move(result));
  }
  interface.staticSharedBytes = object->getInteger("shared").value_or(0);
  interface.localBytes = object->getInteger("local").value_or(0);
  interface.synchronizes = object->getBoolean("synchronizes").value_or(false);
  interface.raises = object->getBoolean("raises").value_or(false);
  interface.cooperative = object->getBoolean("cooperative").value_or(false);
  interface.hasBlockEntry = object->getBoolean("block_entry").value_or(false);
  std::optional<backend::IndexCheckCopies> indexChecks =
      backend::indexCheckCopiesNamed(object->getString("index_checks").value_or("both"));
  if (!indexChecks)
    return std::nullopt;
  interface.indexChecks = *indexChecks;
  if (const Array *sites = object->getArray("message_sites"))
    for (const Value &site : *sites) {
      std::optional<int64_t> number = site.getAsInteger();
      if (!number || *number < 0 || *number > std::numeric_limits<uint32_t>::max())
        return std::nullopt;
      interface.messageSites.push_back(static_cast<uint32_t>(*number));
    }
  return interface;
}

Object banksToJson(const std::map<unsigned, uint64_t> &banks) {
  Object object;
  for (const auto &[bank, bytes] : banks)
    object[std::to_string(bank)] = bytes;
  return object;
}

std::map<unsigned, uint64_t> banksFromJson(const Object *object) {
  std::map<unsigned, uint64_t> banks;
  if (object)
    for (const auto &[bank, bytes] : *object) {
      unsigned number = 0;
      if (!llvm::StringRef(bank).getAsInteger(10, number))
        banks[number] = static_cast<uint64_t>(bytes.getAsInteger().value_or(0));
    }
  return banks;
}

Value usageToJson(const cuda_tools::ResourceUsage &usage) {
  Array functions;
  for (const cuda_tools::FunctionResources &function : usage.functions)
    functions.push_back(Object{{"name", function.name},
                               {"kernel", function.isKernel},
                               {"registers", function.registers},
                               {"barriers", function.barriers},
                               {"stack", function.stackFrameBytes},
                               {"spill_stores", function.spillStoreBytes},
                               {"spill_loads", function.spillLoadBytes},
                               {"cumulative_stack", function.cumulativeStackBytes},
                               {"shared", function.sharedMemoryBytes},
                               {"local", function.localMemoryBytes},
                               {"cmem", banksToJson(function.constantMemoryBytes)},
                               {"textures", function.textures},
                               {"samplers", function.samplers},
                               {"surfaces", function.surfaces}});
  return Object{{"gmem", usage.globalMemoryBytes},
                {"cmem", banksToJson(usage.constantMemoryBytes)},
                {"functions", std::move(functions)}};
}

std::optional<cuda_tools::ResourceUsage> usageFromJson(const Value *value) {
  const Object *object = value ? value->getAsObject() : nullptr;
  const Array *functions = object ? object->getArray("functions") : nullptr;
  if (!object || !functions)
    return std::nullopt;
  cuda_tools::ResourceUsage usage;
  usage.globalMemoryBytes = object->getInteger("gmem").value_or(0);
  usage.constantMemoryBytes = banksFromJson(object->getObject("cmem"));
  for (const Value &item : *functions) {
    const Object *function = item.getAsObject();
    if (!function)
      return std::nullopt;
    cuda_tools::FunctionResources resources;
    resources.name = function->getString("name").value_or("").str();
    resources.isKernel = function->getBoolean("kernel").value_or(false);
    resources.registers = uintOf(*function, "registers");
    resources.barriers = uintOf(*function, "barriers");
    resources.stackFrameBytes = function->getInteger("stack").value_or(0);
    resources.spillStoreBytes = function->getInteger("spill_stores").value_or(0);
    resources.spillLoadBytes = function->getInteger("spill_loads").value_or(0);
    resources.cumulativeStackBytes = function->getInteger("cumulative_stack").value_or(0);
    resources.sharedMemoryBytes = function->getInteger("shared").value_or(0);
    resources.localMemoryBytes = function->getInteger("local").value_or(0);
    resources.constantMemoryBytes = banksFromJson(function->getObject("cmem"));
    resources.textures = uintOf(*function, "textures");
    resources.samplers = uintOf(*function, "samplers");
    resources.surfaces = uintOf(*function, "surfaces");
    usage.functions.push_back(std::move(resources));
  }
  return usage;
}

std::string jsonText(Value value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << value;
  return text;
}

void addOptions(cache::KeyBuilder &key, const JitOptions &options) {
  key.add("fastmath", options.fastmath)
      .add("debug", options.debug)
      .add("optimize", options.optimize)
      .add("lineinfo", options.lineinfo)
      .add("max_registers", options.maxRegisters.value_or(0))
      .add("lto", options.lto ? (*options.lto ? 1 : 0) : 2);
  // Only when given, so that the keys of other kernels stay as they were.
  if (!options.boundscheck)
    key.add("boundscheck", false);
}

} // namespace

BuildCache::BuildCache(std::unique_ptr<cache::Cache> cache, const BuildOptions &options,
                       std::string cudaVersion)
    : store(std::move(cache)), options(options),
      identity(cache::CompilerIdentity::current(versionNumber(), cudaVersion)),
      recordedPaths(recordedPathMap(options)) {}

BuildCache::~BuildCache() {
  if (finishing.joinable())
    finishing.join();
  warnings->release();
}

void BuildCache::Warnings::warn(llvm::StringRef message) {
  std::lock_guard<std::mutex> lock(mutex);
  if (holding)
    held.push_back(message.str());
  else
    reporter.warning(message);
}

void BuildCache::Warnings::hold() {
  std::lock_guard<std::mutex> lock(mutex);
  holding = true;
}

void BuildCache::Warnings::release() {
  std::lock_guard<std::mutex> lock(mutex);
  holding = false;
  for (const std::string &message : held)
    reporter.warning(message);
  held.clear();
}

/// Where `options` put the local cache, and whether it is on.
static llvm::Expected<cache::CacheLocation> cacheLocation(const BuildOptions &options) {
  return cache::resolveCacheLocation(
      options.cache, cache::CacheEnvironment::fromProcess(),
      {options.project.cacheDirectory, options.project.cacheMaxSize, options.project.origin()});
}

std::optional<std::string> BuildCache::toolkitMemoFile(const BuildOptions &options) {
  llvm::Expected<cache::CacheLocation> location = cacheLocation(options);
  if (!location) {
    llvm::consumeError(location.takeError());
    return std::nullopt;
  }
  if (!location->enabled())
    return std::nullopt;
  llvm::SmallString<256> file(location->directory);
  llvm::sys::path::append(file, "toolkits.json");
  return std::string(file);
}

std::unique_ptr<BuildCache> BuildCache::open(const BuildOptions &options, std::string cudaVersion,
                                             BuildReporter &reporter) {
  auto warnings = std::make_unique<Warnings>(reporter);
  auto warn = [to = warnings.get()](llvm::StringRef message) { to->warn(message); };
  llvm::Expected<cache::CacheLocation> location = cacheLocation(options);
  if (!location) {
    warn(llvm::toString(location.takeError()) + "; building without the cache");
    return nullptr;
  }
  if (!location->enabled())
    return nullptr;
  // A build's --max-size is the cache's limit from now on; the
  // environment's is for the processes that have it.
  llvm::Expected<std::unique_ptr<cache::Cache>> opened =
      cache::Cache::open({location->directory, location->givenMaxSize(),
                          location->maxSizeSource == cache::SizeSource::Flag},
                         warn);
  if (!opened) {
    warn(llvm::toString(opened.takeError()) + "; building without the cache");
    return nullptr;
  }
  std::unique_ptr<BuildCache> cache(
      new BuildCache(std::move(*opened), options, std::move(cudaVersion)));
  cache->warnings = std::move(warnings);
  cache->remote = cache::remote::openConfiguredTier(
      options.remoteCache, {options.project.remoteCaches, options.project.origin()}, warn,
      [&](llvm::StringRef line) { reporter.note(line); });
  return cache;
}

std::optional<cache::CachedEntry> BuildCache::find(const std::string &key, StepSource &source,
                                                   llvm::ArrayRef<std::string> implied) {
  if (std::optional<cache::CachedEntry> entry = store->lookup(key, implied)) {
    source = StepSource::LocalHit;
    return entry;
  }
  if (!remote)
    return std::nullopt;
  std::optional<cache::CachedEntry> entry = remote->lookup(key);
  if (!entry)
    return std::nullopt;
  source = StepSource::RemoteHit;
  cache::EntryContents contents{
      key, entry->metadata.kind, entry->metadata.target, entry->metadata.name, entry->metadata.info,
      {}};
  for (const cache::EntryBlob &blob : entry->metadata.blobs)
    contents.blobs.emplace_back(blob.role, entry->blobs[blob.role]);
  contents.implied = implied;
  queueStore(std::move(contents));
  return entry;
}

void BuildCache::prefetch(llvm::ArrayRef<std::string> keys) {
  if (!remote)
    return;
  std::vector<std::string> missing;
  for (const std::string &key : keys)
    if (!store->contains(key))
      missing.push_back(key);
  remote->prefetch(missing);
}

void BuildCache::keep(const cache::EntryContents &contents) {
  if (remote)
    remote->upload(contents);
  queueStore(contents);
}

void BuildCache::queueStore(cache::EntryContents contents) {
  std::vector<cache::EntryContents> batch;
  {
    std::lock_guard<std::mutex> lock(mutex);
    toStore.push_back(std::move(contents));
    auto now = std::chrono::steady_clock::now();
    if (toStore.size() < kStoreBatchEntries && now - lastStore < kStoreBatchAge)
      return;
    batch.swap(toStore);
    lastStore = now;
  }
  store->storeAll(batch);
}

std::optional<std::string> BuildCache::semanticKey(const ir::Function &kernel) const {
  if (kernel.semanticHash.empty())
    return std::nullopt;
  switch (kernel.origin) {
  case ir::Function::Origin::Source:
    return kernel.semanticHash;
  case ir::Function::Origin::UfuncLoop:
    return "ufunc:" + kernel.semanticHash;
  case ir::Function::Origin::ReductionLoop:
    return "reduction:" + kernel.semanticHash;
  }
  llvm_unreachable("unknown function origin");
}

std::string BuildCache::codeKey(const std::string &semantic, const ir::Function &kernel,
                                llvm::StringRef kind, llvm::StringRef target) const {
  cache::KeyBuilder key;
  cache::CompilerIdentity forKind = identity;
  // Host code is the toolkit's only where it runs libdevice's.
  if (kind == "host" && !ir::callsLibdevice(kernel))
    forKind.cuda.clear();
  forKind.addTo(key);
  key.add("kind", kind).add("target", target).add("symbol", kernel.symbol);
  // Host code is written against the engine's ABI: a new ABI, new code.
  if (kind == "host")
    key.add("cpu_abi", uint64_t(KILN_CPU_ABI_VERSION))
        .add("index_check_copies", options.switchableIndexChecks ? "switchable" : "one");
  key.add("semantic", semantic);
  addOptions(key, kernel.options);
  if (kernel.options.debug || kernel.options.lineinfo)
    key.add("source", kernel.path);
  if (kind == "host")
    addHostLinkFiles(key, kernel);
  return key.finish();
}

void BuildCache::addHostLinkFiles(cache::KeyBuilder &key, const ir::Function &kernel) const {
  // The CUDA C/C++ files a kernel links are part of its host code, compiled
  // by clang with the build's include folders.
  bool compilesCuda = false;
  for (const std::string &file : linkFiles(kernel, options.file)) {
    if (llvm::sys::path::extension(file) != ".cu")
      continue;
    compilesCuda = true;
    llvm::Expected<std::string> digest = linkFileDigest(file, hostCudaTools.includeDirectories);
    key.add("link", recordedPaths.remap(file));
    if (digest)
      key.add("link-digest", *digest);
    else
      key.add("link-unreadable", llvm::toString(digest.takeError()));
  }
  if (!compilesCuda)
    return;
  for (const std::string &directory : hostCudaTools.includeDirectories)
    key.add("link-include", recordedPaths.remap(directory));
  key.add("host-clang",
          hostCudaTools.clang.empty() ? hostCudaTools.clangMissing : hostCudaTools.clang);
  // Its headers (cuRAND's, ...) are the toolkit's, whose version the
  // identity of host code leaves out.
  key.add("host-cuda-include", hostCudaTools.toolkitIncludeDirectory.value_or(""));
  key.add("cuda", identity.cuda);
}

llvm::Expected<std::string>
BuildCache::linkFileDigest(const std::string &file,
                           llvm::ArrayRef<std::string> includeDirectories) const {
  std::string memoKey = file;
  for (const std::string &directory : includeDirectories)
    memoKey += "\n" + directory;
  {
    std::lock_guard<std::mutex> lock(linkDigestsMutex);
    if (auto found = linkDigests.find(memoKey); found != linkDigests.end())
      return found->second;
  }
  llvm::Expected<std::string> bytes = support::readFileBytes(file);
  if (!bytes)
    return bytes.takeError();
  cache::KeyBuilder digest;
  digest.add("file", cache::digestOf(*bytes));
  if (llvm::sys::path::extension(file) == ".cu")
    for (const std::string &header : includedFiles(file, includeDirectories)) {
      llvm::Expected<std::string> headerBytes = support::readFileBytes(header);
      if (!headerBytes)
        return headerBytes.takeError();
      digest.add("header", recordedPaths.remap(header))
          .add("header-digest", cache::digestOf(*headerBytes));
    }
  std::lock_guard<std::mutex> lock(linkDigestsMutex);
  return linkDigests.try_emplace(memoKey, digest.finish()).first->second;
}

std::string BuildCache::linkedCodeKey(llvm::ArrayRef<std::string> memberKeys,
                                      llvm::StringRef target) const {
  cache::KeyBuilder key;
  identity.addTo(key);
  key.add("kind", "image ptx").add("target", target);
  for (const std::string &member : memberKeys)
    key.add("member", member);
  return key.finish();
}

std::optional<std::string> BuildCache::cubinKey(llvm::StringRef name, const JitOptions &jit,
                                                llvm::StringRef ptx, unsigned arch,
                                                llvm::ArrayRef<std::string> linkFiles) const {
  cache::KeyBuilder key;
  identity.addTo(key);
  key.add("kind", "cubin").add("target", cuda_tools::smName(arch)).add("symbol", name);
  key.add("ptx", cache::digestOf(ptx));
  addOptions(key, jit);
  for (const std::string &flag : options.ptxasFlags)
    key.add("ptxas-flag", flag);
  for (const std::string &file : linkFiles) {
    llvm::Expected<std::string> digest = linkFileDigest(file, options.linkIncludeDirectories);
    if (!digest) {
      llvm::consumeError(digest.takeError());
      return std::nullopt;
    }
    key.add("link", recordedPaths.remap(file)).add("link-digest", *digest);
  }
  if (!linkFiles.empty())
    for (const std::string &directory : options.linkIncludeDirectories)
      key.add("link-include", recordedPaths.remap(directory));
  return key.finish();
}

std::string BuildCache::fatbinKey(llvm::ArrayRef<cuda_tools::FatbinImage> images) const {
  cache::KeyBuilder key;
  identity.addTo(key);
  key.add("kind", "fatbin");
  for (const cuda_tools::FatbinImage &image : images)
    key.add("image", llvm::formatv("{0} {1} {2}", static_cast<int>(image.kind), image.arch,
                                   cache::digestOf(image.bytes))
                         .str());
  return key.finish();
}

std::string BuildCache::extensionObjectKey(llvm::StringRef moduleName,
                                           llvm::ArrayRef<backend::ExtensionEntry> entries) const {
  cache::KeyBuilder key;
  cache::CompilerIdentity withoutCuda = identity;
  withoutCuda.cuda.clear();
  withoutCuda.addTo(key);
  key.add("kind", "extension").add("target", backend::hostTriple()).add("module", moduleName);
  for (const backend::ExtensionEntry &entry : entries)
    key.add(entry.hasBlockEntry ? "entry+block" : "entry", entry.entryName);
  return key.finish();
}

std::optional<CacheHit<std::string>> BuildCache::lookupExtensionObject(const std::string &key) {
  std::optional<FoundEntry> found = findWithInfo(key, "object");
  if (!found)
    return std::nullopt;
  return CacheHit<std::string>{std::move(found->payload), found->source};
}

void BuildCache::storeExtensionObject(const std::string &key, llvm::StringRef moduleName,
                                      const std::string &object) {
  keep({key, "extension", backend::hostTriple(), moduleName.str(), Object{}, {{"object", object}}});
}

std::optional<BuildCache::FoundEntry> BuildCache::findWithInfo(const std::string &key,
                                                               llvm::StringRef role) {
  StepSource source;
  std::optional<cache::CachedEntry> entry = find(key, source);
  if (!entry || !entry->blobs.count(role.str()))
    return std::nullopt;
  Object *info = entry->metadata.info.getAsObject();
  if (!info)
    return std::nullopt;
  return FoundEntry{std::move(entry->blobs[role.str()]), std::move(*info), source};
}

std::optional<CacheHit<backend::CompiledCode>> BuildCache::lookupCode(const std::string &key) {
  std::optional<FoundEntry> found = findWithInfo(key, "code");
  if (!found)
    return std::nullopt;
  std::optional<backend::KernelInterface> interface =
      interfaceFromJson(found->info.get("interface"));
  if (!interface)
    return std::nullopt;
  return CacheHit<backend::CompiledCode>{{std::move(*interface), std::move(found->payload)},
                                         found->source};
}

void BuildCache::storeCode(const std::string &key, llvm::StringRef name, llvm::StringRef kind,
                           llvm::StringRef target, const backend::CompiledCode &code) {
  keep({key,
        kind.str(),
        target.str(),
        name.str(),
        Object{{"interface", interfaceToJson(code.interface)}},
        {{"code", code.bytes}}});
}

std::optional<CacheHit<LinkedCode>> BuildCache::lookupLinkedCode(const std::string &key,
                                                                 size_t memberCount) {
  std::optional<FoundEntry> found = findWithInfo(key, "code");
  std::optional<llvm::StringRef> lines = found ? found->info.getString("members") : std::nullopt;
  if (!lines)
    return std::nullopt;
  LinkedCode code{std::move(found->payload), {}};
  for (llvm::StringRef rest = *lines; !rest.empty();) {
    auto [line, next] = rest.split('\n');
    rest = next;
    llvm::Expected<Value> parsed = llvm::json::parse(line);
    if (!parsed) {
      llvm::consumeError(parsed.takeError());
      return std::nullopt;
    }
    std::optional<backend::KernelInterface> interface = interfaceFromJson(&*parsed);
    if (!interface)
      return std::nullopt;
    code.members.push_back(std::move(*interface));
  }
  if (code.members.size() != memberCount)
    return std::nullopt;
  return CacheHit<LinkedCode>{std::move(code), found->source};
}

void BuildCache::storeLinkedCode(const std::string &key, llvm::StringRef name,
                                 llvm::StringRef target, const LinkedCode &code) {
  // One interface per line, as one string: llvm::json copies every element
  // of an array it grows, so an array of hundreds of interfaces would take
  // a warm build milliseconds to read back.
  std::string lines;
  for (const backend::KernelInterface &interface : code.members)
    lines += jsonText(interfaceToJson(interface)) + "\n";
  keep({key,
        "ptx",
        target.str(),
        name.str(),
        Object{{"members", std::move(lines)}},
        {{"code", code.ptx}}});
}

std::optional<CacheHit<backend::BuiltCubin>> BuildCache::lookupCubin(const std::string &key) {
  std::optional<FoundEntry> found = findWithInfo(key, "cubin");
  if (!found)
    return std::nullopt;
  std::optional<cuda_tools::ResourceUsage> usage = usageFromJson(found->info.get("usage"));
  if (!usage)
    return std::nullopt;
  return CacheHit<backend::BuiltCubin>{{std::move(found->payload), std::move(*usage)},
                                       found->source};
}

void BuildCache::storeCubin(const std::string &key, llvm::StringRef name, unsigned arch,
                            const backend::BuiltCubin &cubin) {
  keep({key,
        "cubin",
        cuda_tools::smName(arch),
        name.str(),
        Object{{"usage", usageToJson(cubin.usage)}},
        {{"cubin", cubin.cubin}}});
}

namespace {

/// What a fat binary's entry may hold by digest only: its images, which
/// their own entries store, and its PTX as fatbinary rewrites it, which a
/// lookup derives from the PTX entry's text.
std::vector<std::string> imageBytes(llvm::ArrayRef<cuda_tools::FatbinImage> images) {
  std::vector<std::string> bytes;
  for (const cuda_tools::FatbinImage &image : images) {
    bytes.push_back(image.bytes);
    if (image.kind == cuda_tools::FatbinImageKind::Ptx)
      bytes.push_back(cuda_tools::fatbinaryPtxText(image.bytes));
  }
  return bytes;
}

} // namespace

std::optional<CacheHit<std::string>>
BuildCache::lookupFatbin(const std::string &key, llvm::ArrayRef<cuda_tools::FatbinImage> images) {
  StepSource source;
  std::optional<cache::CachedEntry> entry = find(key, source, imageBytes(images));
  if (!entry || !entry->blobs.count("fatbin"))
    return std::nullopt;
  return CacheHit<std::string>{std::move(entry->blobs["fatbin"]), source};
}

void BuildCache::storeFatbin(const std::string &key, llvm::StringRef name,
                             const std::string &fatbin,
                             llvm::ArrayRef<cuda_tools::FatbinImage> images) {
  cache::EntryContents contents{key, "fatbin", "fatbin", name.str(), nullptr, {{"fatbin", fatbin}}};
  contents.implied = imageBytes(images);
  keep(contents);
}

void BuildCache::note(StepSource source, llvm::StringRef kind, llvm::StringRef target,
                      llvm::StringRef description) {
  std::lock_guard<std::mutex> lock(mutex);
  (source == StepSource::LocalHit    ? localHits
   : source == StepSource::RemoteHit ? remoteHits
                                     : compiled)++;
  notes.push_back({llvm::formatv("{0} {1} {2}", kind, target, description).str(), source});
}

namespace {

llvm::StringRef sourceName(StepSource source) {
  switch (source) {
  case StepSource::LocalHit:
    return "local hit ";
  case StepSource::RemoteHit:
    return "remote hit";
  case StepSource::Compiled:
    return "compiled  ";
  }
  llvm_unreachable("unknown step source");
}

} // namespace

void BuildCache::finish(BuildReporter &reporter) {
  std::sort(notes.begin(), notes.end(), [](const Note &a, const Note &b) {
    return std::tie(a.step, a.source) < std::tie(b.step, b.source);
  });
  reporter.note(llvm::formatv("cache {0}: {1} local hits, {2} remote hits, {3} compiled",
                              store->directory(), localHits, remoteHits, compiled)
                    .str());
  for (const Note &line : notes)
    reporter.note(("  " + sourceName(line.source) + " " + line.step).str());
  // Nothing the build writes next reads the cache: keeping what it made (a
  // build served by a remote keeps everything then) need not hold it up.
  warnings->hold();
  finishing = std::thread([this] { keepAndFinish(); });
}

void BuildCache::keepAndFinish() {
  store->storeAll(toStore);
  toStore.clear();
  if (remote) {
    remote->finish();
    cache::remote::TierCounters counters = remote->counters();
    cache::CounterDeltas deltas;
    for (auto [name, value] : {std::pair{"remote_hits", counters.hits},
                               {"remote_misses", counters.misses},
                               {"remote_errors", counters.errors},
                               {"remote_rejected", counters.rejected},
                               {"remote_bytes_down", counters.bytesDown},
                               {"remote_bytes_up", counters.bytesUp},
                               {"remote_uploads", counters.uploads},
                               {"remote_uploads_dropped", counters.uploadsDropped},
                               {"remote_lookup_us", counters.lookupMicroseconds},
                               {"remote_upload_us", counters.uploadMicroseconds}})
      deltas.values[name] = static_cast<int64_t>(value);
    store->addCounters(deltas);
  }
  store->finish();
}

} // namespace kiln::pipeline
