//===- backend/host/host_libdevice.cpp - libdevice on the CPU engine -----------===//

#include "backend/host/host_libdevice.h"

#include "backend/nvptx/libdevice.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringSwitch.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Intrinsics.h>

#include <functional>
#include <optional>

namespace kiln::backend {

namespace {

/// The GPU whose answers libdevice gets: sm_80. Its code differs between
/// architectures only in choosing instructions that older GPUs lack.
constexpr int reflectedArch = 800;

/// PTX's rounding modifiers.
enum class Rounding { Nearest, TowardZero, Down, Up };

std::optional<Rounding> roundingOf(llvm::StringRef modifier) {
  return llvm::StringSwitch<std::optional<Rounding>>(modifier)
      .Case("rn", Rounding::Nearest)
      .Case("rz", Rounding::TowardZero)
      .Case("rm", Rounding::Down)
      .Case("rp", Rounding::Up)
      .Default(std::nullopt);
}

/// The argument of llvm.set.rounding for a mode (FLT_ROUNDS' numbering).
int flagOf(Rounding rounding) {
  switch (rounding) {
  case Rounding::TowardZero:
    return 0;
  case Rounding::Nearest:
    return 1;
  case Rounding::Up:
    return 2;
  case Rounding::Down:
    return 3;
  }
  return 1;
}

/// Rounds a float to an integral value in `rounding`.
llvm::Intrinsic::ID integralRounding(Rounding rounding) {
  switch (rounding) {
  case Rounding::Nearest:
    return llvm::Intrinsic::roundeven;
  case Rounding::TowardZero:
    return llvm::Intrinsic::trunc;
  case Rounding::Down:
    return llvm::Intrinsic::floor;
  case Rounding::Up:
    return llvm::Intrinsic::ceil;
  }
  return llvm::Intrinsic::roundeven;
}

/// An NVVM intrinsic's name without "llvm.nvvm.", as dot-separated parts,
/// with the "ftz" modifier dropped (see the file comment).
struct IntrinsicName {
  llvm::SmallVector<llvm::StringRef, 4> parts;

  explicit IntrinsicName(llvm::StringRef name) {
    llvm::SmallVector<llvm::StringRef, 4> all;
    name.split(all, '.');
    for (llvm::StringRef part : all)
      if (part != "ftz")
        parts.push_back(part);
  }
  llvm::StringRef operator[](size_t i) const { return i < parts.size() ? parts[i] : ""; }
  size_t size() const { return parts.size(); }
};

using Emit = std::function<llvm::Value *(llvm::IRBuilder<> &, llvm::ArrayRef<llvm::Value *>)>;

class HostIntrinsics {
public:
  explicit HostIntrinsics(llvm::Module &module) : module(module) {}

  /// The host code for `call` of the NVVM intrinsic `name`, or null.
  llvm::Value *replacement(llvm::CallInst &call, llvm::StringRef name);
  /// The host code for `call` of inline PTX, or null.
  llvm::Value *ptxReplacement(llvm::CallInst &call, const llvm::InlineAsm &ptx);

private:
  llvm::Value *rounded(llvm::CallInst &call, const IntrinsicName &name);
  llvm::Value *conversion(llvm::CallInst &call, const IntrinsicName &name);
  llvm::Value *byteSelect(llvm::IRBuilder<> &builder, llvm::ArrayRef<llvm::Value *> args);
  /// Calls `emit` where the host rounds in `rounding`: inline when that is
  /// to nearest, the host's mode, and otherwise in a strictfp function
  /// `kiln.nvvm.<name>` that sets the mode around the constrained operation
  /// `emit` builds.
  llvm::Value *inMode(llvm::CallInst &call, Rounding rounding, llvm::StringRef name,
                      const Emit &emit);

  llvm::Module &module;
};

llvm::Value *HostIntrinsics::inMode(llvm::CallInst &call, Rounding rounding, llvm::StringRef name,
                                    const Emit &emit) {
  llvm::IRBuilder<> builder(&call);
  llvm::SmallVector<llvm::Value *, 3> args(call.args());
  if (rounding == Rounding::Nearest)
    return emit(builder, args);
  std::string helperName = ("kiln.nvvm." + name).str();
  llvm::Function *helper = module.getFunction(helperName);
  if (!helper) {
    helper = llvm::Function::Create(call.getFunctionType(), llvm::GlobalValue::InternalLinkage,
                                    helperName, module);
    helper->addFnAttr(llvm::Attribute::StrictFP);
    helper->addFnAttr(llvm::Attribute::NoInline);
    helper->addFnAttr(llvm::Attribute::NoUnwind);
    llvm::IRBuilder<> body(llvm::BasicBlock::Create(module.getContext(), "entry", helper));
    body.setIsFPConstrained(true);
    body.setDefaultConstrainedRounding(llvm::RoundingMode::Dynamic);
    body.setDefaultConstrainedExcept(llvm::fp::ebIgnore);
    llvm::Value *saved = body.CreateIntrinsic(llvm::Intrinsic::get_rounding, {}, {});
    body.CreateIntrinsic(llvm::Intrinsic::set_rounding, {}, {body.getInt32(flagOf(rounding))});
    llvm::SmallVector<llvm::Value *, 3> parameters;
    for (llvm::Argument &parameter : helper->args())
      parameters.push_back(&parameter);
    llvm::Value *result = emit(body, parameters);
    body.CreateIntrinsic(llvm::Intrinsic::set_rounding, {}, {saved});
    body.CreateRet(result);
  }
  return builder.CreateCall(helper, args);
}

/// {add, mul, div, fma, sqrt, rcp}.{rn, rz, rm, rp}.{f, d}
llvm::Value *HostIntrinsics::rounded(llvm::CallInst &call, const IntrinsicName &name) {
  std::optional<Rounding> rounding = roundingOf(name[1]);
  if (!rounding || name.size() != 3)
    return nullptr;
  llvm::StringRef operation = name[0];
  llvm::Type *type = call.getType();
  auto constrainedOr = [&](llvm::IRBuilder<> &builder, llvm::Intrinsic::ID plain,
                           llvm::Intrinsic::ID constrained, llvm::ArrayRef<llvm::Value *> args) {
    if (!builder.getIsFPConstrained())
      return static_cast<llvm::Value *>(builder.CreateIntrinsic(plain, {type}, args));
    return static_cast<llvm::Value *>(builder.CreateConstrainedFPCall(
        llvm::Intrinsic::getDeclaration(&module, constrained, {type}), args));
  };
  Emit emit;
  if (operation == "add")
    emit = [](llvm::IRBuilder<> &b, llvm::ArrayRef<llvm::Value *> a) {
      return b.CreateFAdd(a[0], a[1]);
    };
  else if (operation == "mul")
    emit = [](llvm::IRBuilder<> &b, llvm::ArrayRef<llvm::Value *> a) {
      return b.CreateFMul(a[0], a[1]);
    };
  else if (operation == "div")
    emit = [](llvm::IRBuilder<> &b, llvm::ArrayRef<llvm::Value *> a) {
      return b.CreateFDiv(a[0], a[1]);
    };
  else if (operation == "rcp")
    emit = [type](llvm::IRBuilder<> &b, llvm::ArrayRef<llvm::Value *> a) {
      return b.CreateFDiv(llvm::ConstantFP::get(type, 1.0), a[0]);
    };
  else if (operation == "fma")
    emit = [&](llvm::IRBuilder<> &b, llvm::ArrayRef<llvm::Value *> a) {
      return constrainedOr(b, llvm::Intrinsic::fma, llvm::Intrinsic::experimental_constrained_fma,
                           a);
    };
  else if (operation == "sqrt")
    emit = [&](llvm::IRBuilder<> &b, llvm::ArrayRef<llvm::Value *> a) {
      return constrainedOr(b, llvm::Intrinsic::sqrt, llvm::Intrinsic::experimental_constrained_sqrt,
                           a);
    };
  else
    return nullptr;
  return inMode(call, *rounding, call.getCalledFunction()->getName().drop_front(10), emit);
}

/// Conversions: {f, d}2{i, ui, ll, ull}, {i, ui, ll, ull}2{f, d}, d2f, each
/// with a rounding modifier.
llvm::Value *HostIntrinsics::conversion(llvm::CallInst &call, const IntrinsicName &name) {
  std::optional<Rounding> rounding = roundingOf(name[1]);
  auto [from, to] = name[0].split('2');
  if (!rounding || name.size() != 2 || to.empty())
    return nullptr;
  auto isFloat = [](llvm::StringRef kind) { return kind == "f" || kind == "d"; };
  auto isInteger = [](llvm::StringRef kind) {
    return kind == "i" || kind == "ui" || kind == "ll" || kind == "ull";
  };
  llvm::Type *result = call.getType();
  llvm::StringRef helperName = call.getCalledFunction()->getName().drop_front(10);
  if (isFloat(from) && isInteger(to)) {
    // PTX's cvt.rni/rzi/rmi/rpi to an integer saturates, NaN giving 0.
    llvm::IRBuilder<> builder(&call);
    llvm::Value *integral =
        builder.CreateUnaryIntrinsic(integralRounding(*rounding), call.getArgOperand(0));
    bool isSigned = to == "i" || to == "ll";
    return builder.CreateIntrinsic(isSigned ? llvm::Intrinsic::fptosi_sat
                                            : llvm::Intrinsic::fptoui_sat,
                                   {result, integral->getType()}, {integral});
  }
  if (isInteger(from) && isFloat(to)) {
    bool isSigned = from == "i" || from == "ll";
    return inMode(call, *rounding, helperName,
                  [=](llvm::IRBuilder<> &b, llvm::ArrayRef<llvm::Value *> a) {
                    return isSigned ? b.CreateSIToFP(a[0], result) : b.CreateUIToFP(a[0], result);
                  });
  }
  if (from == "d" && to == "f")
    return inMode(call, *rounding, helperName,
                  [=](llvm::IRBuilder<> &b, llvm::ArrayRef<llvm::Value *> a) {
                    return b.CreateFPTrunc(a[0], result);
                  });
  return nullptr;
}

/// PTX's prmt in its default mode: byte i of the result is the byte of
/// {b, a} (eight bytes, a's first) that nibble i of the selector picks; a
/// nibble with its high bit set replicates that byte's sign bit instead.
llvm::Value *HostIntrinsics::byteSelect(llvm::IRBuilder<> &builder,
                                        llvm::ArrayRef<llvm::Value *> args) {
  llvm::Type *i64 = builder.getInt64Ty();
  llvm::Value *bytes = builder.CreateOr(builder.CreateZExt(args[0], i64),
                                        builder.CreateShl(builder.CreateZExt(args[1], i64), 32));
  llvm::Value *result = builder.getInt32(0);
  for (unsigned i = 0; i < 4; ++i) {
    llvm::Value *nibble = builder.CreateAnd(builder.CreateLShr(args[2], 4 * i), 0xf);
    llvm::Value *index = builder.CreateZExt(builder.CreateAnd(nibble, 7), i64);
    llvm::Value *byte = builder.CreateTrunc(
        builder.CreateAnd(builder.CreateLShr(bytes, builder.CreateMul(index, builder.getInt64(8))),
                          0xff),
        builder.getInt32Ty());
    llvm::Value *sign = builder.CreateSelect(
        builder.CreateICmpNE(builder.CreateAnd(byte, 0x80), builder.getInt32(0)),
        builder.getInt32(0xff), builder.getInt32(0));
    llvm::Value *replicates =
        builder.CreateICmpNE(builder.CreateAnd(nibble, 8), builder.getInt32(0));
    byte = builder.CreateSelect(replicates, sign, byte);
    result = builder.CreateOr(result, builder.CreateShl(byte, 8 * i));
  }
  return result;
}

llvm::Value *HostIntrinsics::replacement(llvm::CallInst &call, llvm::StringRef fullName) {
  IntrinsicName name(fullName);
  llvm::IRBuilder<> builder(&call);
  llvm::SmallVector<llvm::Value *, 3> args(call.args());
  llvm::Type *type = call.getType();
  llvm::StringRef head = name[0];
  auto unary = [&](llvm::Intrinsic::ID id) { return builder.CreateUnaryIntrinsic(id, args[0]); };
  auto reciprocal = [&](llvm::Value *x) {
    return builder.CreateFDiv(llvm::ConstantFP::get(type, 1.0), x);
  };

  if (name[1] == "approx") {
    // Approximations on a GPU; exact here.
    if (head == "ex2")
      return unary(llvm::Intrinsic::exp2);
    if (head == "lg2")
      return unary(llvm::Intrinsic::log2);
    if (head == "sin")
      return unary(llvm::Intrinsic::sin);
    if (head == "cos")
      return unary(llvm::Intrinsic::cos);
    if (head == "sqrt")
      return unary(llvm::Intrinsic::sqrt);
    if (head == "rsqrt")
      return reciprocal(unary(llvm::Intrinsic::sqrt));
    if (head == "rcp")
      return reciprocal(args[0]);
    if (head == "div")
      return builder.CreateFDiv(args[0], args[1]);
    if (head == "tanh") {
      llvm::FunctionCallee tanhf =
          module.getOrInsertFunction("tanhf", llvm::FunctionType::get(type, {type}, false));
      return builder.CreateCall(tanhf, args);
    }
    return nullptr;
  }
  if (llvm::is_contained({"add", "mul", "div", "fma", "sqrt", "rcp"}, head))
    return rounded(call, name);
  if (head == "fabs")
    return unary(llvm::Intrinsic::fabs);
  if (head == "floor")
    return unary(llvm::Intrinsic::floor);
  if (head == "ceil")
    return unary(llvm::Intrinsic::ceil);
  if (head == "trunc")
    return unary(llvm::Intrinsic::trunc);
  if (head == "round") // cvt.rni: to nearest, ties to even
    return unary(llvm::Intrinsic::roundeven);
  if (head == "fmin")
    return builder.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, args[0], args[1]);
  if (head == "fmax")
    return builder.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, args[0], args[1]);
  if (head == "saturate") {
    // Clamped to [0, 1]; NaN gives 0.
    llvm::Value *one = llvm::ConstantFP::get(type, 1.0);
    llvm::Value *belowOne = builder.CreateSelect(builder.CreateFCmpOLT(args[0], one), args[0], one);
    return builder.CreateSelect(builder.CreateFCmpOGT(args[0], llvm::ConstantFP::get(type, 0.0)),
                                belowOne, llvm::ConstantFP::get(type, 0.0));
  }
  if (head == "mulhi") {
    bool isSigned = name[1] == "i" || name[1] == "ll";
    unsigned bits = type->getIntegerBitWidth();
    llvm::Type *wide = builder.getIntNTy(2 * bits);
    auto extend = [&](llvm::Value *v) {
      return isSigned ? builder.CreateSExt(v, wide) : builder.CreateZExt(v, wide);
    };
    llvm::Value *product = builder.CreateMul(extend(args[0]), extend(args[1]));
    return builder.CreateTrunc(builder.CreateLShr(product, bits), type);
  }
  if (head == "sad") {
    // c + |a - b|, the difference taken as signed or unsigned numbers.
    bool isSigned = name[1] == "i";
    llvm::Value *less = isSigned ? builder.CreateICmpSLT(args[0], args[1])
                                 : builder.CreateICmpULT(args[0], args[1]);
    llvm::Value *difference = builder.CreateSelect(less, builder.CreateSub(args[1], args[0]),
                                                   builder.CreateSub(args[0], args[1]));
    return builder.CreateAdd(args[2], difference);
  }
  if (head == "prmt")
    return byteSelect(builder, args);
  if (head == "lohi") { // lohi.i2d(lo, hi)
    llvm::Type *i64 = builder.getInt64Ty();
    llvm::Value *bits = builder.CreateOr(builder.CreateZExt(args[0], i64),
                                         builder.CreateShl(builder.CreateZExt(args[1], i64), 32));
    return builder.CreateBitCast(bits, type);
  }
  if (head == "d2i" && (name[1] == "hi" || name[1] == "lo")) {
    llvm::Value *bits = builder.CreateBitCast(args[0], builder.getInt64Ty());
    if (name[1] == "hi")
      bits = builder.CreateLShr(bits, 32);
    return builder.CreateTrunc(bits, type);
  }
  if (head == "f2h" && name[1] == "rn")
    return builder.CreateBitCast(builder.CreateFPTrunc(args[0], builder.getHalfTy()),
                                 builder.getInt16Ty());
  if (head.contains('2'))
    return conversion(call, name);
  return nullptr;
}

/// PTX text with each run of white space made one space.
std::string normalizedPtx(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef, 16> words;
  llvm::SplitString(text, words, " \t\n\r");
  return llvm::join(words, " ");
}

// The carry chains libdevice writes in inline PTX for wide integer
// arithmetic; each computes exactly, modulo 2^64 or 2^128, what its name
// says, over unsigned operands.
constexpr llvm::StringLiteral multiplyAdd64 =
    "{ mad.lo.cc.u32 $0, $2, $3, $4; madc.hi.u32 $1, $2, $3, 0; }";
constexpr llvm::StringLiteral add128 =
    "{ .reg .u32 r0, r1, r2, r3, a0, a1, a2, a3, b0, b1, b2, b3; mov.b64 {a0,a1}, $2; mov.b64 "
    "{a2,a3}, $3; mov.b64 {b0,b1}, $4; mov.b64 {b2,b3}, $5; add.cc.u32 r0, a0, b0; addc.cc.u32 r1, "
    "a1, b1; addc.cc.u32 r2, a2, b2; addc.u32 r3, a3, b3; mov.b64 $0, {r0,r1}; mov.b64 $1, "
    "{r2,r3}; }";
constexpr llvm::StringLiteral subtract128 =
    "{ .reg .u32 r0, r1, r2, r3, a0, a1, a2, a3, b0, b1, b2, b3; mov.b64 {a0,a1}, $2; mov.b64 "
    "{a2,a3}, $3; mov.b64 {b0,b1}, $4; mov.b64 {b2,b3}, $5; sub.cc.u32 r0, a0, b0; subc.cc.u32 r1, "
    "a1, b1; subc.cc.u32 r2, a2, b2; subc.u32 r3, a3, b3; mov.b64 $0, {r0,r1}; mov.b64 $1, "
    "{r2,r3}; }";
constexpr llvm::StringLiteral multiplyAdd128 =
    "{ .reg .u32 r0, r1, r2, r3, alo, ahi, blo, bhi, clo, chi; mov.b64 {alo,ahi}, $2; mov.b64 "
    "{blo,bhi}, $3; mov.b64 {clo,chi}, $4; mad.lo.cc.u32 r0, alo, blo, clo; madc.hi.cc.u32 r1, "
    "alo, "
    "blo, chi; madc.hi.u32 r2, alo, bhi, 0; mad.lo.cc.u32 r1, alo, bhi, r1; madc.hi.cc.u32 r2, "
    "ahi, "
    "blo, r2; madc.hi.u32 r3, ahi, bhi, 0; mad.lo.cc.u32 r1, ahi, blo, r1; madc.lo.cc.u32 r2, ahi, "
    "bhi, r2; addc.u32 r3, r3, 0; mov.b64 $0, {r0,r1}; mov.b64 $1, {r2,r3}; }";
constexpr llvm::StringLiteral multiply128 =
    "{ .reg .u32 r0, r1, r2, r3, alo, ahi, blo, bhi; mov.b64 {alo,ahi}, $2; mov.b64 {blo,bhi}, $3; "
    "mul.lo.u32 r0, alo, blo; mul.hi.u32 r1, alo, blo; mad.lo.cc.u32 r1, alo, bhi, r1; madc.hi.u32 "
    "r2, alo, bhi, 0; mad.lo.cc.u32 r1, ahi, blo, r1; madc.hi.cc.u32 r2, ahi, blo, r2; madc.hi.u32 "
    "r3, ahi, bhi, 0; mad.lo.cc.u32 r2, ahi, bhi, r2; addc.u32 r3, r3, 0; mov.b64 $0, {r0,r1}; "
    "mov.b64 $1, {r2,r3}; }";
constexpr llvm::StringLiteral selectIfEqualOrUnordered =
    "{ .reg .pred __$$temp3; setp.equ.f64 __$$temp3, $1, $2; selp.f64 $0, $3, $4, __$$temp3;}";

llvm::Value *HostIntrinsics::ptxReplacement(llvm::CallInst &call, const llvm::InlineAsm &ptx) {
  std::string text = normalizedPtx(ptx.getAsmString());
  llvm::IRBuilder<> builder(&call);
  llvm::SmallVector<llvm::Value *, 5> args(call.args());
  llvm::Type *type = call.getType();
  if (text == "rcp.approx.ftz.f32 $0,$1;" || text == "rsqrt.approx.ftz.f64 $0, $1;") {
    llvm::Value *x = text.starts_with("rsqrt")
                         ? builder.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, args[0])
                         : args[0];
    return builder.CreateFDiv(llvm::ConstantFP::get(type, 1.0), x);
  }
  if (text == "bfind.shiftamt.u32 $0, $1;") // the shift that brings the top bit to 31
    return builder.CreateSelect(
        builder.CreateICmpEQ(args[0], builder.getInt32(0)), builder.getInt32(~0u),
        builder.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, args[0], builder.getTrue()));
  if (text == selectIfEqualOrUnordered)
    return builder.CreateSelect(builder.CreateFCmpUEQ(args[0], args[1]), args[2], args[3]);
  // sub.<rounding>[.ftz].f32/f64 $0, $1, $2;
  llvm::StringRef operation = llvm::StringRef(text).split(' ').first;
  if (operation.consume_front("sub.") && llvm::StringRef(text).ends_with(" $0, $1, $2;")) {
    IntrinsicName name(operation);
    std::optional<Rounding> rounding = roundingOf(name[0]);
    if (!rounding || name.size() != 2 || (name[1] != "f32" && name[1] != "f64"))
      return nullptr;
    std::string helper = ("sub." + name[0] + "." + name[1]).str();
    return inMode(call, *rounding, helper,
                  [](llvm::IRBuilder<> &b, llvm::ArrayRef<llvm::Value *> a) {
                    return b.CreateFSub(a[0], a[1]);
                  });
  }

  // Wide integer arithmetic: the result is the struct of its low and high
  // halves.
  auto *halves = llvm::dyn_cast<llvm::StructType>(type);
  if (!halves || halves->getNumElements() != 2)
    return nullptr;
  unsigned half = halves->getElementType(0)->getIntegerBitWidth();
  llvm::Type *wide = builder.getIntNTy(2 * half);
  auto widen = [&](llvm::Value *v) { return builder.CreateZExt(v, wide); };
  auto join = [&](llvm::Value *low, llvm::Value *high) {
    return builder.CreateOr(widen(low), builder.CreateShl(widen(high), half));
  };
  llvm::Value *result = nullptr;
  if (text == multiplyAdd64)
    result = builder.CreateAdd(builder.CreateMul(widen(args[0]), widen(args[1])), widen(args[2]));
  else if (text == add128)
    result = builder.CreateAdd(join(args[0], args[1]), join(args[2], args[3]));
  else if (text == subtract128)
    result = builder.CreateSub(join(args[0], args[1]), join(args[2], args[3]));
  else if (text == multiplyAdd128)
    result = builder.CreateAdd(builder.CreateMul(widen(args[0]), widen(args[1])), widen(args[2]));
  else if (text == multiply128)
    result = builder.CreateMul(widen(args[0]), widen(args[1]));
  else
    return nullptr;
  llvm::Value *low = builder.CreateTrunc(result, halves->getElementType(0));
  llvm::Value *high =
      builder.CreateTrunc(builder.CreateLShr(result, half), halves->getElementType(1));
  return builder.CreateInsertValue(
      builder.CreateInsertValue(llvm::PoisonValue::get(type), low, {0}), high, {1});
}

} // namespace

llvm::Error adaptLibdeviceForHost(llvm::Module &module) {
  answerReflectQuestion(module, "__CUDA_FTZ", 0);
  answerReflectQuestion(module, "__CUDA_ARCH", reflectedArch);
  answerReflectQuestion(module, "__CUDA_PREC_SQRT", 1);
  if (llvm::Function *reflect = module.getFunction("__nvvm_reflect");
      reflect && reflect->use_empty())
    reflect->eraseFromParent();

  HostIntrinsics host(module);
  for (llvm::Function &declared : llvm::make_early_inc_range(module)) {
    llvm::StringRef name = declared.getName();
    bool isNvvm = name.consume_front("llvm.nvvm.");
    bool isHalfWidening = name == "llvm.convert.from.fp16.f32";
    if (!isNvvm && !isHalfWidening)
      continue;
    for (llvm::User *user : llvm::make_early_inc_range(declared.users())) {
      auto *call = llvm::dyn_cast<llvm::CallInst>(user);
      if (!call)
        continue;
      llvm::Value *replacement = nullptr;
      if (isHalfWidening) {
        llvm::IRBuilder<> builder(call);
        replacement = builder.CreateFPExt(
            builder.CreateBitCast(call->getArgOperand(0), builder.getHalfTy()), call->getType());
      } else {
        replacement = host.replacement(*call, name);
      }
      if (!replacement)
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "libdevice uses '" + declared.getName().str() +
                                           "', which the CPU engine does not implement");
      call->replaceAllUsesWith(replacement);
      call->eraseFromParent();
    }
    if (declared.use_empty())
      declared.eraseFromParent();
  }

  for (llvm::Function &function : module)
    for (llvm::BasicBlock &block : function)
      for (llvm::Instruction &instruction : llvm::make_early_inc_range(block)) {
        auto *call = llvm::dyn_cast<llvm::CallInst>(&instruction);
        const auto *ptx =
            call ? llvm::dyn_cast<llvm::InlineAsm>(call->getCalledOperand()) : nullptr;
        if (!ptx)
          continue;
        llvm::Value *replacement = host.ptxReplacement(*call, *ptx);
        if (!replacement)
          return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                         "libdevice's '" + function.getName().str() +
                                             "' uses the PTX '" +
                                             normalizedPtx(ptx->getAsmString()) +
                                             "', which the CPU engine does not implement");
        call->replaceAllUsesWith(replacement);
        call->eraseFromParent();
      }
  return llvm::Error::success();
}

} // namespace kiln::backend
