//===- pipeline/build_cache.h - Builds and the cache ------------*- C++ -*-===//
//
// What a build keeps in the specialization cache (cache/cache.h), and
// under which key. One entry per (specialization, target):
//
//   ptx / llvm  key: identity (Kiln, LLVM, CUDA: libdevice comes from it),
//               sm_N, form, the kernel's symbol, its semantic hash (body,
//               signature, decorator options, called device functions,
//               constants read), the options after command-line overrides,
//               and with debug/lineinfo the source file's path
//   image ptx   (an image's kernels' LLVM IR, linked, with each kernel's
//               interface) key: identity, sm_N, and the llvm keys of its
//               kernels, in order; a warm build finds it before reading
//               any kernel's IR
//   cubin       key: identity, sm_N, the PTX's digest (which stands for all
//               of the above), ptxas's options and -Xptxas flags, and the
//               path and digest of every link=[...] file
//   host        key: identity without CUDA, the host triple, as for PTX
//   fatbin      key: CUDA version and the digests of its images
//   extension   (a module's object with PyInit_ and its entry table) key:
//               identity without CUDA, the host triple, the module's name
//               and its host entries' names, in order
//
// Entries are named by the kernel's symbol, or by the image's stem.
//
// A kernel whose semantic hash cannot be found is compiled uncached.
//
// Behind the local cache sits the remote tier (cache/remote/remote_tier.h),
// when remotes are configured: a local miss is asked of the remotes, a
// remote hit is kept locally, and what the build compiles is uploaded.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/codegen/kernel_compiler.h"
#include "backend/cuda_tools/cuda_archs.h"
#include "backend/cuda_tools/fatbinary.h"
#include "backend/host/extension_module.h"
#include "backend/host/host_cuda_source.h"
#include "backend/nvptx/cubin_builder.h"
#include "cache/cache.h"
#include "cache/remote/remote_tier.h"
#include "ir/typed_ir.h"
#include "pipeline/build_options.h"
#include "pipeline/build_reporter.h"
#include "pipeline/source_paths.h"

#include <llvm/Support/JSON.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace kiln::pipeline {

/// Where a step's result came from, for -v.
enum class StepSource { LocalHit, RemoteHit, Compiled };

/// A cached result and where it was found.
template <typename Result> struct CacheHit {
  Result value;
  StepSource source;
};

/// An image's PTX for one target, and the interface of each of its
/// kernels there: what a build needs of them when the PTX comes from the
/// cache.
struct LinkedCode {
  std::string ptx;
  std::vector<backend::KernelInterface> members;
};

class BuildCache {
public:
  /// The cache `options` ask for; null when it is off or unusable (with one
  /// warning).
  static std::unique_ptr<BuildCache> open(const BuildOptions &options, std::string cudaVersion,
                                          BuildReporter &reporter);
  /// The file in the local cache's folder where the CUDA versions ptxas
  /// reported are remembered (cuda_tools/toolkit_version_memo.h); none
  /// when the cache is off or its folder cannot be told.
  static std::optional<std::string> toolkitMemoFile(const BuildOptions &options);

  /// The semantic part of `kernel`'s keys; nothing when the IR records no
  /// source for it.
  std::optional<std::string> semanticKey(const ir::Function &kernel) const;

  std::string codeKey(const std::string &semantic, const ir::Function &kernel, llvm::StringRef kind,
                      llvm::StringRef target) const;
  std::optional<CacheHit<backend::CompiledCode>> lookupCode(const std::string &key);
  void storeCode(const std::string &key, llvm::StringRef name, llvm::StringRef kind,
                 llvm::StringRef target, const backend::CompiledCode &code);
  /// The key of the PTX linked from the LLVM IR of kernels whose "llvm"
  /// keys are `memberKeys`.
  std::string linkedCodeKey(llvm::ArrayRef<std::string> memberKeys, llvm::StringRef target) const;
  std::optional<CacheHit<LinkedCode>> lookupLinkedCode(const std::string &key, size_t memberCount);
  void storeLinkedCode(const std::string &key, llvm::StringRef name, llvm::StringRef target,
                       const LinkedCode &code);

  std::optional<std::string> cubinKey(llvm::StringRef name, const JitOptions &jit,
                                      llvm::StringRef ptx, unsigned arch,
                                      llvm::ArrayRef<std::string> linkFiles) const;
  std::optional<CacheHit<backend::BuiltCubin>> lookupCubin(const std::string &key);
  void storeCubin(const std::string &key, llvm::StringRef name, unsigned arch,
                  const backend::BuiltCubin &cubin);

  /// A fat binary's entry keeps the bytes around its images; the images,
  /// which its key names, are stored once, by the cubin entries, and handed
  /// back here to put it together.
  std::string fatbinKey(llvm::ArrayRef<cuda_tools::FatbinImage> images) const;
  std::optional<CacheHit<std::string>> lookupFatbin(const std::string &key,
                                                    llvm::ArrayRef<cuda_tools::FatbinImage> images);
  void storeFatbin(const std::string &key, llvm::StringRef name, const std::string &fatbin,
                   llvm::ArrayRef<cuda_tools::FatbinImage> images);

  /// The key of the extension object (backend/host/extension_module.h) of
  /// the module `moduleName` whose host entries are `entries`: what the
  /// object is made of, so that lines moved or bodies edited keep it.
  std::string extensionObjectKey(llvm::StringRef moduleName,
                                 llvm::ArrayRef<backend::ExtensionEntry> entries) const;
  std::optional<CacheHit<std::string>> lookupExtensionObject(const std::string &key);
  void storeExtensionObject(const std::string &key, llvm::StringRef moduleName,
                            const std::string &object);

  /// Asks the remotes for those of `keys` the local cache lacks, in as few
  /// round trips as their protocols allow, so that the lookups of them that
  /// follow find the answers at hand: for the keys a build knows before it
  /// looks any up (its images' PTX, its kernels' host code), then for those
  /// it knows next (its cubins'). Without remotes, nothing.
  void prefetch(llvm::ArrayRef<std::string> keys);

  /// Notes where a step's result came from, for -v.
  void note(StepSource source, llvm::StringRef kind, llvm::StringRef target,
            llvm::StringRef description);
  /// Reports what `note` gathered, then keeps what the build compiled or
  /// got from a remote, waits (briefly) for uploads and finishes the cache
  /// on a thread of its own, while the build writes its outputs; the
  /// destructor waits for it, and passes on the warnings it had.
  void finish(BuildReporter &reporter);
  ~BuildCache();

  /// The tools that compile the CUDA C/C++ files kernels link for the
  /// host, which the keys of their host code name.
  void setHostCudaTools(backend::HostCudaSourceOptions tools) { hostCudaTools = std::move(tools); }

private:
  /// The warnings of the cache and the remote tier, from any thread: passed
  /// to the reporter at once, or, while the cache finishes after finish()
  /// returned, held for the destructor, so that the reporter hears them on
  /// the thread that builds.
  class Warnings {
  public:
    explicit Warnings(BuildReporter &reporter) : reporter(reporter) {}
    void warn(llvm::StringRef message);
    void hold();
    /// Passes on what was held, and holds no more.
    void release();

  private:
    BuildReporter &reporter;
    std::mutex mutex;
    bool holding = false;
    std::vector<std::string> held;
  };

  BuildCache(std::unique_ptr<cache::Cache> cache, const BuildOptions &options,
             std::string cudaVersion);
  /// Keeps what is left to keep, waits for uploads, and finishes the cache.
  void keepAndFinish();

  /// What of the CUDA C/C++ files `kernel` links its host code depends on.
  void addHostLinkFiles(cache::KeyBuilder &key, const ir::Function &kernel) const;
  /// The digest of a link file and, for a CUDA C/C++ one, of the headers
  /// it includes, read once per build: kernels and architectures share
  /// their link files. An error where one cannot be read.
  llvm::Expected<std::string> linkFileDigest(const std::string &file,
                                             llvm::ArrayRef<std::string> includeDirectories) const;

  /// The entry of `key`: the local cache's, else a remote's (then kept
  /// locally).
  std::optional<cache::CachedEntry> find(const std::string &key, StepSource &source,
                                         llvm::ArrayRef<std::string> implied = {});
  /// An entry's payload blob and the object its metadata's info holds.
  struct FoundEntry {
    std::string payload;
    llvm::json::Object info;
    StepSource source;
  };
  /// The entry of `key` (find) with its blob `role` and an info object;
  /// nothing when either is missing.
  std::optional<FoundEntry> findWithInfo(const std::string &key, llvm::StringRef role);
  /// Uploads `contents`, and keeps it locally (queueStore).
  void keep(const cache::EntryContents &contents);
  /// Keeps `contents` locally, in batches: one transaction per batch rather
  /// than per entry, yet little lost when a build is stopped.
  void queueStore(cache::EntryContents contents);

  /// First, so that it outlives the cache and the tier, which warn through
  /// it.
  std::unique_ptr<Warnings> warnings;
  std::unique_ptr<cache::Cache> store;
  std::unique_ptr<cache::remote::RemoteTier> remote;
  /// keepAndFinish, once finish() has been called.
  std::thread finishing;
  const BuildOptions &options;
  cache::CompilerIdentity identity;
  /// How keys name the files kernels link and the folders their headers
  /// come from: as the build records source paths, so that two checkouts
  /// of a project share entries.
  FilePrefixMap recordedPaths;
  std::mutex mutex;
  struct Note {
    std::string step;
    StepSource source;
  };
  std::vector<Note> notes;
  /// What the build compiled or got from a remote, not yet in the local
  /// cache: published once there are kStoreBatchEntries of them, or a batch
  /// has waited kStoreBatchAge, and at the end.
  std::vector<cache::EntryContents> toStore;
  static constexpr size_t kStoreBatchEntries = 64;
  static constexpr std::chrono::milliseconds kStoreBatchAge{1000};
  std::chrono::steady_clock::time_point lastStore = std::chrono::steady_clock::now();
  unsigned localHits = 0, remoteHits = 0, compiled = 0;
  backend::HostCudaSourceOptions hostCudaTools;
  /// linkFileDigest's answers, by file and include folders.
  mutable std::mutex linkDigestsMutex;
  mutable std::map<std::string, std::string> linkDigests;
};

} // namespace kiln::pipeline
