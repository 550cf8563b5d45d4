//===- tests/module/module_check_test.cpp ---------------------------------===//

#include "module/manifest_json.h"
#include "tests/module/bundle_maker.h"

#include <gtest/gtest.h>

#include <cstring>
#include <tuple>

namespace kiln::module {
namespace {

using testing::factsOf;
using testing::makeBundle;
using testing::manifestWithFatbin;

const std::string Fatbin = "0123456789abcdef0123456789abcdef01234567";

std::string soundBundle() {
  return makeBundle(manifestWithFatbin(Fatbin), Fatbin);
}

TEST(ModuleCheck, AWholeBundleIsSound) {
  std::string bundle = soundBundle();
  ModuleCheck check = checkModule(factsOf(bundle), bundle);
  EXPECT_TRUE(check.sound()) << check.problem;
  EXPECT_EQ(check.moduleName, "demo");
  EXPECT_EQ(check.kilnVersion, "0.1.0");
}

TEST(ModuleCheck, EveryCutIsRefusedWithoutACrash) {
  std::string bundle = soundBundle();
  ImageFacts facts = factsOf(bundle);
  for (size_t size = 0; size < bundle.size(); ++size) {
    std::string cut = bundle.substr(0, size);
    facts.bundleSize = size;
    EXPECT_FALSE(checkModule(facts, cut).sound()) << "a bundle cut to " << size << " bytes passed";
  }
}

TEST(ModuleCheck, FlippedBytesNeverCrashAndDamageToChecksummedBytesIsFound) {
  std::string bundle = soundBundle();
  KilnBundleHeader header;
  std::memcpy(&header, bundle.data(), sizeof header);
  for (size_t at = 0; at < bundle.size(); ++at) {
    std::string flipped = bundle;
    flipped[at] = char(flipped[at] ^ 0x20);
    ModuleCheck check = checkModule(factsOf(bundle), flipped);
    bool inManifest =
        at >= header.manifestOffset && at < header.manifestOffset + header.manifestSize;
    bool inPayload = at >= header.payloadOffset;
    if (inManifest || inPayload) {
      EXPECT_FALSE(check.sound()) << "a flipped byte at " << at << " passed";
    }
  }
}

TEST(ModuleCheck, VersionsOfAnotherKilnAreIncompatible) {
  std::string bundle = soundBundle();
  ImageFacts facts = factsOf(bundle);
  facts.cpuAbiVersion = 99;
  ModuleCheck check = checkModule(facts, bundle);
  EXPECT_EQ(check.verdict, ModuleVerdict::Incompatible);
  EXPECT_NE(check.problem.find("CPU ABI version 99"), std::string::npos) << check.problem;
  facts = factsOf(bundle);
  facts.formatVersion = 3;
  EXPECT_EQ(checkModule(facts, bundle).verdict, ModuleVerdict::Incompatible);
}

TEST(ModuleCheck, AParameterLayoutThatIsNotTheArgumentsIsDamage) {
  std::string manifest = manifestWithFatbin(Fatbin);
  std::string changed = manifest;
  changed.replace(changed.find(R"("type": "f64")"), 13, R"("type": "f32")");
  std::string bundle = makeBundle(changed, Fatbin);
  ModuleCheck check = checkModule(factsOf(bundle), bundle);
  EXPECT_EQ(check.verdict, ModuleVerdict::Damaged);
  EXPECT_NE(check.problem.find("parameter layout"), std::string::npos) << check.problem;
}

TEST(ModuleCheck, IndexChecksNamingNoCopiesAreDamage) {
  std::string manifest = manifestWithFatbin(Fatbin);
  for (const char *copies : {R"("sometimes")", "true"}) {
    std::string changed = manifest;
    changed.replace(changed.find(R"("checked")"), std::strlen(R"("checked")"), copies);
    std::string bundle = makeBundle(changed, Fatbin);
    ModuleCheck check = checkModule(factsOf(bundle), bundle);
    EXPECT_EQ(check.verdict, ModuleVerdict::Damaged) << copies;
    EXPECT_EQ(check.problem,
              "the manifest entry of 'scale' (specialization 0) has a malformed 'index_checks'");
  }
}

TEST(ModuleCheck, ASpecializationCountOtherThanTheCodesIsDamage) {
  std::string bundle = soundBundle();
  ModuleCheck check = checkModule(factsOf(bundle, 2), bundle);
  EXPECT_EQ(check.problem, "its manifest lists 1 specializations but its code has 2");
}

TEST(ModuleCheck, DeferredPerKernelTheImportReadsNoEntryAndNoFatBinary) {
  // A damaged fat binary and a forged parameter layout pass the import's
  // check, which indexes the entries; the per-kernel checks find them.
  std::string manifest = manifestWithFatbin(Fatbin);
  std::string changed = manifest;
  changed.replace(changed.find(R"("type": "f64")"), 13, R"("type": "f32")");
  std::string damagedFatbin = Fatbin;
  damagedFatbin[3] ^= 0x20;
  std::string bundle = makeBundle(changed, damagedFatbin);
  ManifestIndex index;
  ModuleCheck check = checkModule(factsOf(bundle), bundle, CheckScope::DeferPerKernel, &index);
  ASSERT_TRUE(check.sound()) << check.problem;
  ASSERT_EQ(index.specializations.size(), 1u);
  const ManifestIndex::Entry &entry = index.specializations[0];
  EXPECT_EQ(entry.name, "scale");
  EXPECT_EQ(entry.kind, "kernel");
  std::string_view entryText =
      std::string_view(changed).substr(entry.begin, entry.end - entry.begin);
  EXPECT_EQ(entryText.front(), '{');
  EXPECT_EQ(entryText.back(), '}');
  EXPECT_EQ(std::string_view(changed).substr(index.constantsBegin,
                                             index.constantsEnd - index.constantsBegin),
            R"([{"name": "N", "type": "int64", "value": 3}])");

  std::optional<std::string> entryProblem = checkSpecialization(entryText, 0, damagedFatbin);
  ASSERT_TRUE(entryProblem);
  EXPECT_NE(entryProblem->find("'scale' (specialization 0) has a parameter layout"),
            std::string::npos)
      << *entryProblem;
  EXPECT_EQ(checkFatBinary(damagedFatbin, kilnChecksum(Fatbin.data(), Fatbin.size()), "scale", 0),
            "the fat binary of 'scale' (specialization 0) fails its checksum: it is " +
                checksumText(kilnChecksum(damagedFatbin.data(), damagedFatbin.size())) +
                ", the manifest says " + checksumText(kilnChecksum(Fatbin.data(), Fatbin.size())));
  EXPECT_FALSE(checkFatBinary(Fatbin, kilnChecksum(Fatbin.data(), Fatbin.size()), "scale", 0));

  // The whole check, as kiln audit runs it, finds the forged layout first.
  check = checkModule(factsOf(bundle), bundle);
  EXPECT_EQ(check.problem, *entryProblem);
}

TEST(ModuleCheck, DeferredPerKernelTheOutlineIsStillChecked) {
  std::string manifest = manifestWithFatbin(Fatbin);
  for (auto [from, to, problem] :
       {std::tuple<const char *, const char *, const char *>{
            R"("name": "scale")", R"("name": 7)",
            "the manifest entry of specialization 0 has no name"},
        {R"("kind": "kernel")", R"("kind": [])",
         "the manifest entry of 'scale' (specialization 0) has a malformed 'kind'"},
        {R"("value": 3)", R"("valu": 3)", "its manifest has a malformed constant"},
        {R"("args": [)", R"("args": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[)",
         "it nests deeper than 32"}}) {
    std::string changed = manifest;
    changed.replace(changed.find(from), std::strlen(from), to);
    std::string bundle = makeBundle(changed, Fatbin);
    ModuleCheck check = checkModule(factsOf(bundle), bundle, CheckScope::DeferPerKernel);
    EXPECT_NE(check.problem.find(problem), std::string::npos)
        << "after " << to << ": '" << check.problem << "'";
  }
}

TEST(ManifestJson, AnOutlineChecksEverythingAndBuildsOnlyWhatItNames) {
  std::string text = R"({"a": [{"keep": 1, "drop": [1, 2], "nested": {"x": 1}}], "b": {"c": [3]}})";
  JsonOutline outline{3, {"keep"}};
  std::string problem;
  std::optional<JsonValue> value = parseOutline(text, 8, outline, problem);
  ASSERT_TRUE(value) << problem;
  const JsonValue &element = (*value->member("a")->array())[0];
  EXPECT_EQ(element.member("keep")->integer(), 1);
  EXPECT_FALSE(element.member("drop"));
  EXPECT_EQ(text.substr(element.sourceBegin(), element.sourceEnd() - element.sourceBegin()),
            R"({"keep": 1, "drop": [1, 2], "nested": {"x": 1}})");
  EXPECT_EQ(value->member("b")->member("c")->array()->size(), 0u);
  for (const char *bad : {R"({"a": [{"keep": 1, "drop": [1,]}]})", R"({"a": [{"drop": "\q"}]})"}) {
    EXPECT_FALSE(parseOutline(bad, 8, outline, problem)) << bad << " was read";
    EXPECT_EQ(problem.rfind("it is not JSON: ", 0), 0u) << problem;
  }
}

TEST(ManifestJson, NestingBeyondTheLimitIsAnErrorNotAStackOverflow) {
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  std::string problem;
  EXPECT_FALSE(parseJson(deep, ManifestNestingLimit, problem));
  EXPECT_EQ(problem, "it nests deeper than 32 levels at byte 32");
  std::string allowed = std::string(32, '[') + std::string(32, ']');
  EXPECT_TRUE(parseJson(allowed, ManifestNestingLimit, problem)) << problem;
}

TEST(ManifestJson, ReadsStringsNumbersAndLiterals) {
  std::string problem;
  std::optional<JsonValue> value = parseJson(
      R"({"s": "a\"\u00e9\ud83d\ude00", "i": -42, "big": 18446744073709551616, "f": 1.5e3, "t": true, "n": null})",
      8, problem);
  ASSERT_TRUE(value) << problem;
  EXPECT_EQ(*value->member("s")->string(), "a\"\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(value->member("i")->integer(), -42);
  EXPECT_FALSE(value->member("big")->integer());
  EXPECT_DOUBLE_EQ(*value->member("big")->number(), 18446744073709551616.0);
  EXPECT_DOUBLE_EQ(*value->member("f")->number(), 1500.0);
  EXPECT_EQ(value->member("t")->boolean(), true);
  EXPECT_EQ(value->member("n")->kind(), JsonValue::Kind::Null);
}

TEST(ManifestJson, RefusesWhatIsNotJson) {
  for (const char *text : {"", "{", "[1,]", "{\"a\" 1}", "\"open", "01x", "tru", "[1] 2",
                           "\"\\ud800\"", "\"\\q\"", "-", "1.", "1e"}) {
    std::string problem;
    EXPECT_FALSE(parseJson(text, 8, problem)) << "'" << text << "' was read";
    EXPECT_EQ(problem.rfind("it is not JSON: ", 0), 0u) << problem;
  }
}

} // namespace
} // namespace kiln::module
