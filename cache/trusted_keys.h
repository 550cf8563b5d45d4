//===- cache/trusted_keys.h - The public keys an importer trusts -*- C++ -*-===//
//
// A trusted-keys file holds one public key line per line (see
// cache/signature.h); blank lines and lines starting with '#' are comments.
// People edit it and commit it with a project; Kiln edits it with
// `kiln cache key trust` and `untrust`, keeping every other line as it is.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cache/signature.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <string>
#include <vector>

namespace kiln::cache {

/// Whose signatures make entries that come from elsewhere (an archive, a
/// remote cache tier) acceptable.
struct TrustPolicy {
  std::vector<PublicKey> trusted;
  /// Where `trusted` came from, for messages: a trusted-keys file.
  std::string source;
  /// Accept entries whoever made them, checking no signature; the user's
  /// explicit choice, never a default.
  bool skipSignature = false;
};

/// The keys in `text`; an error naming `path` and the line of anything
/// that is not a key or a comment.
llvm::Expected<std::vector<PublicKey>> parseTrustedKeys(llvm::StringRef text, llvm::StringRef path);

/// The keys in the file `path`. A file that does not exist trusts nobody,
/// unless `mustExist`, when it is an error; so is a file anyone may write.
llvm::Expected<std::vector<PublicKey>> readTrustedKeys(llvm::StringRef path, bool mustExist);

/// Appends the keys of `keys` that `path` does not trust yet (creating the
/// file), and returns them. An error, changing nothing, if a different key
/// is trusted under one of their names: untrust it first.
llvm::Expected<std::vector<PublicKey>> trustKeys(llvm::StringRef path,
                                                 llvm::ArrayRef<PublicKey> keys);

/// Removes the lines of the keys named `which` or whose fingerprint it is,
/// and returns those keys; an error if there are none.
llvm::Expected<std::vector<PublicKey>> untrustKeys(llvm::StringRef path, llvm::StringRef which);

} // namespace kiln::cache
