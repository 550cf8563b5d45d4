//===- frontend/parse/ast_printer.cpp -------------------------------------------===//

#include "frontend/parse/ast_printer.h"

#include <llvm/Support/Format.h>

namespace kiln {

using namespace ast;
using llvm::cast;

namespace {

/// Printable ASCII as is; everything else, and quotes and backslashes, as
/// \xHH of its UTF-8 bytes. Simple enough to reproduce exactly in Python.
void printQuoted(llvm::StringRef text, llvm::raw_ostream &os) {
  os << '"';
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7F && c != '"' && c != '\\')
      os << c;
    else
      os << llvm::format("\\x%02x", byte);
  }
  os << '"';
}

void printDouble(double value, llvm::raw_ostream &os) {
  os << llvm::format("%.17g", value);
}

class Printer {
public:
  explicit Printer(llvm::raw_ostream &os) : os(os) {}

  void expr(const Expr *e);
  void stmt(const Stmt *s, unsigned indent);
  void body(llvm::ArrayRef<Stmt *> stmts, unsigned indent) {
    for (const Stmt *s : stmts)
      stmt(s, indent);
  }

private:
  void optionalExpr(const Expr *e) {
    if (e)
      expr(e);
    else
      os << '_';
  }
  void exprs(llvm::ArrayRef<Expr *> list) {
    for (const Expr *e : list) {
      os << ' ';
      optionalExpr(e);
    }
  }
  void line(unsigned indent) { os.indent(indent * 2); }

  llvm::raw_ostream &os;
};

void Printer::expr(const Expr *e) {
  switch (e->kind()) {
  case Expr::Kind::Name:
    os << cast<NameExpr>(e)->id;
    return;
  case Expr::Kind::IntLiteral: {
    const auto *literal = cast<IntLiteralExpr>(e);
    if (literal->tooLarge)
      os << "(BigInt)";
    else
      os << literal->value;
    return;
  }
  case Expr::Kind::FloatLiteral:
    printDouble(cast<FloatLiteralExpr>(e)->value, os);
    return;
  case Expr::Kind::ImaginaryLiteral:
    printDouble(cast<ImaginaryLiteralExpr>(e)->imag, os);
    os << 'j';
    return;
  case Expr::Kind::StringLiteral: {
    const auto *str = cast<StringLiteralExpr>(e);
    if (str->isFormatted) {
      os << "(FString)";
      return;
    }
    if (str->isBytes)
      os << 'b';
    printQuoted(str->value, os);
    return;
  }
  case Expr::Kind::BoolLiteral:
    os << (cast<BoolLiteralExpr>(e)->value ? "True" : "False");
    return;
  case Expr::Kind::NoneLiteral:
    os << "None";
    return;
  case Expr::Kind::EllipsisLiteral:
    os << "...";
    return;
  case Expr::Kind::Tuple:
  case Expr::Kind::List:
  case Expr::Kind::Set: {
    os << (e->kind() == Expr::Kind::Tuple  ? "(Tuple"
           : e->kind() == Expr::Kind::List ? "(List"
                                           : "(Set");
    exprs(cast<SequenceExpr>(e)->elements);
    os << ')';
    return;
  }
  case Expr::Kind::Dict: {
    const auto *dict = cast<DictExpr>(e);
    os << "(Dict";
    for (size_t i = 0; i < dict->values.size(); ++i) {
      os << ' ';
      if (dict->keys[i])
        expr(dict->keys[i]);
      else
        os << "**";
      os << ' ';
      expr(dict->values[i]);
    }
    os << ')';
    return;
  }
  case Expr::Kind::Attribute: {
    const auto *attr = cast<AttributeExpr>(e);
    os << "(Attr ";
    expr(attr->value);
    os << ' ' << attr->attr << ')';
    return;
  }
  case Expr::Kind::Subscript: {
    const auto *sub = cast<SubscriptExpr>(e);
    os << "(Sub ";
    expr(sub->value);
    os << ' ';
    expr(sub->index);
    os << ')';
    return;
  }
  case Expr::Kind::Slice: {
    const auto *slice = cast<SliceExpr>(e);
    os << "(Slice ";
    optionalExpr(slice->lower);
    os << ' ';
    optionalExpr(slice->upper);
    os << ' ';
    optionalExpr(slice->step);
    os << ')';
    return;
  }
  case Expr::Kind::Call: {
    const auto *call = cast<CallExpr>(e);
    os << "(Call ";
    expr(call->callee);
    exprs(call->args);
    for (const Keyword &keyword : call->keywords) {
      os << ' ' << (keyword.name.empty() ? "**" : keyword.name) << '=';
      expr(keyword.value);
    }
    os << ')';
    return;
  }
  case Expr::Kind::Unary: {
    const auto *unary = cast<UnaryExpr>(e);
    os << '(' << spelling(unary->op) << ' ';
    expr(unary->operand);
    os << ')';
    return;
  }
  case Expr::Kind::Binary: {
    const auto *binary = cast<BinaryExpr>(e);
    os << '(' << spelling(binary->op) << ' ';
    expr(binary->lhs);
    os << ' ';
    expr(binary->rhs);
    os << ')';
    return;
  }
  case Expr::Kind::BoolOp: {
    const auto *boolOp = cast<BoolOpExpr>(e);
    os << '(' << spelling(boolOp->op);
    exprs(boolOp->values);
    os << ')';
    return;
  }
  case Expr::Kind::Compare: {
    const auto *compare = cast<CompareExpr>(e);
    os << "(Compare ";
    expr(compare->left);
    for (size_t i = 0; i < compare->ops.size(); ++i) {
      os << ' ' << spelling(compare->ops[i]) << ' ';
      expr(compare->comparators[i]);
    }
    os << ')';
    return;
  }
  case Expr::Kind::IfExp: {
    const auto *ifExp = cast<IfExpExpr>(e);
    os << "(IfExp ";
    expr(ifExp->test);
    os << ' ';
    expr(ifExp->body);
    os << ' ';
    expr(ifExp->orelse);
    os << ')';
    return;
  }
  case Expr::Kind::NamedExpr: {
    const auto *named = cast<NamedExpr>(e);
    os << "(:= ";
    expr(named->target);
    os << ' ';
    expr(named->value);
    os << ')';
    return;
  }
  case Expr::Kind::Starred:
    os << "(Starred ";
    expr(cast<StarredExpr>(e)->value);
    os << ')';
    return;
  case Expr::Kind::Lambda:
    os << "(Lambda ";
    expr(cast<LambdaExpr>(e)->body);
    os << ')';
    return;
  case Expr::Kind::Comprehension: {
    const auto *comp = cast<ComprehensionExpr>(e);
    static const char *names[] = {"(ListComp ", "(SetComp ", "(DictComp ", "(GenExp "};
    os << names[static_cast<unsigned>(comp->form)];
    expr(comp->element);
    os << ')';
    return;
  }
  case Expr::Kind::Yield:
    os << "(Yield ";
    optionalExpr(cast<YieldExpr>(e)->value);
    os << ')';
    return;
  case Expr::Kind::Await:
    os << "(Await ";
    expr(cast<AwaitExpr>(e)->value);
    os << ')';
    return;
  }
}

void Printer::stmt(const Stmt *s, unsigned indent) {
  line(indent);
  switch (s->kind()) {
  case Stmt::Kind::FunctionDef: {
    const auto *def = cast<FunctionDefStmt>(s);
    os << (def->isAsync ? "(async def " : "(def ") << def->name << " (params";
    for (const Parameter &param : def->params) {
      os << ' ';
      if (param.form == Parameter::Form::VarArgs)
        os << '*';
      else if (param.form == Parameter::Form::KwArgs)
        os << "**";
      os << param.name;
      if (param.defaultValue) {
        os << '=';
        expr(param.defaultValue);
      }
    }
    os << ")";
    for (const Expr *decorator : def->decorators) {
      os << " @";
      expr(decorator);
    }
    os << '\n';
    body(def->body, indent + 1);
    line(indent);
    os << ")\n";
    return;
  }
  case Stmt::Kind::ClassDef: {
    const auto *cls = cast<ClassDefStmt>(s);
    os << "(class " << cls->name << '\n';
    body(cls->body, indent + 1);
    line(indent);
    os << ")\n";
    return;
  }
  case Stmt::Kind::Return:
    os << "(return ";
    optionalExpr(cast<ReturnStmt>(s)->value);
    os << ")\n";
    return;
  case Stmt::Kind::Assign: {
    const auto *assign = cast<AssignStmt>(s);
    os << "(=";
    exprs(assign->targets);
    os << ' ';
    expr(assign->value);
    os << ")\n";
    return;
  }
  case Stmt::Kind::AugAssign: {
    const auto *aug = cast<AugAssignStmt>(s);
    os << '(' << spelling(aug->op) << "= ";
    expr(aug->target);
    os << ' ';
    expr(aug->value);
    os << ")\n";
    return;
  }
  case Stmt::Kind::AnnAssign: {
    const auto *ann = cast<AnnAssignStmt>(s);
    os << "(: ";
    expr(ann->target);
    os << ' ';
    expr(ann->annotation);
    os << ' ';
    optionalExpr(ann->value);
    os << ")\n";
    return;
  }
  case Stmt::Kind::For: {
    const auto *loop = cast<ForStmt>(s);
    os << (loop->isAsync ? "(async for " : "(for ");
    expr(loop->target);
    os << ' ';
    expr(loop->iter);
    os << '\n';
    body(loop->body, indent + 1);
    if (!loop->orelse.empty()) {
      line(indent);
      os << "else\n";
      body(loop->orelse, indent + 1);
    }
    line(indent);
    os << ")\n";
    return;
  }
  case Stmt::Kind::While: {
    const auto *loop = cast<WhileStmt>(s);
    os << "(while ";
    expr(loop->test);
    os << '\n';
    body(loop->body, indent + 1);
    if (!loop->orelse.empty()) {
      line(indent);
      os << "else\n";
      body(loop->orelse, indent + 1);
    }
    line(indent);
    os << ")\n";
    return;
  }
  case Stmt::Kind::If: {
    const auto *branch = cast<IfStmt>(s);
    os << "(if ";
    expr(branch->test);
    os << '\n';
    body(branch->body, indent + 1);
    if (!branch->orelse.empty()) {
      line(indent);
      os << "else\n";
      body(branch->orelse, indent + 1);
    }
    line(indent);
    os << ")\n";
    return;
  }
  case Stmt::Kind::With:
  case Stmt::Kind::Try:
  case Stmt::Kind::Global:
  case Stmt::Kind::Nonlocal: {
    static const char *names[] = {"(with\n", "(try\n", "(global\n", "(nonlocal\n"};
    unsigned index = s->kind() == Stmt::Kind::With     ? 0
                     : s->kind() == Stmt::Kind::Try    ? 1
                     : s->kind() == Stmt::Kind::Global ? 2
                                                       : 3;
    os << names[index];
    body(cast<BlockStmt>(s)->body, indent + 1);
    line(indent);
    os << ")\n";
    return;
  }
  case Stmt::Kind::Raise: {
    const auto *raise = cast<RaiseStmt>(s);
    os << "(raise ";
    optionalExpr(raise->exception);
    os << ' ';
    optionalExpr(raise->cause);
    os << ")\n";
    return;
  }
  case Stmt::Kind::Assert: {
    const auto *assertion = cast<AssertStmt>(s);
    os << "(assert ";
    expr(assertion->test);
    os << ' ';
    optionalExpr(assertion->message);
    os << ")\n";
    return;
  }
  case Stmt::Kind::Import:
    os << "(import";
    for (const ImportAlias &alias : cast<ImportStmt>(s)->names) {
      os << ' ' << alias.name;
      if (!alias.asName.empty())
        os << " as " << alias.asName;
    }
    os << ")\n";
    return;
  case Stmt::Kind::ImportFrom: {
    const auto *from = cast<ImportFromStmt>(s);
    os << "(from " << std::string(from->level, '.') << from->module << " import";
    if (from->isStar)
      os << " *";
    for (const ImportAlias &alias : from->names) {
      os << ' ' << alias.name;
      if (!alias.asName.empty())
        os << " as " << alias.asName;
    }
    os << ")\n";
    return;
  }
  case Stmt::Kind::Delete:
    os << "(del";
    exprs(cast<DeleteStmt>(s)->targets);
    os << ")\n";
    return;
  case Stmt::Kind::Pass:
    os << "(pass)\n";
    return;
  case Stmt::Kind::Break:
    os << "(break)\n";
    return;
  case Stmt::Kind::Continue:
    os << "(continue)\n";
    return;
  case Stmt::Kind::ExprStmt:
    os << "(expr ";
    expr(cast<ExprStmt>(s)->value);
    os << ")\n";
    return;
  }
}

} // namespace

void printModule(const Module &module, llvm::raw_ostream &os) {
  Printer(os).body(module.body, 0);
}

void printStmt(const Stmt *stmt, llvm::raw_ostream &os) {
  Printer(os).stmt(stmt, 0);
}

void printExpr(const Expr *expr, llvm::raw_ostream &os) {
  Printer(os).expr(expr);
}

} // namespace kiln
