//===- frontend/typing/bfloat16.cpp - Typing of the bfloat16 bindings ------===//
//
// numba-cuda binds cuda_bf16.h's functions with their C signatures: the
// arithmetic and comparisons take bfloat16s, the conversions name their
// source and destination types in their names (`__int2bfloat16_rn` takes an
// int, `__bfloat162ull_rz` returns an unsigned long long), and arguments
// convert to those types as to any other overload. Symbols carry the
// binding's name without its leading underscores.
//
//===----------------------------------------------------------------------===//

#include "frontend/typing/overloads.h"
#include "frontend/typing/typing_rules.h"

#include <llvm/ADT/StringSwitch.h>

namespace kiln::typing {

namespace {

/// The integer type of a cuda_bf16.h conversion's C type name.
const Type *integerOfCName(TypeContext &types, llvm::StringRef name) {
  return llvm::StringSwitch<const Type *>(name)
      .Case("char", types.integer(8, true))
      .Case("uchar", types.integer(8, false))
      .Case("short", types.integer(16, true))
      .Case("ushort", types.integer(16, false))
      .Case("int", types.int32())
      .Case("uint", types.integer(32, false))
      .Case("ll", types.int64())
      .Case("ull", types.uint64())
      .Default(nullptr);
}

/// The signature of the binding `name`, or nothing for a name Kiln does not
/// implement.
std::optional<OverloadCase> bindingSignature(TypeContext &types, llvm::StringRef name) {
  const Type *bf16 = types.bfloat16();
  const Type *boolean = types.boolean();
  if (llvm::is_contained({"hadd", "hsub", "hmul", "hdiv", "hadd_rn", "hsub_rn", "hmul_rn",
                          "hadd_sat", "hsub_sat", "hmul_sat", "hmax", "hmin", "hmax_nan",
                          "hmin_nan"},
                         name))
    return OverloadCase{bf16, {bf16, bf16}};
  if (llvm::is_contained({"hfma", "hfma_sat", "hfma_relu"}, name))
    return OverloadCase{bf16, {bf16, bf16, bf16}};
  if (llvm::is_contained({"heq", "hne", "hge", "hgt", "hle", "hlt", "hequ", "hneu", "hgeu", "hgtu",
                          "hleu", "hltu"},
                         name))
    return OverloadCase{boolean, {bf16, bf16}};
  if (name == "hisnan")
    return OverloadCase{boolean, {bf16}};
  if (name == "hisinf") // -1, 0 or 1, as C's __hisinf
    return OverloadCase{types.int32(), {bf16}};
  if (llvm::is_contained({"habs", "hneg", "htrunc", "hceil", "hfloor", "hrint", "hsqrt", "hrsqrt",
                          "hrcp", "hlog", "hlog2", "hlog10", "hcos", "hsin", "hexp", "hexp2",
                          "hexp10", "htanh", "htanh_approx"},
                         name))
    return OverloadCase{bf16, {bf16}};
  if (name == "bfloat162float")
    return OverloadCase{types.float32(), {bf16}};
  if (name.consume_front("float2bfloat16"))
    return llvm::is_contained({"", "_rn", "_rz", "_rd", "_ru"}, name)
               ? std::optional(OverloadCase{bf16, {types.float32()}})
               : std::nullopt;
  if (name == "bfloat16_as_short" || name == "bfloat16_as_ushort")
    return OverloadCase{integerOfCName(types, name.drop_front(12)), {bf16}};
  if (name == "short_as_bfloat16" || name == "ushort_as_bfloat16")
    return OverloadCase{bf16, {integerOfCName(types, name.drop_back(12))}};
  if (name == "double2bfloat16")
    return OverloadCase{bf16, {types.float64()}};
  // <int>2bfloat16_<rounding> and bfloat162<int>_<rounding>.
  auto [conversion, rounding] = name.rsplit('_');
  if (!llvm::is_contained({"rn", "rz", "rd", "ru"}, rounding))
    return std::nullopt;
  if (conversion.consume_back("2bfloat16"))
    if (const Type *integer = integerOfCName(types, conversion))
      return OverloadCase{bf16, {integer}};
  if (conversion.consume_front("bfloat162"))
    if (const Type *integer = integerOfCName(types, conversion))
      return OverloadCase{integer, {bf16}};
  return std::nullopt;
}

} // namespace

bool isBFloat16Binding(const Symbol &function) {
  return function.kind == Symbol::Kind::Function &&
         (function.qualifiedName.starts_with("numba.cuda.bf16.") ||
          function.qualifiedName.starts_with("numba.cuda._internal.cuda_bf16."));
}

Typing callBFloat16(TypeContext &types, const Symbol &function, llvm::ArrayRef<const Type *> args) {
  std::optional<OverloadCase> signature = bindingSignature(types, function.detail);
  if (!signature)
    return Typing::error(DiagID::err_unsupported_builtin, {function.displayName()});
  return fromCases(types, function, *signature, args);
}

} // namespace kiln::typing
