//===- binding/compiler_module.cpp - kiln._compiler -----------------------===//
//
// The compile pipeline for Python callers, in process: the same
// pipeline::buildModule that `kiln build` calls, without a subprocess.
//
//   >>> from kiln import _compiler
//   >>> _compiler.build_module("kernels.py", "out", module_name="pkg.kernels",
//   ...                        arch="80", ext_suffix=".cpython-311-x86_64-linux-gnu.so")
//   ['out/kernels.cpython-311-x86_64-linux-gnu.so']
//
// The build runs without the GIL, so other Python threads go on. A build that
// fails raises kiln._compiler.CompileError, whose message is what `kiln
// build` would print: the diagnostics in clang's format, or the errors of
// tools and files. Problems that do not fail the build (an unusable cache)
// become RuntimeWarnings.
//
//===----------------------------------------------------------------------===//

#define PY_SSIZE_T_CLEAN
#include "frontend/resolve/host_values.h"
#include "frontend/source/diagnostics.h"
#include "pipeline/module_writer.h"
#include "pipeline/pipeline.h"

#include <llvm/Support/raw_ostream.h>

#include <Python.h>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kiln::binding {
namespace {

PyObject *compileErrorType = nullptr;

/// Keeps what a build reports, for after the build, when the GIL is back.
class CollectingReporter final : public pipeline::BuildReporter {
public:
  void sourceDiagnostics(const DiagnosticEngine &diagnostics) override {
    std::lock_guard<std::mutex> lock(mutex);
    llvm::raw_string_ostream os(diagnosticText);
    diagnostics.renderText(os, /*color=*/false);
  }
  void warning(llvm::StringRef message) override {
    std::lock_guard<std::mutex> lock(mutex);
    warnings.push_back(message.str());
  }
  void expectTasks(unsigned) override {}
  void taskFinished(llvm::StringRef) override {}
  void note(llvm::StringRef) override {}

  std::string diagnosticText;
  std::vector<std::string> warnings;

private:
  std::mutex mutex;
};

/// The file name suffix of this interpreter's extension modules
/// (".cpython-311-x86_64-linux-gnu.so"): the module is for the process that
/// builds it.
bool thisInterpretersSuffix(std::string &suffix) {
  PyObject *machinery = PyImport_ImportModule("importlib.machinery");
  PyObject *suffixes =
      machinery ? PyObject_GetAttrString(machinery, "EXTENSION_SUFFIXES") : nullptr;
  PyObject *first = suffixes ? PySequence_GetItem(suffixes, 0) : nullptr;
  const char *text = first ? PyUnicode_AsUTF8AndSize(first, nullptr) : nullptr;
  if (text)
    suffix = text;
  Py_XDECREF(first);
  Py_XDECREF(suffixes);
  Py_XDECREF(machinery);
  return text != nullptr;
}

/// The items of `sequence` as a new tuple, or null with a TypeError that
/// says `message` if it is not iterable.
PyObject *itemsOf(PyObject *sequence, const char *message) {
  PyObject *items = PySequence_Tuple(sequence);
  if (!items && PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear();
    PyErr_SetString(PyExc_TypeError, message);
  }
  return items;
}

/// A list of str from a sequence of str; false with a TypeError otherwise.
bool toStrings(PyObject *sequence, const char *what, std::vector<std::string> &out) {
  if (sequence == nullptr || sequence == Py_None)
    return true;
  if (PyUnicode_Check(sequence)) {
    PyErr_Format(PyExc_TypeError, "%s must be a list of str, not a str", what);
    return false;
  }
  PyObject *items = itemsOf(sequence, what);
  if (!items)
    return false;
  Py_ssize_t count = PyTuple_Size(items);
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject *item = PyTuple_GetItem(items, i);
    const char *text = PyUnicode_Check(item) ? PyUnicode_AsUTF8AndSize(item, nullptr) : nullptr;
    if (!text) {
      if (!PyErr_Occurred()) {
        PyObject *typeName = PyType_GetName(Py_TYPE(item));
        PyErr_Format(PyExc_TypeError, "%s must hold str, not %U", what, typeName);
        Py_XDECREF(typeName);
      }
      Py_DECREF(items);
      return false;
    }
    out.emplace_back(text);
  }
  Py_DECREF(items);
  return true;
}

/// Appends `item` (a new reference, or null after a failure) to `list`, and
/// drops the reference; false with a Python error set if either failed.
bool appendItem(PyObject *list, PyObject *item) {
  bool appended = item && PyList_Append(list, item) == 0;
  Py_XDECREF(item);
  return appended;
}

/// ClosureRequests from a sequence of (module path, name, line, (free
/// variables...), enclosing function); false with a TypeError otherwise.
bool toClosures(PyObject *sequence, std::vector<ClosureRequest> &out) {
  if (sequence == nullptr || sequence == Py_None)
    return true;
  PyObject *items = itemsOf(sequence, "closures must be a list");
  if (!items)
    return false;
  bool ok = true;
  for (Py_ssize_t i = 0; ok && i < PyTuple_Size(items); ++i) {
    const char *path = nullptr;
    const char *name = nullptr;
    unsigned line = 0;
    PyObject *variables = nullptr;
    const char *enclosing = nullptr;
    PyObject *item = PyTuple_GetItem(items, i);
    if (!PyTuple_Check(item) || PyTuple_Size(item) != 5 ||
        !PyUnicode_Check(PyTuple_GetItem(item, 0)) || !PyUnicode_Check(PyTuple_GetItem(item, 1)) ||
        !PyLong_Check(PyTuple_GetItem(item, 2)) || !PyUnicode_Check(PyTuple_GetItem(item, 4))) {
      PyErr_SetString(PyExc_TypeError,
                      "closures hold (module path, name, line, free variables, enclosing "
                      "function) tuples of (str, str, int, list of str, str)");
      ok = false;
      break;
    }
    ok = PyArg_ParseTuple(item, "ssIOs", &path, &name, &line, &variables, &enclosing);
    ClosureRequest request;
    ok = ok && toStrings(variables, "a closure's free variables", request.freeVariables);
    if (ok) {
      request.modulePath = canonicalModulePath(path);
      request.name = name;
      request.line = line;
      request.enclosing = enclosing;
      out.push_back(std::move(request));
    }
  }
  Py_DECREF(items);
  return ok;
}

/// CalledDecorators from a sequence of (module path, function name, call
/// text, line); false with a TypeError otherwise.
bool toCalledDecorators(PyObject *sequence, std::vector<CalledDecorator> &out) {
  if (sequence == nullptr || sequence == Py_None)
    return true;
  PyObject *items = itemsOf(sequence, "decorator_calls must be a list");
  if (!items)
    return false;
  bool ok = true;
  for (Py_ssize_t i = 0; ok && i < PyTuple_Size(items); ++i) {
    PyObject *item = PyTuple_GetItem(items, i);
    const char *path = nullptr;
    const char *function = nullptr;
    const char *call = nullptr;
    unsigned line = 0;
    ok = PyTuple_Check(item) && PyArg_ParseTuple(item, "sssI", &path, &function, &call, &line);
    if (!ok) {
      PyErr_Clear();
      PyErr_SetString(PyExc_TypeError, "decorator_calls hold (module path, function name, call, "
                                       "line) tuples of (str, str, str, int)");
      break;
    }
    out.push_back({path, function, call, line});
  }
  Py_DECREF(items);
  return ok;
}

/// The calls of overloaded functions a build could not resolve, as
/// (module path, key, argument types as one string, [each argument's type])
/// tuples; null with a Python error if memory ran out.
PyObject *overloadRequests(const HostValueSource *hostValues) {
  PyObject *requests = PyList_New(0);
  if (!requests || !hostValues)
    return requests;
  for (const OverloadRequest &request : hostValues->overloadRequests()) {
    PyObject *arguments = PyList_New(0);
    for (const std::string &argument : request.arguments)
      if (arguments && !appendItem(arguments, PyUnicode_FromString(argument.c_str())))
        Py_CLEAR(arguments);
    PyObject *item = arguments ? Py_BuildValue("(sssN)", request.file.c_str(), request.key.c_str(),
                                               request.argumentTypes.c_str(), arguments)
                               : nullptr;
    if (!appendItem(requests, item)) {
      Py_DECREF(requests);
      return nullptr;
    }
  }
  return requests;
}

/// Raises CompileError with `message`, its `overload_requests` the calls
/// the caller may resolve and build again with.
void raiseCompileError(const std::string &message, const HostValueSource *hostValues) {
  PyObject *error = PyObject_CallFunction(compileErrorType, "s", message.c_str());
  PyObject *requests = error ? overloadRequests(hostValues) : nullptr;
  if (requests && PyObject_SetAttrString(error, "overload_requests", requests) == 0)
    PyErr_SetObject(compileErrorType, error);
  Py_XDECREF(requests);
  Py_XDECREF(error);
}

/// Runs the pipeline without the GIL; on failure, raises CompileError with
/// what `kiln build` would print and returns nothing. Warnings become
/// RuntimeWarnings.
std::optional<pipeline::BuildResult> runPipeline(const pipeline::BuildOptions &options) {
  if (std::optional<std::string> problem =
          pipeline::moduleNameProblem(options.effectiveModuleName())) {
    PyErr_Format(PyExc_ValueError, "%s%s", problem->c_str(),
                 options.moduleName.empty() ? "; name the module with module_name=" : "");
    return std::nullopt;
  }
  CollectingReporter reporter;
  std::string failure;
  std::optional<pipeline::BuildResult> built;
  Py_BEGIN_ALLOW_THREADS;
  llvm::Expected<pipeline::BuildResult> result = pipeline::buildModule(options, reporter);
  if (result) {
    built = std::move(*result);
  } else {
    llvm::raw_string_ostream os(failure);
    llvm::handleAllErrors(
        result.takeError(), [](const pipeline::SourceDiagnosedError &) {},
        [&](const llvm::ErrorInfoBase &error) { os << "error: " << error.message() << '\n'; });
  }
  Py_END_ALLOW_THREADS;

  for (const std::string &warning : reporter.warnings)
    if (PyErr_WarnEx(PyExc_RuntimeWarning, warning.c_str(), 1) < 0)
      return std::nullopt;
  if (!built) {
    std::string message = reporter.diagnosticText + failure;
    while (!message.empty() && message.back() == '\n')
      message.pop_back();
    raiseCompileError(message, options.hostValues);
  }
  return built;
}

/// The options both entry points share.
struct CommonArguments {
  const char *file = nullptr;
  const char *outputDirectory = nullptr;
  const char *moduleName = nullptr;
  const char *arch = nullptr;
  PyObject *signatures = nullptr;
  const char *cacheDirectory = nullptr;
  int moduleStaysPython = 0;
  int noCache = 0;
  const char *hostValuesJson = nullptr;
  PyObject *closures = nullptr;
  PyObject *decoratorCalls = nullptr;
  PyObject *functions = nullptr;
  PyObject *linkIncludeDirectories = nullptr;
  /// The globals host code computed, when the caller gave them.
  std::unique_ptr<HostValueTable> hostValues;

  bool apply(pipeline::BuildOptions &options) {
    options.file = file;
    options.outputDirectory = outputDirectory;
    options.cache.disabled = noCache != 0;
    options.moduleStaysPython = moduleStaysPython != 0;
    if (moduleName)
      options.moduleName = moduleName;
    if (arch)
      options.arch = arch;
    if (cacheDirectory)
      options.cache.directory = cacheDirectory;
    if (hostValuesJson) {
      llvm::Expected<std::unique_ptr<HostValueTable>> table =
          HostValueTable::fromJson(hostValuesJson);
      if (!table) {
        PyErr_Format(PyExc_ValueError, "%s", llvm::toString(table.takeError()).c_str());
        return false;
      }
      hostValues = std::move(*table);
      options.hostValues = hostValues.get();
    }
    return toStrings(signatures, "signatures", options.signatures) &&
           toClosures(closures, options.closures) &&
           toCalledDecorators(decoratorCalls, options.calledDecorators) &&
           toStrings(functions, "functions", options.onlyFunctions) &&
           toStrings(linkIncludeDirectories, "link_include_dirs", options.linkIncludeDirectories);
  }
};

PyObject *buildModule(PyObject *, PyObject *args, PyObject *kwargs) {
  static const char *keywords[] = {"file",
                                   "output_dir",
                                   "module_name",
                                   "arch",
                                   "signatures",
                                   "module_stays_python",
                                   "ext_suffix",
                                   "jobs",
                                   "cache_dir",
                                   "no_cache",
                                   "host_only",
                                   "host_values",
                                   "closures",
                                   "decorator_calls",
                                   "functions",
                                   "link_include_dirs",
                                   "switchable_index_checks",
                                   nullptr};
  CommonArguments common;
  const char *extensionSuffix = nullptr;
  unsigned jobs = 0;
  int hostOnly = 0;
  int switchableIndexChecks = 0;
  if (!PyArg_ParseTupleAndKeywords(
          args, kwargs, "ss|$zzOpzIzppzOOOOp:build_module", const_cast<char **>(keywords),
          &common.file, &common.outputDirectory, &common.moduleName, &common.arch,
          &common.signatures, &common.moduleStaysPython, &extensionSuffix, &jobs,
          &common.cacheDirectory, &common.noCache, &hostOnly, &common.hostValuesJson,
          &common.closures, &common.decoratorCalls, &common.functions,
          &common.linkIncludeDirectories, &switchableIndexChecks))
    return nullptr;

  pipeline::BuildOptions options;
  if (!common.apply(options))
    return nullptr;
  options.emit = pipeline::EmitKind::Module;
  options.jobs = jobs;
  options.hostOnly = hostOnly != 0;
  options.switchableIndexChecks = switchableIndexChecks != 0;
  std::string suffix;
  if (extensionSuffix)
    suffix = extensionSuffix;
  else if (!thisInterpretersSuffix(suffix))
    return nullptr;
  options.extensionSuffix = suffix;

  std::optional<pipeline::BuildResult> result = runPipeline(options);
  if (!result)
    return nullptr;
  PyObject *paths = PyList_New(0);
  for (const std::string &path : result->written) {
    if (!paths || !appendItem(paths, PyUnicode_DecodeFSDefault(path.c_str()))) {
      Py_XDECREF(paths);
      return nullptr;
    }
  }
  return paths;
}

/// (name, (argument types...), arch) of one kernel specialization's code.
PyObject *specializationKey(const pipeline::KernelArtifacts &kernel, unsigned arch) {
  PyObject *types = PyTuple_New(Py_ssize_t(kernel.kernel->arguments.size()));
  for (size_t i = 0; types && i < kernel.kernel->arguments.size(); ++i) {
    PyObject *text = PyUnicode_FromString(kernel.kernel->arguments[i]->type()->str().c_str());
    if (!text) {
      Py_CLEAR(types);
      break;
    }
    PyTuple_SetItem(types, Py_ssize_t(i), text);
  }
  if (!types)
    return nullptr;
  return Py_BuildValue("(sNI)", kernel.kernel->sourceName.c_str(), types, arch);
}

PyObject *inspectModule(PyObject *, PyObject *args, PyObject *kwargs) {
  static const char *keywords[] = {"file",
                                   "what",
                                   "output_dir",
                                   "module_name",
                                   "arch",
                                   "signatures",
                                   "module_stays_python",
                                   "cache_dir",
                                   "no_cache",
                                   "host_values",
                                   "closures",
                                   "decorator_calls",
                                   "functions",
                                   nullptr};
  CommonArguments common;
  const char *what = nullptr;
  if (!PyArg_ParseTupleAndKeywords(
          args, kwargs, "sss|$zzOpzpzOOO:inspect", const_cast<char **>(keywords), &common.file,
          &what, &common.outputDirectory, &common.moduleName, &common.arch, &common.signatures,
          &common.moduleStaysPython, &common.cacheDirectory, &common.noCache,
          &common.hostValuesJson, &common.closures, &common.decoratorCalls, &common.functions))
    return nullptr;
  pipeline::BuildOptions options;
  if (!common.apply(options))
    return nullptr;
  llvm::StringRef kind(what);
  if (kind == "typed") {
    options.emit = pipeline::EmitKind::Typed;
  } else if (kind == "llvm") {
    options.emit = pipeline::EmitKind::LLVM;
  } else if (kind == "ptx" || kind == "resources") {
    options.emit = pipeline::EmitKind::Ptx;
    options.resourceUsage = kind == "resources";
  } else {
    PyErr_Format(PyExc_ValueError,
                 "inspect: what must be 'typed', 'llvm', 'ptx' or 'resources', not '%s'", what);
    return nullptr;
  }

  std::optional<pipeline::BuildResult> result = runPipeline(options);
  if (!result)
    return nullptr;
  if (kind == "typed") {
    std::string text;
    llvm::raw_string_ostream os(text);
    result->typed->print(os);
    return PyUnicode_FromStringAndSize(text.data(), Py_ssize_t(text.size()));
  }
  PyObject *found = PyList_New(0);
  for (const pipeline::KernelArtifacts &kernel : result->kernels) {
    if (kind == "resources") {
      for (const auto &[arch, reported] : kernel.entryResources()) {
        const cuda_tools::FunctionResources *resources = &reported;
        PyObject *row = Py_BuildValue(
            "(N{sIsKsKsKsKsK})", specializationKey(kernel, arch), "registers", resources->registers,
            "stack_bytes", (unsigned long long)resources->stackFrameBytes, "spill_store_bytes",
            (unsigned long long)resources->spillStoreBytes, "spill_load_bytes",
            (unsigned long long)resources->spillLoadBytes, "shared_bytes",
            (unsigned long long)resources->sharedMemoryBytes, "local_bytes",
            (unsigned long long)resources->localMemoryBytes);
        if (!appendItem(found, row)) {
          Py_DECREF(found);
          return nullptr;
        }
      }
      continue;
    }
    for (const auto &[arch, code] : kernel.ptx) {
      PyObject *row = Py_BuildValue("(Ns#)", specializationKey(kernel, arch), code.bytes.data(),
                                    Py_ssize_t(code.bytes.size()));
      if (!appendItem(found, row)) {
        Py_DECREF(found);
        return nullptr;
      }
    }
  }
  return found;
}

PyMethodDef methods[] = {
    {"build_module", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(buildModule)),
     METH_VARARGS | METH_KEYWORDS,
     "build_module(file, output_dir, *, module_name=None, arch=None, signatures=None,\n"
     "             module_stays_python=False, ext_suffix=None, jobs=0, cache_dir=None,\n"
     "             no_cache=False, host_only=False, host_values=None, closures=None,\n"
     "             decorator_calls=None, functions=None, link_include_dirs=None,\n"
     "             switchable_index_checks=False)\n"
     "             -> list[str]\n\n"
     "Builds the kernel module `file` into a Python extension module in `output_dir`,\n"
     "as `kiln build FILE --module NAME` does, and returns the paths written. The\n"
     "module is for this interpreter unless `ext_suffix` names another. With\n"
     "module_stays_python=True, the module is one that also runs as Python (host\n"
     "code beside its kernels is skipped; a kernel without signatures gets none).\n"
     "With host_only=True, only host code for the CPU engine is built (no GPU code,\n"
     "no CUDA toolkit needed). host_values, JSON, gives the globals host code computed at\n"
     "import ({file: {name: value}}, as kiln.host_values makes it); without it, the\n"
     "module is imported with python3 when a kernel reads one. closures, [(module path,\n"
     "name, line, (free variables...), enclosing function), ...], adds functions defined\n"
     "inside functions of the module or of a source module it reads (their first line),\n"
     "named `name`, their free variables given as host values of that module named\n"
     "'name.variable'. decorator_calls, [(module path, function, call, line),\n"
     "...], compiles functions that host code made kernels or device functions by calling\n"
     "cuda.jit on them, as if `call` (\"jit(device=True)\") decorated them; a closure's\n"
     "function is its name in closures; a line other than 0 compiles the top-level function\n"
     "defined there again under the name `function`. functions, [name, ...], limits the kernels,\n"
     "ufuncs and reductions compiled to those named. link_include_dirs, [folder, ...], as\n"
     "--link-include. switchable_index_checks=True gives the CPU engine each kernel's code\n"
     "with and without index checks, as --switchable-index-checks. Raises CompileError with\n"
     "Kiln's diagnostics when the module does not build."},
    {"inspect", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(inspectModule)),
     METH_VARARGS | METH_KEYWORDS,
     "inspect(file, what, output_dir, *, module_name=None, arch=None, signatures=None,\n"
     "        module_stays_python=False, cache_dir=None, no_cache=False, host_values=None,\n"
     "        closures=None, decorator_calls=None, functions=None)\n\n"
     "What a build of `file` makes, in memory: what='typed', the typed IR of the module\n"
     "(str); 'llvm' or 'ptx', [((kernel, argument types, arch), text), ...] per\n"
     "specialization and PTX target; 'resources', [((kernel, argument types, arch),\n"
     "{'registers', 'stack_bytes', 'spill_store_bytes', 'spill_load_bytes',\n"
     "'shared_bytes', 'local_bytes'}), ...] per cubin ptxas assembled. Files the build\n"
     "writes go to output_dir."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef moduleDefinition = {PyModuleDef_HEAD_INIT,
                                "kiln._compiler",
                                "Kiln's compile pipeline, in process.",
                                -1,
                                methods,
                                nullptr,
                                nullptr,
                                nullptr,
                                nullptr};

} // namespace
} // namespace kiln::binding

PyMODINIT_FUNC PyInit__compiler() {
  using namespace kiln::binding;
  PyObject *module = PyModule_Create(&moduleDefinition);
  if (!module)
    return nullptr;
  compileErrorType = PyErr_NewExceptionWithDoc(
      "kiln._compiler.CompileError",
      "A kernel module did not build; the message holds Kiln's diagnostics.", nullptr, nullptr);
  if (!compileErrorType || PyModule_AddObjectRef(module, "CompileError", compileErrorType) < 0) {
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}
