//===- frontend/typing/semantic_hash.cpp -----------------------------------------===//

#include "frontend/typing/semantic_hash.h"

#include "frontend/parse/ast_printer.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>
#include <llvm/Support/BLAKE3.h>
#include <llvm/Support/raw_ostream.h>

#include <set>

namespace kiln {

namespace {

class Hasher {
public:
  explicit Hasher(const SourceManager &sources) : sources(sources) {}

  SemanticHash hash(const Specialization &spec) {
    auto cached = memo.find(&spec);
    if (cached != memo.end())
      return cached->second;
    hashing.insert(&spec);
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "kiln-semantic-hash-2\n";
    const FunctionDecl &decl = spec.decl;
    os << decl.kindName() << ' ' << decl.name << spec.argumentList() << " -> "
       << (spec.returnType ? spec.returnType->str() : "?") << '\n';
    const JitOptions &options = decl.options;
    os << "options fastmath=" << options.fastmath;
    // Only when given, so that the hashes of other kernels stay as they were.
    for (const std::string &flag : options.fastmathFlags)
      os << ',' << flag;
    os << " debug=" << options.debug << " opt=" << options.optimize
       << " lineinfo=" << options.lineinfo << " max_registers=" << options.maxRegisters.value_or(0)
       << " forceinline=" << options.forceInline << " inline=" << options.inlineAlways
       << " lto=" << (options.lto ? (*options.lto ? 1 : 0) : -1) << " launch_bounds=";
    for (unsigned bound : options.launchBounds)
      os << bound << ',';
    os << " link=";
    for (const std::string &file : options.link)
      os << file << ';';
    // Only when given, so that the hashes of other kernels stay as they were.
    if (options.sharedMemoryCarveout)
      os << " shared_memory_carveout=" << *options.sharedMemoryCarveout;
    if (!options.boundscheck)
      os << " boundscheck=0";
    os << " external=" << decl.externalSymbol;
    if (decl.externalCooperative)
      os << " use_cooperative";
    if (decl.externalCAbi)
      os << " abi=c";
    os << '\n';

    if (decl.def) {
      llvm::ArrayRef<ast::Stmt *> body = decl.def->body;
      if (!body.empty())
        if (const auto *first = llvm::dyn_cast<ast::ExprStmt>(body.front()))
          if (llvm::isa<ast::StringLiteralExpr>(first->value))
            body = body.drop_front();
      os << "params";
      for (const ast::Parameter &param : decl.def->params)
        os << ' ' << param.name;
      os << '\n';
      for (const ast::Stmt *stmt : body)
        printStmt(stmt, os);
      if (options.debug || options.lineinfo) {
        // Line numbers end up in the code.
        LineColumn start = sources.lineColumn(decl.def->range().begin);
        os << "source line " << start.line << '\n' << sources.textOf(decl.def->range()) << '\n';
      }
      // Module-level names the function reads, and what they are now.
      std::set<std::string> globals;
      if (spec.ssa)
        for (const auto &instr : spec.ssa->instrs)
          if (instr->op == ssa::Op::Global ||
              (instr->op == ssa::Op::Constant && !instr->fromLiteral && !instr->name.empty()))
            globals.insert(instr->name);
      collectGlobalConstants(decl, globals);
      for (const std::string &name : globals)
        if (const ModuleValue *value = decl.scope->lookupPath(name))
          os << "global " << name << " = " << value->describe() << '\n';
    }
    for (const auto &[callee, site] : spec.callees) {
      // A recursive call: the callee's text is part of this hash already,
      // or of the one being computed up the chain.
      if (hashing.contains(callee))
        os << "calls recursively " << callee->decl.name << callee->argumentList() << '\n';
      else
        os << "calls " << toHex(hash(*callee)) << '\n';
    }
    hashing.erase(&spec);

    llvm::BLAKE3 blake3;
    blake3.update(text);
    SemanticHash result = blake3.final();
    memo[&spec] = result;
    return result;
  }

private:
  /// Constants are frozen into the SSA form without their names; find the
  /// names the function reads that are module constants, and the dotted
  /// paths that reach constants of source modules (`config.THRESHOLD`).
  void collectGlobalConstants(const FunctionDecl &decl, std::set<std::string> &globals) {
    ast::forEachExpression(decl.def->body, [&](ast::Expr *e) {
      std::string path = dottedPath(e);
      if (path.empty())
        return;
      const ModuleValue *value = decl.scope->lookupPath(path);
      if (value && (value->kind() == ModuleValue::Kind::Constant ||
                    value->kind() == ModuleValue::Kind::Enum))
        globals.insert(path);
    });
  }

  /// `name`, `a.b.c`: the dotted path an expression of names and
  /// attributes spells; "" for any other expression.
  static std::string dottedPath(const ast::Expr *e) {
    if (const auto *name = llvm::dyn_cast<ast::NameExpr>(e))
      return name->id.str();
    if (const auto *attr = llvm::dyn_cast<ast::AttributeExpr>(e)) {
      std::string base = dottedPath(attr->value);
      return base.empty() ? "" : base + "." + attr->attr.str();
    }
    return "";
  }

  const SourceManager &sources;
  llvm::DenseMap<const Specialization *, SemanticHash> memo;
  /// The specializations whose hashes are being computed, callers first.
  llvm::DenseSet<const Specialization *> hashing;
};

} // namespace

SemanticHash semanticHash(const Specialization &spec, const SourceManager &sources) {
  return Hasher(sources).hash(spec);
}

std::string toHex(const SemanticHash &hash) {
  static const char digits[] = "0123456789abcdef";
  std::string text;
  for (uint8_t byte : hash) {
    text.push_back(digits[byte >> 4]);
    text.push_back(digits[byte & 15]);
  }
  return text;
}

} // namespace kiln
