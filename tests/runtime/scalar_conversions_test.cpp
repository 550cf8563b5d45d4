//===- tests/runtime/scalar_conversions_test.cpp --------------------------===//
//
// The runtime picks specializations by Numba's scalar conversion rules, and
// closes Numba's casting graph (module/numba_scalars.def) itself, since it
// cannot link the compiler. The compiler's closure is checked against
// Numba's typing tables; this proves the runtime's agrees with it for every
// pair of scalar types.
//
//===----------------------------------------------------------------------===//

#include "ir/types.h"
#include "runtime/extension/argument_types.h"

#include <gtest/gtest.h>

namespace {

using kiln::extension::ScalarKind;

std::string runtimeConversion(ScalarKind from, ScalarKind to) {
  switch (kiln::extension::scalarConversion(from, to)) {
  case kiln::extension::Conversion::Exact:
    return "exact";
  case kiln::extension::Conversion::Promote:
    return "promote";
  case kiln::extension::Conversion::Safe:
    return "safe";
  case kiln::extension::Conversion::Unsafe:
    return "unsafe";
  case kiln::extension::Conversion::None:
    return "none";
  }
  return "?";
}

std::string frontendConversion(kiln::TypeContext &types, const kiln::Type *from,
                               const kiln::Type *to) {
  std::optional<kiln::Conversion> conversion = types.canConvert(from, to);
  return conversion ? kiln::conversionName(*conversion).lower() : "none";
}

/// The front end's type for a runtime scalar ("bool" is spelled "boolean"
/// in Numba's type names).
const kiln::Type *frontendType(kiln::TypeContext &types, ScalarKind kind) {
  std::string name = kiln::extension::scalarName(kind);
  return types.scalarByName(name == "bool" ? "boolean" : name);
}

TEST(ScalarConversions, TheRuntimeConvertsAsTheFrontEndTypes) {
  kiln::TypeContext types;
  for (unsigned i = 0; i < kiln::extension::scalarKindCount; ++i)
    for (unsigned j = 0; j < kiln::extension::scalarKindCount; ++j) {
      auto from = static_cast<ScalarKind>(i), to = static_cast<ScalarKind>(j);
      const kiln::Type *fromType = frontendType(types, from);
      const kiln::Type *toType = frontendType(types, to);
      ASSERT_TRUE(fromType && toType) << scalarName(from) << " or " << scalarName(to);
      EXPECT_EQ(runtimeConversion(from, to), frontendConversion(types, fromType, toType))
          << "converting " << scalarName(from) << " to " << scalarName(to);
    }
}

} // namespace
