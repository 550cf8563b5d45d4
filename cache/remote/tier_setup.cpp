//===- cache/remote/tier_setup.cpp ----------------------------------------===//

#include "cache/remote/tier_setup.h"

#include "cache/key_location.h"
#include "cache/signing_keys.h"

#include <cstdlib>

namespace kiln::cache::remote {

namespace {

std::optional<std::string> environmentVariable(llvm::StringRef name) {
  const char *value = std::getenv(name.str().c_str());
  if (!value)
    return std::nullopt;
  return std::string(value);
}

/// The key named by $KILN_SIGNING_KEY, else the only one there is; an error
/// saying why there is none to use.
llvm::Expected<SigningKey> uploadSigningKey(const KeyLocation &location) {
  if (location.signingKey)
    return chooseSigningKey(location.signingKey, location.keysDirectory);
  llvm::Expected<std::vector<StoredSigningKey>> keys = listSigningKeys(location.keysDirectory);
  if (!keys)
    return keys.takeError();
  if (keys->empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "no signing key in '" + location.keysDirectory + "'");
  if (keys->size() > 1)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "several signing keys in '" + location.keysDirectory +
                                       "' and no $KILN_SIGNING_KEY to choose one");
  return readSigningKeyFile(keys->front().path);
}

} // namespace

std::unique_ptr<RemoteTier> openConfiguredTier(const RemoteFlags &flags,
                                               const RemoteConfiguration &configured,
                                               RemoteTier::Report warn, RemoteTier::Report note) {
  llvm::Expected<std::vector<RemoteConfig>> configs =
      resolveRemoteConfigs(flags, environmentVariable("KILN_REMOTE_CACHE"), configured);
  if (!configs) {
    warn(llvm::toString(configs.takeError()) + "; building without remote caches");
    return nullptr;
  }
  if (configs->empty())
    return nullptr;

  TierOptions options;
  options.remotes = std::move(*configs);
  options.getenv = environmentVariable;
  llvm::Expected<KeyLocation> location =
      resolveKeyLocation(KeyEnvironment::fromProcess(), std::nullopt);
  if (!location) {
    options.noSignerReason = llvm::toString(location.takeError());
    warn("remote caches: " + options.noSignerReason + "; no remote entry can be trusted");
    return std::make_unique<RemoteTier>(std::move(options), warn, note);
  }
  llvm::Expected<std::vector<PublicKey>> trusted =
      readTrustedKeys(location->trustedKeysFile, location->trustedKeysNamed);
  if (trusted) {
    options.trust.trusted = std::move(*trusted);
    options.trust.source = location->trustedKeysFile;
  } else {
    warn("remote caches: " + llvm::toString(trusted.takeError()) +
         "; no remote entry can be trusted");
  }
  llvm::Expected<SigningKey> signer = uploadSigningKey(*location);
  if (signer)
    options.signer = std::move(*signer);
  else
    options.noSignerReason = llvm::toString(signer.takeError());
  return std::make_unique<RemoteTier>(std::move(options), warn, note);
}

} // namespace kiln::cache::remote
