//===- tests/frontend/typing_tables_test.cpp - Typing matches Numba's -----===//
//
// tests/frontend/numba_reference/*.json record how Numba-CUDA types ~19,000
// small expressions (every operator, builtin, math function and NumPy scalar
// type on every scalar type, with and without literals), its casting graph
// and its unification. These tests replay every record through Kiln:
//
//   def probe(x, y):
//       r = <expression>      # with x, y of the recorded types
//       return r
//
// and require the same type for `r`, or an error where Numba's typing
// fails. Where typing succeeded but Numba-CUDA could not compile the code
// ("stage": "lowering"), Kiln may either type it the same way or reject it.
//
//===----------------------------------------------------------------------===//

#include "frontend/frontend.h"

#include <gtest/gtest.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <string>
#include <vector>

namespace kiln {
namespace {

llvm::json::Value readTable(llvm::StringRef name) {
  std::string path = std::string(KILN_SOURCE_DIR) + "/tests/frontend/numba_reference/" + name.str();
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    ADD_FAILURE() << "cannot read " << path;
    return nullptr;
  }
  llvm::Expected<llvm::json::Value> value = llvm::json::parse((*buffer)->getBuffer());
  if (!value) {
    ADD_FAILURE() << path << ": " << llvm::toString(value.takeError());
    return nullptr;
  }
  return std::move(*value);
}

/// A scalar type by the name Numba prints for it.
const Type *typeNamed(TypeContext &types, llvm::StringRef name) {
  if (name == "bool")
    return types.boolean();
  if (name.starts_with("Literal[int](")) {
    int64_t value = 0;
    name.drop_front(13).drop_back(1).getAsInteger(10, value);
    return types.integerLiteral(value);
  }
  if (name == "Literal[bool](True)" || name == "Literal[bool](False)")
    return types.booleanLiteral(name.contains("True"));
  return types.scalarByName(name);
}

struct Probe {
  std::string expr;
  std::string stmts;
  std::vector<std::string> args;
  const llvm::json::Value *result;
  bool keepLiteral;
};

/// Types every probe of a table section, returning a description of each
/// disagreement with Numba.
std::vector<std::string> replay(const std::vector<Probe> &probes) {
  std::string source = "import cmath\nimport math\nimport numpy as np\nfrom numba import cuda\n";
  for (size_t i = 0; i < probes.size(); ++i) {
    std::string params;
    for (size_t a = 0; a < probes[i].args.size(); ++a)
      params += std::string(a ? ", " : "") + "xyz"[a];
    source += "\n@cuda.jit(device=True)\ndef probe_" + std::to_string(i) + "(" + params + "):\n";
    if (!probes[i].stmts.empty())
      source += "    " + probes[i].stmts + "\n";
    source += "    r = " + probes[i].expr + "\n    return r\n";
  }
  FrontendOptions options;
  options.readPyproject = false;
  std::unique_ptr<CheckedModule> checked = checkSource("probes.py", source, options);
  std::vector<std::string> problems;
  if (checked->hasErrors()) {
    std::string rendered;
    llvm::raw_string_ostream os(rendered);
    checked->diags.renderText(os, false);
    problems.push_back("the probe module does not compile:\n" + rendered.substr(0, 4000));
    return problems;
  }
  TypeContext &types = checked->types;
  for (size_t i = 0; i < probes.size(); ++i) {
    const Probe &probe = probes[i];
    std::vector<const Type *> argTypes;
    for (const std::string &name : probe.args)
      argTypes.push_back(typeNamed(types, name));
    const FunctionDecl *decl = checked->scope->function("probe_" + std::to_string(i));
    Specialization *spec = checked->inference->specialize(*decl, argTypes);
    std::string ours = "error";
    if (!spec->failed)
      for (const ssa::VariableDef &variable : spec->ssa->variables)
        if (variable.name == "r")
          if (const Type *type = spec->typeOf(variable.value))
            ours = (probe.keepLiteral ? type : types.unliteral(type))->str();
    std::string oursMessage =
        spec->diagnostics.empty() ? std::string() : " (" + spec->diagnostics.front().message + ")";

    std::string expected;
    bool mayFail = false;
    if (std::optional<llvm::StringRef> text = probe.result->getAsString()) {
      expected = text->str();
    } else if (const llvm::json::Object *error = probe.result->getAsObject()) {
      bool lowering = error->getString("stage") == std::optional<llvm::StringRef>("lowering");
      expected = lowering ? error->getString("typed_as").value_or("error").str() : "error";
      mayFail = lowering;
    }
    if (ours == expected || (mayFail && ours == "error"))
      continue;
    std::string call = probe.expr + " with (";
    for (size_t a = 0; a < probe.args.size(); ++a)
      call += (a ? ", " : "") + probe.args[a];
    problems.push_back(call + "): Kiln " + ours + oursMessage + ", Numba " + expected);
  }
  return problems;
}

std::vector<Probe> probesOf(const llvm::json::Value &table, llvm::StringRef section,
                            bool keepLiteral) {
  std::vector<Probe> probes;
  const llvm::json::Array *rows = table.getAsObject()->getArray(section);
  if (!rows) {
    ADD_FAILURE() << "no section " << section.str();
    return probes;
  }
  for (const llvm::json::Value &row : *rows) {
    const llvm::json::Object &object = *row.getAsObject();
    Probe probe;
    probe.expr = object.getString("expr").value_or("").str();
    probe.stmts = object.getString("stmts").value_or("").str();
    if (const llvm::json::Array *args = object.getArray("args"))
      for (const llvm::json::Value &arg : *args)
        probe.args.push_back(arg.getAsString().value_or("").str());
    probe.result = object.get("result");
    probe.keepLiteral = keepLiteral;
    probes.push_back(std::move(probe));
  }
  return probes;
}

void expectAgreement(llvm::StringRef file, llvm::StringRef section, bool keepLiteral = false) {
  llvm::json::Value table = readTable(file);
  if (!table.getAsObject())
    return;
  std::vector<Probe> probes = probesOf(table, section, keepLiteral);
  ASSERT_FALSE(probes.empty());
  std::vector<std::string> problems = replay(probes);
  std::string report;
  for (size_t i = 0; i < problems.size() && i < 60; ++i)
    report += "  " + problems[i] + "\n";
  EXPECT_TRUE(problems.empty()) << problems.size() << " of " << probes.size() << " probes of "
                                << file.str() << "/" << section.str() << " disagree with Numba:\n"
                                << report;
}

TEST(NumbaTypingTables, BinaryOperators) {
  expectAgreement("binary_ops.json", "binary");
}
TEST(NumbaTypingTables, BinaryOperatorsOnLiterals) {
  expectAgreement("binary_ops.json", "binary_literal_only", /*keepLiteral=*/true);
}
TEST(NumbaTypingTables, UnaryOperators) {
  expectAgreement("unary_ops.json", "unary");
}
TEST(NumbaTypingTables, UnaryOperatorsOnLiterals) {
  expectAgreement("unary_ops.json", "unary_literal_only", /*keepLiteral=*/true);
}
TEST(NumbaTypingTables, Builtins) {
  expectAgreement("builtins.json", "builtins");
}
TEST(NumbaTypingTables, MathAndCmathFunctions) {
  expectAgreement("math.json", "functions");
}
TEST(NumbaTypingTables, MathConstants) {
  expectAgreement("math.json", "constants");
}
TEST(NumbaTypingTables, NumpyScalarTypes) {
  expectAgreement("numpy.json", "scalar_constructors");
}
TEST(NumbaTypingTables, NumpyConstants) {
  expectAgreement("numpy.json", "constants");
}

TEST(NumbaTypingTables, ConversionsFollowNumbasCastingGraph) {
  llvm::json::Value table = readTable("conversions.json");
  ASSERT_TRUE(table.getAsArray());
  TypeContext types;
  std::vector<std::string> problems;
  for (const llvm::json::Value &row : *table.getAsArray()) {
    const llvm::json::Object &object = *row.getAsObject();
    llvm::StringRef from = object.getString("from").value_or("");
    llvm::StringRef to = object.getString("to").value_or("");
    std::optional<llvm::StringRef> kind = object.getString("kind");
    std::optional<Conversion> ours = types.canConvert(typeNamed(types, from), typeNamed(types, to));
    std::string oursText = ours ? conversionName(*ours).str() : "none";
    std::string expected = kind ? kind->str() : "none";
    if (oursText != expected)
      problems.push_back(from.str() + " -> " + to.str() + ": Kiln " + oursText + ", Numba " +
                         expected);
  }
  std::string report;
  for (const std::string &problem : problems)
    report += "  " + problem + "\n";
  EXPECT_TRUE(problems.empty()) << report;
}

TEST(NumbaTypingTables, UnificationFollowsNumba) {
  llvm::json::Value table = readTable("unify.json");
  ASSERT_TRUE(table.getAsArray());
  TypeContext types;
  std::vector<std::string> problems;
  for (const llvm::json::Value &row : *table.getAsArray()) {
    const llvm::json::Object &object = *row.getAsObject();
    llvm::StringRef a = object.getString("a").value_or("");
    llvm::StringRef b = object.getString("b").value_or("");
    std::optional<llvm::StringRef> result = object.getString("result");
    const Type *ours = types.unify(typeNamed(types, a), typeNamed(types, b));
    std::string oursText = ours ? ours->str() : "none";
    std::string expected = result ? result->str() : "none";
    if (oursText != expected)
      problems.push_back(a.str() + " | " + b.str() + ": Kiln " + oursText + ", Numba " + expected);
  }
  std::string report;
  for (const std::string &problem : problems)
    report += "  " + problem + "\n";
  EXPECT_TRUE(problems.empty()) << report;
}

TEST(NumbaTypeNames, EveryNameNumbaAcceptsInSignatureStrings) {
  llvm::json::Value table = readTable("type_names.json");
  ASSERT_TRUE(table.getAsObject());
  const llvm::json::Object *names = table.getAsObject()->getObject("names");
  ASSERT_TRUE(names);
  std::vector<std::string> problems;
  for (const auto &[name, result] : *names) {
    if (name == "bfloat16")
      continue; // Kiln has no bfloat16 type yet
    std::string expected = result.getAsString() ? result.getAsString()->str() : "error";
    FrontendOptions options;
    options.readPyproject = false;
    std::string source =
        "from numba import cuda\n\n@cuda.jit(\"void(" + name.str() + ")\")\ndef k(x):\n    pass\n";
    std::unique_ptr<CheckedModule> checked = checkSource("names.py", source, options);
    std::string ours = "error";
    const FunctionDecl *decl = checked->scope->function("k");
    if (decl && decl->signatures.size() == 1 && decl->signatures[0].args.size() == 1)
      ours = decl->signatures[0].args[0]->str();
    if (ours != expected)
      problems.push_back(name.str() + ": Kiln " + ours + ", Numba " + expected);
  }
  std::string report;
  for (const std::string &problem : problems)
    report += "  " + problem + "\n";
  EXPECT_TRUE(problems.empty()) << report;
}

TEST(NumbaTypeNames, ArrayAnnotationsAndSignatures) {
  llvm::json::Value table = readTable("type_names.json");
  ASSERT_TRUE(table.getAsObject());
  std::vector<std::string> problems;
  const llvm::json::Object *annotations = table.getAsObject()->getObject("array_annotations");
  ASSERT_TRUE(annotations);
  for (const auto &[annotation, result] : *annotations) {
    std::string expected = result.getAsString() ? result.getAsString()->str() : "error";
    FrontendOptions options;
    options.readPyproject = false;
    std::string source = "from numba import cuda\n\n@cuda.jit(\"void(" + annotation.str() +
                         ")\")\ndef k(x):\n    pass\n";
    std::unique_ptr<CheckedModule> checked = checkSource("annotations.py", source, options);
    std::string ours = "error";
    const FunctionDecl *decl = checked->scope->function("k");
    if (decl && decl->signatures.size() == 1 && decl->signatures[0].args.size() == 1)
      ours = decl->signatures[0].args[0]->str();
    if (ours != expected)
      problems.push_back(annotation.str() + ": Kiln " + ours + ", Numba " + expected);
  }
  const llvm::json::Object *signatures = table.getAsObject()->getObject("signatures");
  ASSERT_TRUE(signatures);
  for (const auto &[text, result] : *signatures) {
    const llvm::json::Object *expected = result.getAsObject();
    ASSERT_TRUE(expected);
    FrontendOptions options;
    options.readPyproject = false;
    std::string params;
    const llvm::json::Array *args = expected->getArray("args");
    for (size_t i = 0; i < args->size(); ++i)
      params += std::string(i ? ", " : "") + "a" + std::to_string(i);
    std::string source = "from numba import cuda\n\n@cuda.jit(\"" + text.str() +
                         "\", device=True)\ndef k(" + params + "):\n    pass\n";
    std::unique_ptr<CheckedModule> checked = checkSource("signatures.py", source, options);
    const FunctionDecl *decl = checked->scope->function("k");
    if (!decl || decl->signatures.size() != 1) {
      problems.push_back(text.str() + ": Kiln rejects it");
      continue;
    }
    const Signature &ours = decl->signatures[0];
    std::string oursText = ours.returnType ? ours.returnType->str() : "null";
    std::optional<llvm::StringRef> expectedReturn = expected->getString("return_type");
    if (oursText != (expectedReturn ? expectedReturn->str() : "null"))
      problems.push_back(text.str() + ": return Kiln " + oursText);
    for (size_t i = 0; i < args->size() && i < ours.args.size(); ++i)
      if (ours.args[i]->str() != (*args)[i].getAsString()->str())
        problems.push_back(text.str() + ": argument " + std::to_string(i) + " Kiln " +
                           ours.args[i]->str());
  }
  std::string report;
  for (const std::string &problem : problems)
    report += "  " + problem + "\n";
  EXPECT_TRUE(problems.empty()) << report;
}

} // namespace
} // namespace kiln
