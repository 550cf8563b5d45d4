//===- driver/targets_command.cpp - `kiln targets` ------------------------===//
//
//   $ kiln targets
//   CUDA toolkit /usr/local/cuda (found through $CUDA_HOME)
//     version    13.0.88 (from ptxas --version)
//     ptxas      /usr/local/cuda/bin/ptxas
//     ...
//   Architectures of CUDA 13, and how Kiln builds them
//     arch     cubin from   PTX image
//     sm_75    sm_75 PTX    compute_75
//     ...
//     sm_100   sm_90 PTX    -           (Kiln's newest PTX is compute_90; the driver JIT-compiles
//     it)
//   ...
//
//===----------------------------------------------------------------------===//

#include "driver/targets_command.h"

#include "backend/cuda_tools/arch_list.h"
#include "backend/cuda_tools/cuda_archs.h"
#include "backend/cuda_tools/cuda_toolkit.h"
#include "backend/cuda_tools/native_gpu.h"
#include "backend/cuda_tools/nvjitlink.h"
#include "driver/arch_option.h"
#include "pipeline/project_settings.h"

#include <CLI/CLI.hpp>
#include <llvm/Support/JSON.h>
#include <llvm/Support/Process.h>
#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

namespace kiln::driver {

namespace {

using cuda::ArchSet;
using cuda::CudaToolkit;

/// Everything `kiln targets` reports, errors included.
struct Findings {
  std::optional<CudaToolkit> toolkit;
  std::string toolkitError;
  /// nvJitLink's own version, or why it could not be loaded.
  std::string nvJitLinkVersion;
  std::string nvJitLinkError;
  cuda::ArchListSource selectionSource = cuda::ArchListSource::Default;
  std::string selectionText;
  std::optional<ArchSet> selection;
  std::string selectionError;

  bool failed() const { return !toolkit || !selection; }
};

Findings investigate(const TargetsOptions &options) {
  Findings findings;
  if (llvm::Expected<CudaToolkit> toolkit = cuda::findCudaToolkit())
    findings.toolkit = std::move(*toolkit);
  else
    findings.toolkitError = llvm::toString(toolkit.takeError());
  if (findings.toolkit && findings.toolkit->location(cuda::ToolkitComponent::NvJitLink).path) {
    if (llvm::Expected<cuda::NvJitLink> linker = cuda::NvJitLink::load(*findings.toolkit))
      findings.nvJitLinkVersion = linker->version().str();
    else
      findings.nvJitLinkError = llvm::toString(linker.takeError());
  }

  std::optional<std::string> cudaArchs = llvm::sys::Process::GetEnv("CUDAARCHS");
  std::optional<llvm::StringRef> commandLine;
  if (options.arch)
    commandLine = *options.arch;
  // Inside a project, the list its builds use.
  std::optional<cuda::ConfiguredArchList> configured;
  if (llvm::Expected<pipeline::ProjectSettings> project = pipeline::readProjectSettings(".", "")) {
    if (project->archs)
      configured = cuda::ConfiguredArchList{*project->archs, project->origin()};
  } else {
    findings.selectionError = llvm::toString(project.takeError());
    findings.selectionSource = cuda::ArchListSource::Configured;
    return findings;
  }
  if (llvm::Expected<cuda::ArchSelection> selection = cuda::selectArchitectures(
          commandLine, cudaArchs, cuda::probeNativeGpuArchitectures, configured)) {
    findings.selectionSource = selection->source;
    findings.selectionText = selection->text;
    findings.selection = std::move(selection->archs);
  } else {
    findings.selectionError = llvm::toString(selection.takeError());
    findings.selectionSource = options.arch ? cuda::ArchListSource::CommandLine
                               : cudaArchs  ? cuda::ArchListSource::CudaArchsVariable
                                            : cuda::ArchListSource::Configured;
    findings.selectionText =
        options.arch ? *options.arch : cudaArchs.value_or(configured ? configured->text : "");
  }
  return findings;
}

/// Why an architecture has no PTX image of its own, in a few words.
std::string noPtxNote(unsigned arch) {
  if (arch > cuda::kNewestPtxArchitecture)
    return "Kiln's newest PTX is " + cuda::computeName(cuda::kNewestPtxArchitecture) +
           "; the driver JIT-compiles it";
  return "LLVM 19 has no " + cuda::smName(arch) + " PTX target";
}

/// `text` padded with spaces to `width` columns.
std::string padded(llvm::StringRef text, size_t width) {
  std::string result = text.str();
  if (result.size() < width)
    result.append(width - result.size(), ' ');
  return result;
}

void printToolkit(const Findings &findings, llvm::raw_ostream &os) {
  if (!findings.toolkit) {
    os << "CUDA toolkit: not found\n";
    return;
  }
  const CudaToolkit &toolkit = *findings.toolkit;
  os << "CUDA toolkit " << toolkit.root << " (found through "
     << cuda::describeToolkitSource(toolkit.source) << ")\n";
  os << "  " << padded("version", 11) << toolkit.version.str() << " (from " << toolkit.versionSource
     << ")\n";
  for (cuda::ToolkitComponent component : cuda::kToolkitComponents) {
    const cuda::ComponentLocation &location = toolkit.location(component);
    os << "  " << padded(cuda::componentName(component), 11);
    if (!location.path) {
      os << "missing\n";
      continue;
    }
    os << *location.path;
    if (component == cuda::ToolkitComponent::NvJitLink)
      os << (findings.nvJitLinkVersion.empty() ? " (cannot be loaded)"
                                               : " (" + findings.nvJitLinkVersion + ")");
    os << '\n';
  }
}

void printArchitectures(llvm::raw_ostream &os) {
  os << "\nArchitectures of CUDA 13, and how Kiln builds them\n";
  os << "  " << padded("arch", 9) << padded("cubin from", 13) << "PTX image\n";
  for (unsigned arch : cuda::cudaArchitectures()) {
    os << "  " << padded(cuda::smName(arch), 9)
       << padded(cuda::smName(cuda::ptxTargetForCubin(arch)) + " PTX", 13);
    if (!cuda::isPtxArchitecture(arch))
      os << padded("-", 12) << "(" << noPtxNote(arch) << ")";
    else if (arch == cuda::kNewestPtxArchitecture)
      os << padded(cuda::computeName(arch), 12) << "(the newest PTX Kiln embeds)";
    else
      os << cuda::computeName(arch);
    os << '\n';
  }
  os << "  Kiln's PTX comes from LLVM 19, which emits PTX up to "
     << cuda::computeName(cuda::kNewestPtxArchitecture) << ". ptxas\n"
     << "  assembles cubins for sm_100 and newer from sm_90 PTX; a GPU with no cubin\n"
     << "  in the module runs the newest PTX, JIT-compiled by the CUDA driver.\n";
}

void printSet(llvm::StringRef title, const ArchSet &set, llvm::raw_ostream &os) {
  os << '\n' << title << ": " << set.str() << "\n  " << set.describe() << '\n';
}

void printHowTheListIsChosen(llvm::raw_ostream &os) {
  os << "\nThe list comes from --arch LIST, else $CUDAARCHS, else archs in [tool.kiln] of\n"
     << "the nearest pyproject.toml, else the default. Entries:\n"
     << "  CMake CUDA_ARCHITECTURES  75;80;90 (cubin and PTX each), 80-real, 90-virtual,\n"
     << "                            all, all-major (with compute_90 PTX), native (this\n"
     << "                            machine's GPUs)\n"
     << "  TORCH_CUDA_ARCH_LIST      7.5 8.0 9.0+PTX (cubins; +PTX adds the PTX)\n"
     << "  nvcc names                sm_80 (cubin), compute_90 (PTX)\n"
     << "  separated by ';', ',' or spaces.\n";
}

void printText(const Findings &findings, llvm::raw_ostream &os) {
  printToolkit(findings, os);
  printArchitectures(os);
  printSet("Default", cuda::defaultArchSet(), os);
  if (findings.selection && findings.selectionSource != cuda::ArchListSource::Default)
    printSet(("Selected by " + cuda::describeArchListSource(findings.selectionSource)).str(),
             *findings.selection, os);
  printHowTheListIsChosen(os);
  os.flush();

  if (!findings.toolkit)
    llvm::WithColor::error(llvm::errs(), "kiln") << findings.toolkitError << '\n';
  if (!findings.nvJitLinkError.empty())
    llvm::WithColor::warning(llvm::errs(), "kiln") << findings.nvJitLinkError << '\n';
  if (!findings.selection)
    llvm::WithColor::error(llvm::errs(), "kiln") << findings.selectionError << '\n';
}

void writeSet(llvm::json::OStream &json, const ArchSet &set) {
  json.attribute("list", set.str());
  auto numbers = [&](llvm::StringRef name, const std::set<unsigned> &archs) {
    json.attributeArray(name, [&] {
      for (unsigned arch : archs)
        json.value(arch);
    });
  };
  numbers("cubins", set.cubins);
  numbers("ptx", set.ptx);
  numbers("ptx_targets", set.ptxTargets());
}

void printJson(const Findings &findings, llvm::raw_ostream &os) {
  llvm::json::OStream json(os, 2);
  json.object([&] {
    json.attributeObject("toolkit", [&] {
      json.attribute("found", findings.toolkit.has_value());
      if (!findings.toolkit) {
        json.attribute("error", findings.toolkitError);
        return;
      }
      const CudaToolkit &toolkit = *findings.toolkit;
      json.attribute("root", toolkit.root);
      json.attribute("source", cuda::describeToolkitSource(toolkit.source));
      json.attribute("version", toolkit.version.str());
      json.attribute("version_source", toolkit.versionSource);
      json.attributeObject("components", [&] {
        for (cuda::ToolkitComponent component : cuda::kToolkitComponents) {
          const cuda::ComponentLocation &location = toolkit.location(component);
          if (location.path)
            json.attribute(cuda::componentName(component), *location.path);
          else
            json.attribute(cuda::componentName(component), nullptr);
        }
      });
      if (!findings.nvJitLinkVersion.empty())
        json.attribute("nvjitlink_version", findings.nvJitLinkVersion);
      if (!findings.nvJitLinkError.empty())
        json.attribute("nvjitlink_error", findings.nvJitLinkError);
    });
    json.attributeArray("architectures", [&] {
      for (unsigned arch : cuda::cudaArchitectures())
        json.object([&] {
          json.attribute("arch", arch);
          json.attribute("cubin_from_ptx", cuda::ptxTargetForCubin(arch));
          json.attribute("ptx", cuda::isPtxArchitecture(arch));
          if (std::optional<std::string> why = cuda::whyNoPtxFor(arch))
            json.attribute("no_ptx_reason", *why);
        });
    });
    json.attribute("newest_ptx", cuda::kNewestPtxArchitecture);
    json.attributeObject("default", [&] { writeSet(json, cuda::defaultArchSet()); });
    json.attributeObject("selected", [&] {
      json.attribute("source", cuda::describeArchListSource(findings.selectionSource));
      json.attribute("text", findings.selectionText);
      if (findings.selection)
        writeSet(json, *findings.selection);
      else
        json.attribute("error", findings.selectionError);
    });
  });
  os << '\n';
}

} // namespace

int runTargets(const TargetsOptions &options) {
  Findings findings = investigate(options);
  if (options.json)
    printJson(findings, llvm::outs());
  else
    printText(findings, llvm::outs());
  // A bad --arch is a usage error; a bad $CUDAARCHS or a missing toolkit
  // is a problem of the environment.
  if (!findings.selection && options.arch && archListSyntaxProblem(*options.arch))
    return 2;
  return findings.failed() ? 1 : 0;
}

CLI::App *addTargetsCommand(CLI::App &app, TargetsOptions &targets) {
  CLI::App *targetsCommand = app.add_subcommand(
      "targets", "Show the CUDA toolkit and the GPU architectures Kiln builds for");
  targetsCommand->add_option_function<std::string>(
      "--arch", [&](const std::string &list) { targets.arch = list; },
      "Architecture list to check and expand, as CMake (75;80-real;90-virtual, all), "
      "TORCH_CUDA_ARCH_LIST (7.5 8.0 9.0+PTX) or nvcc (sm_80) write it; default: $CUDAARCHS, "
      "else Kiln's default");
  targetsCommand->add_flag("--json", targets.json, "Print the result as JSON");
  return targetsCommand;
}

} // namespace kiln::driver
