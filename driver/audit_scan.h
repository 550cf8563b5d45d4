//===- driver/audit_scan.h - Finding the modules of a package ---*- C++ -*-===//
//
// How `kiln audit` finds the Kiln modules of a wheel, a conda package, a
// folder or a file, and reads each one as the runtime would before it
// imports it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "driver/audit_report.h"

#include <string>

namespace kiln::driver::audit {

/// Fills `report` with what `path` holds (a folder, a module or an
/// archive): its kind, every Kiln module in it, every Python source file,
/// and what could not be read.
void auditPath(const std::string &path, AuditReport &report);

} // namespace kiln::driver::audit
