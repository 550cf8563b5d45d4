//===- driver/completion_command.h - `kiln completion` ----------*- C++ -*-===//
//
// Shell completion for kiln, written from the same command-line definition
// the parser uses, so that it always offers the commands and options this
// kiln has: `kiln completion bash` (source it, or install it as
// completions/kiln of bash-completion), `zsh` (the bash script under zsh's
// bashcompinit) and `fish`.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <CLI/CLI.hpp>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/raw_ostream.h>

namespace kiln::driver {

/// The shells `kiln completion` writes scripts for.
inline constexpr const char *completionShells[] = {"bash", "zsh", "fish"};

/// Writes `shell`'s completion script for the command line `app` defines.
void writeCompletion(const CLI::App &app, llvm::StringRef shell, llvm::raw_ostream &os);

} // namespace kiln::driver
