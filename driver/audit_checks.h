//===- driver/audit_checks.h - What `kiln audit` checks ---------*- C++ -*-===//
//
// The checks `kiln audit` runs on the modules it found: the architectures
// every specialization must carry, the sources each module was built from,
// and the recorded signatures the package must have precompiled.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/cuda_tools/arch_list.h"
#include "driver/audit_report.h"
#include "pipeline/signature_file.h"

namespace kiln::driver::audit {

/// Lists in `module.missing` each architecture of `required` that some of
/// its specializations lack.
void checkRequired(AuditedModule &module, const cuda_tools::ArchSet &required);

/// Checks each companion's sources against the package's, the source of
/// every other module against the file of its name beside it (when there
/// is one), and each recorded signature of a module the package holds
/// against its precompiled specializations.
void checkCompanions(AuditReport &report, const pipeline::SignatureTable &recorded);

} // namespace kiln::driver::audit
