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
// Each subcommand declares its options with CLI11 (add*Command, beside its
// run function) into a plain options struct, which its run function takes;
// it returns the exit status.
//
//===----------------------------------------------------------------------===//

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
  CLI::App *checkCommand = kiln::driver::addCheckCommand(app, check);
  kiln::driver::BuildOptions build;
  CLI::App *buildCommand = kiln::driver::addBuildCommand(app, build);
  kiln::driver::InspectOptions inspect;
  CLI::App *inspectCommand = kiln::driver::addInspectCommand(app, inspect);
  kiln::driver::AuditOptions audit;
  CLI::App *auditCommand = kiln::driver::addAuditCommand(app, audit);
  kiln::driver::TargetsOptions targets;
  CLI::App *targetsCommand = kiln::driver::addTargetsCommand(app, targets);
  kiln::driver::CacheCommandOptions cacheOptions;
  CLI::App *cacheCommand = kiln::driver::addCacheCommand(app, cacheOptions);
  kiln::driver::CacheKeyOptions keyOptions;
  CLI::App *keyCommand = kiln::driver::addCacheKeyCommand(*cacheCommand, keyOptions);
  kiln::driver::SignaturesOptions signatures;
  CLI::App *signaturesCommand = kiln::driver::addSignaturesCommand(app, signatures);

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
    if (buildCommand->parsed())
      return kiln::driver::runBuild(build);
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
