//===- driver/man_page.h - kiln(1) from the command line --------*- C++ -*-===//
//
// The man page kiln(1), written in troff's man macros from the definition
// of the command line the parser uses: each command and subcommand with its
// arguments and options, the exit statuses and the environment. The build
// writes it with `kiln man-page` (a command kept out of --help) and
// installs it as share/man/man1/kiln.1.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <CLI/CLI.hpp>
#include <llvm/Support/raw_ostream.h>

namespace kiln::driver {

void writeManPage(const CLI::App &app, llvm::raw_ostream &os);

} // namespace kiln::driver
