//===- cache/cache_location.cpp -------------------------------------------===//

#include "cache/cache_location.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Process.h>

#include <cmath>

namespace kiln::cache {

namespace {

std::optional<std::string> nonEmpty(std::optional<std::string> value) {
  if (value && value->empty())
    return std::nullopt;
  return value;
}

bool isOff(llvm::StringRef value) {
  std::string lower = value.trim().lower();
  return lower == "0" || lower == "off" || lower == "false" || lower == "no";
}

} // namespace

CacheEnvironment CacheEnvironment::fromProcess() {
  using llvm::sys::Process;
  return {nonEmpty(Process::GetEnv("KILN_CACHE_DIR")), nonEmpty(Process::GetEnv("KILN_CACHE")),
          nonEmpty(Process::GetEnv("KILN_CACHE_MAX_SIZE")),
          nonEmpty(Process::GetEnv("XDG_CACHE_HOME")), nonEmpty(Process::GetEnv("HOME"))};
}

llvm::StringRef sizeSourceName(SizeSource source) {
  switch (source) {
  case SizeSource::Flag:
    return "flag";
  case SizeSource::Environment:
    return "environment";
  case SizeSource::Configured:
    return "configured";
  case SizeSource::Stored:
    return "stored";
  case SizeSource::Default:
    return "default";
  }
  llvm_unreachable("unknown size source");
}

llvm::Expected<CacheLocation> resolveCacheLocation(const CacheFlags &flags,
                                                   const CacheEnvironment &environment,
                                                   const CacheConfiguration &configured) {
  CacheLocation location;
  std::optional<std::string> size;
  std::string origin;
  if (flags.maxSize) {
    size = flags.maxSize;
    origin = "--max-size";
    location.maxSizeSource = SizeSource::Flag;
  } else if (environment.maxSize) {
    size = environment.maxSize;
    origin = "KILN_CACHE_MAX_SIZE";
    location.maxSizeSource = SizeSource::Environment;
  } else if (configured.maxSize) {
    size = configured.maxSize;
    origin = "cache-max-size in " + configured.origin;
    location.maxSizeSource = SizeSource::Configured;
  }
  if (size) {
    llvm::Expected<uint64_t> bytes = parseSize(*size);
    if (!bytes)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     origin + ": " + llvm::toString(bytes.takeError()));
    location.maxSize = *bytes;
  }
  if (flags.disabled || (environment.cache && isOff(*environment.cache)))
    return location;
  llvm::SmallString<256> directory;
  if (flags.directory && !flags.directory->empty()) {
    directory = *flags.directory;
  } else if (environment.cacheDir) {
    directory = *environment.cacheDir;
  } else if (configured.directory) {
    directory = *configured.directory;
  } else if (environment.xdgCache) {
    directory = *environment.xdgCache;
    llvm::sys::path::append(directory, "kiln");
  } else if (environment.home) {
    directory = *environment.home;
    llvm::sys::path::append(directory, ".cache", "kiln");
  } else {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "no cache folder: set KILN_CACHE_DIR or HOME, or pass "
                                   "--cache-dir");
  }
  location.directory = directory.str().str();
  return location;
}

llvm::Expected<uint64_t> parseSize(llvm::StringRef text) {
  llvm::StringRef rest = text.trim();
  size_t digits = rest.find_first_not_of("0123456789.");
  llvm::StringRef number = rest.take_front(digits);
  llvm::StringRef unit = rest.drop_front(number.size()).trim().lower() == ""
                             ? llvm::StringRef()
                             : rest.drop_front(number.size()).trim();
  double value = 0;
  if (number.empty() || number.getAsDouble(value) || value < 0)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "'" + text.str() +
                                       "' is not a size (such as 2G, 500M, 64K or 1048576)");
  std::string suffix = unit.lower();
  if (llvm::StringRef(suffix).ends_with("ib"))
    suffix = suffix.substr(0, suffix.size() - 2);
  else if (llvm::StringRef(suffix).ends_with("b"))
    suffix = suffix.substr(0, suffix.size() - 1);
  double scale = 1;
  if (suffix == "k")
    scale = 1024.0;
  else if (suffix == "m")
    scale = 1024.0 * 1024;
  else if (suffix == "g")
    scale = 1024.0 * 1024 * 1024;
  else if (suffix == "t")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else if (!suffix.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "'" + text.str() + "' has an unknown unit (use K, M, G or T)");
  return static_cast<uint64_t>(std::llround(value * scale));
}

llvm::Expected<uint64_t> parseAge(llvm::StringRef text) {
  llvm::StringRef rest = text.trim();
  uint64_t value = 0;
  llvm::StringRef number = rest.take_while(llvm::isDigit);
  llvm::StringRef unit = rest.drop_front(number.size()).trim();
  uint64_t scale = 0;
  if (unit == "s" || unit.empty())
    scale = 1;
  else if (unit == "m")
    scale = 60;
  else if (unit == "h")
    scale = 3600;
  else if (unit == "d")
    scale = 86400;
  else if (unit == "w")
    scale = 7 * 86400;
  if (number.empty() || number.getAsInteger(10, value) || scale == 0)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "'" + text.str() + "' is not an age (such as 30d, 12h, 45m)");
  return value * scale;
}

std::string formatSize(uint64_t bytes) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  unsigned unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0)
    return llvm::formatv("{0} B", bytes).str();
  return llvm::formatv("{0:f1} {1}", value, units[unit]).str();
}

} // namespace kiln::cache
