//===- pipeline/build_options.h - What a build makes, and how ---*- C++ -*-===//
#pragma once

#include "cache/cache_location.h"
#include "cache/remote/remote_config.h"
#include "frontend/resolve/module_scope.h"
#include "pipeline/project_settings.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::pipeline {

/// The form a build produces: one file per specialization (and
/// architecture, where the form has one), or one Python extension module.
enum class EmitKind { Typed, LLVM, Ptx, Cubin, Fatbin, Object, Module };

struct BuildOptions {
  std::string file;
  std::string moduleName;
  /// The module's dotted name: `moduleName`; else, for a module that stays
  /// Python, its name in its package (the folders above it that hold an
  /// __init__.py); else the file's stem.
  std::string effectiveModuleName() const;
  std::vector<std::string> signatures;
  /// See FrontendOptions::moduleStaysPython.
  bool moduleStaysPython = false;
  /// The values of globals host code computes at import, where the caller
  /// has them (a running program); otherwise `python` imports the module
  /// when a kernel reads one.
  HostValueSource *hostValues = nullptr;
  /// See FrontendOptions::closures.
  std::vector<ClosureRequest> closures;
  /// See FrontendOptions::calledDecorators.
  std::vector<CalledDecorator> calledDecorators;
  /// See FrontendOptions::onlyFunctions.
  std::vector<std::string> onlyFunctions;
  /// Host code alone, for the CPU engine: no GPU code, so no CUDA toolkit
  /// (the first calls of kernels in development where there is no GPU).
  bool hostOnly = false;
  EmitKind emit = EmitKind::Fatbin;
  /// The Python that imports the module when a kernel reads a value its
  /// host code computes (empty: python3 on $PATH); with pythonAbi
  /// "interpreter", also the one whose EXT_SUFFIX names the module.
  std::string python;
  /// EmitKind::Module: the Python ABI the module's file name says it is
  /// for (pipeline::extensionSuffix), unless `extensionSuffix` is given.
  std::string pythonAbi = "abi3";
  std::optional<std::string> extensionSuffix;
  std::string outputDirectory = ".";
  /// The folder the source paths a build records are relative to
  /// (--project-root; pipeline/source_paths.h says what is taken without it).
  std::string projectRoot;
  /// --file-prefix-map's OLD=NEW entries, in the order given: how to
  /// record the source paths the project root leaves alone.
  std::vector<std::string> filePrefixMaps;
  /// Where to write the files read, for build systems (pipeline/depfile.h);
  /// empty for none.
  std::string depfile;
  std::optional<std::string> arch;
  /// With EmitKind::Ptx: also assemble cubins, to report each kernel's
  /// registers, stack, spills and shared memory.
  bool resourceUsage = false;
  /// Parallel jobs; 0 for one per core.
  unsigned jobs = 0;
  /// The cache's location and size (--cache-dir, --no-cache, --max-size).
  cache::CacheFlags cache;
  /// The remote caches behind it (--remote-cache, --no-remote-cache).
  cache::remote::RemoteFlags remoteCache;
  /// The project's archs, cache and remote caches, which yield to the
  /// flags above and to the environment.
  ProjectSettings project;

  // Overrides of the decorators' options, for every kernel.
  bool fastmath = false;
  bool debug = false;
  bool lineinfo = false;
  std::optional<unsigned> opt;
  std::optional<unsigned> maxRegisters;
  std::vector<std::string> ptxasFlags;
  /// Host code with each kernel's body both with and without index checks,
  /// which the CPU engine's KILN_CPU_BOUNDSCHECK setting chooses between at
  /// run time; otherwise only the copy each kernel's boundscheck option asks
  /// for (--switchable-index-checks, pyproject's switchable-index-checks).
  bool switchableIndexChecks = false;
  /// Folders searched for `#include <...>` in the CUDA C/C++ files kernels
  /// link (--link-include; Numba's CUDA_NVRTC_EXTRA_SEARCH_PATHS).
  std::vector<std::string> linkIncludeDirectories;
};

} // namespace kiln::pipeline
