//===- driver/signatures_command.cpp - `kiln signatures` ------------------===//
//
//   $ kiln signatures list
//   kiln-signatures.toml
//     pkg.kernels.scale
//       void(float32[::1], float32[::1])
//   pyproject.toml [tool.kiln.signatures]
//     pkg.kernels.fill
//       void(int32[::1])
//
//   $ kiln signatures add pkg.kernels.scale 'void(float64[::1], float64[::1])'
//   $ kiln signatures prune
//   removed pkg.kernels.old: pkg/kernels.py defines no decorated function 'old'
//
//===----------------------------------------------------------------------===//

#include "driver/signatures_command.h"

#include "frontend/frontend.h"
#include "frontend/resolve/build_config.h"
#include "pipeline/signature_file.h"
#include "support/nearest_file.h"

#include <CLI/CLI.hpp>
#include <llvm/ADT/STLExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

namespace kiln::driver {

namespace {

constexpr llvm::StringLiteral SignatureFileName = "kiln-signatures.toml";

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "kiln") << message << '\n';
  return 1;
}

/// The signatures file `options.path` names: the file itself, else the
/// nearest one from that folder upwards, else (to create) one beside the
/// nearest pyproject.toml, else in the folder.
std::string signatureFile(const SignaturesOptions &options) {
  if (!llvm::sys::fs::is_directory(options.path))
    return options.path;
  if (std::string found = support::findNearestFile(options.path, SignatureFileName); !found.empty())
    return found;
  llvm::SmallString<256> file(options.path);
  if (std::string pyproject = support::findNearestFile(options.path, "pyproject.toml");
      !pyproject.empty())
    file = llvm::sys::path::parent_path(pyproject);
  llvm::sys::path::append(file, SignatureFileName);
  return file.str().str();
}

struct NamedTable {
  std::string origin; // "kiln-signatures.toml", "pyproject.toml [tool.kiln.signatures]"
  std::string path;
  pipeline::SignatureTable table;
};

int list(const SignaturesOptions &options) {
  std::vector<NamedTable> tables;
  std::string recorded = signatureFile(options);
  llvm::Expected<pipeline::SignatureTable> table =
      pipeline::readSignatureTable(recorded, {"signatures"});
  if (!table)
    return fail(llvm::toString(table.takeError()));
  tables.push_back({llvm::sys::path::filename(recorded).str(), recorded, std::move(*table)});
  llvm::StringRef folder = llvm::sys::fs::is_directory(options.path)
                               ? llvm::StringRef(options.path)
                               : llvm::sys::path::parent_path(options.path);
  if (std::string pyproject = support::findNearestFile(folder, "pyproject.toml");
      !pyproject.empty()) {
    table = pipeline::readSignatureTable(pyproject, {"tool", "kiln", "signatures"});
    if (!table)
      return fail(llvm::toString(table.takeError()));
    tables.push_back({"pyproject.toml [tool.kiln.signatures]", pyproject, std::move(*table)});
  }

  if (options.json) {
    llvm::json::OStream json(llvm::outs(), 2);
    json.array([&] {
      for (const NamedTable &named : tables)
        for (const auto &[kernel, signatures] : named.table)
          json.object([&] {
            json.attribute("kernel", kernel);
            json.attribute("file", named.path);
            json.attributeArray("signatures", [&] {
              for (const std::string &signature : signatures)
                json.value(signature);
            });
          });
    });
    llvm::outs() << '\n';
    return 0;
  }
  for (const NamedTable &named : tables) {
    if (named.table.empty())
      continue;
    llvm::outs() << named.origin << '\n';
    for (const auto &[kernel, signatures] : named.table) {
      llvm::outs() << "  " << kernel << '\n';
      for (const std::string &signature : signatures)
        llvm::outs() << "    " << signature << '\n';
    }
  }
  return 0;
}

int add(const SignaturesOptions &options) {
  if (!llvm::StringRef(options.kernel).contains('.'))
    return fail("'" + options.kernel +
                "' is not a module-qualified kernel name, such as pkg.kernels.scale");
  for (const std::string &signature : options.signatures)
    if (llvm::StringRef(signature).trim().empty())
      return fail("an empty signature for '" + options.kernel + "'");
  std::string file = signatureFile(options);
  if (llvm::Error error = pipeline::updateSignatureFile(file, [&](pipeline::SignatureTable &table) {
        table[options.kernel].insert(options.signatures.begin(), options.signatures.end());
      }))
    return fail(llvm::toString(std::move(error)));
  if (options.json) {
    llvm::json::OStream json(llvm::outs(), 2);
    json.object([&] {
      json.attribute("file", file);
      json.attribute("kernel", options.kernel);
      json.attributeArray("signatures", [&] {
        for (const std::string &signature : options.signatures)
          json.value(signature);
      });
    });
    llvm::outs() << '\n';
  }
  return 0;
}

/// The source of module `dotted` in the project at `root`: `a/b.py` or
/// `a/b/__init__.py`, also under `src/`; empty if there is none.
std::string findModule(llvm::StringRef root, llvm::StringRef dotted) {
  llvm::SmallVector<llvm::StringRef, 4> parts;
  dotted.split(parts, '.');
  for (llvm::StringRef prefix : {"", "src"}) {
    llvm::SmallString<256> base(root);
    llvm::sys::path::append(base, prefix);
    for (llvm::StringRef part : parts)
      llvm::sys::path::append(base, part);
    for (llvm::StringRef tail : {".py", "/__init__.py"})
      if (llvm::sys::fs::is_regular_file(base + tail))
        return (base + tail).str();
  }
  return "";
}

int prune(const SignaturesOptions &options) {
  std::string file = signatureFile(options);
  if (!llvm::sys::fs::exists(file))
    return fail("there is no signatures file at '" + file + "'");
  llvm::SmallString<256> root(llvm::sys::path::parent_path(file));
  if (root.empty())
    root = ".";
  llvm::Expected<pipeline::SignatureTable> current =
      pipeline::readSignatureTable(file, {"signatures"});
  if (!current)
    return fail(llvm::toString(current.takeError()));

  std::vector<std::string> gone;
  for (const auto &[kernel, signatures] : *current) {
    auto [module, function] = llvm::StringRef(kernel).rsplit('.');
    if (function.empty())
      continue; // a plain name applies to any module
    std::string source = findModule(root, module);
    if (source.empty()) {
      llvm::WithColor::warning(llvm::errs(), "kiln")
          << "kept " << kernel << ": cannot find the module " << module << " under " << root
          << '\n';
      continue;
    }
    llvm::Expected<ModuleOutline> outline = outlineModule(source);
    if (!outline)
      return fail(llvm::toString(outline.takeError()));
    if (llvm::is_contained(outline->decoratedFunctions, function))
      continue;
    if (!options.json)
      llvm::outs() << (options.dryRun ? "would remove " : "removed ") << kernel << ": " << source
                   << " defines no decorated function '" << function << "'\n";
    gone.push_back(kernel);
  }
  if (options.json) {
    llvm::json::OStream json(llvm::outs(), 2);
    json.object([&] {
      json.attribute("file", file);
      json.attribute("dry_run", options.dryRun);
      json.attributeArray(options.dryRun ? "would_remove" : "removed", [&] {
        for (const std::string &kernel : gone)
          json.value(kernel);
      });
    });
    llvm::outs() << '\n';
  }
  if (options.dryRun || gone.empty())
    return 0;
  if (llvm::Error error = pipeline::updateSignatureFile(file, [&](pipeline::SignatureTable &table) {
        for (const std::string &kernel : gone)
          table.erase(kernel);
      }))
    return fail(llvm::toString(std::move(error)));
  return 0;
}

} // namespace

int runSignatures(const SignaturesOptions &options) {
  switch (options.action) {
  case SignaturesOptions::Action::List:
    return list(options);
  case SignaturesOptions::Action::Add:
    return add(options);
  case SignaturesOptions::Action::Prune:
    return prune(options);
  }
  return 1;
}

CLI::App *addSignaturesCommand(CLI::App &app, SignaturesOptions &signatures) {
  using SignaturesAction = SignaturesOptions::Action;
  CLI::App *signaturesCommand = app.add_subcommand(
      "signatures", "Show, add to and clean the signatures a project's build compiles "
                    "(kiln-signatures.toml, [tool.kiln.signatures])");
  signaturesCommand->require_subcommand(1);
  CLI::App *signaturesList = signaturesCommand->add_subcommand(
      "list", "Every kernel's signatures, from kiln-signatures.toml and pyproject.toml");
  signaturesList->callback([&] { signatures.action = SignaturesAction::List; });
  signaturesList->add_option("path", signatures.path,
                             "The signatures file, or a folder to look upwards from (default: .)");
  signaturesList->add_flag("--json", signatures.json, "Print the result as JSON");
  CLI::App *signaturesAdd = signaturesCommand->add_subcommand(
      "add", "Add signatures of a kernel to kiln-signatures.toml (created beside the nearest "
             "pyproject.toml if there is none)");
  signaturesAdd->callback([&] { signatures.action = SignaturesAction::Add; });
  signaturesAdd
      ->add_option("kernel", signatures.kernel, "Module-qualified kernel: pkg.kernels.scale")
      ->required();
  signaturesAdd
      ->add_option("signatures", signatures.signatures,
                   "Numba signatures: 'void(float32[::1], float32)'")
      ->required();
  signaturesAdd->add_option("--file", signatures.path,
                            "The signatures file, or a folder to look upwards from (default: .)");
  CLI::App *signaturesPrune = signaturesCommand->add_subcommand(
      "prune", "Remove the entries of kiln-signatures.toml whose kernel no longer exists");
  signaturesPrune->callback([&] { signatures.action = SignaturesAction::Prune; });
  signaturesPrune->add_option("path", signatures.path,
                              "The signatures file, or a folder to look upwards from (default: .)");
  signaturesPrune->add_flag("--dry-run", signatures.dryRun, "Show what would go; change nothing");
  signaturesPrune->add_flag("--json", signatures.json, "Print the result as JSON");
  signaturesAdd->add_flag("--json", signatures.json, "Print the result as JSON");
  return signaturesCommand;
}

} // namespace kiln::driver
