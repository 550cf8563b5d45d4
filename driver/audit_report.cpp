//===- driver/audit_report.cpp - Showing what `kiln audit` found ----------===//
//
// The listing `kiln audit` prints (as JSON with --json), and the errors it
// reports after it.
//
//===----------------------------------------------------------------------===//

#include "driver/audit_report.h"

#include <llvm/Support/JSON.h>

namespace kiln::driver::audit {

namespace {

std::string archText(const std::set<unsigned> &archs, bool ptx) {
  std::string text;
  for (unsigned arch : archs)
    text +=
        (text.empty() ? "" : " ") + std::string(ptx ? "compute_" : "sm_") + std::to_string(arch);
  return text.empty() ? "none" : text;
}

std::string missingText(const AuditedModule &module, const Missing &missing) {
  std::string text = "module '" + (module.module.empty() ? module.location : module.module) +
                     "' (" + module.location + ") has no " + missing.arch +
                     (missing.ptx ? " PTX" : " cubin");
  if (missing.specializations.size() == missing.outOf)
    return text + " (in any of its " + std::to_string(missing.outOf) + " specializations)";
  text += " for " + std::to_string(missing.specializations.size()) + " of its " +
          std::to_string(missing.outOf) + " specializations:";
  for (const std::string &spec : missing.specializations)
    text += "\n  " + spec;
  return text;
}

} // namespace

void printText(const AuditReport &report, const std::optional<cuda_tools::ArchSet> &required,
               llvm::raw_ostream &os) {
  os << report.kind << ' ' << report.path << ": " << report.modules.size() << " Kiln module"
     << (report.modules.size() == 1 ? "" : "s") << '\n';
  for (const AuditedModule &module : report.modules) {
    os << module.location << '\n';
    if (!module.module.empty() || !module.kilnVersion.empty())
      os << "  module   " << (module.module.empty() ? "?" : module.module) << ", built by Kiln "
         << (module.kilnVersion.empty() ? "?" : module.kilnVersion) << " (bundle format "
         << (module.bundleFormat ? std::to_string(*module.bundleFormat) : "?")
         << ", manifest format "
         << (module.manifestFormat ? std::to_string(*module.manifestFormat) : "?") << ")\n";
    if (module.status != ModuleStatus::Ok) {
      os << (module.status == ModuleStatus::Damaged ? "  damaged: " : "  incompatible: ")
         << module.problem << '\n';
      continue;
    }
    if (!module.companionOf.empty())
      os << "  companion of " << module.companionOf << ", built from " << module.sources.size()
         << " source file" << (module.sources.size() == 1 ? "" : "s")
         << (module.staleSources.empty() ? ", all unchanged" : ", not all as built") << '\n';
    else
      for (const std::string &stale : module.staleSources)
        os << "  source   " << stale << '\n';
    os << "  archs    cubins " << archText(module.cubins, false) << "; PTX "
       << archText(module.ptx, true) << '\n';
    for (const AuditedKernel &kernel : module.kernels) {
      os << "  " << kernel.kind << ' ' << kernel.name << '\n';
      for (const AuditedSpecialization &spec : kernel.specializations) {
        os << "    (";
        for (size_t i = 0; i < spec.args.size(); ++i)
          os << (i ? ", " : "") << spec.args[i];
        os << ")\n      cubins " << archText(spec.cubins, false) << "; PTX "
           << archText(spec.ptx, true) << '\n';
      }
    }
  }
  bool anyMissing = false;
  for (const AuditedModule &module : report.modules)
    anyMissing |= !module.missing.empty();
  if (required && !anyMissing && !report.modules.empty())
    os << "every specialization has the required architectures: " << required->describe() << '\n';
  if (!report.signatureFile.empty() && report.notPrecompiled.empty())
    os << "every signature " << report.signatureFile
       << " records for this package's kernels is precompiled\n";
}

void printJson(const AuditReport &report, const std::optional<cuda_tools::ArchSet> &required,
               bool ok, llvm::raw_ostream &os) {
  llvm::json::OStream json(os, 2);
  auto archArray = [&](llvm::StringRef key, const std::set<unsigned> &archs) {
    json.attributeArray(key, [&] {
      for (unsigned arch : archs)
        json.value(arch);
    });
  };
  json.object([&] {
    json.attribute("path", report.path);
    json.attribute("kind", report.kind);
    json.attribute("ok", ok);
    if (required)
      json.attributeObject("required_archs", [&] {
        archArray("cubins", required->cubins);
        archArray("ptx", required->ptx);
      });
    else
      json.attribute("required_archs", nullptr);
    json.attributeArray("modules", [&] {
      for (const AuditedModule &module : report.modules)
        json.object([&] {
          json.attribute("path", module.location);
          json.attribute("status", module.status == ModuleStatus::Ok        ? "ok"
                                   : module.status == ModuleStatus::Damaged ? "damaged"
                                                                            : "incompatible");
          json.attribute("problem", module.problem.empty() ? llvm::json::Value(nullptr)
                                                           : llvm::json::Value(module.problem));
          json.attribute("module", module.module.empty() ? llvm::json::Value(nullptr)
                                                         : llvm::json::Value(module.module));
          json.attribute("kiln_version", module.kilnVersion.empty()
                                             ? llvm::json::Value(nullptr)
                                             : llvm::json::Value(module.kilnVersion));
          json.attribute("bundle_format", module.bundleFormat
                                              ? llvm::json::Value(*module.bundleFormat)
                                              : llvm::json::Value(nullptr));
          json.attribute("manifest_format", module.manifestFormat
                                                ? llvm::json::Value(*module.manifestFormat)
                                                : llvm::json::Value(nullptr));
          json.attributeObject("archs", [&] {
            archArray("cubins", module.cubins);
            archArray("ptx", module.ptx);
          });
          json.attributeArray("kernels", [&] {
            for (const AuditedKernel &kernel : module.kernels)
              json.object([&] {
                json.attribute("name", kernel.name);
                json.attribute("kind", kernel.kind);
                json.attributeArray("specializations", [&] {
                  for (const AuditedSpecialization &spec : kernel.specializations)
                    json.object([&] {
                      json.attributeArray("args", [&] {
                        for (const std::string &arg : spec.args)
                          json.value(arg);
                      });
                      archArray("cubins", spec.cubins);
                      archArray("ptx", spec.ptx);
                    });
                });
              });
          });
          json.attribute("companion_of", module.companionOf.empty()
                                             ? llvm::json::Value(nullptr)
                                             : llvm::json::Value(module.companionOf));
          json.attributeArray("stale_sources", [&] {
            for (const std::string &stale : module.staleSources)
              json.value(stale);
          });
          json.attributeArray("missing", [&] {
            for (const Missing &missing : module.missing)
              json.object([&] {
                json.attribute("arch", missing.arch);
                json.attribute("kind", missing.ptx ? "ptx" : "cubin");
                json.attributeArray("specializations", [&] {
                  for (const std::string &spec : missing.specializations)
                    json.value(spec);
                });
              });
          });
        });
    });
    json.attributeArray("problems", [&] {
      for (const std::string &problem : report.problems)
        json.value(problem);
    });
    json.attribute("signature_file", report.signatureFile.empty()
                                         ? llvm::json::Value(nullptr)
                                         : llvm::json::Value(report.signatureFile));
    json.attributeArray("not_precompiled", [&] {
      for (const NotPrecompiled &entry : report.notPrecompiled)
        json.object([&] {
          json.attribute("kernel", entry.kernel);
          json.attribute("signature", entry.signature);
          json.attribute("module", entry.module);
        });
    });
  });
  os << '\n';
}

std::vector<std::string> errorsOf(const AuditReport &report, bool archsRequired) {
  std::vector<std::string> errors = report.problems;
  for (const AuditedModule &module : report.modules) {
    if (module.status != ModuleStatus::Ok)
      errors.push_back("'" + module.location + "'" +
                       (module.module.empty() ? "" : " (module " + module.module + ")") +
                       (module.status == ModuleStatus::Damaged ? " is damaged: " : " was ") +
                       module.problem);
    for (const Missing &missing : module.missing)
      errors.push_back(missingText(module, missing));
    for (const std::string &stale : module.staleSources)
      errors.push_back("'" + module.location + "' (" +
                       (module.companionOf.empty() ? "module " + module.module
                                                   : "companion of " + module.companionOf) +
                       ") does not match its source: " + stale);
  }
  for (const NotPrecompiled &entry : report.notPrecompiled)
    errors.push_back(entry.kernel + " is recorded with " + entry.signature + " in " +
                     report.signatureFile + ", but '" + entry.module +
                     "' has no precompiled specialization of it");
  if (archsRequired && report.modules.empty() && report.problems.empty())
    errors.push_back("no Kiln modules in '" + report.path +
                     "' (--require-arch needs at least one)");
  return errors;
}

} // namespace kiln::driver::audit
