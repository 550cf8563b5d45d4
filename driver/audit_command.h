//===- driver/audit_command.h - `kiln audit` --------------------*- C++ -*-===//
#pragma once

#include <optional>
#include <string>

namespace CLI {
class App;
} // namespace CLI

namespace kiln::driver {

struct AuditOptions {
  /// A wheel, a conda package (.conda or .tar.bz2), another archive
  /// libarchive reads, a folder, or a built module.
  std::string path;
  /// --require-arch: architectures every specialization must carry, in
  /// --arch's grammar.
  std::optional<std::string> requireArch;
  /// --signatures FILE: the recorded signatures every companion must hold
  /// (default: kiln-signatures.toml in the current folder or the nearest
  /// above it; --signatures '' for none).
  std::string signatures;
  bool signaturesGiven = false;
  bool json = false;
};

/// Finds every module built by `kiln build --module` in `path` (looking
/// into archives inside archives, as the .tar.zst members of a .conda),
/// checks each one as `kiln inspect` does, and lists its kernels,
/// specializations and architectures. The companion of a module that stays
/// Python is checked against the sources in the package, and every
/// signature the signatures file records for a module the package holds
/// must have a precompiled specialization. Returns the exit status: 0; 1
/// when an archive or a module is damaged, a module was built by an
/// incompatible Kiln, a required architecture is missing, a companion does
/// not match its source or a recorded signature is not precompiled (each
/// named); 2 when the --require-arch list is invalid.
int runAudit(const AuditOptions &options);

/// Declares `kiln audit` and its options on `app`; parsing fills `audit`.
CLI::App *addAuditCommand(CLI::App &app, AuditOptions &audit);

} // namespace kiln::driver
