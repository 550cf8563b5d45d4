//===- pipeline/python_config.cpp - What the target Python expects ----------===//

#include "pipeline/python_config.h"

#include <llvm/Support/Process.h>
#include <llvm/Support/Program.h>

namespace kiln::pipeline {

llvm::Expected<support::ToolOutput> runPython(llvm::StringRef python,
                                              llvm::ArrayRef<std::string> arguments) {
  std::string program = python.empty() ? "python3" : python.str();
  std::string path = program;
  if (program.find('/') == std::string::npos) {
    llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(program);
    if (!found)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "'" + program + "' is not on $PATH");
    path = *found;
  }
  unsigned timeout = defaultPythonTimeout;
  if (std::optional<std::string> setting = llvm::sys::Process::GetEnv("KILN_PYTHON_TIMEOUT"))
    if (llvm::StringRef(*setting).getAsInteger(10, timeout) || timeout == 0)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "KILN_PYTHON_TIMEOUT must be a whole number of seconds "
                                     "above 0, not '" +
                                         *setting + "'");
  return support::runTool(path, arguments, timeout);
}

llvm::Expected<std::string> extensionSuffix(llvm::StringRef python) {
  std::string program = python.empty() ? "python3" : python.str();
  auto failure = [&](const llvm::Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot ask Python '" + program +
                                       "' for its extension module suffix: " + why +
                                       " (name the interpreter with --python)");
  };
  llvm::Expected<support::ToolOutput> output =
      runPython(python, {"-c", "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"});
  if (!output)
    return failure(llvm::toString(output.takeError()));
  llvm::StringRef suffix = llvm::StringRef(output->standardOutput).trim();
  if (output->exitCode != 0)
    return failure("it exited with status " + llvm::Twine(output->exitCode) + ": " +
                   llvm::StringRef(output->standardError).trim());
  if (suffix.empty() || suffix == "None" || !suffix.starts_with(".") || suffix.contains('/'))
    return failure("it printed '" + suffix + "'");
  return suffix.str();
}

} // namespace kiln::pipeline
