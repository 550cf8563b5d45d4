//===- pipeline/cached_step.h - Look up, else compute and store -*- C++ -*-===//
//
// Every step of a build that the cache covers (code per target, cubins,
// fat binaries) has one shape: with a key, take the cache's result if it
// has one (noting for -v where it came from); else compute the result and,
// with a key, store it. The steps differ only in their three functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pipeline/build_cache.h"

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/ADT/ScopeExit.h>
#include <llvm/Support/Error.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace kiln::pipeline {

/// What a cache note says about a step: "ptx sm_80 kernel 'add' (...)".
struct StepName {
  llvm::StringRef kind;
  llvm::StringRef target;
  llvm::StringRef description;
};

/// Where a step's result came from (empty: the step ran uncached) and how
/// long the step took.
struct StepOutcome {
  std::optional<StepSource> source;
  uint64_t microseconds = 0;
};

inline uint64_t microsecondsSince(std::chrono::steady_clock::time_point start) {
  return uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count());
}

/// `key` is empty for a step that runs uncached (no cache, or a kernel
/// whose source the IR does not record).
template <typename Result>
llvm::Expected<Result>
cachedStep(BuildCache *cache, const std::optional<std::string> &key, StepName name,
           llvm::function_ref<std::optional<CacheHit<Result>>(const std::string &)> lookup,
           llvm::function_ref<llvm::Expected<Result>()> compute,
           llvm::function_ref<void(const std::string &, const Result &)> store,
           StepOutcome &outcome) {
  auto start = std::chrono::steady_clock::now();
  auto timed = llvm::make_scope_exit([&] { outcome.microseconds = microsecondsSince(start); });
  bool cached = cache && key;
  if (cached) {
    std::optional<CacheHit<Result>> hit = lookup(*key);
    outcome.source = hit ? hit->source : StepSource::Compiled;
    cache->note(*outcome.source, name.kind, name.target, name.description);
    if (hit)
      return std::move(hit->value);
  }
  llvm::Expected<Result> result = compute();
  if (result && cached)
    store(*key, *result);
  return result;
}

} // namespace kiln::pipeline
