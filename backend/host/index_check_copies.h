//===- backend/host/index_check_copies.h - Copies of a kernel's body -*- C++ -*-===//
//
// The CPU engine checks array indices (an IndexError rather than a stray
// access to the process's memory) unless a kernel says boundscheck=False.
// A build gives each kernel's host code the copy of its body that option
// asks for, or, where asked, both copies, between which the engine's
// KILN_CPU_BOUNDSCHECK setting then chooses at each launch.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "module/manifest_format.h"

#include <llvm/ADT/StringRef.h>

#include <optional>

namespace kiln::backend {

/// Which copies of a kernel's body its host code holds. A kernel that
/// checks no index has one copy, which is both.
enum class IndexCheckCopies { Checked, Unchecked, Both };

/// How manifests and cache entries spell `copies`.
inline llvm::StringRef spellingOf(IndexCheckCopies copies) {
  switch (copies) {
  case IndexCheckCopies::Checked:
    return module::IndexChecksChecked;
  case IndexCheckCopies::Unchecked:
    return module::IndexChecksUnchecked;
  case IndexCheckCopies::Both:
    break;
  }
  return module::IndexChecksBoth;
}

/// The copies `spelling` names; nullopt for anything else.
inline std::optional<IndexCheckCopies> indexCheckCopiesNamed(llvm::StringRef spelling) {
  for (IndexCheckCopies copies :
       {IndexCheckCopies::Checked, IndexCheckCopies::Unchecked, IndexCheckCopies::Both})
    if (spelling == spellingOf(copies))
      return copies;
  return std::nullopt;
}

} // namespace kiln::backend
