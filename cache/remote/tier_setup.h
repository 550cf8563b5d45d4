//===- cache/remote/tier_setup.h - The tier the user configured -*- C++ -*-===//
//
// Which remotes (remote_config.h), whose entries to accept (the trusted
// keys of cache/key_location.h), and the key that signs uploads: the one
// $KILN_SIGNING_KEY names, else the only key in the keys folder.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cache/remote/remote_tier.h"

#include <memory>

namespace kiln::cache::remote {

/// The tier for `flags` and the process's environment; null when no remote
/// is configured, or the configuration cannot be used (one warning).
std::unique_ptr<RemoteTier> openConfiguredTier(const RemoteFlags &flags,
                                               const RemoteConfiguration &configured,
                                               RemoteTier::Report warn, RemoteTier::Report note);

} // namespace kiln::cache::remote
