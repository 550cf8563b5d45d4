//===- driver/audit_command.cpp - `kiln audit` ----------------------------===//
//
//   $ kiln audit dist/demo-0.1.0-cp311-cp311-linux_x86_64.whl --require-arch "75;80"
//   wheel dist/demo-0.1.0-cp311-cp311-linux_x86_64.whl: 1 Kiln module
//   demo/kernels.cpython-311-x86_64-linux-gnu.so
//     module   demo.kernels, built by Kiln 0.1.0 (bundle format 2, manifest format 2)
//     archs    cubins sm_75 sm_80; PTX compute_80
//     kernel saxpy
//       (float32, array(float32, 1d, C), array(float32, 1d, C))
//         cubins sm_75 sm_80; PTX compute_80
//   every specialization has the required architectures: sm_75 sm_80 cubins, compute_80 PTX
//
// The command's options and its run: it finds the modules (audit_scan.h),
// checks them (audit_checks.h) and shows the report (audit_report.h).
//
//===----------------------------------------------------------------------===//

#include "driver/audit_command.h"

#include "backend/cuda_tools/arch_list.h"
#include "driver/audit_checks.h"
#include "driver/audit_report.h"
#include "driver/audit_scan.h"
#include "pipeline/signature_file.h"
#include "support/nearest_file.h"

#include <CLI/CLI.hpp>
#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

namespace kiln::driver {

int runAudit(const AuditOptions &options) {
  std::optional<cuda_tools::ArchSet> required;
  if (options.requireArch) {
    llvm::Expected<cuda_tools::ArchSet> parsed = cuda_tools::parseArchList(*options.requireArch);
    if (!parsed) {
      llvm::WithColor::error(llvm::errs(), "kiln")
          << "--require-arch: " << llvm::toString(parsed.takeError()) << '\n';
      return 2;
    }
    required = std::move(*parsed);
  }
  audit::AuditReport report;
  report.path = options.path;
  audit::auditPath(options.path, report);
  if (required)
    for (audit::AuditedModule &module : report.modules)
      audit::checkRequired(module, *required);
  report.signatureFile = options.signatures;
  if (report.signatureFile.empty() && !options.signaturesGiven)
    report.signatureFile = support::findNearestFile("", "kiln-signatures.toml");
  pipeline::SignatureTable recorded;
  if (!report.signatureFile.empty()) {
    llvm::Expected<pipeline::SignatureTable> table =
        pipeline::readSignatureTable(report.signatureFile, {"signatures"});
    if (!table) {
      llvm::WithColor::error(llvm::errs(), "kiln") << llvm::toString(table.takeError()) << '\n';
      return 1;
    }
    recorded = std::move(*table);
  }
  audit::checkCompanions(report, recorded);

  // Everything wrong, on stderr, after the listing.
  std::vector<std::string> errors = audit::errorsOf(report, required.has_value());

  if (options.json)
    audit::printJson(report, required, errors.empty(), llvm::outs());
  else
    audit::printText(report, required, llvm::outs());
  llvm::outs().flush();
  for (const std::string &error : errors)
    llvm::WithColor::error(llvm::errs(), "kiln") << error << '\n';
  return errors.empty() ? 0 : 1;
}

CLI::App *addAuditCommand(CLI::App &app, AuditOptions &audit) {
  CLI::App *auditCommand = app.add_subcommand(
      "audit", "List the Kiln modules in a wheel, conda package or folder, and check their "
               "architectures");
  auditCommand
      ->add_option("path", audit.path,
                   "A wheel, a .conda or .tar.bz2 package, a folder, or a built module")
      ->required();
  auditCommand->add_option_function<std::string>(
      "--require-arch", [&](const std::string &list) { audit.requireArch = list; },
      "Architectures every specialization must have, as for --arch (e.g. '7.5 8.0 9.0+PTX' "
      "requires those cubins and compute_90 PTX); fail naming what is missing");
  auditCommand->add_option_function<std::string>(
      "--signatures",
      [&](const std::string &file) {
        audit.signatures = file;
        audit.signaturesGiven = true;
      },
      "The recorded signatures every companion must hold (default: the nearest "
      "kiln-signatures.toml; '' for none)");
  auditCommand->add_flag("--json", audit.json, "Print the result as JSON");
  return auditCommand;
}

} // namespace kiln::driver
