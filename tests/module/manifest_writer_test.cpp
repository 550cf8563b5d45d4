//===- tests/module/manifest_writer_test.cpp ------------------------------===//
//
// The manifest writer against the one schema (module/manifest_keys.def):
// every key it writes is the schema's, of the schema's kind, in the
// schema's order, and every key the schema requires is there; and what it
// writes passes the runtime's own check of a manifest entry.
//
//===----------------------------------------------------------------------===//

#include "module/manifest_writer.h"
#include "module/module_check.h"
#include "tests/module/sample_manifests.h"

#include <gtest/gtest.h>
#include <llvm/ADT/StringExtras.h>

#include <map>
#include <string>
#include <vector>

namespace kiln::module {
namespace {

using testing::companionModule;
using testing::manifestText;
using testing::plainReduction;
using testing::scaleKernel;

struct SchemaKey {
  std::string object;
  std::string spelling;
  std::string kind;
};

const std::vector<SchemaKey> &schema() {
  static const std::vector<SchemaKey> keys = {
#define MANIFEST_KEY(Object, Name, Spelling, Kind) {#Object, Spelling, #Kind},
#include "module/manifest_keys.def"
  };
  return keys;
}

/// The schema's object that a key's value (or, for arrays, its items; for
/// "resources", its values) is.
std::string childObject(llvm::StringRef object, llvm::StringRef key) {
  static const std::map<std::pair<std::string, std::string>, std::string> children = {
      {{"Manifest", "source"}, "Source"},
      {{"Manifest", "sources"}, "CompanionSource"},
      {{"Manifest", "options"}, "Options"},
      {{"Manifest", "archs"}, "Archs"},
      {{"Manifest", "constants"}, "Constant"},
      {{"Manifest", "specializations"}, "Specialization"},
      {{"Specialization", "params"}, "Parameter"},
      {{"Specialization", "resources"}, "Resources"},
      {{"Specialization", "fatbin"}, "Fatbin"},
  };
  auto found = children.find({object.str(), key.str()});
  return found == children.end() ? "" : found->second;
}

bool hasKind(const llvm::json::Value &value, llvm::StringRef kind) {
  bool optional = kind.consume_back("Optional");
  if (optional && value.kind() == llvm::json::Value::Null)
    return true;
  if (kind == "Integer")
    return value.getAsInteger() || value.getAsUINT64();
  if (kind == "Boolean")
    return value.getAsBoolean().has_value();
  if (kind == "String")
    return value.getAsString().has_value();
  if (kind == "Array")
    return value.getAsArray() != nullptr;
  if (kind == "Object")
    return value.getAsObject() != nullptr;
  return kind == "Any";
}

/// What is wrong with `object`, written as the schema's `name`, or "".
std::string schemaProblems(const llvm::json::Object &object, llvm::StringRef name,
                           llvm::StringRef text) {
  std::string problems;
  std::vector<const SchemaKey *> keys;
  for (const SchemaKey &key : schema())
    if (key.object == name)
      keys.push_back(&key);
  for (const auto &[key, value] : object) {
    auto known = llvm::find_if(keys, [&](const SchemaKey *k) { return k->spelling == key; });
    if (known == keys.end()) {
      problems += name.str() + " has key '" + key.str() + "', which the schema lacks\n";
      continue;
    }
    if (!hasKind(value, (*known)->kind))
      problems += name.str() + "." + key.str() + " is not " + (*known)->kind + "\n";
    std::string child = childObject(name, key);
    if (child.empty())
      continue;
    auto check = [&](const llvm::json::Value &item) {
      if (const llvm::json::Object *inner = item.getAsObject())
        problems += schemaProblems(*inner, child, text);
    };
    if (const llvm::json::Array *items = value.getAsArray())
      llvm::for_each(*items, check);
    else if (child == "Resources")
      for (const auto &perArch : *value.getAsObject())
        check(perArch.second);
    else
      check(value);
  }
  size_t lastPosition = 0;
  for (const SchemaKey *key : keys) {
    if (!object.get(key->spelling)) {
      if (!llvm::StringRef(key->kind).ends_with("Optional"))
        problems += name.str() + " lacks '" + key->spelling + "'\n";
      continue;
    }
    // Keys are written in the schema's order: each after the one before.
    size_t position = text.find("\"" + key->spelling + "\":", lastPosition);
    if (position == llvm::StringRef::npos)
      problems += name.str() + "." + key->spelling + " is out of the schema's order\n";
    else
      lastPosition = position;
  }
  return problems;
}

TEST(ManifestWriter, WritesEveryKeyAsTheSchemaSaysInItsOrder) {
  std::string text = manifestText(companionModule(), {scaleKernel(), plainReduction()});
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_EQ(schemaProblems(*parsed->getAsObject(), "Manifest", text), "") << text;
}

TEST(ManifestWriter, AModuleThatIsNoCompanionLeavesOutItsSources) {
  ManifestModule module = companionModule();
  module.companionOf.clear();
  module.sources.clear();
  std::string text = manifestText(module, {scaleKernel()});
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  const llvm::json::Object &root = *parsed->getAsObject();
  EXPECT_FALSE(root.get("companion_of"));
  EXPECT_FALSE(root.get("sources"));
  EXPECT_EQ(schemaProblems(root, "Manifest", text), "") << text;
}

TEST(ManifestWriter, WhatItWritesPassesTheRuntimesCheck) {
  std::string text = manifestText(companionModule(), {scaleKernel()});
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  const llvm::json::Value &entry = (*parsed->getAsObject()->getArray("specializations"))[0];
  std::string entryText = llvm::formatv("{0}", entry).str();
  // The entry's fat binary must lie inside the payload; the check of its
  // bytes against the checksum is not checkSpecialization()'s.
  const ManifestBlob &fatbin = *scaleKernel().fatbin;
  std::string payload(fatbin.offset + fatbin.size, '\0');
  EXPECT_EQ(checkSpecialization(entryText, 0, payload), std::nullopt);
}

TEST(ManifestWriter, TheSameRecordsGiveTheSameBytes) {
  EXPECT_EQ(manifestText(companionModule(), {scaleKernel()}),
            manifestText(companionModule(), {scaleKernel()}));
}

} // namespace
} // namespace kiln::module
