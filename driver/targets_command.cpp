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

#include "backend/codegen/target_machines.h"
#include "backend/cuda_tools/arch_list.h"
#include "backend/cuda_tools/cuda_archs.h"
#include "backend/cuda_tools/cuda_toolkit.h"
#include "backend/cuda_tools/native_gpu.h"
#include "backend/cuda_tools/nvjitlink.h"
#include "driver/arch_option.h"
#include "pipeline/project_settings.h"
#include "pipeline/python_config.h"

#include <CLI/CLI.hpp>
#include <llvm/Support/JSON.h>
#include <llvm/Support/Process.h>
#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

namespace kiln::driver {

namespace {

using cuda_tools::ArchSet;
using cuda_tools::CudaToolkit;

/// Everything `kiln targets` reports, errors included.
struct Findings {
  std::optional<CudaToolkit> toolkit;
  std::string toolkitError;
  /// nvJitLink's own version, or why it could not be loaded.
  std::string nvJitLinkVersion;
  std::string nvJitLinkError;
  cuda_tools::ArchListSource selectionSource = cuda_tools::ArchListSource::Default;
  std::string selectionText;
  std::optional<ArchSet> selection;
  std::string selectionError;
  /// The kernel module file name suffix for --python-abi, or why there is
  /// none.
  std::string pythonAbi;
  std::string extensionSuffix;
  std::string pythonAbiError;

  bool failed() const { return !toolkit || !selection; }
};

Findings investigate(const TargetsOptions &options) {
  Findings findings;
  findings.pythonAbi = options.pythonAbi;
  if (llvm::Expected<std::string> suffix =
          pipeline::extensionSuffix(options.pythonAbi, "", llvm::Triple(backend::hostTriple())))
    findings.extensionSuffix = std::move(*suffix);
  else
    findings.pythonAbiError = llvm::toString(suffix.takeError());
  if (llvm::Expected<CudaToolkit> toolkit = cuda_tools::findCudaToolkit())
    findings.toolkit = std::move(*toolkit);
  else
    findings.toolkitError = llvm::toString(toolkit.takeError());
  if (findings.toolkit &&
      findings.toolkit->location(cuda_tools::ToolkitComponent::NvJitLink).path) {
    if (llvm::Expected<cuda_tools::NvJitLink> linker =
            cuda_tools::NvJitLink::load(*findings.toolkit))
      findings.nvJitLinkVersion = linker->version().str();
    else
      findings.nvJitLinkError = llvm::toString(linker.takeError());
  }

  std::optional<std::string> cudaArchs = llvm::sys::Process::GetEnv("CUDAARCHS");
  std::optional<llvm::StringRef> commandLine;
  if (options.arch)
    commandLine = *options.arch;
  // Inside a project, the list its builds use.
  std::optional<cuda_tools::ConfiguredArchList> configured;
  if (llvm::Expected<pipeline::ProjectSettings> project = pipeline::readProjectSettings(".", "")) {
    if (project->archs)
      configured = cuda_tools::ConfiguredArchList{*project->archs, project->origin()};
  } else {
    findings.selectionError = llvm::toString(project.takeError());
    findings.selectionSource = cuda_tools::ArchListSource::Configured;
    return findings;
  }
  if (llvm::Expected<cuda_tools::ArchSelection> selection = cuda_tools::selectArchitectures(
          commandLine, cudaArchs, cuda_tools::probeNativeGpuArchitectures, configured)) {
    findings.selectionSource = selection->source;
    findings.selectionText = selection->text;
    findings.selection = std::move(selection->archs);
  } else {
    findings.selectionError = llvm::toString(selection.takeError());
    findings.selectionSource = options.arch ? cuda_tools::ArchListSource::CommandLine
                               : cudaArchs  ? cuda_tools::ArchListSource::CudaArchsVariable
                                            : cuda_tools::ArchListSource::Configured;
    findings.selectionText =
        options.arch ? *options.arch : cudaArchs.value_or(configured ? configured->text : "");
  }
  return findings;
}

/// Why an architecture has no PTX image of its own, in a few words.
std::string noPtxNote(unsigned arch) {
  if (arch > cuda_tools::kNewestPtxArchitecture)
    return "Kiln's newest PTX is " + cuda_tools::computeName(cuda_tools::kNewestPtxArchitecture) +
           "; the driver JIT-compiles it";
  return "LLVM 19 has no " + cuda_tools::smName(arch) + " PTX target";
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
     << cuda_tools::describeToolkitSource(toolkit.source) << ")\n";
  os << "  " << padded("version", 11) << toolkit.version.str() << " (from " << toolkit.versionSource
     << ")\n";
  for (cuda_tools::ToolkitComponent component : cuda_tools::kToolkitComponents) {
    const cuda_tools::ComponentLocation &location = toolkit.location(component);
    os << "  " << padded(cuda_tools::componentName(component), 11);
    if (!location.path) {
      os << "missing\n";
      continue;
    }
    os << *location.path;
    if (component == cuda_tools::ToolkitComponent::NvJitLink)
      os << (findings.nvJitLinkVersion.empty() ? " (cannot be loaded)"
                                               : " (" + findings.nvJitLinkVersion + ")");
    os << '\n';
  }
}

void printArchitectures(llvm::raw_ostream &os) {
  os << "\nArchitectures of CUDA 13, and how Kiln builds them\n";
  os << "  " << padded("arch", 9) << padded("cubin from", 13) << "PTX image\n";
  for (unsigned arch : cuda_tools::cudaArchitectures()) {
    os << "  " << padded(cuda_tools::smName(arch), 9)
       << padded(cuda_tools::smName(cuda_tools::ptxTargetForCubin(arch)) + " PTX", 13);
    if (!cuda_tools::isPtxArchitecture(arch))
      os << padded("-", 12) << "(" << noPtxNote(arch) << ")";
    else if (arch == cuda_tools::kNewestPtxArchitecture)
      os << padded(cuda_tools::computeName(arch), 12) << "(the newest PTX Kiln embeds)";
    else
      os << cuda_tools::computeName(arch);
    os << '\n';
  }
  os << "  Kiln's PTX comes from LLVM 19, which emits PTX up to "
     << cuda_tools::computeName(cuda_tools::kNewestPtxArchitecture) << ". ptxas\n"
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

void printPythonAbi(const Findings &findings, llvm::raw_ostream &os) {
  if (findings.extensionSuffix.empty())
    return;
  os << "\nPython ABI " << findings.pythonAbi << ": kernel modules are named kernels"
     << findings.extensionSuffix << "\n";
  if (findings.pythonAbi == "abi3")
    os << "  One module for every CPython from 3." << pipeline::minimumPythonMinor
       << " on; --python-abi cp313 (or cp313t,\n"
       << "  free-threaded) names a module for one version.\n";
}

void printText(const Findings &findings, llvm::raw_ostream &os) {
  printToolkit(findings, os);
  printArchitectures(os);
  printSet("Default", cuda_tools::defaultArchSet(), os);
  if (findings.selection && findings.selectionSource != cuda_tools::ArchListSource::Default)
    printSet(("Selected by " + cuda_tools::describeArchListSource(findings.selectionSource)).str(),
             *findings.selection, os);
  printHowTheListIsChosen(os);
  printPythonAbi(findings, os);
  os.flush();

  if (!findings.pythonAbiError.empty())
    llvm::WithColor::error(llvm::errs(), "kiln") << findings.pythonAbiError << '\n';

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
      json.attribute("source", cuda_tools::describeToolkitSource(toolkit.source));
      json.attribute("version", toolkit.version.str());
      json.attribute("version_source", toolkit.versionSource);
      json.attributeObject("components", [&] {
        for (cuda_tools::ToolkitComponent component : cuda_tools::kToolkitComponents) {
          const cuda_tools::ComponentLocation &location = toolkit.location(component);
          if (location.path)
            json.attribute(cuda_tools::componentName(component), *location.path);
          else
            json.attribute(cuda_tools::componentName(component), nullptr);
        }
      });
      if (!findings.nvJitLinkVersion.empty())
        json.attribute("nvjitlink_version", findings.nvJitLinkVersion);
      if (!findings.nvJitLinkError.empty())
        json.attribute("nvjitlink_error", findings.nvJitLinkError);
    });
    json.attributeArray("architectures", [&] {
      for (unsigned arch : cuda_tools::cudaArchitectures())
        json.object([&] {
          json.attribute("arch", arch);
          json.attribute("cubin_from_ptx", cuda_tools::ptxTargetForCubin(arch));
          json.attribute("ptx", cuda_tools::isPtxArchitecture(arch));
          if (std::optional<std::string> why = cuda_tools::whyNoPtxFor(arch))
            json.attribute("no_ptx_reason", *why);
        });
    });
    json.attribute("newest_ptx", cuda_tools::kNewestPtxArchitecture);
    json.attributeObject("default", [&] { writeSet(json, cuda_tools::defaultArchSet()); });
    json.attributeObject("selected", [&] {
      json.attribute("source", cuda_tools::describeArchListSource(findings.selectionSource));
      json.attribute("text", findings.selectionText);
      if (findings.selection)
        writeSet(json, *findings.selection);
      else
        json.attribute("error", findings.selectionError);
    });
    json.attributeObject("python", [&] {
      json.attribute("abi", findings.pythonAbi);
      if (findings.pythonAbiError.empty())
        json.attribute("extension_suffix", findings.extensionSuffix);
      else
        json.attribute("error", findings.pythonAbiError);
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
  if (!findings.pythonAbiError.empty())
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
  targetsCommand->add_option("--python-abi", targets.pythonAbi,
                             "A Python ABI, as kiln build takes it (abi3, cp313, cp313t, "
                             "interpreter): show the file name suffix of its kernel modules");
  targetsCommand->add_flag("--json", targets.json, "Print the result as JSON");
  return targetsCommand;
}

} // namespace kiln::driver
