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
#include "driver/progress.h"
#include "frontend/frontend.h"
#include "frontend/source/diagnostics.h"
#include "pipeline/module_writer.h"
#include "pipeline/pipeline.h"

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
              json.attribute(cuda::smName(arch), cuda::resourceSummary(function));
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
    os << "    " << cuda::smName(arch) << ": ";
    if (!reported) {
      os << "no resource report\n";
      continue;
    }
    const cuda::FunctionResources *resources = &*reported;
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

} // namespace kiln::driver
