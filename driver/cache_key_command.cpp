//===- driver/cache_key_command.cpp - `kiln cache key ...` ----------------===//
//
//   $ kiln cache key generate --name ci
//   created the signing key 'ci' (SHA256:...) in /home/me/.config/kiln/keys/ci.key
//   its public key, to trust where its archives are imported:
//   kiln-ed25519 4X0h...= ci
//
//===----------------------------------------------------------------------===//

#include "driver/cache_key_command.h"

#include "cache/key_location.h"
#include "cache/signing_keys.h"
#include "cache/trusted_keys.h"
#include "driver/json_output.h"

#include <CLI/CLI.hpp>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

#include <pwd.h>
#include <unistd.h>

namespace kiln::driver {

namespace {

int fail(llvm::Error error) {
  llvm::WithColor::error(llvm::errs(), "kiln") << llvm::toString(std::move(error)) << '\n';
  return 1;
}

llvm::json::Object keyJson(const cache::PublicKey &key) {
  return llvm::json::Object{{"name", key.name}, {"fingerprint", key.fingerprint()}};
}

llvm::Error failure(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// user@host, as ssh names keys, with what a key name may not hold
/// replaced.
std::string defaultKeyName() {
  std::string user;
  if (const passwd *entry = ::getpwuid(::getuid()))
    user = entry->pw_name;
  char host[256] = "";
  ::gethostname(host, sizeof host - 1);
  std::string name = user.empty() ? std::string("kiln") : user;
  if (host[0])
    name += "@" + std::string(host);
  for (char &c : name)
    if (!llvm::isAlnum(c) && !llvm::StringRef("._@+-").contains(c))
      c = '-';
  return name.substr(0, 64);
}

int generate(const CacheKeyOptions &options, const cache::KeyLocation &location) {
  std::string name = options.name ? *options.name : defaultKeyName();
  llvm::Expected<cache::SigningKey> key = cache::SigningKey::generate(name);
  if (!key)
    return fail(key.takeError());
  std::string path =
      options.file ? *options.file : cache::signingKeyPath(location.keysDirectory, name);
  if (llvm::Error error = cache::writeSigningKeyFile(*key, path))
    return fail(std::move(error));
  if (options.json) {
    llvm::json::Object created = keyJson(key->publicKey());
    created["path"] = path;
    created["public_key"] = key->publicKey().line();
    return printJson(std::move(created));
  }
  llvm::outs() << "created the signing key " << key->publicKey().describe() << " in " << path
               << "\nits public key, to trust where its archives are imported:\n"
               << key->publicKey().line() << '\n';
  return 0;
}

int list(const CacheKeyOptions &options, const cache::KeyLocation &location) {
  llvm::Expected<std::vector<cache::StoredSigningKey>> keys =
      cache::listSigningKeys(location.keysDirectory);
  if (!keys)
    return fail(keys.takeError());
  llvm::Expected<std::vector<cache::PublicKey>> trusted =
      cache::readTrustedKeys(location.trustedKeysFile, location.trustedKeysNamed);
  if (!trusted)
    return fail(trusted.takeError());
  if (options.json) {
    llvm::json::Array signing, accepted;
    for (const cache::StoredSigningKey &key : *keys) {
      llvm::json::Object entry = keyJson(key.publicKey);
      entry["path"] = key.path;
      signing.push_back(std::move(entry));
    }
    for (const cache::PublicKey &key : *trusted)
      accepted.push_back(keyJson(key));
    return printJson(llvm::json::Object{
        {"signing_keys",
         llvm::json::Object{{"folder", location.keysDirectory}, {"keys", std::move(signing)}}},
        {"trusted_keys",
         llvm::json::Object{{"file", location.trustedKeysFile}, {"keys", std::move(accepted)}}}});
  }
  llvm::raw_ostream &os = llvm::outs();
  os << "signing keys (" << location.keysDirectory << "):\n";
  if (keys->empty())
    os << "  none\n";
  for (const cache::StoredSigningKey &key : *keys)
    os << llvm::formatv("  {0,-24} {1}  {2}\n", key.publicKey.name, key.publicKey.fingerprint(),
                        key.path);
  os << "trusted keys (" << location.trustedKeysFile << "):\n";
  if (trusted->empty())
    os << "  none\n";
  for (const cache::PublicKey &key : *trusted)
    os << llvm::formatv("  {0,-24} {1}\n", key.name, key.fingerprint());
  return 0;
}

int exportPublic(const CacheKeyOptions &options, const cache::KeyLocation &location) {
  llvm::Expected<cache::SigningKey> key = cache::chooseSigningKey(
      options.argument ? options.argument : location.signingKey, location.keysDirectory);
  if (!key)
    return fail(key.takeError());
  if (options.json) {
    llvm::json::Object exported = keyJson(key->publicKey());
    exported["public_key"] = key->publicKey().line();
    return printJson(std::move(exported));
  }
  llvm::outs() << key->publicKey().line() << '\n';
  return 0;
}

/// The keys `argument` gives: a file of key lines, `-` for standard input,
/// or one key line.
llvm::Expected<std::vector<cache::PublicKey>> keysToTrust(llvm::StringRef argument) {
  if (argument == "-" || llvm::sys::fs::is_regular_file(argument)) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
        argument == "-" ? llvm::MemoryBuffer::getSTDIN() : llvm::MemoryBuffer::getFile(argument);
    llvm::StringRef shown = argument == "-" ? "standard input" : argument;
    if (!buffer)
      return failure("cannot read '" + shown + "': " + buffer.getError().message());
    llvm::Expected<std::vector<cache::PublicKey>> keys =
        cache::parseTrustedKeys((*buffer)->getBuffer(), shown);
    if (keys && keys->empty())
      return failure("'" + shown + "' holds no public key");
    return keys;
  }
  llvm::Expected<cache::PublicKey> key = cache::PublicKey::parse(argument);
  if (!key)
    return failure("'" + argument +
                   "' is neither a file nor a public key: " + llvm::toString(key.takeError()));
  return std::vector<cache::PublicKey>{std::move(*key)};
}

int trust(const CacheKeyOptions &options, const cache::KeyLocation &location) {
  llvm::Expected<std::vector<cache::PublicKey>> keys = keysToTrust(*options.argument);
  if (!keys)
    return fail(keys.takeError());
  llvm::Expected<std::vector<cache::PublicKey>> added =
      cache::trustKeys(location.trustedKeysFile, *keys);
  if (!added)
    return fail(added.takeError());
  llvm::json::Array newly, already;
  for (const cache::PublicKey &key : *keys) {
    bool isNew = llvm::any_of(*added, [&](const cache::PublicKey &a) { return a.sameKey(key); });
    (isNew ? newly : already).push_back(keyJson(key));
    if (!options.json)
      llvm::outs() << (isNew ? "trusted " : "already trusted ") << key.describe() << " in "
                   << location.trustedKeysFile << '\n';
  }
  if (options.json)
    return printJson(llvm::json::Object{{"file", location.trustedKeysFile},
                                        {"trusted", std::move(newly)},
                                        {"already_trusted", std::move(already)}});
  return 0;
}

int untrust(const CacheKeyOptions &options, const cache::KeyLocation &location) {
  llvm::Expected<std::vector<cache::PublicKey>> removed =
      cache::untrustKeys(location.trustedKeysFile, *options.argument);
  if (!removed)
    return fail(removed.takeError());
  if (options.json) {
    llvm::json::Array keys;
    for (const cache::PublicKey &key : *removed)
      keys.push_back(keyJson(key));
    return printJson(
        llvm::json::Object{{"file", location.trustedKeysFile}, {"untrusted", std::move(keys)}});
  }
  for (const cache::PublicKey &key : *removed)
    llvm::outs() << "no longer trusted: " << key.describe() << " in " << location.trustedKeysFile
                 << '\n';
  return 0;
}

} // namespace

int runCacheKeyCommand(const CacheKeyOptions &options) {
  llvm::Expected<cache::KeyLocation> location =
      cache::resolveKeyLocation(cache::KeyEnvironment::fromProcess(), options.trustedKeys);
  if (!location)
    return fail(location.takeError());
  switch (options.action) {
  case CacheKeyAction::Generate:
    return generate(options, *location);
  case CacheKeyAction::List:
    return list(options, *location);
  case CacheKeyAction::ExportPublic:
    return exportPublic(options, *location);
  case CacheKeyAction::Trust:
    return trust(options, *location);
  case CacheKeyAction::Untrust:
    return untrust(options, *location);
  }
  return 0;
}

CLI::App *addCacheKeyCommand(CLI::App &cacheCommand, CacheKeyOptions &keyOptions) {
  CLI::App *keyCommand = cacheCommand.add_subcommand(
      "key", "Make signing keys for exports, and choose whose archives imports accept");
  keyCommand->require_subcommand(1);
  auto keyAction = [&](const char *name, const char *help, CacheKeyAction action) {
    CLI::App *command = keyCommand->add_subcommand(name, help);
    command->callback([&keyOptions, action] { keyOptions.action = action; });
    command->add_flag("--json", keyOptions.json, "Print the result as JSON");
    return command;
  };
  auto trustedKeysOption = [&](CLI::App *command) {
    command->add_option_function<std::string>(
        "--trusted-keys", [&](const std::string &file) { keyOptions.trustedKeys = file; },
        "The trusted-keys file (default: $KILN_TRUSTED_KEYS, else trusted-keys in Kiln's "
        "configuration folder)");
  };
  CLI::App *generateCommand = keyAction(
      "generate", "Create an Ed25519 signing key (mode 0600) in Kiln's configuration folder",
      CacheKeyAction::Generate);
  generateCommand->add_option_function<std::string>(
      "--name", [&](const std::string &name) { keyOptions.name = name; },
      "The key's name (default: user@host)");
  generateCommand->add_option_function<std::string>(
      "--file", [&](const std::string &file) { keyOptions.file = file; },
      "Write the private key to this new file instead (to hand to CI as a secret)");
  trustedKeysOption(
      keyAction("list", "Your signing keys and the keys you trust", CacheKeyAction::List));
  keyAction("export-public", "Print a signing key's public key line, to trust elsewhere",
            CacheKeyAction::ExportPublic)
      ->add_option_function<std::string>(
          "key", [&](const std::string &key) { keyOptions.argument = key; },
          "A key name or key file (default: $KILN_SIGNING_KEY, else your only key)");
  CLI::App *trustCommand =
      keyAction("trust", "Accept archives this key signed (adds it to the trusted keys)",
                CacheKeyAction::Trust);
  trustCommand
      ->add_option_function<std::string>(
          "key", [&](const std::string &key) { keyOptions.argument = key; },
          "A public key line ('kiln-ed25519 <base64> <name>'), a file of them, or - for "
          "standard input")
      ->required();
  trustedKeysOption(trustCommand);
  CLI::App *untrustCommand =
      keyAction("untrust", "Stop accepting archives a key signed", CacheKeyAction::Untrust);
  untrustCommand
      ->add_option_function<std::string>(
          "key", [&](const std::string &key) { keyOptions.argument = key; },
          "The key's name or fingerprint (SHA256:...)")
      ->required();
  trustedKeysOption(untrustCommand);
  return keyCommand;
}

} // namespace kiln::driver
