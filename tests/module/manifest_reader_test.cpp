//===- tests/module/manifest_reader_test.cpp ------------------------------===//
//
// The driver's reader of manifests (module/module_reader.h) against the
// writer (module/manifest_writer.h): records written and read back are the
// same, field by field, for a companion module with sources and constants
// and for specializations with and without resources, a fat binary and
// launch bounds; absent keys, and keys of the wrong kind (which the
// runtime's check leaves to the reader), read as the writer's defaults.
//
//===----------------------------------------------------------------------===//

#include "module/module_reader.h"
#include "tests/module/sample_manifests.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace kiln::module {
namespace {

using testing::companionModule;
using testing::manifestText;
using testing::plainReduction;
using testing::scaleKernel;

llvm::Expected<ManifestRecords> readBack(const std::string &text) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  if (!parsed)
    return parsed.takeError();
  return readManifestRecords(*parsed);
}

llvm::Expected<ManifestRecords> writeAndRead(const ManifestModule &module,
                                             llvm::ArrayRef<ManifestSpecialization> entries) {
  return readBack(manifestText(module, entries));
}

void expectSameModule(const ManifestModule &read, const ManifestModule &written) {
  EXPECT_EQ(read.name, written.name);
  EXPECT_EQ(read.kilnVersion, written.kilnVersion);
  EXPECT_EQ(read.sourceFile, written.sourceFile);
  EXPECT_EQ(read.sourceChecksum, written.sourceChecksum);
  EXPECT_EQ(read.options.fastmath, written.options.fastmath);
  EXPECT_EQ(read.options.debug, written.options.debug);
  EXPECT_EQ(read.options.lineinfo, written.options.lineinfo);
  EXPECT_EQ(read.options.opt, written.options.opt);
  EXPECT_EQ(read.options.maxRegisters, written.options.maxRegisters);
  EXPECT_EQ(read.options.ptxasFlags, written.options.ptxasFlags);
  EXPECT_EQ(read.cubinArchs, written.cubinArchs);
  EXPECT_EQ(read.ptxArchs, written.ptxArchs);
  ASSERT_EQ(read.constants.size(), written.constants.size());
  for (size_t i = 0; i < read.constants.size(); ++i) {
    EXPECT_EQ(read.constants[i].name, written.constants[i].name);
    EXPECT_EQ(read.constants[i].type, written.constants[i].type);
    EXPECT_EQ(read.constants[i].value, written.constants[i].value) << read.constants[i].name;
  }
  EXPECT_EQ(read.companionOf, written.companionOf);
  ASSERT_EQ(read.sources.size(), written.sources.size());
  for (size_t i = 0; i < read.sources.size(); ++i) {
    EXPECT_EQ(read.sources[i].file, written.sources[i].file);
    EXPECT_EQ(read.sources[i].sha256, written.sources[i].sha256);
  }
}

void expectSameParameter(const ManifestParameter &read, const ManifestParameter &written) {
  EXPECT_EQ(read.argument, written.argument);
  EXPECT_EQ(read.role, written.role);
  EXPECT_EQ(read.dimension, written.dimension);
  EXPECT_EQ(read.path, written.path);
  EXPECT_EQ(read.type, written.type);
  EXPECT_EQ(read.size, written.size);
}

void expectSameResources(const ManifestResources &read, const ManifestResources &written) {
  EXPECT_EQ(read.registers, written.registers);
  EXPECT_EQ(read.stackBytes, written.stackBytes);
  EXPECT_EQ(read.spillStoreBytes, written.spillStoreBytes);
  EXPECT_EQ(read.spillLoadBytes, written.spillLoadBytes);
  EXPECT_EQ(read.sharedBytes, written.sharedBytes);
  EXPECT_EQ(read.localBytes, written.localBytes);
}

void expectSameSpecialization(const ManifestSpecialization &read,
                              const ManifestSpecialization &written) {
  SCOPED_TRACE(written.name);
  EXPECT_EQ(read.name, written.name);
  EXPECT_EQ(read.kind, written.kind);
  EXPECT_EQ(read.symbol, written.symbol);
  EXPECT_EQ(read.entry, written.entry);
  EXPECT_EQ(read.argumentTypes, written.argumentTypes);
  EXPECT_EQ(read.argumentNames, written.argumentNames);
  ASSERT_EQ(read.parameters.size(), written.parameters.size());
  for (size_t i = 0; i < read.parameters.size(); ++i)
    expectSameParameter(read.parameters[i], written.parameters[i]);
  EXPECT_EQ(read.staticSharedBytes, written.staticSharedBytes);
  EXPECT_EQ(read.localBytes, written.localBytes);
  EXPECT_EQ(read.synchronizes, written.synchronizes);
  EXPECT_EQ(read.raises, written.raises);
  EXPECT_EQ(read.cooperative, written.cooperative);
  EXPECT_EQ(read.maxThreadsPerBlock, written.maxThreadsPerBlock);
  EXPECT_EQ(read.blockEntry, written.blockEntry);
  EXPECT_EQ(read.indexChecks, written.indexChecks);
  EXPECT_EQ(read.cubinArchs, written.cubinArchs);
  EXPECT_EQ(read.ptxArchs, written.ptxArchs);
  EXPECT_EQ(read.files, written.files);
  ASSERT_EQ(read.resources.size(), written.resources.size());
  for (size_t i = 0; i < read.resources.size(); ++i) {
    EXPECT_EQ(read.resources[i].first, written.resources[i].first);
    expectSameResources(read.resources[i].second, written.resources[i].second);
  }
  ASSERT_EQ(read.fatbin.has_value(), written.fatbin.has_value());
  if (read.fatbin) {
    EXPECT_EQ(read.fatbin->offset, written.fatbin->offset);
    EXPECT_EQ(read.fatbin->size, written.fatbin->size);
    EXPECT_EQ(read.fatbin->checksum, written.fatbin->checksum);
  }
}

TEST(ManifestReader, ReadsBackWhatTheWriterWroteFieldByField) {
  ManifestModule module = companionModule();
  std::vector<ManifestSpecialization> entries = {scaleKernel(), plainReduction()};
  llvm::Expected<ManifestRecords> read = writeAndRead(module, entries);
  ASSERT_TRUE(static_cast<bool>(read)) << llvm::toString(read.takeError());
  expectSameModule(read->module, module);
  ASSERT_EQ(read->specializations.size(), entries.size());
  for (size_t i = 0; i < entries.size(); ++i)
    expectSameSpecialization(read->specializations[i], entries[i]);
}

TEST(ManifestReader, ReadsBackAModuleThatIsNoCompanion) {
  ManifestModule module = companionModule();
  module.companionOf.clear();
  module.sources.clear();
  module.options = ManifestOptions();
  module.constants.clear();
  llvm::Expected<ManifestRecords> read = writeAndRead(module, {plainReduction()});
  ASSERT_TRUE(static_cast<bool>(read)) << llvm::toString(read.takeError());
  expectSameModule(read->module, module);
  ASSERT_EQ(read->specializations.size(), 1u);
  expectSameSpecialization(read->specializations[0], plainReduction());
}

TEST(ManifestReader, AbsentKeysReadAsTheWritersDefaults) {
  llvm::Expected<ManifestRecords> read = readBack(R"({"format": 2, "module": "m",
      "specializations": [{"name": "f", "entry": "_kiln_f", "args": [], "params": [],
                           "fatbin": null}]})");
  ASSERT_TRUE(static_cast<bool>(read)) << llvm::toString(read.takeError());
  EXPECT_EQ(read->module.name, "m");
  EXPECT_EQ(read->module.kilnVersion, "");
  EXPECT_EQ(read->module.options.opt, std::nullopt);
  EXPECT_TRUE(read->module.constants.empty());
  ASSERT_EQ(read->specializations.size(), 1u);
  ManifestSpecialization expected;
  expected.name = "f";
  expected.entry = "_kiln_f";
  expectSameSpecialization(read->specializations[0], expected);
}

TEST(ManifestReader, AMalformedValueReadsAsAbsentAsTheRuntimeIgnoresIt) {
  // The runtime's check is the one judge of a module; values it does not
  // read may be malformed in a module Python imports, and the reader must
  // not refuse that module for them.
  llvm::Expected<ManifestRecords> read = readBack(R"({"format": 2,
      "options": {"opt": "fast", "fastmath": true},
      "source": {"file": "k.py", "checksum": "ABC"},
      "archs": {"cubins": [-1], "ptx": [90]},
      "specializations": [{"name": "f", "cubins": [-1], "ptx": [90],
                           "resources": {"sm_80": {"registers": true, "stack": 8},
                                         "sm_90": 7}}]})");
  ASSERT_TRUE(static_cast<bool>(read)) << llvm::toString(read.takeError());
  EXPECT_EQ(read->module.options.opt, std::nullopt);
  EXPECT_TRUE(read->module.options.fastmath);
  EXPECT_EQ(read->module.sourceFile, "k.py");
  EXPECT_EQ(read->module.sourceChecksum, 0u);
  EXPECT_TRUE(read->module.cubinArchs.empty());
  EXPECT_EQ(read->module.ptxArchs, std::set<unsigned>{90});
  ASSERT_EQ(read->specializations.size(), 1u);
  const ManifestSpecialization &spec = read->specializations[0];
  EXPECT_TRUE(spec.cubinArchs.empty());
  EXPECT_EQ(spec.ptxArchs, std::set<unsigned>{90});
  ASSERT_EQ(spec.resources.size(), 1u);
  EXPECT_EQ(spec.resources[0].first, "sm_80");
  EXPECT_EQ(spec.resources[0].second.registers, 0u);
  EXPECT_EQ(spec.resources[0].second.stackBytes, 8u);
}

TEST(ManifestReader, WhatIsNoManifestIsAnError) {
  auto problem = [](const std::string &text) {
    llvm::Expected<ManifestRecords> read = readBack(text);
    return read ? std::string("no error") : llvm::toString(read.takeError());
  };
  EXPECT_EQ(problem(R"({"format": 2, "specializations": [7]})"),
            "the manifest entry of specialization 0 is not an object");
  EXPECT_EQ(problem(R"({"format": 3})"), "manifest format 3, this Kiln reads format 2");
  EXPECT_EQ(problem("[]"), "its manifest is not a JSON object");
}

TEST(ManifestReader, DescribesASpecializationByNameAndArguments) {
  EXPECT_EQ(describeSpecialization(scaleKernel()),
            "scale (array(float32, 1d, C), UniTuple(float32 x 2))");
  ManifestSpecialization none;
  none.name = "f";
  EXPECT_EQ(describeSpecialization(none), "f ()");
}

} // namespace
} // namespace kiln::module
