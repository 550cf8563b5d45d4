//===- driver/check_command.cpp - `kiln check` ----------------------------===//
//
//   $ kiln check examples/mandelbrot.py -v
//   examples/mandelbrot.py
//     device function mandelbrot
//       (float64, float64, int64) -> int64
//         c: complex128
//         ...
//
//===----------------------------------------------------------------------===//

#include "driver/check_command.h"

#include "frontend/frontend.h"
#include "pipeline/python_host_values.h"

#include <CLI/CLI.hpp>
#include <llvm/Support/JSON.h>
#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

#include <map>
#include <set>

namespace kiln::driver {

namespace {

/// Each source variable with the distinct types of all its definitions, as
/// Numba's typemap shows x, x.1, x.2 (literal types shown as their type).
std::map<std::string, std::vector<std::string>> localTypes(CheckedModule &checked,
                                                           const Specialization &spec) {
  std::map<std::string, std::set<std::string>> sets;
  if (spec.ssa)
    for (const ssa::VariableDef &variable : spec.ssa->variables)
      if (const Type *type = spec.typeOf(variable.value))
        sets[variable.name].insert(checked.types.unliteral(type)->str());
  std::map<std::string, std::vector<std::string>> result;
  for (auto &[name, typeSet] : sets)
    result[name] = std::vector<std::string>(typeSet.begin(), typeSet.end());
  return result;
}

void printText(CheckedModule &checked, llvm::StringRef path, bool verbose, llvm::raw_ostream &os) {
  os << path << '\n';
  for (const CheckedModule::Function &function : checked.functions) {
    os << "  " << function.decl->kindName() << ' ' << function.decl->name << '\n';
    if (function.specializations.empty() && function.decl->kind == FunctionDecl::Kind::Device)
      os << "    (not called by any kernel)\n";
    for (const Specialization *spec : function.specializations) {
      os << "    " << spec->argumentList() << " -> "
         << (spec->returnType ? spec->returnType->str() : "?") << '\n';
      if (!verbose)
        continue;
      os << "      semantic hash " << toHex(checked.hashOf(*spec)) << '\n';
      for (const auto &[name, typeList] : localTypes(checked, *spec)) {
        os << "      " << name << ": ";
        for (size_t i = 0; i < typeList.size(); ++i)
          os << (i ? ", " : "") << typeList[i];
        os << '\n';
      }
    }
  }
}

void printJson(CheckedModule &checked, llvm::StringRef path, bool verbose,
               llvm::json::OStream &json) {
  json.object([&] {
    json.attribute("file", path);
    json.attribute("ok", !checked.hasErrors());
    json.attributeArray("functions", [&] {
      if (checked.hasErrors())
        return;
      for (const CheckedModule::Function &function : checked.functions) {
        json.object([&] {
          json.attribute("name", function.decl->name);
          json.attribute("kind", function.decl->kindName());
          json.attributeArray("specializations", [&] {
            for (const Specialization *spec : function.specializations) {
              json.object([&] {
                json.attributeArray("args", [&] {
                  for (const Type *arg : spec->argTypes)
                    json.value(arg->str());
                });
                json.attribute("return", spec->returnType ? spec->returnType->str() : "");
                json.attribute("semantic_hash", toHex(checked.hashOf(*spec)));
                if (!verbose)
                  return;
                json.attributeObject("locals", [&] {
                  for (const auto &[name, typeList] : localTypes(checked, *spec))
                    json.attributeArray(name, [&] {
                      for (const std::string &type : typeList)
                        json.value(type);
                    });
                });
              });
            }
          });
        });
      }
    });
    json.attributeBegin("diagnostics");
    checked.diags.renderJson(json);
    json.attributeEnd();
  });
}

} // namespace

int runCheck(const CheckOptions &options) {
  bool failed = false;
  llvm::json::OStream json(llvm::outs(), 2);
  if (options.json)
    json.arrayBegin();
  for (const std::string &path : options.files) {
    FrontendOptions frontendOptions;
    frontendOptions.moduleName = options.moduleName;
    frontendOptions.signatureFlags = options.signatures;
    frontendOptions.suggestKilnImport = true;
    llvm::Expected<ModuleOutline> outline = outlineModule(path);
    frontendOptions.moduleStaysPython = outline && outline->importsKiln;
    llvm::consumeError(outline.takeError()); // checkModule reports an unreadable file
    pipeline::PythonHostValues hostValues(options.python);
    frontendOptions.hostValues = &hostValues;
    llvm::Expected<std::unique_ptr<CheckedModule>> checked = checkModule(path, frontendOptions);
    for (const std::string &problem : hostValues.problems())
      llvm::WithColor::warning(llvm::errs(), "kiln") << problem << '\n';
    if (!checked) {
      failed = true;
      std::string message = llvm::toString(checked.takeError());
      if (options.json) {
        json.object([&] {
          json.attribute("file", path);
          json.attribute("ok", false);
          json.attributeArray("functions", [] {});
          json.attributeArray("diagnostics", [&] {
            json.object([&] {
              json.attribute("severity", "error");
              json.attribute("message", message);
            });
          });
        });
      } else {
        llvm::WithColor::error(llvm::errs(), "kiln") << message << '\n';
      }
      continue;
    }
    CheckedModule &module = **checked;
    failed |= module.hasErrors();
    if (options.json) {
      printJson(module, path, options.verbose, json);
      continue;
    }
    module.diags.renderText(llvm::errs(), options.color);
    if (!module.hasErrors())
      printText(module, path, options.verbose, llvm::outs());
  }
  if (options.json) {
    json.arrayEnd();
    llvm::outs() << '\n';
  }
  return failed ? 1 : 0;
}

CLI::App *addCheckCommand(CLI::App &app, CheckOptions &check) {
  CLI::App *checkCommand =
      app.add_subcommand("check", "Parse and type-check kernel modules, listing what they define");
  checkCommand->add_option("files", check.files, "Kernel modules (.py) to check")->required();
  checkCommand->add_option("--module", check.moduleName,
                           "Dotted module name, for [tool.kiln.signatures] keys such as "
                           "'pkg.kernels.add'");
  checkCommand->add_option("--signature", check.signatures,
                           "Signature for a kernel without one, as NAME=SIGNATURE "
                           "(e.g. 'add=void(float32[:], float32[:])'); repeatable");
  checkCommand->add_option("--python", check.python,
                           "The Python that imports a module to read the globals its host code "
                           "computes, where kernels read them (default: python3 on $PATH)");
  checkCommand->add_flag("--json", check.json, "Print the result as JSON");
  checkCommand->add_flag("-v,--verbose", check.verbose,
                         "Also print each local variable's types and each semantic hash");
  return checkCommand;
}

} // namespace kiln::driver
