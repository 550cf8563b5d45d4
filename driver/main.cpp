//===- driver/main.cpp - The kiln command ---------------------------------===//
//
// kiln check FILE.py [--json] [-v]
// kiln build FILE.py --emit ptx|llvm|cubin|fatbin|object|typed -o DIR [--arch LIST] [-j N] [-v]
//            [--cache-dir DIR] [--no-cache] [--remote-cache URL[|ATTR=VALUE...]]...
// kiln build FILE.py --module pkg.kernels -o DIR [--python PY] [--arch LIST] [-j N]
// kiln build pkg/kernels.py        (a module that imports kiln: pkg/_kernels.kiln<EXT_SUFFIX>)
//            [--depfile FILE]
// kiln inspect MODULE [--json]
// kiln audit PATH [--require-arch LIST] [--signatures FILE] [--json]
// kiln targets [--arch LIST] [--json]
// kiln signatures list [PATH] [--json] | add KERNEL SIGNATURE... [--file F] | prune [PATH]
// kiln cache stats|list [--json] | prune [--max-size SIZE] [--older-than AGE] | clear
//            | limit [SIZE]
//            | verify [--repair] | export FILE.tar[.zst] [--sign-with KEY | --unsigned]
//            | import FILE [--trusted-keys FILE | --insecure-skip-signature]  [--cache-dir DIR]
// kiln cache key generate [--name N] [--file F] | list | export-public [KEY]
//                | trust KEY-LINE|FILE|- | untrust NAME|FINGERPRINT  [--trusted-keys FILE]
//
// Subcommands parse their options with CLI11 and hand a plain options struct
// to their run function, which returns the exit status.
//
//===----------------------------------------------------------------------===//

#include "cache/cache_location.h"
#include "driver/arch_option.h"
#include "driver/audit_command.h"
#include "driver/build_command.h"
#include "driver/cache_command.h"
#include "driver/cache_key_command.h"
#include "driver/check_command.h"
#include "driver/completion_command.h"
#include "driver/inspect_command.h"
#include "driver/man_page.h"
#include "driver/signatures_command.h"
#include "driver/stop_signals.h"
#include "driver/targets_command.h"
#include "pipeline/output_file.h"
#include "pipeline/version.h"

#include <CLI/CLI.hpp>
#include <llvm/Support/InitLLVM.h>
#include <llvm/Support/Process.h>
#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <map>
#include <optional>
#include <signal.h>

namespace {

/// CLI11 validators for values with a grammar of their own: a value that
/// does not parse is a usage error (exit status 2), like an unknown option.
CLI::Validator archListValidator() {
  return CLI::Validator(
      [](std::string &list) {
        return kiln::driver::archListSyntaxProblem(list).value_or(std::string());
      },
      "ARCHS");
}

enum class ColorChoice { Auto, Always, Never };

/// Whether kiln colours what it writes to standard error: --color=always
/// or never as asked; else not with $NO_COLOR set, always with
/// $CLICOLOR_FORCE set (and not 0), and on a terminal only otherwise.
bool colorsWanted(ColorChoice choice) {
  if (choice != ColorChoice::Auto)
    return choice == ColorChoice::Always;
  if (std::optional<std::string> noColor = llvm::sys::Process::GetEnv("NO_COLOR");
      noColor && !noColor->empty())
    return false;
  if (std::optional<std::string> force = llvm::sys::Process::GetEnv("CLICOLOR_FORCE");
      force && !force->empty() && *force != "0")
    return true;
  return llvm::errs().has_colors();
}

bool colorsOn = false;

/// Colours standard error (kiln's own `error:` and `warning:` prefixes and
/// diagnostics) or not, whether or not it is a terminal.
void useColors(bool on) {
  colorsOn = on;
  llvm::errs().enable_colors(on);
  llvm::WithColor::setAutoDetectFunction([](const llvm::raw_ostream &) { return colorsOn; });
}

/// Misuse exits with 2, as command-line tools do, keeping 1 for problems in
/// the input, and says so as every other error does.
int usageError(llvm::StringRef problem, llvm::StringRef command) {
  llvm::WithColor::error(llvm::errs(), "kiln") << problem << '\n';
  llvm::errs() << "Run '" << command << " --help' for more information.\n";
  return 2;
}

/// `kiln` and the subcommands the command line named, as far as they parsed.
std::string commandOf(CLI::App &app) {
  std::string command = "kiln";
  for (CLI::App *current = &app;;) {
    std::vector<CLI::App *> named = current->get_subcommands();
    if (named.empty())
      return command;
    current = named.front();
    command += " " + current->get_name();
  }
}

CLI::Validator sizeValidator() {
  return CLI::Validator(
      [](std::string &size) -> std::string {
        llvm::Expected<uint64_t> parsed = kiln::cache::parseSize(size);
        return parsed ? std::string() : llvm::toString(parsed.takeError());
      },
      "SIZE");
}

CLI::Validator ageValidator() {
  return CLI::Validator(
      [](std::string &age) -> std::string {
        llvm::Expected<uint64_t> parsed = kiln::cache::parseAge(age);
        return parsed ? std::string() : llvm::toString(parsed.takeError());
      },
      "AGE");
}

} // namespace

int main(int argc, char **argv) {
  sigset_t ignoredAtStart = kiln::driver::ignoredStopSignals();
  llvm::InitLLVM initLLVM(argc, argv);
  kiln::driver::installStopSignalHandlers(ignoredAtStart);
  // Past a file size limit, a write should fail (and the cache do without),
  // not kill the process.
  ::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"Kiln: an ahead-of-time compiler for Numba CUDA kernels written in Python", "kiln"};
  app.set_version_flag("--version", std::string("kiln ") + kiln::pipeline::versionString());
  app.require_subcommand(1);
  // Options of the command itself may also follow a subcommand's name.
  app.fallthrough();
  std::string colorText = "auto";
  app.add_option("--color", colorText,
                 "Colour errors and diagnostics: auto (on a terminal, unless $NO_COLOR is set, "
                 "or when $CLICOLOR_FORCE is), always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  app.footer("Exit status: 0 success; 1 an error in the input (a kernel module, a file, a "
             "package, a cache) or in what kiln needed from the machine (a write, a CUDA tool); "
             "2 a usage error (an option or value the command line got wrong); 128+N stopped by "
             "signal N.");

  kiln::driver::CheckOptions check;
  CLI::App *checkCommand =
      app.add_subcommand("check", "Parse and type-check kernel modules, listing what they define");
  checkCommand->add_option("files", check.files, "Kernel modules (.py) to check")->required();
  checkCommand->add_option("--module", check.moduleName,
                           "Dotted module name, for [tool.kiln.signatures] keys such as "
                           "'pkg.kernels.add'");
  checkCommand->add_option("--signature", check.signatures,
                           "Signature for a kernel without one, as NAME=SIGNATURE "
                           "(e.g. 'add=void(float32[:], float32[:])'); repeatable");
  checkCommand->add_option("--python", check.python,
                           "The Python that imports a module to read the globals its host code "
                           "computes, where kernels read them (default: python3 on $PATH)");
  checkCommand->add_flag("--json", check.json, "Print the result as JSON");
  checkCommand->add_flag("-v,--verbose", check.verbose,
                         "Also print each local variable's types and each semantic hash");

  kiln::driver::BuildOptions build;
  CLI::App *buildCommand = app.add_subcommand(
      "build",
      "Compile a kernel module's specializations to PTX, cubins, fat binaries or host code");
  buildCommand->add_option("file", build.file, "Kernel module (.py)")->required();
  const std::map<std::string, kiln::driver::EmitKind> emitKinds = {
      {"typed", kiln::driver::EmitKind::Typed},   {"llvm", kiln::driver::EmitKind::LLVM},
      {"ptx", kiln::driver::EmitKind::Ptx},       {"cubin", kiln::driver::EmitKind::Cubin},
      {"fatbin", kiln::driver::EmitKind::Fatbin}, {"object", kiln::driver::EmitKind::Object},
      {"module", kiln::driver::EmitKind::Module}};
  CLI::Option *emitOption =
      buildCommand
          ->add_option("--emit", build.emit,
                       "What to write: typed, llvm, ptx, cubin, fatbin, object, module "
                       "(default with --module, or for a module that imports kiln: module, "
                       "a Python extension module)")
          ->transform(CLI::CheckedTransformer(emitKinds, CLI::ignore_case));
  CLI::Option *outputOption =
      buildCommand->add_option("-o,--output", build.outputDirectory,
                               "Folder to write into (default: the current folder; for a module "
                               "that imports kiln, the module's folder)");
  buildCommand->add_option("--depfile", build.depfile,
                           "Also write FILE: the files written and the files the build read, in "
                           "Makefile syntax, for Ninja, Make and CMake's DEPFILE");
  buildCommand
      ->add_option_function<std::string>(
          "--arch", [&](const std::string &list) { build.arch = list; },
          "Architectures, as for `kiln targets --arch`; default: $CUDAARCHS, else Kiln's default")
      ->check(archListValidator());
  CLI::Option *jobsOption = buildCommand->add_option(
      "-j,--jobs", build.jobs,
      "Parallel jobs (default: jobs in pyproject.toml, else one per core)");
  buildCommand->add_flag("-v,--verbose", build.verbose,
                         "Print ptxas's resource usage per specialization and architecture, "
                         "and (when stderr is not a terminal) a line per finished task");
  buildCommand->add_flag("-q,--quiet", build.quiet,
                         "Print neither progress nor the files written; only errors");
  buildCommand->add_flag("--json", build.json,
                         "Print the result as JSON: the files written and, per specialization, "
                         "each step's cache outcome and time and each cubin's resources");
  buildCommand->add_option("--module", build.moduleName, "Dotted module name (pkg.kernels)");
  buildCommand->add_option("--python", build.python,
                           "The Python the module is for, whose EXT_SUFFIX names it "
                           "(default: python3 on $PATH)");
  buildCommand->add_option_function<std::string>(
      "--ext-suffix", [&](const std::string &suffix) { build.extensionSuffix = suffix; },
      "The module's file name suffix (e.g. .cpython-312-x86_64-linux-gnu.so), instead of "
      "asking Python");
  buildCommand->add_option("--signature", build.signatures,
                           "Signature for a kernel without one, as NAME=SIGNATURE; repeatable");
  CLI::Option *fastmathOption =
      buildCommand->add_flag("--fastmath,!--no-fastmath", build.fastmath,
                             "Compile every kernel with fastmath=True (--no-fastmath: as each "
                             "kernel says, whatever pyproject.toml says)");
  buildCommand->add_flag("--debug", build.debug,
                         "Compile every kernel with debug=True (implies --opt 0)");
  CLI::Option *lineinfoOption = buildCommand->add_flag(
      "--lineinfo,!--no-lineinfo", build.lineinfo,
      "Compile every kernel with lineinfo=True (--no-lineinfo: as each kernel says)");
  buildCommand
      ->add_option_function<unsigned>(
          "--opt", [&](const unsigned &level) { build.opt = level; },
          "Optimization: 0 or 3 (default: each kernel's opt=)")
      ->check(CLI::IsMember({0, 3}));
  buildCommand->add_option_function<unsigned>(
      "--max-registers", [&](const unsigned &count) { build.maxRegisters = count; },
      "Register limit for every kernel, as max_registers=");
  // -Xptxas values start with '-', which CLI11 would take for options of
  // its own: takePtxasFlags() removes them from the command line first. The
  // option is declared for --help.
  buildCommand->add_option_function<std::string>(
      "--cache-dir", [&](const std::string &dir) { build.cache.directory = dir; },
      "The specialization cache's folder (default: $KILN_CACHE_DIR, else "
      "$XDG_CACHE_HOME/kiln, else ~/.cache/kiln)");
  buildCommand->add_flag("--no-cache", build.cache.disabled,
                         "Compile everything, neither reading nor filling the cache (as "
                         "KILN_CACHE=0)");
  buildCommand
      ->add_option_function<std::string>(
          "--max-size", [&](const std::string &size) { build.cache.maxSize = size; },
          "The cache's size limit, such as 500M or 4G (default: $KILN_CACHE_MAX_SIZE, else 2G)")
      ->check(sizeValidator());
  buildCommand->add_option(
      "--remote-cache", build.remoteCache.urls,
      "A remote cache behind the local one: redis://HOST[:PORT][/DB], redis+unix://PATH, "
      "http(s)://HOST/PATH, each optionally followed by |attribute=value (repeatable, tried in "
      "order; default: $KILN_REMOTE_CACHE; see docs/cache.md)");
  buildCommand->add_flag("--no-remote-cache", build.remoteCache.disabled,
                         "Use no remote cache, whatever $KILN_REMOTE_CACHE says");
  buildCommand->add_option("--link-include", build.linkIncludeDirectories,
                           "A folder searched for #include <...> in the CUDA C/C++ files kernels "
                           "link (link=, cuda.declare_device); repeatable");
  std::vector<std::string> ptxasFlagsHelp;
  buildCommand->add_option("--Xptxas", ptxasFlagsHelp,
                           "-Xptxas FLAG[,FLAG...]: pass options to ptxas, as nvcc does "
                           "(e.g. -Xptxas --warn-on-spills); repeatable");

  kiln::driver::InspectOptions inspect;
  CLI::App *inspectCommand = app.add_subcommand(
      "inspect", "Show what a module built by `kiln build --module` holds, without importing it");
  inspectCommand->add_option("module", inspect.path, "Built module (kernels.cpython-*.so)")
      ->required();
  inspectCommand->add_flag("--json", inspect.json, "Print the result as JSON");

  kiln::driver::AuditOptions audit;
  CLI::App *auditCommand = app.add_subcommand(
      "audit", "List the Kiln modules in a wheel, conda package or folder, and check their "
               "architectures");
  auditCommand
      ->add_option("path", audit.path,
                   "A wheel, a .conda or .tar.bz2 package, a folder, or a built module")
      ->required();
  auditCommand->add_option_function<std::string>(
      "--require-arch", [&](const std::string &list) { audit.requireArch = list; },
      "Architectures every specialization must have, as for --arch (e.g. '7.5 8.0 9.0+PTX' "
      "requires those cubins and compute_90 PTX); fail naming what is missing");
  auditCommand->add_option_function<std::string>(
      "--signatures",
      [&](const std::string &file) {
        audit.signatures = file;
        audit.signaturesGiven = true;
      },
      "The recorded signatures every companion must hold (default: the nearest "
      "kiln-signatures.toml; '' for none)");
  auditCommand->add_flag("--json", audit.json, "Print the result as JSON");

  kiln::driver::TargetsOptions targets;
  CLI::App *targetsCommand = app.add_subcommand(
      "targets", "Show the CUDA toolkit and the GPU architectures Kiln builds for");
  targetsCommand->add_option_function<std::string>(
      "--arch", [&](const std::string &list) { targets.arch = list; },
      "Architecture list to check and expand, as CMake (75;80-real;90-virtual, all), "
      "TORCH_CUDA_ARCH_LIST (7.5 8.0 9.0+PTX) or nvcc (sm_80) write it; default: $CUDAARCHS, "
      "else Kiln's default");
  targetsCommand->add_flag("--json", targets.json, "Print the result as JSON");

  kiln::driver::CacheCommandOptions cacheOptions;
  CLI::App *cacheCommand = app.add_subcommand(
      "cache", "Inspect and manage the specialization cache that `kiln build` fills");
  cacheCommand->require_subcommand(1);
  cacheCommand->add_option_function<std::string>(
      "--cache-dir", [&](const std::string &dir) { cacheOptions.flags.directory = dir; },
      "The cache's folder (default: $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else "
      "~/.cache/kiln)");
  auto cacheAction = [&](const char *name, const char *help, kiln::driver::CacheAction action) {
    CLI::App *command = cacheCommand->add_subcommand(name, help);
    command->callback([&cacheOptions, action] { cacheOptions.action = action; });
    command->add_option_function<std::string>(
        "--cache-dir", [&](const std::string &dir) { cacheOptions.flags.directory = dir; },
        "The cache's folder");
    return command;
  };
  using kiln::driver::CacheAction;
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

  kiln::driver::CacheKeyOptions keyOptions;
  CLI::App *keyCommand = cacheCommand->add_subcommand(
      "key", "Make signing keys for exports, and choose whose archives imports accept");
  keyCommand->require_subcommand(1);
  auto keyAction = [&](const char *name, const char *help, kiln::driver::CacheKeyAction action) {
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
  using kiln::driver::CacheKeyAction;
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

  kiln::driver::SignaturesOptions signatures;
  using SignaturesAction = kiln::driver::SignaturesOptions::Action;
  CLI::App *signaturesCommand = app.add_subcommand(
      "signatures", "Show, add to and clean the signatures a project's build compiles "
                    "(kiln-signatures.toml, [tool.kiln.signatures])");
  signaturesCommand->require_subcommand(1);
  CLI::App *signaturesList = signaturesCommand->add_subcommand(
      "list", "Every kernel's signatures, from kiln-signatures.toml and pyproject.toml");
  signaturesList->callback([&] { signatures.action = SignaturesAction::List; });
  signaturesList->add_option("path", signatures.path,
                             "The signatures file, or a folder to look upwards from (default: .)");
  signaturesList->add_flag("--json", signatures.json, "Print the result as JSON");
  CLI::App *signaturesAdd = signaturesCommand->add_subcommand(
      "add", "Add signatures of a kernel to kiln-signatures.toml (created beside the nearest "
             "pyproject.toml if there is none)");
  signaturesAdd->callback([&] { signatures.action = SignaturesAction::Add; });
  signaturesAdd
      ->add_option("kernel", signatures.kernel, "Module-qualified kernel: pkg.kernels.scale")
      ->required();
  signaturesAdd
      ->add_option("signatures", signatures.signatures,
                   "Numba signatures: 'void(float32[::1], float32)'")
      ->required();
  signaturesAdd->add_option("--file", signatures.path,
                            "The signatures file, or a folder to look upwards from (default: .)");
  CLI::App *signaturesPrune = signaturesCommand->add_subcommand(
      "prune", "Remove the entries of kiln-signatures.toml whose kernel no longer exists");
  signaturesPrune->callback([&] { signatures.action = SignaturesAction::Prune; });
  signaturesPrune->add_option("path", signatures.path,
                              "The signatures file, or a folder to look upwards from (default: .)");
  signaturesPrune->add_flag("--dry-run", signatures.dryRun, "Show what would go; change nothing");
  signaturesPrune->add_flag("--json", signatures.json, "Print the result as JSON");
  signaturesAdd->add_flag("--json", signatures.json, "Print the result as JSON");

  useColors(colorsWanted(ColorChoice::Auto));
  std::string completionShell;
  CLI::App *completionCommand = app.add_subcommand(
      "completion", "Print a shell's completion script for kiln (bash, zsh or fish)");
  completionCommand->add_option("shell", completionShell, "bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember(std::vector<std::string>(std::begin(kiln::driver::completionShells),
                                                     std::end(kiln::driver::completionShells))));

  std::string manPageFile;
  CLI::App *manPageCommand = app.add_subcommand("man-page", "Write the man page kiln(1)");
  manPageCommand->group(""); // the build's, not the user's
  manPageCommand->add_option("--output", manPageFile, "The file to write")->required();

  std::vector<std::string> arguments(argv + 1, argv + argc);
  if (std::optional<std::string> problem =
          kiln::driver::takePtxasFlags(arguments, build.ptxasFlags))
    return usageError(*problem, "kiln build");
  if (!arguments.empty() && !llvm::StringRef(arguments.front()).starts_with("-") &&
      app.get_subcommands([&](CLI::App *command) { return command->check_name(arguments.front()); })
          .empty())
    return usageError("'" + arguments.front() + "' is not a kiln command", "kiln");
  std::reverse(arguments.begin(), arguments.end()); // CLI11 takes them last first
  try {
    app.parse(arguments);
  } catch (const CLI::ParseError &error) {
    // --help and --version are "errors" that succeed.
    if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
      return app.exit(error);
    return usageError(error.what(), commandOf(app));
  }

  useColors(colorsWanted(colorText == "always"  ? ColorChoice::Always
                         : colorText == "never" ? ColorChoice::Never
                                                : ColorChoice::Auto));
  check.color = colorsOn;
  build.color = colorsOn;
  int status = [&] {
    if (checkCommand->parsed())
      return kiln::driver::runCheck(check);
    if (buildCommand->parsed()) {
      build.emitGiven = emitOption->count() != 0;
      build.outputGiven = outputOption->count() != 0;
      build.jobsGiven = jobsOption->count() != 0;
      build.fastmathGiven = fastmathOption->count() != 0;
      build.lineinfoGiven = lineinfoOption->count() != 0;
      return kiln::driver::runBuild(build);
    }
    if (inspectCommand->parsed())
      return kiln::driver::runInspect(inspect);
    if (auditCommand->parsed())
      return kiln::driver::runAudit(audit);
    if (targetsCommand->parsed())
      return kiln::driver::runTargets(targets);
    if (signaturesCommand->parsed())
      return kiln::driver::runSignatures(signatures);
    if (keyCommand->parsed())
      return kiln::driver::runCacheKeyCommand(keyOptions);
    if (cacheCommand->parsed())
      return kiln::driver::runCacheCommand(cacheOptions);
    if (manPageCommand->parsed()) {
      std::string page;
      llvm::raw_string_ostream text(page);
      kiln::driver::writeManPage(app, text);
      if (llvm::Error error = kiln::pipeline::writeOutputFile(manPageFile, page)) {
        llvm::WithColor::error(llvm::errs(), "kiln") << llvm::toString(std::move(error)) << '\n';
        return 1;
      }
      return 0;
    }
    if (completionCommand->parsed()) {
      kiln::driver::writeCompletion(app, completionShell, llvm::outs());
      return 0;
    }
    return 0;
  }();
  // Results that did not reach standard output (a full disk, a closed
  // pipe) are a failure; an unchecked stream error would abort at exit.
  llvm::outs().flush();
  if (std::error_code error = llvm::outs().error()) {
    llvm::outs().clear_error();
    llvm::WithColor::error(llvm::errs(), "kiln") << "standard output: " << error.message() << '\n';
    return 1;
  }
  return status;
}
