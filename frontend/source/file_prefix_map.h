//===- frontend/source/file_prefix_map.h - Recorded source paths -*- C++ -*-===//
//
// What a build writes must not depend on where the project sits: two
// checkouts of one project build the same bytes and share cache entries.
// So the source paths a build records (in messages compiled into host
// code, debug information, the typed IR, the symbols of functions from
// other modules) go through a FilePrefixMap, GCC's -ffile-prefix-map: each
// entry OLD=NEW replaces the prefix OLD of a source's absolute path with
// NEW. The build puts the project root first (ROOT/ to nothing, so that
// paths in the project are relative to it), then --file-prefix-map's
// entries. Diagnostics keep the paths as the command line gave them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

class FilePrefixMap {
public:
  /// Splits `OLD=NEW` at its first '=', as GCC does; nothing without one.
  static std::optional<std::pair<std::string, std::string>> parse(llvm::StringRef entry);

  /// Adds an entry; where several match a path, the one added last wins,
  /// as with GCC's repeated -ffile-prefix-map. A relative `oldPrefix` is
  /// taken from the current folder (a trailing '/' kept); an empty one
  /// matches every path.
  void add(llvm::StringRef oldPrefix, llvm::StringRef newPrefix);
  /// Adds `ROOT/` to nothing: the paths in `root` become relative to it.
  void addRoot(llvm::StringRef root);

  /// How `path` is recorded: its absolute form (dots removed) with the
  /// prefix of the last matching entry replaced; `path` as given where no
  /// entry matches, and for names of sources that are no files
  /// (`<kiln>/numba/cuda/random.py`, `<command line>`). Prefixes are
  /// compared character by character, as GCC compares them.
  std::string remap(llvm::StringRef path) const;

  bool empty() const { return entries.empty(); }

private:
  std::vector<std::pair<std::string, std::string>> entries;
};

} // namespace kiln
