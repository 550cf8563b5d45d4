//===- driver/build_command.cpp - `kiln build` ----------------------------===//
//
//   $ kiln build examples/vector_add.py --emit fatbin -o out -v
//   out/vector_add.0.fatbin
//     kernel vector_add (float32[::1], float32[::1], float32[::1])
//       sm_75: 10 registers, 0 bytes stack, 0 bytes spilled, 0 bytes shared
//       ...
//
// The build itself is pipeline::buildModule; the command shows what it
// reports: diagnostics, progress on the terminal, cache notes with -v, the
// files written and, with -v, each kernel's resources.
//
//===----------------------------------------------------------------------===//

#include "driver/build_command.h"

#include "backend/cuda_tools/cuda_archs.h"
#include "driver/command_line.h"
#include "driver/progress.h"
#include "frontend/frontend.h"
#include "frontend/source/diagnostics.h"
#include "pipeline/module_writer.h"
#include "pipeline/pipeline.h"
#include "pipeline/python_config.h"

#include <CLI/CLI.hpp>
#include <llvm/Support/JSON.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

#include <chrono>
#include <mutex>

namespace kiln::driver {

namespace {

/// Shows a build on the terminal: diagnostics in clang's format, progress
/// as ninja shows it, cache notes only with -v.
class TerminalReporter final : public pipeline::BuildReporter {
public:
  explicit TerminalReporter(const BuildOptions &options)
      : options(options),
        progress(llvm::errs(), chooseProgressStyle(llvm::errs(), options.quiet, options.verbose)) {}

  void sourceDiagnostics(const DiagnosticEngine &diagnostics) override {
    diagnostics.renderText(llvm::errs(), options.color);
    if (options.json) {
      llvm::raw_string_ostream os(diagnosticsJson);
      llvm::json::OStream json(os);
      diagnostics.renderJson(json);
    }
  }
  void warning(llvm::StringRef message) override {
    progress.interject(
        [&](llvm::raw_ostream &os) { llvm::WithColor::warning(os, "kiln") << message << '\n'; });
    std::lock_guard<std::mutex> lock(mutex);
    warnings.push_back(message.str());
  }
  void expectTasks(unsigned count) override { progress.expect(count); }
  void taskFinished(llvm::StringRef label) override { progress.finished(label); }
  void note(llvm::StringRef line) override {
    std::lock_guard<std::mutex> lock(mutex);
    notes.push_back(line.str());
  }
  /// Ends the progress line, then shows the notes (with -v).
  void finish() {
    progress.done();
    if (options.verbose)
      for (const std::string &line : notes)
        llvm::errs() << line << '\n';
  }

  /// The source diagnostics as JSON (with --json), else empty.
  std::string diagnosticsJson;
  std::vector<std::string> warnings;

private:
  const BuildOptions &options;
  ProgressReporter progress;
  std::mutex mutex;
  std::vector<std::string> notes;
};

/// `kiln build --json`: what was built, per specialization and step, with
/// each step's cache outcome and time; or, for a failed build, why.
/// A kernel's or an image's steps, as the "steps" of its JSON object.
void printSteps(llvm::ArrayRef<pipeline::BuildStep> steps, llvm::json::OStream &json) {
  json.attributeArray("steps", [&] {
    for (const pipeline::BuildStep &step : steps)
      json.object([&] {
        json.attribute("step", step.kind);
        json.attribute("target", step.target);
        json.attribute("cache", step.cache);
        json.attribute("microseconds", step.microseconds);
      });
  });
}

void printBuildJson(const BuildOptions &options, const pipeline::BuildResult *result,
                    llvm::ArrayRef<std::string> errors, const TerminalReporter &reporter,
                    uint64_t microseconds, llvm::raw_ostream &os) {
  llvm::json::OStream json(os, 2);
  json.object([&] {
    json.attribute("ok", result != nullptr);
    json.attribute("file", options.file);
    json.attribute("module", options.effectiveModuleName());
    json.attribute("microseconds", microseconds);
    json.attributeArray("written", [&] {
      if (result)
        for (const std::string &path : result->written)
          json.value(path);
    });
    json.attributeArray("kernels", [&] {
      if (!result)
        return;
      for (const pipeline::KernelArtifacts &build : result->kernels)
        json.object([&] {
          json.attribute("name", build.kernel->sourceName);
          json.attributeArray("args", [&] {
            for (const ir::Argument *argument : build.kernel->arguments)
              json.value(argument->type()->str());
          });
          printSteps(build.steps, json);
          json.attributeObject("resources", [&] {
            for (const auto &[arch, function] : build.entryResources())
              json.attribute(cuda_tools::smName(arch), cuda_tools::resourceSummary(function));
          });
          if (build.image)
            json.attribute("image", int64_t(*build.image));
        });
    });
    json.attributeArray("images", [&] {
      if (!result)
        return;
      for (const pipeline::ImageArtifacts &image : result->images)
        json.object([&] {
          json.attribute("name", image.stem);
          json.attributeArray("kernels", [&] {
            for (size_t member : image.members)
              json.value(int64_t(member));
          });
          printSteps(image.steps, json);
        });
    });
    json.attributeArray("warnings", [&] {
      for (const std::string &warning : reporter.warnings)
        json.value(warning);
    });
    json.attributeArray("errors", [&] {
      for (const std::string &error : errors)
        json.value(error);
    });
    json.attributeBegin("diagnostics");
    if (reporter.diagnosticsJson.empty())
      json.array([] {});
    else
      json.rawValue(reporter.diagnosticsJson);
    json.attributeEnd();
  });
  os << '\n';
}

void printUsage(const pipeline::KernelArtifacts &build, llvm::raw_ostream &os) {
  os << "  " << build.description << '\n';
  for (const auto &[arch, reported] : build.resources) {
    os << "    " << cuda_tools::smName(arch) << ": ";
    if (!reported) {
      os << "no resource report\n";
      continue;
    }
    const cuda_tools::FunctionResources *resources = &*reported;
    os << resources->registers << " registers, " << resources->stackFrameBytes << " bytes stack, "
       << resources->spillStoreBytes << " bytes spill stores, " << resources->spillLoadBytes
       << " bytes spill loads, " << resources->sharedMemoryBytes << " bytes shared\n";
  }
}

} // namespace

std::optional<std::string> takePtxasFlags(std::vector<std::string> &arguments,
                                          std::vector<std::string> &flags) {
  std::vector<std::string> kept;
  for (size_t i = 0; i < arguments.size(); ++i) {
    llvm::StringRef argument = arguments[i];
    llvm::StringRef value;
    if (argument == "-Xptxas" || argument == "--Xptxas") {
      if (i + 1 == arguments.size())
        return argument.str() + " needs a value, such as " + argument.str() + " --warn-on-spills";
      value = arguments[++i];
    } else if (argument.consume_front("-Xptxas=") || argument.consume_front("--Xptxas=")) {
      value = argument;
    } else {
      kept.push_back(arguments[i]);
      continue;
    }
    llvm::SmallVector<llvm::StringRef, 4> parts;
    value.split(parts, ',', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef part : parts)
      flags.push_back(part.str());
  }
  arguments = std::move(kept);
  return std::nullopt;
}

namespace {

/// Reads the [tool.kiln] settings of the module's project into `options`,
/// under what the command line gave. Returns 1 for a malformed pyproject.
int applyProjectSettings(BuildOptions &options) {
  llvm::StringRef folder = llvm::sys::path::parent_path(options.file);
  llvm::Expected<pipeline::ProjectSettings> settings = pipeline::readProjectSettings(
      folder.empty() ? "." : folder,
      options.moduleName.empty() ? "" : options.effectiveModuleName());
  if (!settings) {
    llvm::WithColor::error(llvm::errs(), "kiln") << llvm::toString(settings.takeError()) << '\n';
    return 1;
  }
  for (const std::string &key : settings->unknownKeys)
    llvm::WithColor::warning(llvm::errs(), "kiln")
        << settings->path << ": [tool.kiln] has no setting '" << key << "'; it is ignored\n";
  if (!options.jobsGiven && settings->jobs)
    options.jobs = *settings->jobs;
  if (!options.opt)
    options.opt = settings->opt;
  if (!options.maxRegisters)
    options.maxRegisters = settings->maxRegisters;
  if (!options.fastmathGiven && settings->fastmath)
    options.fastmath = *settings->fastmath;
  if (!options.lineinfoGiven && settings->lineinfo)
    options.lineinfo = *settings->lineinfo;
  if (!options.switchableIndexChecksGiven && settings->switchableIndexChecks)
    options.switchableIndexChecks = *settings->switchableIndexChecks;
  // ptxas takes the last of repeated options: the command line's win.
  options.ptxasFlags.insert(options.ptxasFlags.begin(), settings->ptxasOptions.begin(),
                            settings->ptxasOptions.end());
  options.project = std::move(*settings);
  return 0;
}

} // namespace

int runBuild(BuildOptions options) {
  if (!pipeline::isTypedIRFile(options.file)) {
    llvm::Expected<ModuleOutline> outline = outlineModule(options.file);
    if (!outline) {
      llvm::WithColor::error(llvm::errs(), "kiln") << llvm::toString(outline.takeError()) << '\n';
      return 1;
    }
    options.moduleStaysPython = outline->importsKiln;
  }
  if (!options.emitGiven) {
    if (!options.moduleStaysPython && options.moduleName.empty()) {
      llvm::WithColor::error(llvm::errs(), "kiln")
          << "kiln build needs --emit, or --module NAME to build a Python module\n"
             "Run 'kiln build --help' for more information.\n";
      return 2;
    }
    options.emit = EmitKind::Module;
  }
  if (!options.outputGiven && options.moduleStaysPython && options.emit == EmitKind::Module) {
    llvm::StringRef folder = llvm::sys::path::parent_path(options.file);
    options.outputDirectory = folder.empty() ? "." : folder.str();
  }
  if (options.emit == EmitKind::Module) {
    if (std::optional<std::string> problem =
            pipeline::moduleNameProblem(options.effectiveModuleName())) {
      llvm::WithColor::error(llvm::errs(), "kiln")
          << *problem << (options.moduleName.empty() ? "; name the module with --module" : "")
          << '\n';
      return 2;
    }
  }
  if (int status = applyProjectSettings(options))
    return status;
  pipeline::BuildOptions build = options;
  build.resourceUsage = options.verbose || options.json;
  TerminalReporter reporter(options);
  auto start = std::chrono::steady_clock::now();
  llvm::Expected<pipeline::BuildResult> result = pipeline::buildModule(build, reporter);
  uint64_t microseconds = std::chrono::duration_cast<std::chrono::microseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count();
  reporter.finish();
  if (!result) {
    std::vector<std::string> errors;
    llvm::handleAllErrors(
        result.takeError(), [](const pipeline::SourceDiagnosedError &) {},
        [&](const llvm::ErrorInfoBase &error) {
          llvm::WithColor::error(llvm::errs(), "kiln") << error.message() << '\n';
          errors.push_back(error.message());
        });
    if (options.json)
      printBuildJson(options, nullptr, errors, reporter, microseconds, llvm::outs());
    return 1;
  }
  if (options.json) {
    printBuildJson(options, &*result, {}, reporter, microseconds, llvm::outs());
    return 0;
  }
  if (!options.quiet)
    for (const std::string &path : result->written)
      llvm::outs() << path << '\n';
  if (options.verbose)
    for (const pipeline::KernelArtifacts &kernel : result->kernels)
      if (!kernel.resources.empty())
        printUsage(kernel, llvm::outs());
  return 0;
}

CLI::App *addBuildCommand(CLI::App &app, BuildOptions &build) {
  CLI::App *buildCommand = app.add_subcommand(
      "build",
      "Compile a kernel module's specializations to PTX, cubins, fat binaries or host code");
  buildCommand->add_option("file", build.file, "Kernel module (.py)")->required();
  const std::map<std::string, EmitKind> emitKinds = {
      {"typed", EmitKind::Typed},  {"llvm", EmitKind::LLVM},     {"ptx", EmitKind::Ptx},
      {"cubin", EmitKind::Cubin},  {"fatbin", EmitKind::Fatbin}, {"object", EmitKind::Object},
      {"module", EmitKind::Module}};
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
  buildCommand
      ->add_option("--project-root", build.projectRoot,
                   "Record source paths relative to DIR where it holds the module (default: "
                   "the folder of the nearest pyproject.toml, else the folder above the "
                   "module's top-level package)")
      ->type_name("DIR");
  // One value per occurrence, so that a file after it stays the file.
  buildCommand
      ->add_option("--file-prefix-map", build.filePrefixMaps,
                   "Record source paths that start with OLD as starting with NEW instead, as "
                   "GCC's -ffile-prefix-map; repeatable, the last that matches wins")
      ->check(prefixMapValidator())
      ->type_name("OLD=NEW")
      ->allow_extra_args(false);
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
  buildCommand
      ->add_option(
          "--python-abi", build.pythonAbi,
          "The CPython the module is for: abi3 (default; one module, kernels.abi3.so, for every "
          "CPython from 3.10 on), a version such as cp313 or cp313t (free-threaded), or "
          "interpreter (the EXT_SUFFIX of --python); no Python needs to be installed for it")
      ->check([](const std::string &abi) {
        llvm::Error problem = pipeline::checkPythonAbi(abi);
        return problem ? llvm::toString(std::move(problem)) : std::string();
      });
  buildCommand->add_option("--python", build.python,
                           "The Python that imports the module's package when kernels read "
                           "values its host code computes (default: python3 on $PATH)");
  buildCommand->add_option_function<std::string>(
      "--ext-suffix", [&](const std::string &suffix) { build.extensionSuffix = suffix; },
      "The module's file name suffix (e.g. .cpython-312-x86_64-linux-gnu.so), instead of "
      "the one --python-abi gives");
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
  CLI::Option *switchableIndexChecksOption = buildCommand->add_flag(
      "--switchable-index-checks,!--no-switchable-index-checks", build.switchableIndexChecks,
      "Give the CPU engine's code of every kernel both with and without index checks, so that "
      "KILN_CPU_BOUNDSCHECK chooses at run time (default: only the copy each kernel's "
      "boundscheck= asks for)");
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
  buildCommand->add_option_function<std::vector<std::string>>(
      "--Xptxas", [](const std::vector<std::string> &) {},
      "-Xptxas FLAG[,FLAG...]: pass options to ptxas, as nvcc does "
      "(e.g. -Xptxas --warn-on-spills); repeatable");
  // Whether an option was given at all, which a default cannot say.
  buildCommand->callback([&build, emitOption, outputOption, jobsOption, fastmathOption,
                          lineinfoOption, switchableIndexChecksOption] {
    build.emitGiven = emitOption->count() != 0;
    build.outputGiven = outputOption->count() != 0;
    build.jobsGiven = jobsOption->count() != 0;
    build.fastmathGiven = fastmathOption->count() != 0;
    build.lineinfoGiven = lineinfoOption->count() != 0;
    build.switchableIndexChecksGiven = switchableIndexChecksOption->count() != 0;
  });
  return buildCommand;
}

} // namespace kiln::driver
