//===- cache/remote/remote_config.cpp -------------------------------------===//

#include "cache/remote/remote_config.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/BLAKE3.h>
#include <llvm/Support/FormatVariadic.h>

#include <cmath>

namespace kiln::cache::remote {

namespace {

llvm::Error invalid(const RemoteConfig &config, const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "remote cache '" + config.displayName + "': " + why);
}

/// "250", "250ms", "2s": a duration; milliseconds when no unit is given.
std::optional<std::chrono::milliseconds> parseDuration(llvm::StringRef text) {
  uint64_t scale = 1;
  if (text.consume_back("ms"))
    scale = 1;
  else if (text.consume_back("s"))
    scale = 1000;
  uint64_t value = 0;
  if (text.empty() || text.getAsInteger(10, value) || value > 3'600'000)
    return std::nullopt;
  return std::chrono::milliseconds(value * scale);
}

/// A bare attribute is true; otherwise true/false, yes/no, on/off, 1/0.
std::optional<bool> parseSwitch(std::optional<llvm::StringRef> value) {
  if (!value)
    return true;
  std::string lower = value->lower();
  if (lower == "true" || lower == "yes" || lower == "on" || lower == "1")
    return true;
  if (lower == "false" || lower == "no" || lower == "off" || lower == "0")
    return false;
  return std::nullopt;
}

bool isEnvironmentName(llvm::StringRef name) {
  return !name.empty() && !llvm::isDigit(name.front()) &&
         llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

llvm::Error parseShards(RemoteConfig &config, llvm::StringRef list) {
  llvm::SmallVector<llvm::StringRef, 8> names;
  list.split(names, ',', -1, /*KeepEmpty=*/true);
  for (llvm::StringRef item : names) {
    item = item.trim();
    Shard shard;
    if (item.consume_back(")")) {
      auto [name, weight] = item.split('(');
      if (weight.getAsInteger(10, shard.weight) || shard.weight == 0 || shard.weight > 1000)
        return invalid(config, "shard '" + item + ")' has no weight from 1 to 1000");
      item = name;
    }
    if (item.empty() || !llvm::all_of(item, [](char c) {
          return llvm::isAlnum(c) || llvm::StringRef("-_.:").contains(c);
        }))
      return invalid(config, "shards=" + list +
                                 " names a shard that is not letters, digits, '-', "
                                 "'_', '.' or ':'");
    shard.name = item.str();
    config.shards.push_back(std::move(shard));
  }
  return llvm::Error::success();
}

llvm::Error applyAttribute(RemoteConfig &config, llvm::StringRef name,
                           std::optional<llvm::StringRef> value) {
  auto needsValue = [&]() -> llvm::Error {
    if (!value || value->empty())
      return invalid(config, "attribute '" + name + "' needs a value (" + name + "=...)");
    return llvm::Error::success();
  };
  auto duration = [&](std::chrono::milliseconds &slot) -> llvm::Error {
    if (llvm::Error error = needsValue())
      return error;
    std::optional<std::chrono::milliseconds> parsed = parseDuration(*value);
    if (!parsed)
      return invalid(config, name + "=" + *value +
                                 " is not a time such as 250 (milliseconds), 250ms or 2s");
    slot = *parsed;
    return llvm::Error::success();
  };
  auto flag = [&](bool &slot) -> llvm::Error {
    std::optional<bool> parsed = parseSwitch(value);
    if (!parsed)
      return invalid(config, name + "=" + *value + " is neither true nor false");
    slot = *parsed;
    return llvm::Error::success();
  };
  auto variable = [&](std::optional<std::string> &slot) -> llvm::Error {
    if (llvm::Error error = needsValue())
      return error;
    if (!isEnvironmentName(*value))
      return invalid(config, name + "=" + *value +
                                 " does not name an environment variable (the secret itself "
                                 "never goes in the URL's attributes)");
    slot = value->str();
    return llvm::Error::success();
  };

  if (name == "read-only")
    return flag(config.readOnly);
  if (name == "insecure-skip-signature")
    return flag(config.skipSignature);
  if (name == "connect-timeout")
    return duration(config.connectTimeout);
  if (name == "operation-timeout")
    return duration(config.operationTimeout);
  if (name == "upload-wait")
    return duration(config.uploadWait);
  if (name == "bearer-token-env")
    return variable(config.bearerTokenEnv);
  if (name == "password-env")
    return variable(config.passwordEnv);
  if (name == "layout") {
    if (llvm::Error error = needsValue())
      return error;
    if (*value != "flat" && *value != "subdirs" && *value != "bazel")
      return invalid(config, "layout=" + *value + " is not one of flat, subdirs, bazel");
    config.layout = value->str();
    return llvm::Error::success();
  }
  if (name == "ca-file") {
    if (llvm::Error error = needsValue())
      return error;
    config.caFile = value->str();
    return llvm::Error::success();
  }
  if (name == "shards") {
    if (llvm::Error error = needsValue())
      return error;
    return parseShards(config, *value);
  }
  return invalid(config, "unknown attribute '" + name +
                             "' (known: read-only, connect-timeout, operation-timeout, "
                             "upload-wait, shards, layout, bearer-token-env, password-env, "
                             "ca-file, insecure-skip-signature)");
}

} // namespace

llvm::Expected<RemoteConfig> parseRemoteConfig(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef, 8> parts;
  text.split(parts, '|');
  RemoteConfig config;
  config.url = parts.front().trim().str();
  config.displayName = redactUrl(config.url);
  if (config.url.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "remote cache '" + redactUrl(text) + "' has no URL");
  llvm::StringRef scheme = llvm::StringRef(config.url).split("://").first;
  if (!llvm::StringRef(config.url).contains("://") ||
      !llvm::is_contained({"redis", "redis+unix", "http", "https"}, scheme)) {
    if (!llvm::StringRef(config.url).starts_with("redis+unix:"))
      return invalid(config, "not a URL Kiln can use as a remote cache (redis://, redis+unix://, "
                             "http:// or https://)");
  }
  bool http = scheme == "http" || scheme == "https";
  for (llvm::StringRef attribute : llvm::ArrayRef(parts).drop_front()) {
    attribute = attribute.trim();
    if (attribute.empty())
      continue;
    std::optional<llvm::StringRef> value;
    llvm::StringRef name = attribute;
    if (attribute.contains('=')) {
      auto [left, right] = attribute.split('=');
      name = left.trim();
      value = right.trim();
    }
    if (llvm::Error error = applyAttribute(config, name, value))
      return error;
    if (!http && (name == "layout" || name == "bearer-token-env" || name == "ca-file"))
      return invalid(config,
                     "attribute '" + name + "' applies to http:// and https:// remotes only");
  }
  bool wildcard = llvm::StringRef(config.url).contains('*');
  if (wildcard && config.shards.empty())
    return invalid(config, "the URL has a '*' but no shards=... to put in its place");
  if (!wildcard && !config.shards.empty())
    return invalid(config, "shards=... needs a '*' in the URL to put each shard's name in");
  if (config.operationTimeout.count() == 0 || config.connectTimeout.count() == 0)
    return invalid(config, "a time-out of 0 would never let a request finish");
  return config;
}

llvm::Expected<std::vector<RemoteConfig>>
resolveRemoteConfigs(const RemoteFlags &flags, const std::optional<std::string> &environment,
                     const RemoteConfiguration &configured) {
  std::vector<RemoteConfig> configs;
  if (flags.disabled)
    return configs;
  llvm::SmallVector<llvm::StringRef, 4> texts;
  std::string origin = "--remote-cache";
  if (!flags.urls.empty()) {
    for (const std::string &url : flags.urls)
      texts.push_back(url);
  } else if (environment) {
    llvm::StringRef value = llvm::StringRef(*environment).trim();
    std::string lower = value.lower();
    if (value.empty() || lower == "off" || lower == "0" || lower == "false" || lower == "no")
      return configs;
    llvm::SplitString(value, texts, " \t\n");
    origin = "$KILN_REMOTE_CACHE";
  } else if (configured.urls) {
    for (const std::string &url : *configured.urls)
      texts.push_back(url);
    origin = "remote-cache in " + configured.origin;
  }
  for (llvm::StringRef text : texts) {
    llvm::Expected<RemoteConfig> config = parseRemoteConfig(text);
    if (!config)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "in " + origin + ": " + llvm::toString(config.takeError()));
    configs.push_back(std::move(*config));
  }
  return configs;
}

llvm::Expected<Endpoint>
endpointFor(const RemoteConfig &config, llvm::StringRef shard,
            const std::function<std::optional<std::string>(llvm::StringRef)> &getenv) {
  Endpoint endpoint;
  endpoint.url = config.url;
  if (!shard.empty()) {
    size_t star = endpoint.url.find('*');
    endpoint.url.replace(star, 1, shard.str());
  }
  endpoint.connectTimeout = config.connectTimeout;
  endpoint.operationTimeout = config.operationTimeout;
  endpoint.layout = config.layout;
  endpoint.caFile = config.caFile;
  auto secret = [&](const std::optional<std::string> &variable, std::string &slot) -> llvm::Error {
    if (!variable)
      return llvm::Error::success();
    std::optional<std::string> value = getenv(*variable);
    if (!value || value->empty())
      return invalid(config, "$" + *variable + ", which it takes its secret from, is not set");
    slot = std::move(*value);
    return llvm::Error::success();
  };
  if (llvm::Error error = secret(config.bearerTokenEnv, endpoint.bearerToken))
    return error;
  if (llvm::Error error = secret(config.passwordEnv, endpoint.password))
    return error;
  return endpoint;
}

size_t shardFor(llvm::ArrayRef<Shard> shards, llvm::StringRef key) {
  size_t best = 0;
  double bestScore = -1;
  for (size_t i = 0; i < shards.size(); ++i) {
    llvm::BLAKE3 hasher;
    hasher.update(key);
    hasher.update(llvm::StringRef("\0", 1));
    hasher.update(shards[i].name);
    std::array<uint8_t, 8> hash = hasher.final<8>();
    uint64_t bits = 0;
    for (uint8_t byte : hash)
      bits = bits << 8 | byte;
    // A uniform number in (0, 1); the weighted score of rendezvous hashing.
    double uniform = (static_cast<double>(bits >> 11) + 0.5) / 9007199254740992.0;
    double score = shards[i].weight / -std::log(uniform);
    if (score > bestScore) {
      bestScore = score;
      best = i;
    }
  }
  return best;
}

} // namespace kiln::cache::remote
