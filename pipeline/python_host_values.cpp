//===- pipeline/python_host_values.cpp ------------------------------------===//

#include "pipeline/python_host_values.h"

#include "pipeline/python_config.h"

namespace kiln::pipeline {

const HostValue *PythonHostValues::lookup(llvm::StringRef file, llvm::StringRef name) {
  if (imported.insert(file).second)
    if (llvm::Error error = importModule(file))
      importProblems.push_back(llvm::toString(std::move(error)));
  return values.lookup(file, name);
}

llvm::Error PythonHostValues::importModule(llvm::StringRef file) {
  auto failure = [&](const llvm::Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot read the globals " + file + " computes at import: " +
                                       why + " (name the interpreter with --python)");
  };
  llvm::Expected<support::ToolOutput> output =
      runPython(python, {"-m", "kiln.import_host_values", file.str()});
  if (!output)
    return failure(llvm::toString(output.takeError()));
  if (output->exitCode != 0)
    return failure("importing it with " + (python.empty() ? std::string("python3") : python) +
                   " failed: " + llvm::StringRef(output->standardError).trim());
  if (llvm::Error error = values.addModuleJson(file, output->standardOutput))
    return failure(llvm::toString(std::move(error)));
  return llvm::Error::success();
}

} // namespace kiln::pipeline
