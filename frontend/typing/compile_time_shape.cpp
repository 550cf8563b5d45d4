//===- frontend/typing/compile_time_shape.cpp -----------------------------===//

#include "frontend/typing/compile_time_shape.h"

#include "frontend/resolve/module_scope.h"
#include "frontend/typing/typing_rules.h"

namespace kiln::typing {

std::vector<uint64_t> literalShape(const Type *shape) {
  if (const auto *literal = llvm::dyn_cast<IntegerLiteralType>(shape))
    return {static_cast<uint64_t>(literal->bits())};
  std::vector<uint64_t> extents;
  for (const Type *extent : llvm::cast<TupleType>(shape)->elementTypes())
    extents.push_back(static_cast<uint64_t>(llvm::cast<IntegerLiteralType>(extent)->bits()));
  return extents;
}

std::optional<std::vector<uint64_t>>
compileTimeShape(const ssa::Instr *array,
                 llvm::function_ref<const Type *(const ssa::Instr *)> typeOf) {
  if (array->op == ssa::Op::Global && array->global->kind() == ModuleValue::Kind::Array)
    return array->global->arrayValue().shape;
  if (array->op != ssa::Op::Call)
    return std::nullopt;
  const Symbol *callee = builtinOf(typeOf(array->operands[0]));
  if (!callee || !(callee->is(BuiltinId::CudaLocalArray) || callee->is(BuiltinId::CudaSharedArray)))
    return std::nullopt;
  const ssa::Instr *shapeArgument = array->operands[1];
  size_t firstKeyword = array->operands.size() - array->keywordNames.size();
  for (size_t i = 0; i < array->keywordNames.size(); ++i)
    if (array->keywordNames[i] == "shape")
      shapeArgument = array->operands[firstKeyword + i];
  std::vector<uint64_t> shape = literalShape(typeOf(shapeArgument));
  // cuda.shared.array(0, ...) is the dynamic shared memory the launch sizes.
  if (callee->is(BuiltinId::CudaSharedArray) && shape.size() == 1 && shape[0] == 0)
    return std::nullopt;
  return shape;
}

} // namespace kiln::typing
