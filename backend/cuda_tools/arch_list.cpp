//===- backend/cuda_tools/arch_list.cpp - Which architectures to build for -----------===//

#include "backend/cuda_tools/arch_list.h"

#include "backend/cuda_tools/cuda_archs.h"
#include "backend/cuda_tools/native_gpu.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/Process.h>
#include <llvm/Support/Regex.h>

namespace kiln::cuda_tools {

namespace {

constexpr llvm::StringLiteral kAcceptedForms =
    "expected CMake's 80, 80-real, 90-virtual, all, all-major or native, TORCH_CUDA_ARCH_LIST's "
    "8.0 or 9.0+PTX, 90+PTX, or sm_80 / compute_90";

std::string supportedList() {
  std::string text;
  for (unsigned arch : cudaArchitectures())
    text += (text.empty() ? "" : ", ") + std::to_string(arch);
  return text;
}

/// One entry of a list, parsed but not yet checked against CUDA 13's list.
struct ArchEntry {
  unsigned arch = 0;
  bool cubin = false;
  bool ptx = false;
  /// How the entry asked for PTX, for error messages ("a plain CMake number
  /// means both").
  llvm::StringRef ptxReason;
};

llvm::Error entryError(llvm::StringRef entry, const llvm::Twine &problem) {
  return llvm::createStringError(("'" + entry + "': " + problem).str());
}

llvm::Error archSpecificError(llvm::StringRef entry, unsigned arch, llvm::StringRef suffix) {
  return entryError(entry, "sm_" + llvm::Twine(arch) + suffix +
                               " is an architecture-specific target (as sm_90a, sm_100a, "
                               "sm_100f), which Kiln does not build; use " +
                               llvm::Twine(arch) + " for the portable sm_" + llvm::Twine(arch));
}

/// `plainNumbersAreCubins`: in a list that spells PTX as "+PTX"
/// (TORCH_CUDA_ARCH_LIST's grammar, also written "75;80;90+PTX"), a plain
/// number asks for the cubin alone, as there; elsewhere it means CMake's
/// cubin and PTX.
llvm::Expected<ArchEntry> parseEntry(llvm::StringRef entry, bool plainNumbersAreCubins) {
  llvm::SmallVector<llvm::StringRef, 5> match;
  ArchEntry parsed;
  llvm::StringRef suffix;

  const llvm::Regex cmake("^([0-9]+)([a-z]?)(-real|-virtual)?$");
  const llvm::Regex torch("^([0-9]+)\\.([0-9]+)([a-z]?)(\\+[Pp][Tt][Xx])?$");
  const llvm::Regex numberWithPtx("^([0-9]+)([a-z]?)\\+[Pp][Tt][Xx]$");
  const llvm::Regex nvcc("^(sm|compute)_([0-9]+)([a-z]?)$");
  if (cmake.match(entry, &match)) {
    if (match[1].getAsInteger(10, parsed.arch))
      return entryError(entry, "the number is too large");
    suffix = match[2];
    parsed.cubin = match[3] != "-virtual";
    parsed.ptx = match[3] != "-real" && !(plainNumbersAreCubins && match[3].empty());
    parsed.ptxReason = match[3].empty() ? "a plain number means an sm_ cubin and compute_ PTX, as "
                                          "in CMake; add -real for the cubin alone"
                                        : "";
  } else if (numberWithPtx.match(entry, &match)) {
    if (match[1].getAsInteger(10, parsed.arch))
      return entryError(entry, "the number is too large");
    suffix = match[2];
    parsed.cubin = true;
    parsed.ptx = true;
    parsed.ptxReason = "leave out +PTX for the cubin alone";
  } else if (torch.match(entry, &match)) {
    unsigned major = 0, minor = 0;
    if (match[1].getAsInteger(10, major) || match[2].getAsInteger(10, minor) || minor > 9 ||
        major > 99)
      return entryError(entry, "expected MAJOR.MINOR with a one-digit MINOR, as in 8.6");
    parsed.arch = major * 10 + minor;
    suffix = match[3];
    parsed.cubin = true;
    parsed.ptx = !match[4].empty();
    parsed.ptxReason = "leave out +PTX for the cubin alone";
  } else if (nvcc.match(entry, &match)) {
    if (match[2].getAsInteger(10, parsed.arch))
      return entryError(entry, "the number is too large");
    suffix = match[3];
    parsed.cubin = match[1] == "sm";
    parsed.ptx = match[1] == "compute";
  } else {
    return entryError(entry, "not an architecture; " + kAcceptedForms);
  }

  if (!suffix.empty())
    return archSpecificError(entry, parsed.arch, suffix);
  if (!isCudaArchitecture(parsed.arch)) {
    if (parsed.arch < cudaArchitectures().front())
      return entryError(entry, "sm_" + llvm::Twine(parsed.arch) +
                                   " is no longer supported by CUDA 13, whose oldest "
                                   "architecture is sm_" +
                                   llvm::Twine(cudaArchitectures().front()));
    return entryError(entry, "sm_" + llvm::Twine(parsed.arch) +
                                 " is not an architecture CUDA 13 supports (" + supportedList() +
                                 ")");
  }
  if (parsed.ptx)
    if (std::optional<std::string> why = whyNoPtxFor(parsed.arch))
      return entryError(entry,
                        *why + (parsed.ptxReason.empty() ? "" : " (" + parsed.ptxReason + ")"));
  return parsed;
}

llvm::Expected<ArchSet> nativeArchSet(NativeArchProbe probeNative) {
  llvm::Expected<std::vector<unsigned>> gpus = probeNative();
  if (!gpus)
    return llvm::createStringError(
        "'native' means the GPUs of this machine, but %s; name the architectures instead (e.g. "
        "80-real,90)",
        llvm::toString(gpus.takeError()).c_str());
  ArchSet set;
  for (unsigned arch : *gpus) {
    if (!isCudaArchitecture(arch))
      return llvm::createStringError(
          "'native': this machine has an sm_%u GPU, which CUDA 13 does not support (%s)", arch,
          supportedList().c_str());
    set.cubins.insert(arch);
  }
  return set;
}

bool isFalseConstant(llvm::StringRef entry) {
  std::string upper = entry.upper();
  return upper == "OFF" || upper == "FALSE" || upper == "NO" || upper == "N" || upper == "0" ||
         upper == "IGNORE" || upper == "NOTFOUND";
}

} // namespace

std::string ArchSet::str() const {
  std::set<unsigned> all = cubins;
  all.insert(ptx.begin(), ptx.end());
  std::string text;
  for (unsigned arch : all) {
    if (!text.empty())
      text += ';';
    text += std::to_string(arch);
    bool real = cubins.count(arch), virtualArch = ptx.count(arch);
    if (real && !virtualArch)
      text += "-real";
    else if (virtualArch && !real)
      text += "-virtual";
  }
  return text;
}

std::string ArchSet::describe() const {
  std::string text;
  for (unsigned arch : cubins)
    text += (text.empty() ? "" : " ") + smName(arch);
  if (!cubins.empty())
    text += " cubins";
  if (!ptx.empty()) {
    text += text.empty() ? "" : ", ";
    bool first = true;
    for (unsigned arch : ptx) {
      text += (first ? "" : " ") + computeName(arch);
      first = false;
    }
    text += " PTX";
  }
  return text.empty() ? "nothing" : text;
}

std::set<unsigned> ArchSet::ptxTargets() const {
  std::set<unsigned> targets = ptx;
  for (unsigned arch : cubins)
    targets.insert(ptxTargetForCubin(arch));
  return targets;
}

ArchSet defaultArchSet() {
  ArchSet set;
  set.cubins = {75, 80, 86, 89, 90, 100, 120};
  set.ptx = {kNewestPtxArchitecture};
  return set;
}

llvm::Expected<ArchSet> parseArchList(llvm::StringRef list, NativeArchProbe probeNative) {
  llvm::SmallVector<llvm::StringRef, 16> entries;
  llvm::SplitString(list, entries, "; ,\t\n\r");
  if (entries.empty())
    return llvm::createStringError("the architecture list is empty; %s", kAcceptedForms.data());

  for (llvm::StringRef entry : entries) {
    std::string lower = entry.lower();
    bool special = lower == "all" || lower == "all-major" || lower == "native";
    if (special && entries.size() > 1)
      return llvm::createStringError("'%s' stands for a whole list and cannot be combined with "
                                     "other entries",
                                     entry.str().c_str());
    if (lower == "all" || lower == "all-major") {
      ArchSet set;
      for (unsigned arch : cudaArchitectures())
        if (lower == "all" || isMajorArchitecture(arch))
          set.cubins.insert(arch);
      // nvcc adds PTX for the highest major architecture (compute_120);
      // the newest Kiln can embed is compute_90.
      set.ptx.insert(kNewestPtxArchitecture);
      return set;
    }
    if (lower == "native")
      return nativeArchSet(probeNative);
    if (isFalseConstant(entry))
      return llvm::createStringError("'%s' turns CUDA architectures off in CMake, but Kiln needs "
                                     "at least one to build for",
                                     entry.str().c_str());
  }

  bool plainNumbersAreCubins =
      llvm::any_of(entries, [](llvm::StringRef entry) { return entry.lower().ends_with("+ptx"); });
  ArchSet set;
  for (llvm::StringRef entry : entries) {
    llvm::Expected<ArchEntry> parsed = parseEntry(entry, plainNumbersAreCubins);
    if (!parsed)
      return parsed.takeError();
    if (parsed->cubin)
      set.cubins.insert(parsed->arch);
    if (parsed->ptx)
      set.ptx.insert(parsed->arch);
  }
  return set;
}

llvm::Expected<ArchSet> parseArchList(llvm::StringRef list) {
  return parseArchList(list, probeNativeGpuArchitectures);
}

llvm::StringRef describeArchListSource(ArchListSource source) {
  switch (source) {
  case ArchListSource::CommandLine:
    return "--arch";
  case ArchListSource::CudaArchsVariable:
    return "CUDAARCHS";
  case ArchListSource::Configured:
    return "pyproject.toml";
  case ArchListSource::Default:
    return "the default";
  }
  return "?";
}

llvm::Expected<ArchSelection>
selectArchitectures(std::optional<llvm::StringRef> commandLine,
                    std::optional<std::string> cudaArchsVariable, NativeArchProbe probeNative,
                    const std::optional<ConfiguredArchList> &configured) {
  ArchSelection selection;
  if (commandLine) {
    selection.source = ArchListSource::CommandLine;
    selection.text = commandLine->str();
  } else if (cudaArchsVariable && !llvm::StringRef(*cudaArchsVariable).trim().empty()) {
    selection.source = ArchListSource::CudaArchsVariable;
    selection.text = *cudaArchsVariable;
  } else if (configured) {
    selection.source = ArchListSource::Configured;
    selection.text = configured->text;
  } else {
    selection.archs = defaultArchSet();
    return selection;
  }
  llvm::Expected<ArchSet> archs = parseArchList(selection.text, probeNative);
  if (!archs) {
    std::string where;
    switch (selection.source) {
    case ArchListSource::CommandLine:
      where = "--arch '" + selection.text + "'";
      break;
    case ArchListSource::Configured:
      where = "archs = '" + selection.text + "' (from " + configured->origin + ")";
      break;
    default:
      where = "CUDAARCHS='" + selection.text + "' (from the environment)";
    }
    return llvm::createStringError("invalid architecture list %s: %s", where.c_str(),
                                   llvm::toString(archs.takeError()).c_str());
  }
  selection.archs = std::move(*archs);
  return selection;
}

llvm::Expected<ArchSelection>
selectArchitectures(std::optional<llvm::StringRef> commandLine,
                    const std::optional<ConfiguredArchList> &configured) {
  return selectArchitectures(commandLine, llvm::sys::Process::GetEnv("CUDAARCHS"),
                             probeNativeGpuArchitectures, configured);
}

} // namespace kiln::cuda_tools
