// The lexer of the Click configuration language: tokens, comments, and argument lists.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/location.hh"
#include "core/result.hh"

namespace fulcrum::config {

enum class TokenKind {
  kIdent,       // [A-Za-z_][A-Za-z0-9_@]*
  kInteger,     // [0-9]+
  kArrow,       // ->
  kColonColon,  // ::
  kComma,
  kSemicolon,
  kLBracket,
  kRBracket,
  kLParen,
  kRParen,
  kInvalid,  // any other byte
  kEnd,
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string_view text;
  int line = 0;
  int column = 0;
};

// How a token reads in an error message: 'foo', '->', integer, end of file.
std::string describe(const Token& token);

// Values for $NAME and ${NAME} in argument lists (Click's convention): NAME=value from the
// command line, then define($NAME value) statements for names the command line leaves out.
struct Parameters {
  std::map<std::string, std::string> values;
  std::set<std::string> from_command_line;
  std::set<std::string> referenced;  // names an argument used
};

class Lexer {
 public:
  Lexer(std::string_view text, std::string file);

  // The next token, skipping whitespace and comments. Fails on an unterminated comment.
  Result<Token> next();

  // Reads the argument list that follows `open`, the '(' token next() has just returned, up to
  // and including its closing ')'. Arguments are split on top-level commas, trimmed, comments
  // removed and double quotes resolved; with `parameters`, $NAME and ${NAME} (also inside double
  // quotes) are replaced by their values, and an undefined one is an error at its place.
  Result<std::vector<std::string>> read_args(const Token& open, Parameters* parameters);

  SourceLoc loc(int line, int column) const { return SourceLoc{file_, line, column}; }
  SourceLoc loc(const Token& token) const { return loc(token.line, token.column); }
  const std::string& file() const { return file_; }

 private:
  bool at_end() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  void advance();
  // If a comment starts here, skips it and returns true. Fails if it never ends.
  Result<bool> skip_comment();
  Error error_here(const std::string& message) const;
  // At a '$': appends the parameter's value to the argument being read (a '$' that starts no
  // name is kept as it is).
  Status expand_parameter(Parameters& parameters, std::string& value);

  std::string_view text_;
  std::string file_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};

}  // namespace fulcrum::config
