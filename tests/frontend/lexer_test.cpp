//===- tests/frontend/lexer_test.cpp - Tokenizing Python ------------------===//

#include "frontend/parse/lexer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kiln {
namespace {

struct Lexed {
  std::vector<Token> tokens;
  std::vector<std::string> errors;
};

/// Tokenizes `source` and keeps the tokens' kinds and the error messages.
class LexerTest : public ::testing::Test {
protected:
  Lexed lex(std::string source) {
    uint32_t file = sources.addFile("test.py", std::move(source));
    Lexed result;
    result.tokens = tokenize(sources, file, diags);
    for (const Diagnostic &d : diags.diagnostics())
      result.errors.push_back(d.message);
    return result;
  }

  static std::string kinds(const Lexed &lexed) {
    std::string text;
    for (const Token &token : lexed.tokens) {
      if (!text.empty())
        text += ' ';
      switch (token.kind) {
      case TokenKind::Newline:
        text += "NL";
        break;
      case TokenKind::Indent:
        text += "INDENT";
        break;
      case TokenKind::Dedent:
        text += "DEDENT";
        break;
      case TokenKind::EndOfFile:
        text += "EOF";
        break;
      default:
        text += token.text.str();
      }
    }
    return text;
  }

  SourceManager sources;
  DiagnosticEngine diags{sources};
};

TEST_F(LexerTest, IndentationBecomesIndentAndDedentTokens) {
  Lexed lexed = lex("def f(x):\n    if x:\n        return 1\n    return 2\n");
  EXPECT_EQ(kinds(lexed), "def f ( x ) : NL INDENT if x : NL INDENT return 1 NL DEDENT return 2 NL "
                          "DEDENT EOF");
  EXPECT_TRUE(lexed.errors.empty());
}

TEST_F(LexerTest, BlankAndCommentLinesDoNotAffectIndentation) {
  Lexed lexed = lex("if x:\n\n    # comment\n      \n    y = 1\n");
  EXPECT_EQ(kinds(lexed), "if x : NL INDENT y = 1 NL DEDENT EOF");
}

TEST_F(LexerTest, NewlinesInsideBracketsAreIgnored) {
  Lexed lexed = lex("x = (1,\n     2)\ny = [\n  3]\n");
  EXPECT_EQ(kinds(lexed), "x = ( 1 , 2 ) NL y = [ 3 ] NL EOF");
}

TEST_F(LexerTest, BackslashJoinsLines) {
  Lexed lexed = lex("x = 1 + \\\n    2\n");
  EXPECT_EQ(kinds(lexed), "x = 1 + 2 NL EOF");
}

TEST_F(LexerTest, FileWithoutFinalNewlineStillEndsTheLineAndBlocks) {
  Lexed lexed = lex("if x:\n    y = 1");
  EXPECT_EQ(kinds(lexed), "if x : NL INDENT y = 1 NL DEDENT EOF");
}

TEST_F(LexerTest, NumberLiteralsKeepTheirSpelling) {
  Lexed lexed = lex("0x1F 0b1010 0o17 1_000_000 1.5e-3 .5 2. 3j 1e10J 0 00\n");
  EXPECT_EQ(kinds(lexed), "0x1F 0b1010 0o17 1_000_000 1.5e-3 .5 2. 3j 1e10J 0 00 NL EOF");
  EXPECT_TRUE(lexed.errors.empty());
}

TEST_F(LexerTest, NumberRunningIntoANameIsOneBadToken) {
  Lexed lexed = lex("x = 1abc\n");
  ASSERT_EQ(lexed.errors.size(), 1u);
  EXPECT_EQ(lexed.errors[0], "invalid number literal '1abc'");
}

TEST_F(LexerTest, OperatorsUseLongestMatch) {
  Lexed lexed = lex("a **= b // c >>= d != e := f -> g ...\n");
  EXPECT_EQ(kinds(lexed), "a **= b // c >>= d != e := f -> g ... NL EOF");
}

TEST_F(LexerTest, StringPrefixesAndTripleQuotes) {
  Lexed lexed = lex("s = r'a\\b' + b\"x\" + '''multi\nline''' + f\"{x}\"\n");
  EXPECT_EQ(lexed.tokens[2].text, "r'a\\b'");
  EXPECT_EQ(lexed.tokens[4].text, "b\"x\"");
  EXPECT_EQ(lexed.tokens[6].text, "'''multi\nline'''");
  EXPECT_EQ(lexed.tokens[8].text, "f\"{x}\"");
  EXPECT_TRUE(lexed.errors.empty());
}

TEST_F(LexerTest, UnterminatedStringIsReported) {
  Lexed lexed = lex("s = 'abc\nt = 1\n");
  ASSERT_FALSE(lexed.errors.empty());
  EXPECT_EQ(lexed.errors[0], "unterminated string literal");
}

TEST_F(LexerTest, UnterminatedTripleQuotedStringIsReported) {
  Lexed lexed = lex("s = \"\"\"abc\n");
  ASSERT_FALSE(lexed.errors.empty());
  EXPECT_EQ(lexed.errors[0], "unterminated triple-quoted string literal");
}

TEST_F(LexerTest, UnclosedBracketIsReportedAtTheBracket) {
  Lexed lexed = lex("x = foo(1,\n  2\n");
  ASSERT_EQ(lexed.errors.size(), 1u);
  EXPECT_EQ(lexed.errors[0], "'(' was never closed");
  EXPECT_EQ(diags.diagnostics()[0].range.begin.offset, 7u);
}

TEST_F(LexerTest, MismatchedBracketsAreReported) {
  Lexed lexed = lex("x = (1]\n");
  ASSERT_FALSE(lexed.errors.empty());
  EXPECT_EQ(lexed.errors[0], "closing parenthesis ']' does not match opening parenthesis '('");
}

TEST_F(LexerTest, UnindentToUnknownLevelIsReported) {
  Lexed lexed = lex("if x:\n        y = 1\n    z = 2\n");
  ASSERT_FALSE(lexed.errors.empty());
  EXPECT_EQ(lexed.errors[0], "unindent does not match any outer indentation level");
}

TEST_F(LexerTest, InconsistentTabsAndSpacesAreReported) {
  Lexed lexed = lex("if x:\n\ty = 1\n        z = 2\n");
  ASSERT_FALSE(lexed.errors.empty());
  EXPECT_EQ(lexed.errors[0], "inconsistent use of tabs and spaces in indentation");
}

TEST_F(LexerTest, InvalidCharactersNameTheirCodePoint) {
  Lexed lexed = lex("x = a $ b\n");
  ASSERT_EQ(lexed.errors.size(), 1u);
  EXPECT_EQ(lexed.errors[0], "invalid character '$' (U+0024)");
}

TEST_F(LexerTest, NullBytesAreRejected) {
  Lexed lexed = lex(std::string("x = 1\0\n", 7));
  ASSERT_EQ(lexed.errors.size(), 1u);
  EXPECT_EQ(lexed.errors[0], "source code cannot contain null bytes");
}

TEST_F(LexerTest, MalformedUtf8IsRejected) {
  Lexed lexed = lex("x\xff = 1\n");
  ASSERT_FALSE(lexed.errors.empty());
  EXPECT_EQ(lexed.errors[0], "invalid UTF-8 byte in source");
}

// CPython decodes the whole file first: a bad byte anywhere is an error.
TEST_F(LexerTest, MalformedUtf8InACommentIsRejected) {
  Lexed lexed = lex("x = 1  # caf\xe9\ny = 2\n");
  ASSERT_EQ(lexed.errors.size(), 1u);
  EXPECT_EQ(lexed.errors[0], "invalid UTF-8 byte in source");
}

TEST_F(LexerTest, MalformedUtf8InAStringIsRejected) {
  Lexed lexed = lex("s = \"\xff\"\n");
  ASSERT_EQ(lexed.errors.size(), 1u);
  EXPECT_EQ(lexed.errors[0], "invalid UTF-8 byte in source");
}

TEST_F(LexerTest, MalformedUtf8InAnIdentifierIsReportedOnce) {
  Lexed lexed = lex("x\xff = 1\n");
  EXPECT_EQ(lexed.errors, (std::vector<std::string>{"invalid UTF-8 byte in source"}));
}

TEST_F(LexerTest, NonAsciiIdentifiersAreAccepted) {
  Lexed lexed = lex("\xce\xbb = 1\n");
  EXPECT_TRUE(lexed.errors.empty());
  EXPECT_EQ(lexed.tokens[0].kind, TokenKind::Identifier);
}

TEST_F(LexerTest, TooManyNestedBracketsAreRejected) {
  Lexed lexed = lex("x = " + std::string(300, '(') + "1" + std::string(300, ')') + "\n");
  ASSERT_FALSE(lexed.errors.empty());
  EXPECT_EQ(lexed.errors[0], "too many nested parentheses");
}

TEST_F(LexerTest, ExpressionModeIgnoresLineStructure) {
  uint32_t file = sources.addFile("sig", "  void(float32[:],\n int64) ");
  std::vector<Token> tokens = tokenizeExpression(
      sources, file, 0, static_cast<uint32_t>(sources.contents(file).size()), diags);
  std::string text;
  for (const Token &token : tokens)
    text += token.text.str() + "|";
  EXPECT_EQ(text, "void|(|float32|[|:|]|,|int64|)||");
  EXPECT_FALSE(diags.hasErrors());
}

} // namespace
} // namespace kiln
