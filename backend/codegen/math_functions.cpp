//===- backend/codegen/math_functions.cpp - Names of math library functions -------===//

#include "backend/codegen/math_functions.h"

namespace kiln::backend {

using I = ir::Intrinsic;

llvm::StringRef mathBaseName(I which) {
  switch (which) {
  case I::Sin:
    return "sin";
  case I::Cos:
    return "cos";
  case I::Tan:
    return "tan";
  case I::Asin:
    return "asin";
  case I::Acos:
    return "acos";
  case I::Atan:
    return "atan";
  case I::Atan2:
    return "atan2";
  case I::Sinh:
    return "sinh";
  case I::Cosh:
    return "cosh";
  case I::Tanh:
    return "tanh";
  case I::Asinh:
    return "asinh";
  case I::Acosh:
    return "acosh";
  case I::Atanh:
    return "atanh";
  case I::Exp:
    return "exp";
  case I::Exp2:
    return "exp2";
  case I::Exp10:
    return "exp10";
  case I::Expm1:
    return "expm1";
  case I::Log:
    return "log";
  case I::Log2:
    return "log2";
  case I::Log10:
    return "log10";
  case I::Log1p:
    return "log1p";
  case I::Sqrt:
    return "sqrt";
  case I::Rsqrt:
    return "rsqrt";
  case I::Cbrt:
    return "cbrt";
  case I::Fabs:
    return "fabs";
  case I::Floor:
    return "floor";
  case I::Ceil:
    return "ceil";
  case I::Trunc:
    return "trunc";
  case I::Rint:
    return "rint";
  case I::Erf:
    return "erf";
  case I::Erfc:
    return "erfc";
  case I::Tgamma:
    return "tgamma";
  case I::Lgamma:
    return "lgamma";
  case I::Hypot:
    return "hypot";
  case I::Copysign:
    return "copysign";
  case I::Fmod:
    return "fmod";
  case I::Remainder:
    return "remainder";
  case I::Nextafter:
    return "nextafter";
  case I::Fmax:
    return "fmax";
  case I::Fmin:
    return "fmin";
  case I::PowF:
    return "pow";
  case I::Fma:
    return "fma";
  case I::Ldexp:
    return "ldexp";
  case I::Frexp:
    return "frexp";
  case I::Modf:
    return "modf";
  default:
    return "";
  }
}

} // namespace kiln::backend
