//===- pipeline/python_config.cpp - What the target Python expects ----------===//

#include "pipeline/python_config.h"

#include <llvm/ADT/Twine.h>
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

llvm::Expected<std::string> interpreterExtensionSuffix(llvm::StringRef python) {
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

namespace {

/// Debian's multiarch name of `triple`, which CPython's EXT_SUFFIX on Linux
/// ends with: x86_64-pc-linux-gnu -> x86_64-linux-gnu.
std::string multiarchName(const llvm::Triple &triple) {
  return (triple.getArchName() + "-" + triple.getOSName() + "-" +
          llvm::Triple::getEnvironmentTypeName(triple.getEnvironment()))
      .str();
}

llvm::Error badAbi(llvm::StringRef abi) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "unknown Python ABI '" + abi + "': give abi3 (one module for every CPython from 3." +
          llvm::Twine(minimumPythonMinor) +
          " on), a CPython version such as cp313, cp313t for a free-threaded CPython, or "
          "interpreter (the ABI of --python)");
}

/// A version ABI's parts: cp313t -> 13, free-threaded.
struct VersionAbi {
  unsigned minor = 0;
  bool freeThreaded = false;
};

llvm::Expected<VersionAbi> parseVersionAbi(llvm::StringRef abi) {
  VersionAbi parsed;
  llvm::StringRef version = abi;
  parsed.freeThreaded = version.consume_back("t");
  if (!version.consume_front("cp3") || version.empty() || version.getAsInteger(10, parsed.minor))
    return badAbi(abi);
  if (parsed.minor < minimumPythonMinor)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "Python ABI '" + abi + "': Kiln's runtime needs CPython 3." +
                                       llvm::Twine(minimumPythonMinor) + " or later");
  if (parsed.freeThreaded && parsed.minor < 13)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "Python ABI '" + abi +
                                       "': free-threaded CPython begins with 3.13 (cp313t)");
  return parsed;
}

} // namespace

llvm::Error checkPythonAbi(llvm::StringRef abi) {
  if (abi == "abi3" || abi == "interpreter")
    return llvm::Error::success();
  return parseVersionAbi(abi).takeError();
}

llvm::Expected<std::string> extensionSuffix(llvm::StringRef abi, llvm::StringRef python,
                                            const llvm::Triple &host) {
  if (abi == "abi3")
    return std::string(".abi3.so");
  if (abi == "interpreter")
    return interpreterExtensionSuffix(python);
  llvm::Expected<VersionAbi> version = parseVersionAbi(abi);
  if (!version)
    return version.takeError();
  return (".cpython-3" + llvm::Twine(version->minor) + (version->freeThreaded ? "t" : "") + "-" +
          multiarchName(host) + ".so")
      .str();
}

} // namespace kiln::pipeline
