//===- tests/frontend/parser_test.cpp - Parsing Python --------------------===//
//
// The parser's trees are compared with CPython's on whole files by
// test_parser_matches_cpython.py; these tests pin down precedence, the
// shapes kernels rely on, and error recovery.
//
//===----------------------------------------------------------------------===//

#include "frontend/parse/ast_printer.h"
#include "frontend/parse/parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kiln {
namespace {

class ParserTest : public ::testing::Test {
protected:
  /// The tree of a single expression statement.
  std::string expr(const std::string &text) {
    ast::Module module = parse(text + "\n");
    EXPECT_FALSE(diags.hasErrors()) << text;
    std::string out;
    llvm::raw_string_ostream os(out);
    if (module.body.size() == 1)
      if (const auto *statement = llvm::dyn_cast<ast::ExprStmt>(module.body[0]))
        printExpr(statement->value, os);
    return out;
  }
  ast::Module parse(const std::string &text) {
    uint32_t file = sources.addFile("test.py", text);
    return parseModule(sources, file, context, diags);
  }
  std::vector<std::string> errors() const {
    std::vector<std::string> messages;
    for (const Diagnostic &d : diags.diagnostics())
      if (d.severity == Severity::Error)
        messages.push_back(std::to_string(sources.lineColumn(d.range.begin).line) + ": " +
                           d.message);
    return messages;
  }

  SourceManager sources;
  DiagnosticEngine diags{sources};
  ast::AstContext context;
};

TEST_F(ParserTest, ArithmeticPrecedenceAndAssociativity) {
  EXPECT_EQ(expr("a + b * c - d"), "(- (+ a (* b c)) d)");
  EXPECT_EQ(expr("a // b % c"), "(% (// a b) c)");
  EXPECT_EQ(expr("-a ** -b"), "(- (** a (- b)))");
  EXPECT_EQ(expr("a ** b ** c"), "(** a (** b c))");
  EXPECT_EQ(expr("a << b + c & d | e ^ f"), "(| (& (<< a (+ b c)) d) (^ e f))");
  EXPECT_EQ(expr("~a + +b"), "(+ (~ a) (+ b))");
}

TEST_F(ParserTest, BooleanOperatorsAndComparisons) {
  EXPECT_EQ(expr("not a < b and c or d"), "(or (and (not (Compare a < b)) c) d)");
  EXPECT_EQ(expr("a < b <= c != d"), "(Compare a < b <= c != d)");
  EXPECT_EQ(expr("a is not b"), "(Compare a is not b)");
  EXPECT_EQ(expr("a not in b"), "(Compare a not in b)");
  EXPECT_EQ(expr("x if c else y if d else z"), "(IfExp c x (IfExp d y z))");
}

TEST_F(ParserTest, SubscriptsSlicesAndTuples) {
  EXPECT_EQ(expr("a[i, j]"), "(Sub a (Tuple i j))");
  EXPECT_EQ(expr("a[i, :]"), "(Sub a (Tuple i (Slice _ _ _)))");
  EXPECT_EQ(expr("a[::1, 2:n]"), "(Sub a (Tuple (Slice _ _ 1) (Slice 2 n _)))");
  EXPECT_EQ(expr("a[-1]"), "(Sub a (- 1))");
  EXPECT_EQ(expr("(1,)"), "(Tuple 1)");
  EXPECT_EQ(expr("()"), "(Tuple)");
}

TEST_F(ParserTest, CallsWithKeywordsAndAttributes) {
  EXPECT_EQ(expr("cuda.shared.array((32, 33), dtype=float32)"),
            "(Call (Attr (Attr cuda shared) array) (Tuple 32 33) dtype=float32)");
  EXPECT_EQ(expr("f()(x)[0].y"), "(Attr (Sub (Call (Call f) x) 0) y)");
}

TEST_F(ParserTest, NumberLiterals) {
  EXPECT_EQ(expr("0x_FF + 0b101 + 0o17 + 1_000"), "(+ (+ (+ 255 5) 15) 1000)");
  EXPECT_EQ(expr("2.5e-3"), "0.0025000000000000001");
  EXPECT_EQ(expr("3j"), "3j");
  EXPECT_EQ(expr("18446744073709551615"), "18446744073709551615");
  EXPECT_EQ(expr("18446744073709551616"), "(BigInt)");
}

TEST_F(ParserTest, AdjacentStringsConcatenateAndEscapesDecode) {
  EXPECT_EQ(expr("'a' \"b\" '\\x41\\n'"), "\"abA\\x0a\"");
  EXPECT_EQ(expr("r'\\n'"), "\"\\x5cn\"");
}

TEST_F(ParserTest, DecoratedFunctionsKeepTheirDecoratorsAndParameters) {
  ast::Module module =
      parse("@cuda.jit('void(float32[:])', fastmath=True)\ndef k(x, y=2, *a, z, **k):\n    pass\n");
  ASSERT_FALSE(diags.hasErrors());
  ASSERT_EQ(module.body.size(), 1u);
  const auto *def = llvm::cast<ast::FunctionDefStmt>(module.body[0]);
  EXPECT_EQ(def->name, "k");
  ASSERT_EQ(def->decorators.size(), 1u);
  ASSERT_EQ(def->params.size(), 5u);
  EXPECT_EQ(def->params[2].form, ast::Parameter::Form::VarArgs);
  EXPECT_EQ(def->params[3].form, ast::Parameter::Form::KeywordOnly);
  EXPECT_EQ(def->params[4].form, ast::Parameter::Form::KwArgs);
}

TEST_F(ParserTest, ElifChainsNestInOrelse) {
  ast::Module module = parse("if a:\n    x = 1\nelif b:\n    x = 2\nelse:\n    x = 3\n");
  ASSERT_FALSE(diags.hasErrors());
  const auto *outer = llvm::cast<ast::IfStmt>(module.body[0]);
  ASSERT_EQ(outer->orelse.size(), 1u);
  const auto *inner = llvm::cast<ast::IfStmt>(outer->orelse[0]);
  EXPECT_EQ(inner->orelse.size(), 1u);
}

TEST_F(ParserTest, ErrorsInSeveralStatementsAreAllReported) {
  parse("x = (1 +\n     )\ny = 2\nz = = 3\ndef f(x, , y):\n    pass\nw = 4\nv = 5 +\n");
  std::vector<std::string> messages = errors();
  EXPECT_EQ(messages, (std::vector<std::string>{"2: invalid syntax", "4: invalid syntax",
                                                "5: invalid syntax", "8: expected an expression"}));
}

TEST_F(ParserTest, StatementsAfterAnErrorStillParse) {
  ast::Module module = parse("x = = 1\ny = 2\n");
  EXPECT_EQ(errors().size(), 1u);
  ASSERT_EQ(module.body.size(), 1u);
  EXPECT_TRUE(llvm::isa<ast::AssignStmt>(module.body[0]));
}

TEST_F(ParserTest, AssignmentsToNonTargetsAreRejected) {
  parse("f() = 1\n1 = x\na + b += 1\n");
  std::vector<std::string> messages = errors();
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[0], "1: cannot assign to function call");
  EXPECT_EQ(messages[1], "2: cannot assign to literal");
  EXPECT_EQ(messages[2], "3: cannot assign to expression");
}

TEST_F(ParserTest, UnsupportedConstructsStillParse) {
  ast::Module module = parse("try:\n    x = [i for i in y]\nexcept E:\n    pass\n"
                             "with open(f) as g:\n    h = lambda: 1\n"
                             "class C:\n    pass\n");
  EXPECT_FALSE(diags.hasErrors());
  ASSERT_EQ(module.body.size(), 3u);
  EXPECT_EQ(module.body[0]->kind(), ast::Stmt::Kind::Try);
  EXPECT_EQ(module.body[1]->kind(), ast::Stmt::Kind::With);
  EXPECT_EQ(module.body[2]->kind(), ast::Stmt::Kind::ClassDef);
}

TEST_F(ParserTest, DeepNestingIsAnErrorNotAStackOverflow) {
  parse("x = " + std::string(190, '(') + "1" + std::string(190, ')') + "\n");
  EXPECT_FALSE(diags.hasErrors()); // within CPython's limits
  std::string chain = "x = 1";
  for (int i = 0; i < 5000; ++i)
    chain += " + 1";
  parse(chain + "\n");
  ASSERT_FALSE(errors().empty());
  EXPECT_EQ(errors().back(), "1: expression is nested too deeply");
}

TEST_F(ParserTest, EveryStatementsExpressionsAreVisitedInSourceOrder) {
  ast::Module module = parse("def f(a=d0):\n"
                             "    for t in it:\n"
                             "        if c1:\n"
                             "            x = v1\n"
                             "        else:\n"
                             "            y += v2\n"
                             "    while c2:\n"
                             "        assert c3, m1\n"
                             "    else:\n"
                             "        raise e1 from e2\n"
                             "    try:\n"
                             "        del z\n"
                             "    except E:\n"
                             "        pass\n"
                             "    return r1\n");
  ASSERT_FALSE(diags.hasErrors());
  std::vector<std::string> names;
  ast::forEachExpression(module.body, [&](ast::Expr *e) {
    if (const auto *name = llvm::dyn_cast<ast::NameExpr>(e))
      names.push_back(name->id.str());
  });
  EXPECT_EQ(names, (std::vector<std::string>{"d0", "t", "it", "c1", "x", "v1", "y", "v2", "c2",
                                             "c3", "m1", "e1", "e2", "z", "r1"}));
}

} // namespace
} // namespace kiln
