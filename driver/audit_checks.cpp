//===- driver/audit_checks.cpp - What `kiln audit` checks -----------------===//
//
// A module's specializations against the required architectures; a
// companion's sources, and any other module's source file, against the
// files the package holds beside it; the signatures a signatures file
// records against the specializations of the package's modules, spelled
// as recording runs spell them.
//
//===----------------------------------------------------------------------===//

#include "driver/audit_checks.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringExtras.h>

#include <algorithm>

namespace kiln::driver::audit {

namespace {

/// `location` with `relative` (a path from its folder, '/'-separated,
/// maybe with "..") applied: "w.whl!pkg/sub/_k.so", "../helpers.py" ->
/// "w.whl!pkg/helpers.py".
std::string siblingLocation(llvm::StringRef location, llvm::StringRef relative) {
  size_t bang = location.rfind('!');
  llvm::StringRef archive = bang == llvm::StringRef::npos ? "" : location.take_front(bang + 1);
  llvm::StringRef inside = location.drop_front(archive.size());
  llvm::SmallVector<llvm::StringRef, 8> parts;
  inside.split(parts, '/');
  parts.pop_back(); // the companion's own name
  llvm::SmallVector<llvm::StringRef, 4> steps;
  relative.split(steps, '/');
  for (llvm::StringRef step : steps) {
    if (step == "..") {
      if (!parts.empty())
        parts.pop_back();
    } else if (step != "." && !step.empty()) {
      parts.push_back(step);
    }
  }
  return archive.str() + llvm::join(parts, "/");
}

/// A manifest type as recording runs spell it in signatures:
/// "array(float32, 1d, C)" -> "float32[::1]", "bool" -> "boolean",
/// "UniTuple(int64 x 2)" -> "UniTuple(int64, 2)".
std::string recordedSpelling(llvm::StringRef type) {
  if (type == "bool")
    return "boolean";
  if (type.consume_front("array(") && type.consume_back(")")) {
    llvm::SmallVector<llvm::StringRef, 3> parts;
    type.split(parts, ", ");
    unsigned dims = 0;
    if (parts.size() != 3 || parts[1].drop_back().getAsInteger(10, dims) || dims == 0)
      return type.str();
    std::vector<std::string> axes(dims, ":");
    if (parts[2] == "C")
      axes.back() = "::1";
    else if (parts[2] == "F")
      axes.front() = "::1";
    return recordedSpelling(parts[0]) + "[" + llvm::join(axes, ", ") + "]";
  }
  if (type.consume_front("UniTuple(") && type.consume_back(")")) {
    auto [element, count] = type.rsplit(" x ");
    return "UniTuple(" + recordedSpelling(element) + ", " + count.str() + ")";
  }
  return type.str();
}

} // namespace

void checkRequired(AuditedModule &module, const cuda_tools::ArchSet &required) {
  if (module.status != ModuleStatus::Ok)
    return;
  size_t total = 0;
  for (const AuditedKernel &kernel : module.kernels)
    total += kernel.specializations.size();
  auto check = [&](unsigned arch, bool ptx) {
    Missing missing{(ptx ? "compute_" : "sm_") + std::to_string(arch), ptx, {}, total};
    for (const AuditedKernel &kernel : module.kernels)
      for (const AuditedSpecialization &spec : kernel.specializations)
        if (!(ptx ? spec.ptx : spec.cubins).count(arch))
          missing.specializations.push_back(spec.description);
    if (!missing.specializations.empty())
      module.missing.push_back(std::move(missing));
  };
  for (unsigned arch : required.cubins)
    check(arch, false);
  for (unsigned arch : required.ptx)
    check(arch, true);
}

void checkCompanions(AuditReport &report, const pipeline::SignatureTable &recorded) {
  for (AuditedModule &module : report.modules) {
    for (const auto &[file, sha256] : module.sources) {
      auto found = report.pythonSources.find(siblingLocation(module.location, file));
      if (found == report.pythonSources.end())
        module.staleSources.push_back(file + " is not in the package");
      else if (found->second != sha256)
        module.staleSources.push_back(file + " changed after the module was built from it");
    }
    if (module.sourceFile.empty())
      continue;
    auto found = report.pythonChecksums.find(siblingLocation(module.location, module.sourceFile));
    if (found != report.pythonChecksums.end() && found->second != module.sourceChecksum)
      module.staleSources.push_back(module.sourceFile +
                                    " changed after the module was built from it");
  }
  for (const auto &[kernel, signatures] : recorded) {
    auto [moduleName, function] = llvm::StringRef(kernel).rsplit('.');
    if (function.empty())
      continue;
    const AuditedModule *built = nullptr;
    for (const AuditedModule &module : report.modules)
      if (module.status == ModuleStatus::Ok &&
          (module.companionOf == moduleName ||
           (module.companionOf.empty() && module.module == moduleName)))
        built = &module;
    std::string sourcePath = moduleName.str() + ".py";
    std::replace(sourcePath.begin(), sourcePath.end() - 3, '.', '/');
    std::string source;
    for (const auto &[location, sha256] : report.pythonSources) {
      llvm::StringRef path(location);
      if (path == sourcePath || path.ends_with("/" + sourcePath) ||
          path.ends_with("!" + sourcePath))
        source = location;
    }
    if (!built && source.empty())
      continue; // another package's kernel
    for (const std::string &signature : signatures) {
      bool precompiled = false;
      if (built)
        for (const AuditedKernel &audited : built->kernels)
          if (audited.name == function)
            for (const AuditedSpecialization &spec : audited.specializations) {
              std::vector<std::string> spelled;
              for (const std::string &arg : spec.args)
                spelled.push_back(recordedSpelling(arg));
              precompiled |= signature == "void(" + llvm::join(spelled, ", ") + ")";
            }
      if (!precompiled)
        report.notPrecompiled.push_back({kernel, signature, built ? built->location : source});
    }
  }
}

} // namespace kiln::driver::audit
