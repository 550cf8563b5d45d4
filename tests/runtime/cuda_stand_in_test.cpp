//===- tests/runtime/cuda_stand_in_test.cpp - The stand-in's PTX reader ---===//
//
// The stand-in CUDA driver checks launches against the .param lists it
// reads from the module's PTX; these tests check that reading.
//
//===----------------------------------------------------------------------===//

#include "tests/runtime/stand_in_driver/ptx_params.h"

#include <gtest/gtest.h>

namespace kiln::stand_in {
namespace {

std::string describe(const PtxParam &param) {
  return param.name + " " + param.type + " size " + std::to_string(param.size) + " align " +
         std::to_string(param.align) + " offset " + std::to_string(param.offset);
}

TEST(StandInPtx, ReadsEveryParameterForm) {
  const char *ptx = R"(.version 8.5
.target sm_90
.address_size 64
// .entry commented_out(.param .u32 x)
.visible .entry first(
	.param .u64 first_param_0,
	.param .u64 .ptr .global .align 4 first_param_1,
	.param .u8 first_param_2, /* a flag */
	.param .align 8 .b8 first_param_3[24],
	.param .f32 first_param_4,
	.param .align 16 .b8 first_param_5[32]
)
.maxntid 256, 1, 1
{
	ret;
}
.entry second()
{
	ret;
}
.entry third
{
	ret;
}
)";
  std::vector<PtxEntry> entries = readPtxEntries(ptx);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].name, "first");
  std::vector<std::string> expected = {
      "first_param_0 u64 size 8 align 8 offset 0",  "first_param_1 u64 size 8 align 8 offset 8",
      "first_param_2 u8 size 1 align 1 offset 16",  "first_param_3 b8 size 24 align 8 offset 24",
      "first_param_4 f32 size 4 align 4 offset 48", "first_param_5 b8 size 32 align 16 offset 64"};
  ASSERT_EQ(entries[0].params.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(describe(entries[0].params[i]), expected[i]);
  EXPECT_EQ(entries[1].name, "second");
  EXPECT_TRUE(entries[1].params.empty());
  EXPECT_EQ(entries[2].name, "third");
  EXPECT_TRUE(entries[2].params.empty());
  EXPECT_EQ(ptxTargetArch(ptx), 90u);
}

} // namespace
} // namespace kiln::stand_in
