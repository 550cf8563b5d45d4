//===- driver/cache_command.cpp - `kiln cache ...` ------------------------===//
//
//   $ kiln cache stats
//   cache /home/me/.cache/kiln (SQLite index in WAL mode)
//     entries     42
//     size        1.3 MiB (limit 2.0 GiB, default)
//     hits        120   misses 42   corrupt reads 0   evictions 0
//     sm_80       14 entries (cubin 14), 640.0 KiB
//     ...
//
//===----------------------------------------------------------------------===//

#include "driver/cache_command.h"

#include "cache/cache.h"
#include "cache/cache_archive.h"
#include "cache/cache_verify.h"
#include "cache/key_location.h"
#include "cache/signing_keys.h"
#include "cache/trusted_keys.h"
#include "driver/command_line.h"
#include "driver/json_output.h"
#include "pipeline/project_settings.h"

#include <CLI/CLI.hpp>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

#include <cstring>
#include <ctime>

namespace kiln::driver {

namespace {

int fail(llvm::Error error) {
  llvm::WithColor::error(llvm::errs(), "kiln") << llvm::toString(std::move(error)) << '\n';
  return 1;
}

std::string isoTime(int64_t seconds) {
  std::time_t time = static_cast<std::time_t>(seconds);
  std::tm parts;
  char text[32] = "";
  if (::localtime_r(&time, &parts))
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &parts);
  return text;
}

/// The remote tier's counters, which builds with remote caches add.
constexpr const char *kRemoteCounters[] = {
    "remote_hits",       "remote_misses",   "remote_errors",  "remote_rejected",
    "remote_bytes_down", "remote_bytes_up", "remote_uploads", "remote_uploads_dropped",
    "remote_lookup_us",  "remote_upload_us"};

llvm::json::Object remoteJson(std::map<std::string, int64_t> &counters) {
  llvm::json::Object object;
  for (const char *name : kRemoteCounters)
    object[llvm::StringRef(name).drop_front(strlen("remote_"))] = counters[name];
  return object;
}

void printRemote(llvm::raw_ostream &os, std::map<std::string, int64_t> &counters) {
  if (llvm::none_of(kRemoteCounters, [&](const char *name) { return counters[name] != 0; }))
    return;
  auto seconds = [](int64_t microseconds) { return llvm::formatv("{0:f1} s", microseconds / 1e6); };
  os << llvm::formatv("  remote hits        {0}\n  remote misses      {1}\n"
                      "  remote errors      {2}\n  remote rejected    {3}\n",
                      counters["remote_hits"], counters["remote_misses"], counters["remote_errors"],
                      counters["remote_rejected"]);
  os << llvm::formatv("  remote bytes down  {0}\n  remote bytes up    {1} ({2} uploads, {3} "
                      "dropped)\n",
                      cache::formatSize(counters["remote_bytes_down"]),
                      cache::formatSize(counters["remote_bytes_up"]), counters["remote_uploads"],
                      counters["remote_uploads_dropped"]);
  os << "  remote time        " << seconds(counters["remote_lookup_us"]) << " waiting for lookups, "
     << seconds(counters["remote_upload_us"]) << " uploading in the background\n";
}

/// Where the limit in force comes from.
cache::SizeSource limitSource(const cache::Cache &store, const cache::CacheLocation &location) {
  if (location.givenMaxSize())
    return location.maxSizeSource;
  return store.maxSizeIsStored() ? cache::SizeSource::Stored : cache::SizeSource::Default;
}

int stats(cache::Cache &store, const cache::CacheLocation &location, bool json) {
  llvm::Expected<cache::IndexStats> stats = store.index().stats();
  if (!stats)
    return fail(stats.takeError());
  // Per architecture (target): entries, bytes, entries per kind.
  std::map<std::string, std::tuple<uint64_t, uint64_t, std::map<std::string, uint64_t>>> targets;
  for (const auto &[where, counts] : stats->byTarget) {
    auto &[entries, bytes, kinds] = targets[where.first];
    entries += counts.first;
    bytes += counts.second;
    kinds[where.second] += counts.first;
  }
  std::string mode = store.networkFileSystem() ? "rollback journal, on a network file system (" +
                                                     *store.networkFileSystem() + ")"
                                               : "WAL";
  if (json) {
    llvm::json::Object perTarget;
    for (const auto &[target, counts] : targets) {
      llvm::json::Object kinds;
      for (const auto &[kind, count] : std::get<2>(counts))
        kinds[kind] = count;
      perTarget[target] = llvm::json::Object{{"entries", std::get<0>(counts)},
                                             {"bytes", std::get<1>(counts)},
                                             {"kinds", std::move(kinds)}};
    }
    llvm::json::Object object{{"directory", store.directory()},
                              {"journal", mode},
                              {"read_only", store.isReadOnly()},
                              {"entries", stats->entries},
                              {"bytes", stats->bytes},
                              {"max_size", store.maxSize()},
                              {"max_size_source", sizeSourceName(limitSource(store, location))},
                              {"hits", stats->counters["hits"]},
                              {"misses", stats->counters["misses"]},
                              {"corrupt_reads", stats->counters["corrupt"]},
                              {"evictions", stats->counters["evictions"]},
                              {"stores", stats->counters["stores"]},
                              {"remote", remoteJson(stats->counters)},
                              {"targets", std::move(perTarget)}};
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(object))) << '\n';
    return 0;
  }
  llvm::raw_ostream &os = llvm::outs();
  os << "cache " << store.directory() << " (SQLite index, " << mode
     << (store.isReadOnly() ? "; read-only: builds use its entries but store none" : "") << ")\n";
  os << llvm::formatv("  entries        {0}\n", stats->entries);
  os << llvm::formatv("  size           {0} (limit {1}, {2})\n", cache::formatSize(stats->bytes),
                      cache::formatSize(store.maxSize()),
                      sizeSourceName(limitSource(store, location)));
  os << llvm::formatv("  hits           {0}\n  misses         {1}\n  corrupt reads  {2}\n"
                      "  evictions      {3}\n",
                      stats->counters["hits"], stats->counters["misses"],
                      stats->counters["corrupt"], stats->counters["evictions"]);
  printRemote(os, stats->counters);
  for (const auto &[target, counts] : targets) {
    std::string kinds;
    for (const auto &[kind, count] : std::get<2>(counts))
      kinds += (kinds.empty() ? "" : ", ") + kind + " " + std::to_string(count);
    os << llvm::formatv("  {0,-14} {1} entries ({2}), {3}\n", target, std::get<0>(counts), kinds,
                        cache::formatSize(std::get<1>(counts)));
  }
  return 0;
}

int list(cache::Cache &store, bool json) {
  llvm::Expected<std::vector<cache::EntryRow>> rows = store.index().entries();
  if (!rows)
    return fail(rows.takeError());
  if (json) {
    llvm::json::Array array;
    for (const cache::EntryRow &row : *rows)
      array.push_back(llvm::json::Object{{"key", row.key},
                                         {"kind", row.kind},
                                         {"target", row.target},
                                         {"name", row.name},
                                         {"bytes", row.size},
                                         {"created", row.created},
                                         {"last_used", row.lastUsed}});
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(array))) << '\n';
    return 0;
  }
  for (const cache::EntryRow &row : *rows)
    llvm::outs() << llvm::formatv("{0}  {1,-6} {2,-10} {3,10}  {4}  {5}\n",
                                  llvm::StringRef(row.key).take_front(16), row.kind, row.target,
                                  cache::formatSize(row.size), isoTime(row.lastUsed), row.name);
  return 0;
}

/// The key an export signs with: --sign-with, else $KILN_SIGNING_KEY, else
/// the only key; none with --unsigned.
llvm::Expected<std::optional<cache::SigningKey>> exportSigner(const CacheCommandOptions &options) {
  if (options.unsignedExport)
    return std::nullopt;
  llvm::Expected<cache::KeyLocation> keys =
      cache::resolveKeyLocation(cache::KeyEnvironment::fromProcess(), std::nullopt);
  if (!keys)
    return keys.takeError();
  llvm::Expected<cache::SigningKey> key = cache::chooseSigningKey(
      options.signWith ? options.signWith : keys->signingKey, keys->keysDirectory);
  if (!key)
    return key.takeError();
  return std::optional<cache::SigningKey>(std::move(*key));
}

/// The archive to import, read and checked against the trusted keys.
llvm::Expected<cache::CheckedArchive> readImport(const CacheCommandOptions &options,
                                                 const cache::CacheLocation &location) {
  cache::TrustPolicy trust;
  trust.skipSignature = options.skipSignature;
  if (!trust.skipSignature) {
    llvm::Expected<cache::KeyLocation> keys =
        cache::resolveKeyLocation(cache::KeyEnvironment::fromProcess(), options.trustedKeys);
    if (!keys)
      return keys.takeError();
    llvm::Expected<std::vector<cache::PublicKey>> trusted =
        cache::readTrustedKeys(keys->trustedKeysFile, keys->trustedKeysNamed);
    if (!trusted)
      return trusted.takeError();
    trust.trusted = std::move(*trusted);
    trust.source = keys->trustedKeysFile;
  }
  cache::ImportLimits limits;
  limits.maxTotalBytes = location.maxSize;
  limits.maxMemberBytes = std::min(limits.maxMemberBytes, location.maxSize);
  return cache::readArchive(options.file, limits, trust);
}

void warn(llvm::StringRef message) {
  llvm::WithColor::warning(llvm::errs(), "kiln") << message << '\n';
}

int prune(cache::Cache &store, const CacheCommandOptions &options) {
  std::optional<int64_t> usedBefore;
  if (options.olderThan) {
    llvm::Expected<uint64_t> age = cache::parseAge(*options.olderThan);
    if (!age)
      return fail(age.takeError());
    usedBefore = cache::unixNow() - static_cast<int64_t>(*age);
  }
  // With --older-than alone, only age counts.
  std::optional<uint64_t> maxBytes;
  if (options.flags.maxSize || !options.olderThan)
    maxBytes = store.maxSize();
  llvm::Expected<cache::CacheIndex::Eviction> evicted =
      store.index().evict(maxBytes, usedBefore, store.blobs());
  if (!evicted)
    return fail(evicted.takeError());
  if (llvm::Error error = store.index().releaseFreePages())
    return fail(std::move(error));
  llvm::Expected<uint64_t> total = store.index().totalBytes();
  if (!total)
    return fail(total.takeError());
  if (options.json)
    return printJson(llvm::json::Object{{"pruned", evicted->dropped}, {"bytes", *total}});
  llvm::outs() << llvm::formatv("pruned {0} entries; the cache holds {1}\n", evicted->dropped,
                                cache::formatSize(*total));
  return 0;
}

/// Shows the limit in force, or keeps `newLimit` as the cache's own.
int limit(cache::Cache &store, const cache::CacheLocation &location,
          std::optional<uint64_t> newLimit, bool json) {
  if (newLimit) {
    if (llvm::Error error = store.index().storeMaxSize(*newLimit))
      return fail(std::move(error));
    if (json)
      printJson(llvm::json::Object{{"limit", *newLimit},
                                   {"source", sizeSourceName(cache::SizeSource::Stored)},
                                   {"stored_in", cache::indexPath(store.directory())}});
    else
      llvm::outs() << "the cache limit is now " << cache::formatSize(*newLimit) << " (stored in "
                   << cache::indexPath(store.directory()) << ")\n";
    if (location.givenMaxSize())
      warn((llvm::Twine(location.maxSizeSource == cache::SizeSource::Flag ? "--max-size"
                        : location.maxSizeSource == cache::SizeSource::Environment
                            ? "KILN_CACHE_MAX_SIZE"
                            : "cache-max-size in pyproject.toml") +
            " overrides it while it is given")
               .str());
    return 0;
  }
  if (json)
    return printJson(llvm::json::Object{{"limit", store.maxSize()},
                                        {"source", sizeSourceName(limitSource(store, location))}});
  llvm::outs() << "the cache limit is " << cache::formatSize(store.maxSize()) << " ("
               << sizeSourceName(limitSource(store, location)) << ")\n";
  return 0;
}

int clear(cache::Cache &store, bool json) {
  if (llvm::Error error = store.index().clear(store.blobs()))
    return fail(std::move(error));
  if (llvm::Error error = store.index().releaseFreePages())
    return fail(std::move(error));
  // The builds kernels of modules that stay Python made in development.
  llvm::SmallString<256> kept(store.directory());
  llvm::sys::path::append(kept, "modules");
  if (std::error_code error = llvm::sys::fs::remove_directories(kept))
    return fail(llvm::createStringError(error, "cannot remove '" + kept.str().str() +
                                                   "': " + error.message()));
  if (json)
    return printJson(llvm::json::Object{{"cleared", store.directory()}});
  llvm::outs() << "cleared " << store.directory() << '\n';
  return 0;
}

int verify(cache::Cache &store, const CacheCommandOptions &options) {
  llvm::Expected<cache::VerifyReport> report = cache::verifyCache(store, options.repair);
  if (!report)
    return fail(report.takeError());
  bool repaired = options.repair && (report->problems.size() || report->leftovers.size());
  int status = report->problems.empty() || options.repair ? 0 : 1;
  if (options.json) {
    printJson(llvm::json::Object{{"entries", report->entries},
                                 {"blobs", report->blobs},
                                 {"problems", llvm::json::Array(report->problems)},
                                 {"leftovers", llvm::json::Array(report->leftovers)},
                                 {"repairs", llvm::json::Array(report->repairs)},
                                 {"repaired", repaired}});
    return status;
  }
  for (const std::string &problem : report->problems)
    llvm::outs() << "problem: " << problem << '\n';
  for (const std::string &leftover : report->leftovers)
    llvm::outs() << "leftover: " << leftover << '\n';
  for (const std::string &repair : report->repairs)
    llvm::outs() << "repaired: " << repair << '\n';
  llvm::outs() << llvm::formatv("{0} entries, {1} blobs, {2} problems, {3} leftovers{4}\n",
                                report->entries, report->blobs, report->problems.size(),
                                report->leftovers.size(), repaired ? " (repaired)" : "");
  if (!options.repair && report->problems.empty() && !report->leftovers.empty())
    llvm::outs() << "leftovers are harmless (what interrupted builds leave); "
                    "`kiln cache verify --repair` deletes them\n";
  return status;
}

int exportEntries(cache::Cache &store, const CacheCommandOptions &options,
                  const std::optional<cache::SigningKey> &signer) {
  llvm::Expected<cache::ExportReport> report =
      cache::exportCache(store, options.file, signer ? &*signer : nullptr);
  if (!report)
    return fail(report.takeError());
  if (options.json)
    printJson(llvm::json::Object{
        {"file", options.file},
        {"entries", report->entries},
        {"blobs", report->blobs},
        {"bytes", report->bytes},
        {"skipped", report->skipped},
        {"signer", report->signer ? llvm::json::Value(report->signer->describe()) : nullptr}});
  else
    llvm::outs() << llvm::formatv(
        "exported {0} entries ({1} blobs, {2}) to {3}, {4}\n", report->entries, report->blobs,
        cache::formatSize(report->bytes), options.file,
        report->signer ? "signed by " + report->signer->describe() : std::string("unsigned"));
  if (!report->signer)
    warn("the archive is unsigned: `kiln cache import` accepts it only with "
         "--insecure-skip-signature");
  if (report->skipped)
    llvm::WithColor::warning(llvm::errs(), "kiln")
        << report->skipped << " damaged entries left out; run `kiln cache verify --repair`\n";
  return 0;
}

int importEntries(cache::Cache &store, const CacheCommandOptions &options,
                  const cache::CheckedArchive &archive) {
  llvm::Expected<cache::ImportReport> report = cache::importArchive(store, archive);
  if (!report)
    return fail(report.takeError());
  if (options.json)
    printJson(llvm::json::Object{
        {"file", options.file},
        {"entries", report->entries},
        {"bytes", report->bytes},
        {"signer", report->signer ? llvm::json::Value(report->signer->describe()) : nullptr}});
  else
    llvm::outs() << llvm::formatv("imported {0} entries ({1}) from {2}, {3}\n", report->entries,
                                  cache::formatSize(report->bytes), options.file,
                                  report->signer ? "signed by " + report->signer->describe()
                                                 : std::string("signature not checked"));
  if (!report->signer)
    warn("imported '" + options.file +
         "' without checking who made it (--insecure-skip-signature): builds will use its "
         "entries as if Kiln had compiled them here");
  return 0;
}

/// The cache `kiln cache` works on: inside a project, its cache.
llvm::Expected<cache::CacheLocation> cacheLocation(const CacheCommandOptions &options) {
  cache::CacheFlags flags = options.flags;
  flags.disabled = false; // `kiln cache` works on the cache even when builds skip it
  cache::CacheEnvironment environment = cache::CacheEnvironment::fromProcess();
  environment.cache.reset();
  llvm::Expected<pipeline::ProjectSettings> project = pipeline::readProjectSettings(".", "");
  if (!project)
    return project.takeError();
  return cache::resolveCacheLocation(
      flags, environment, {project->cacheDirectory, project->cacheMaxSize, project->origin()});
}

/// What a subcommand needs settled before the cache is opened, so that a
/// mistake or a rejected archive leaves it untouched: the signing key of an
/// export, the archive to import, a new limit.
struct Settled {
  std::optional<cache::SigningKey> signer;
  std::optional<cache::CheckedArchive> archive;
  std::optional<uint64_t> newLimit;
};

llvm::Expected<Settled> settleBeforeOpening(const CacheCommandOptions &options,
                                            const cache::CacheLocation &location) {
  Settled settled;
  if (options.action == CacheAction::Export) {
    llvm::Expected<std::optional<cache::SigningKey>> chosen = exportSigner(options);
    if (!chosen)
      return chosen.takeError();
    settled.signer = std::move(*chosen);
  }
  if (options.action == CacheAction::Import) {
    llvm::Expected<cache::CheckedArchive> checked = readImport(options, location);
    if (!checked)
      return checked.takeError();
    settled.archive = std::move(*checked);
  }
  if (options.newLimit) {
    llvm::Expected<uint64_t> bytes = cache::parseSize(*options.newLimit);
    if (!bytes)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "kiln cache limit '" + *options.newLimit +
                                         "': " + llvm::toString(bytes.takeError()));
    settled.newLimit = *bytes;
  }
  return settled;
}

/// Opens the cache at `location`; an error when the subcommand changes the
/// cache and its folder is read-only.
llvm::Expected<std::unique_ptr<cache::Cache>> openCache(const CacheCommandOptions &options,
                                                        const cache::CacheLocation &location,
                                                        bool setsLimit) {
  cache::CacheOptions cacheOptions{location.directory, location.givenMaxSize()};
  llvm::Expected<std::unique_ptr<cache::Cache>> opened = cache::Cache::open(cacheOptions, warn);
  if (!opened)
    return opened.takeError();
  cache::Cache &store = **opened;
  bool writes = options.action == CacheAction::Prune || options.action == CacheAction::Clear ||
                setsLimit || options.action == CacheAction::Import ||
                (options.action == CacheAction::Verify && options.repair);
  if (writes && store.isReadOnly())
    return llvm::createStringError(std::make_error_code(std::errc::read_only_file_system),
                                   "the cache folder '" + store.directory() +
                                       "' is read-only; this command changes it");
  return opened;
}

} // namespace

int runCacheCommand(const CacheCommandOptions &options) {
  llvm::Expected<cache::CacheLocation> location = cacheLocation(options);
  if (!location)
    return fail(location.takeError());
  llvm::Expected<Settled> settled = settleBeforeOpening(options, *location);
  if (!settled)
    return fail(settled.takeError());
  llvm::Expected<std::unique_ptr<cache::Cache>> opened =
      openCache(options, *location, settled->newLimit.has_value());
  if (!opened)
    return fail(opened.takeError());
  cache::Cache &store = **opened;

  switch (options.action) {
  case CacheAction::Stats:
    return stats(store, *location, options.json);
  case CacheAction::List:
    return list(store, options.json);
  case CacheAction::Prune:
    return prune(store, options);
  case CacheAction::Limit:
    return limit(store, *location, settled->newLimit, options.json);
  case CacheAction::Clear:
    return clear(store, options.json);
  case CacheAction::Verify:
    return verify(store, options);
  case CacheAction::Export:
    return exportEntries(store, options, settled->signer);
  case CacheAction::Import:
    return importEntries(store, options, *settled->archive);
  }
  return 0;
}

CLI::App *addCacheCommand(CLI::App &app, CacheCommandOptions &cacheOptions) {
  CLI::App *cacheCommand = app.add_subcommand(
      "cache", "Inspect and manage the specialization cache that `kiln build` fills");
  cacheCommand->require_subcommand(1);
  cacheCommand->add_option_function<std::string>(
      "--cache-dir", [&](const std::string &dir) { cacheOptions.flags.directory = dir; },
      "The cache's folder (default: $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else "
      "~/.cache/kiln)");
  auto cacheAction = [&](const char *name, const char *help, CacheAction action) {
    CLI::App *command = cacheCommand->add_subcommand(name, help);
    command->callback([&cacheOptions, action] { cacheOptions.action = action; });
    command->add_option_function<std::string>(
        "--cache-dir", [&](const std::string &dir) { cacheOptions.flags.directory = dir; },
        "The cache's folder");
    return command;
  };
  cacheAction("stats", "Entries, size, hits, misses, corrupt reads, evictions, per architecture",
              CacheAction::Stats)
      ->add_flag("--json", cacheOptions.json, "Print the result as JSON");
  cacheAction("list", "Every entry, most recently used first", CacheAction::List)
      ->add_flag("--json", cacheOptions.json, "Print the result as JSON");
  CLI::App *pruneCommand = cacheAction(
      "prune", "Drop least recently used entries beyond a size or age", CacheAction::Prune);
  pruneCommand
      ->add_option_function<std::string>(
          "--max-size", [&](const std::string &size) { cacheOptions.flags.maxSize = size; },
          "Shrink to this size, such as 500M (default: the cache's limit)")
      ->check(sizeValidator());
  pruneCommand
      ->add_option_function<std::string>(
          "--older-than", [&](const std::string &age) { cacheOptions.olderThan = age; },
          "Drop entries not used for this long, such as 30d, 12h or 45m")
      ->check(ageValidator());
  pruneCommand->add_flag("--json", cacheOptions.json, "Print the result as JSON");
  cacheAction("clear", "Drop every entry", CacheAction::Clear)
      ->add_flag("--json", cacheOptions.json, "Print the result as JSON");
  CLI::App *limitCommand =
      cacheAction("limit",
                  "Show the size limit and where it comes from, or keep SIZE as the cache's limit "
                  "for later builds and commands",
                  CacheAction::Limit);
  limitCommand->add_option_function<std::string>(
      "size", [&](const std::string &size) { cacheOptions.newLimit = size; },
      "The new limit, such as 500M or 4G");
  limitCommand->add_flag("--json", cacheOptions.json, "Print the result as JSON");
  CLI::App *verifyCommand = cacheAction(
      "verify", "Check that index and blobs agree and every blob is intact", CacheAction::Verify);
  verifyCommand->add_flag("--repair", cacheOptions.repair,
                          "Drop damaged entries, re-index intact ones, delete blobs of no entry");
  verifyCommand->add_flag("--json", cacheOptions.json, "Print the result as JSON");
  CLI::App *exportCommand = cacheAction(
      "export",
      "Write every intact entry to a tar archive (.tar, .tar.zst, .tar.gz), signed by your key",
      CacheAction::Export);
  exportCommand->add_option("file", cacheOptions.file, "The archive to write")->required();
  exportCommand->add_flag("--json", cacheOptions.json, "Print the result as JSON");
  CLI::Option *signWith = exportCommand->add_option_function<std::string>(
      "--sign-with", [&](const std::string &key) { cacheOptions.signWith = key; },
      "The signing key: a name from `kiln cache key list`, or a key file (default: "
      "$KILN_SIGNING_KEY, else your only key)");
  exportCommand
      ->add_flag("--unsigned", cacheOptions.unsignedExport,
                 "Write an unsigned archive, which imports only with --insecure-skip-signature")
      ->excludes(signWith);
  CLI::App *importCommand =
      cacheAction("import",
                  "Add the entries of an archive from `kiln cache export`, checking "
                  "every one; a bad archive imports nothing",
                  CacheAction::Import);
  importCommand->add_option("file", cacheOptions.file, "The archive to read")->required();
  importCommand->add_flag("--json", cacheOptions.json, "Print the result as JSON");
  importCommand
      ->add_option_function<std::string>(
          "--max-size", [&](const std::string &size) { cacheOptions.flags.maxSize = size; },
          "The cache's size limit, which also bounds what the archive may expand to")
      ->check(sizeValidator());
  CLI::Option *trustedKeys = importCommand->add_option_function<std::string>(
      "--trusted-keys", [&](const std::string &file) { cacheOptions.trustedKeys = file; },
      "The file of public keys whose archives to accept (default: $KILN_TRUSTED_KEYS, "
      "else trusted-keys in Kiln's configuration folder)");
  importCommand
      ->add_flag("--insecure-skip-signature", cacheOptions.skipSignature,
                 "Accept the archive whoever made it, unsigned or not: its entries are used "
                 "as if compiled here")
      ->excludes(trustedKeys);
  return cacheCommand;
}

} // namespace kiln::driver
