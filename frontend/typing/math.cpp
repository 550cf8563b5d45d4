//===- frontend/typing/math.cpp - Typing of math and cmath ----------------===//
//
// The math functions Numba-CUDA supports, with the case lists of
// numba/cuda/cudamath.py (which take precedence over the CPU ones in
// typing/mathdecl.py) and of typing/cmathdecl.py. float16 and bfloat16 keep
// their types for the functions CUDA implements in their precision.
//
//===----------------------------------------------------------------------===//

#include "frontend/typing/overloads.h"
#include "frontend/typing/typing_rules.h"

#include <llvm/ADT/StringSwitch.h>

namespace kiln::typing {

namespace {

enum class MathGroup {
  Unsupported,
  Unary,       // float64(int64), float64(uint64), float32(float32), float64(float64)
  UnaryHalf,   // Unary plus float16(float16)
  Binary2Ints, // atan2, hypot: Unary's pattern with two arguments
  BinaryReal,  // copysign, fmod, nextafter, remainder
  Pow,
  Frexp,
  Ldexp,
  Predicate, // isinf, isnan, isfinite
  Modf,
  ComplexUnary, // cmath functions of cmathdecl: complex(complex)
  ComplexWiden, // cmath.acosh, log10, tanh: complex128(complex)
  ComplexSame,  // cmath.cosh, sinh: same complex type
  ComplexPredicate,
  ComplexLog,
  Phase,
  Polar,
  Rect,
};

MathGroup groupOf(llvm::StringRef name) {
  return llvm::StringSwitch<MathGroup>(name)
      .Cases("math.acos", "math.acosh", "math.asin", "math.asinh", "math.atan", "math.atanh",
             MathGroup::Unary)
      .Cases("math.cosh", "math.degrees", "math.erf", "math.erfc", "math.expm1", "math.gamma",
             MathGroup::Unary)
      .Cases("math.lgamma", "math.log1p", "math.radians", "math.sinh", "math.tan", MathGroup::Unary)
      .Cases("math.sin", "math.cos", "math.ceil", "math.floor", "math.sqrt", "math.log",
             MathGroup::UnaryHalf)
      .Cases("math.log2", "math.log10", "math.exp", "math.fabs", "math.trunc", "math.exp2",
             MathGroup::UnaryHalf)
      .Case("math.tanh", MathGroup::UnaryHalf)
      .Cases("math.atan2", "math.hypot", MathGroup::Binary2Ints)
      .Cases("math.copysign", "math.fmod", "math.nextafter", "math.remainder",
             MathGroup::BinaryReal)
      .Case("math.pow", MathGroup::Pow)
      .Case("math.frexp", MathGroup::Frexp)
      .Case("math.ldexp", MathGroup::Ldexp)
      .Cases("math.isinf", "math.isnan", "math.isfinite", MathGroup::Predicate)
      .Case("math.modf", MathGroup::Modf)
      .Cases("cmath.acos", "cmath.asin", "cmath.asinh", "cmath.atan", "cmath.atanh",
             MathGroup::ComplexUnary)
      .Cases("cmath.cos", "cmath.exp", "cmath.sin", "cmath.sqrt", "cmath.tan",
             MathGroup::ComplexUnary)
      .Cases("cmath.acosh", "cmath.log10", "cmath.tanh", MathGroup::ComplexWiden)
      .Cases("cmath.cosh", "cmath.sinh", MathGroup::ComplexSame)
      .Cases("cmath.isinf", "cmath.isnan", "cmath.isfinite", MathGroup::ComplexPredicate)
      .Case("cmath.log", MathGroup::ComplexLog)
      .Case("cmath.phase", MathGroup::Phase)
      .Case("cmath.polar", MathGroup::Polar)
      .Case("cmath.rect", MathGroup::Rect)
      .Default(MathGroup::Unsupported);
}

} // namespace

Typing callMath(TypeContext &types, const Symbol &function, llvm::ArrayRef<const Type *> args) {
  CaseList cases(types);
  const Type *f16 = types.floating(16);
  const Type *f32 = types.float32();
  const Type *f64 = types.float64();
  const Type *i32 = types.int32();
  const Type *i64 = types.int64();
  const Type *u64 = types.uint64();
  const Type *c64 = types.complex(64);
  const Type *c128 = types.complex(128);
  const Type *boolean = types.boolean();
  bool complexOnly = false;
  switch (groupOf(function.qualifiedName)) {
  case MathGroup::Unsupported:
    return Typing::error(DiagID::err_unsupported_builtin, {function.displayName()});
  case MathGroup::UnaryHalf:
    // CUDA's half-precision versions apply to float16 arguments only; they
    // are a separate template, not a case that other types convert to.
    if (args.size() == 1 && args[0] == f16)
      cases.add(f16, {f16});
    // numba.cuda.bf16 overloads these for bfloat16 with its bindings.
    if (args.size() == 1 && args[0] == types.bfloat16() &&
        llvm::is_contained({"math.trunc", "math.ceil", "math.floor", "math.sqrt", "math.log",
                            "math.log10", "math.cos", "math.sin", "math.tanh", "math.exp",
                            "math.exp2"},
                           function.qualifiedName))
      cases.add(args[0], {args[0]});
    [[fallthrough]];
  case MathGroup::Unary:
    cases.add(f64, {i64}).add(f64, {u64}).add(f32, {f32}).add(f64, {f64});
    break;
  case MathGroup::Binary2Ints:
    cases.add(f64, {i64, i64}).add(f64, {u64, u64}).add(f32, {f32, f32}).add(f64, {f64, f64});
    break;
  case MathGroup::BinaryReal:
    cases.add(f32, {f32, f32}).add(f64, {f64, f64});
    break;
  case MathGroup::Pow:
    cases.add(f32, {f32, f32}).add(f64, {f64, f64}).add(f32, {f32, i32}).add(f64, {f64, i32});
    break;
  case MathGroup::Frexp:
    cases.add(types.tuple({f32, i32}), {f32}).add(types.tuple({f64, i32}), {f64});
    break;
  case MathGroup::Ldexp:
    cases.add(f32, {f32, i32}).add(f64, {f64, i32});
    break;
  case MathGroup::Predicate:
    cases.add(boolean, {i64}).add(boolean, {u64}).add(boolean, {f32}).add(boolean, {f64});
    break;
  case MathGroup::Modf:
    cases.add(types.tuple({f64, f64}), {f64}).add(types.tuple({f32, f32}), {f32});
    break;
  case MathGroup::ComplexUnary:
    cases.add(c64, {c64}).add(c128, {c128});
    break;
  case MathGroup::ComplexPredicate:
    cases.add(boolean, {c64}).add(boolean, {c128});
    break;
  case MathGroup::ComplexLog:
    cases.add(c64, {c64}).add(c128, {c128}).add(c64, {c64, c64}).add(c128, {c128, c128});
    break;
  case MathGroup::ComplexWiden:
    complexOnly = true;
    cases.add(c128, {c64}).add(c128, {c128});
    break;
  case MathGroup::ComplexSame:
    complexOnly = true;
    cases.add(c64, {c64}).add(c128, {c128});
    break;
  case MathGroup::Phase:
    complexOnly = true;
    cases.add(f32, {c64}).add(f64, {c128});
    break;
  case MathGroup::Polar:
    complexOnly = true;
    cases.add(types.tuple({f32, f32}), {c64}).add(types.tuple({f64, f64}), {c128});
    break;
  case MathGroup::Rect:
    if (args.size() != 2 ||
        !llvm::all_of(args, [&](const Type *t) { return t == f32 || t == f64; }))
      return Typing::error(
          DiagID::err_no_call_overload,
          {function.displayName(),
           args.empty() ? "" : args[0]->str() + (args.size() > 1 ? ", " + args[1]->str() : "")});
    cases.add(c64, {f32, f32}).add(c128, {f64, f64});
    break;
  }
  // These cmath functions are written for complex arguments only.
  if (complexOnly && !llvm::all_of(args, [](const Type *t) { return llvm::isa<ComplexType>(t); }))
    return noOverload(function, args);
  return fromCases(types, function, cases, args);
}

} // namespace kiln::typing
