//===- driver/main.cpp - The kiln command ---------------------------------===//
//
// kiln check FILE.py [--json] [-v]
//
// Subcommands parse their options with CLI11 and hand a plain options struct
// to their run function, which returns the exit status.
//
//===----------------------------------------------------------------------===//

#include "driver/check_command.h"
#include "driver/version.h"

#include <CLI/CLI.hpp>
#include <llvm/Support/InitLLVM.h>
#include <llvm/Support/Process.h>
#include <llvm/Support/raw_ostream.h>

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  CLI::App app{"Kiln: an ahead-of-time compiler for Numba CUDA kernels written in Python",
               "kiln"};
  app.set_version_flag("--version", std::string("kiln ") + kiln::driver::versionString());
  app.require_subcommand(1);

  kiln::driver::CheckOptions check;
  CLI::App *checkCommand =
      app.add_subcommand("check", "Parse and type-check kernel modules, listing what they define");
  checkCommand->add_option("files", check.files, "Kernel modules (.py) to check")
      ->required()
      ->check(CLI::ExistingPath);
  checkCommand->add_option("--module", check.moduleName,
                           "Dotted module name, for [tool.kiln.signatures] keys such as "
                           "'pkg.kernels.add'");
  checkCommand->add_option("--signature", check.signatures,
                           "Signature for a kernel without one, as NAME=SIGNATURE "
                           "(e.g. 'add=void(float32[:], float32[:])'); repeatable");
  checkCommand->add_flag("--json", check.json, "Print the result as JSON");
  checkCommand->add_flag("-v,--verbose", check.verbose,
                         "Also print each local variable's types and each semantic hash");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &error) {
    // --help and --version are "errors" that succeed; misuse exits with 2,
    // as command-line tools do, keeping 1 for problems in the input.
    int status = app.exit(error);
    return status == 0 ? 0 : 2;
  }

  check.color = llvm::errs().has_colors() && !llvm::sys::Process::GetEnv("NO_COLOR");
  if (checkCommand->parsed())
    return kiln::driver::runCheck(check);
  return 0;
}
