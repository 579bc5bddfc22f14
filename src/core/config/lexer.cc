#include "core/config/lexer.hh"

#include <cstdio>
#include <utility>

#include "core/suggest.hh"
#include "core/text_file.hh"

namespace fulcrum::config {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_ident_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
bool is_ident_char(char c) {
  return is_ident_start(c) || is_digit(c) || c == '@';
}

std::string position(int line, int column) {
  return std::to_string(line) + ":" + std::to_string(column);
}

// One argument being built: unquoted whitespace at either end is dropped, quoted text is kept.
class ArgBuilder {
 public:
  void add(char c, bool quoted) {
    if (!quoted && is_space(c) && !started_) return;
    out_ += c;
    if (quoted || !is_space(c)) {
      started_ = true;
      keep_ = out_.size();
    }
  }
  // An opening quote: even an empty string "" makes the argument start.
  void begin_quote() {
    started_ = true;
    keep_ = out_.size();
  }
  bool empty() const { return !started_; }
  std::string take() {
    out_.resize(keep_);
    std::string s = std::move(out_);
    *this = ArgBuilder();
    return s;
  }

 private:
  std::string out_;
  size_t keep_ = 0;
  bool started_ = false;
};

}  // namespace

std::string describe(const Token& token) {
  switch (token.kind) {
    case TokenKind::kInteger:
      return "integer";
    case TokenKind::kEnd:
      return "end of file";
    case TokenKind::kInvalid: {
      unsigned char c = static_cast<unsigned char>(token.text[0]);
      if (c < 0x20 || c >= 0x7f) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "'\\x%02x'", c);
        return buf;
      }
      break;
    }
    default:
      break;
  }
  return quote_excerpt(token.text);
}

Lexer::Lexer(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {}

void Lexer::advance() {
  if (text_[pos_] == '\n') {
    ++line_;
    column_ = 1;
  } else {
    ++column_;
  }
  ++pos_;
}

Error Lexer::error_here(const std::string& message) const {
  return make_error(loc(line_, column_).str() + ": " + message);
}

Result<bool> Lexer::skip_comment() {
  if (peek() == '#' || (peek() == '/' && peek(1) == '/')) {
    while (!at_end() && peek() != '\n') advance();
    return true;
  }
  if (peek() != '/' || peek(1) != '*') return false;
  int line = line_, column = column_;
  advance();
  advance();
  while (!at_end() && !(peek() == '*' && peek(1) == '/')) advance();
  if (at_end()) return error_here("unterminated comment started at " + position(line, column));
  advance();
  advance();
  return true;
}

Result<Token> Lexer::next() {
  for (;;) {
    while (!at_end() && is_space(peek())) advance();
    Result<bool> comment = skip_comment();
    if (!comment.ok()) return make_error(comment.error());
    if (!*comment) break;
  }
  Token token;
  token.line = line_;
  token.column = column_;
  size_t start = pos_;
  if (at_end()) {
    token.kind = TokenKind::kEnd;
    return token;
  }
  char c = peek();
  size_t length = 1;
  if (is_ident_start(c)) {
    token.kind = TokenKind::kIdent;
    while (is_ident_char(peek(length))) ++length;
  } else if (is_digit(c)) {
    token.kind = TokenKind::kInteger;
    while (is_digit(peek(length))) ++length;
  } else if (c == '-' && peek(1) == '>') {
    token.kind = TokenKind::kArrow;
    length = 2;
  } else if (c == ':' && peek(1) == ':') {
    token.kind = TokenKind::kColonColon;
    length = 2;
  } else {
    switch (c) {
      case ',':
        token.kind = TokenKind::kComma;
        break;
      case ';':
        token.kind = TokenKind::kSemicolon;
        break;
      case '[':
        token.kind = TokenKind::kLBracket;
        break;
      case ']':
        token.kind = TokenKind::kRBracket;
        break;
      case '(':
        token.kind = TokenKind::kLParen;
        break;
      case ')':
        token.kind = TokenKind::kRParen;
        break;
      default:
        token.kind = TokenKind::kInvalid;
        break;
    }
  }
  for (size_t i = 0; i < length; ++i) advance();
  token.text = text_.substr(start, length);
  return token;
}

Status Lexer::expand_parameter(Parameters& parameters, std::string& value) {
  const int line = line_, column = column_;
  const bool braced = peek(1) == '{';
  if (!braced && !is_ident_start(peek(1))) {
    advance();
    value = "$";
    return {};
  }
  advance();  // '$'
  if (braced) advance();
  std::string name;
  while (!at_end() && (is_ident_start(peek()) || is_digit(peek()))) {
    name += peek();
    advance();
  }
  if (braced) {
    if (peek() != '}' || name.empty())
      return make_error(file_ + ":" + position(line, column) + ": expected ${NAME}");
    advance();
  }
  parameters.referenced.insert(name);
  auto it = parameters.values.find(name);
  if (it == parameters.values.end()) {
    std::vector<std::string> known;
    for (const auto& [k, v] : parameters.values) known.push_back(k);
    return make_error(file_ + ":" + position(line, column) + ": undefined parameter $" + name +
                      did_you_mean(name, known) + " (give " + name +
                      "=VALUE after the pipeline file, or define($" + name +
                      " VALUE) before this line)");
  }
  value = it->second;
  return {};
}

Result<std::vector<std::string>> Lexer::read_args(const Token& open, Parameters* parameters) {
  std::vector<std::string> args;
  ArgBuilder arg;
  bool any_comma = false;
  int parens = 0, brackets = 0;
  for (;;) {
    Result<bool> comment = skip_comment();
    if (!comment.ok()) return make_error(comment.error());
    if (*comment) {
      arg.add(' ', false);
      continue;
    }
    if (at_end()) {
      return error_here("expected ')' to close argument list opened at " +
                        position(open.line, open.column) + ", got end of file");
    }
    char c = peek();
    if (c == '$' && parameters != nullptr) {
      std::string value;
      if (Status s = expand_parameter(*parameters, value); !s) return make_error(s.error());
      for (char v : value) arg.add(v, true);
      continue;
    }
    if (c == '"') {
      int line = line_, column = column_;
      advance();
      arg.begin_quote();
      while (!at_end() && peek() != '"') {
        if (peek() == '$' && parameters != nullptr) {
          std::string value;
          if (Status s = expand_parameter(*parameters, value); !s) return make_error(s.error());
          for (char v : value) arg.add(v, true);
          continue;
        }
        if (peek() == '\\' && (peek(1) == '"' || peek(1) == '\\')) advance();
        arg.add(peek(), true);
        advance();
      }
      if (at_end()) return error_here("unterminated string started at " + position(line, column));
      advance();
      continue;
    }
    advance();
    if (c == ')' && parens == 0) break;
    if (c == ',' && parens == 0 && brackets == 0) {
      args.push_back(arg.take());
      any_comma = true;
      continue;
    }
    if (c == '(') ++parens;
    if (c == ')') --parens;
    if (c == '[') ++brackets;
    if (c == ']' && brackets > 0) --brackets;
    arg.add(c, false);
  }
  if (any_comma || !arg.empty()) args.push_back(arg.take());
  return args;
}

}  // namespace fulcrum::config
