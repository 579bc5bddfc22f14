// The parser of the Click configuration language (grammar in docs/config-language.md).
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/config/ast.hh"
#include "core/config/lexer.hh"
#include "core/registry.hh"
#include "core/suggest.hh"
#include "core/text_file.hh"

namespace fulcrum {
namespace {

using config::Lexer;
using config::Parameters;
using config::Token;
using config::TokenKind;

std::vector<std::string> class_names() {
  std::vector<std::string> names;
  for (const auto& [name, info] : Registry::instance().all()) names.emplace_back(name);
  return names;
}

// An element as used in a chain: an index into the elements, or a name not declared yet.
struct ElementRef {
  size_t index = 0;
  bool pending = false;  // `index` is into Parser::pending_ rather than the elements
};

// A connection whose ends may still be pending names.
struct RawConnection {
  ElementRef from;
  int from_port;
  ElementRef to;
  int to_port;
  SourceLoc loc;
};

struct PendingName {
  std::string name;
  SourceLoc loc;
};

class Parser {
 public:
  Parser(std::string_view text, const std::string& file, const ClassLookup& is_class,
         const std::map<std::string, std::string>& parameters)
      : lexer_(text, file), is_class_(is_class) {
    config_.file = file;
    for (const auto& [name, value] : parameters) {
      parameters_.values.emplace(name, value);
      parameters_.from_command_line.insert(name);
    }
  }

  Result<PipelineConfig> parse();

 private:
  Status advance();
  Error error_at(const Token& token, const std::string& message) const;
  Error expected(const std::string& what) const;
  Status statement();
  Status declare_several(const Token& first);
  Status define();
  Status unused_parameters() const;
  Result<ElementRef> element(const Token& word);
  Result<int> port();
  Result<std::vector<std::string>> optional_args();
  Result<size_t> add_element(const Token& name, const Token& cls, std::vector<std::string> args);
  Status resolve();

  Lexer lexer_;
  const ClassLookup& is_class_;
  Token tok_;  // the next token, not consumed yet
  PipelineConfig config_;
  std::map<std::string, size_t, std::less<>> names_;  // element name -> index
  int anonymous_ = 0;
  std::vector<PendingName> pending_;
  std::vector<RawConnection> connections_;
  Parameters parameters_;
  std::set<std::string> defined_;  // names a define() statement gave
};

Status Parser::advance() {
  Result<Token> t = lexer_.next();
  if (!t.ok()) return make_error(t.error());
  tok_ = *t;
  return {};
}

Error Parser::error_at(const Token& token, const std::string& message) const {
  return make_error(lexer_.loc(token).str() + ": " + message);
}

Error Parser::expected(const std::string& what) const {
  return error_at(tok_, "expected " + what + ", got " + config::describe(tok_));
}

Result<PipelineConfig> Parser::parse() {
  if (Status s = advance(); !s.ok()) return make_error(s.error());
  while (tok_.kind != TokenKind::kEnd) {
    Status s = tok_.kind == TokenKind::kSemicolon ? advance() : statement();
    if (!s.ok()) return make_error(s.error());
  }
  if (Status s = resolve(); !s.ok()) return make_error(s.error());
  if (Status s = unused_parameters(); !s.ok()) return make_error(s.error());
  return std::move(config_);
}

// statement := NAME (',' NAME)+ '::' CLASS [args]
//            | element ['[' INT ']' '->' ['[' INT ']'] element]*
// A chain ends at the first token that is not '->' (or '[' for an output port).
Status Parser::statement() {
  if (tok_.kind != TokenKind::kIdent) return expected("element name or class");
  Token word = tok_;
  if (Status s = advance(); !s.ok()) return s;
  if (word.text == "define" && tok_.kind == TokenKind::kLParen) return define();
  if (tok_.kind == TokenKind::kComma) return declare_several(word);
  Result<ElementRef> from = element(word);
  if (!from.ok()) return make_error(from.error());
  for (;;) {
    Result<int> from_port = 0;
    if (tok_.kind == TokenKind::kLBracket) {
      from_port = port();
      if (!from_port.ok()) return make_error(from_port.error());
      if (tok_.kind != TokenKind::kArrow) return expected("'->' after output port");
    }
    if (tok_.kind != TokenKind::kArrow) return {};
    SourceLoc arrow = lexer_.loc(tok_);
    if (Status s = advance(); !s.ok()) return s;
    Result<int> to_port = 0;
    if (tok_.kind == TokenKind::kLBracket) {
      to_port = port();
      if (!to_port.ok()) return make_error(to_port.error());
    }
    if (tok_.kind != TokenKind::kIdent) return expected("element name or class");
    word = tok_;
    if (Status s = advance(); !s.ok()) return s;
    Result<ElementRef> to = element(word);
    if (!to.ok()) return make_error(to.error());
    connections_.push_back(RawConnection{*from, *from_port, *to, *to_port, std::move(arrow)});
    from = to;
  }
}

// define($NAME value, ...), with tok_ at the '(': a default for each name the command line
// leaves out. The statement ends there.
Status Parser::define() {
  const Token open = tok_;
  Result<std::vector<std::string>> args = lexer_.read_args(open, nullptr);
  if (!args.ok()) return make_error(args.error());
  for (const std::string& a : *args) {
    size_t end = 1;
    while (end < a.size() && (std::isalnum(static_cast<unsigned char>(a[end])) || a[end] == '_'))
      ++end;
    if (a.size() < 2 || a[0] != '$' || std::isdigit(static_cast<unsigned char>(a[1])) || end == 1 ||
        (end < a.size() && a[end] != ' ' && a[end] != '\t'))
      return error_at(open, "define: expected '$NAME VALUE', got " + quote_excerpt(a));
    const std::string name = a.substr(1, end - 1);
    const size_t start = a.find_first_not_of(" \t", end);
    const std::string value = start == std::string::npos ? "" : a.substr(start);
    if (!defined_.insert(name).second)
      return error_at(open, "define: $" + name + " is defined twice");
    if (!parameters_.from_command_line.count(name)) parameters_.values[name] = value;
  }
  if (Status s = advance(); !s.ok()) return s;
  if (tok_.kind != TokenKind::kSemicolon && tok_.kind != TokenKind::kEnd)
    return expected("';' after define(...)");
  return {};
}

// A NAME=value from the command line that the file neither uses nor defines is most likely a
// typo: an error naming the closest name the file knows.
Status Parser::unused_parameters() const {
  std::set<std::string> names = parameters_.referenced;
  names.insert(defined_.begin(), defined_.end());
  const std::vector<std::string> known(names.begin(), names.end());
  for (const std::string& name : parameters_.from_command_line)
    if (!parameters_.referenced.count(name) && !defined_.count(name))
      return make_error(config_.file + ": parameter " + name +
                        "= from the command line is not used in the pipeline" +
                        did_you_mean(name, known));
  return {};
}

// After the first name and its ',': the other names, '::', the class and its arguments.
Status Parser::declare_several(const Token& first) {
  std::vector<Token> names{first};
  while (tok_.kind == TokenKind::kComma) {
    if (Status s = advance(); !s.ok()) return s;
    if (tok_.kind != TokenKind::kIdent) return expected("element name after ','");
    names.push_back(tok_);
    if (Status s = advance(); !s.ok()) return s;
  }
  if (tok_.kind != TokenKind::kColonColon) return expected("'::' after element names");
  if (Status s = advance(); !s.ok()) return s;
  if (tok_.kind != TokenKind::kIdent) return expected("element class after '::'");
  Token cls = tok_;
  if (Status s = advance(); !s.ok()) return s;
  Result<std::vector<std::string>> args = optional_args();
  if (!args.ok()) return make_error(args.error());
  for (const Token& name : names) {
    if (Result<size_t> e = add_element(name, cls, *args); !e.ok()) return make_error(e.error());
  }
  if (tok_.kind == TokenKind::kArrow || tok_.kind == TokenKind::kLBracket) {
    return expected("end of statement after a declaration of several elements");
  }
  return {};
}

// element := NAME '::' CLASS [args] | CLASS args | CLASS | NAME, where `word` (consumed) is the
// first NAME or CLASS.
Result<ElementRef> Parser::element(const Token& word) {
  if (tok_.kind == TokenKind::kColonColon) {
    if (Status s = advance(); !s.ok()) return make_error(s.error());
    if (tok_.kind != TokenKind::kIdent) return expected("element class after '::'");
    Token cls = tok_;
    if (Status s = advance(); !s.ok()) return make_error(s.error());
    Result<std::vector<std::string>> args = optional_args();
    if (!args.ok()) return make_error(args.error());
    Result<size_t> e = add_element(word, cls, std::move(*args));
    if (!e.ok()) return make_error(e.error());
    return ElementRef{*e, false};
  }
  if (tok_.kind == TokenKind::kLParen || is_class_(word.text)) {
    Result<std::vector<std::string>> args = optional_args();
    if (!args.ok()) return make_error(args.error());
    Token none;
    Result<size_t> e = add_element(none, word, std::move(*args));
    if (!e.ok()) return make_error(e.error());
    return ElementRef{*e, false};
  }
  if (auto it = names_.find(word.text); it != names_.end()) return ElementRef{it->second, false};
  pending_.push_back(PendingName{std::string(word.text), lexer_.loc(word)});
  return ElementRef{pending_.size() - 1, true};
}

// port := '[' INT ']', with tok_ at the '['.
Result<int> Parser::port() {
  if (Status s = advance(); !s.ok()) return make_error(s.error());
  if (tok_.kind != TokenKind::kInteger) return expected("port number");
  long long value = 0;
  for (char c : tok_.text) {
    value = value * 10 + (c - '0');
    if (value > INT_MAX) {
      return error_at(tok_, "port number " + std::string(tok_.text) + " is too large");
    }
  }
  if (Status s = advance(); !s.ok()) return make_error(s.error());
  if (tok_.kind != TokenKind::kRBracket) return expected("']' after port number");
  if (Status s = advance(); !s.ok()) return make_error(s.error());
  return static_cast<int>(value);
}

Result<std::vector<std::string>> Parser::optional_args() {
  if (tok_.kind != TokenKind::kLParen) return std::vector<std::string>{};
  Result<std::vector<std::string>> args = lexer_.read_args(tok_, &parameters_);
  if (!args.ok()) return args;
  if (Status s = advance(); !s.ok()) return make_error(s.error());
  return args;
}

// Adds a declared element `name`, or an anonymous one if `name` is an empty token.
Result<size_t> Parser::add_element(const Token& name, const Token& cls,
                                   std::vector<std::string> args) {
  bool anonymous = name.text.empty();
  ConfigElement e;
  e.class_name = std::string(cls.text);
  e.name = anonymous ? e.class_name + "@" + std::to_string(++anonymous_) : std::string(name.text);
  e.loc = lexer_.loc(anonymous ? cls : name);
  e.args = std::move(args);
  e.anonymous = anonymous;
  if (!anonymous && is_class_(name.text)) {
    return error_at(name, "element name '" + e.name + "' is an element class");
  }
  if (auto it = names_.find(e.name); it != names_.end()) {
    return make_error(e.loc.str() + ": element '" + e.name + "' redeclared (first declared at " +
                      config_.elements[it->second].loc.str() + ")");
  }
  if (!is_class_(cls.text))
    return error_at(cls, "unknown element class '" + e.class_name + "'" +
                             did_you_mean(e.class_name, class_names()));
  names_.emplace(e.name, config_.elements.size());
  config_.elements.push_back(std::move(e));
  return config_.elements.size() - 1;
}

// Resolves names used before their declaration; a name never declared is an error.
Status Parser::resolve() {
  std::vector<size_t> resolved;
  for (const PendingName& p : pending_) {
    auto it = names_.find(p.name);
    if (it == names_.end()) {
      std::vector<std::string> known = class_names();
      for (const auto& [name, index] : names_) known.push_back(name);
      return make_error(p.loc.str() + ": unknown element class or undeclared element '" + p.name +
                        "'" + did_you_mean(p.name, known));
    }
    resolved.push_back(it->second);
  }
  auto index = [&](const ElementRef& r) { return r.pending ? resolved[r.index] : r.index; };
  for (RawConnection& c : connections_) {
    config_.connections.push_back(
        ConfigConnection{index(c.from), c.from_port, index(c.to), c.to_port, std::move(c.loc)});
  }
  return {};
}

}  // namespace

Result<PipelineConfig> parse_pipeline(std::string_view text, const std::string& file,
                                      const ClassLookup& is_class,
                                      const std::map<std::string, std::string>& parameters) {
  return Parser(text, file, is_class, parameters).parse();
}

Result<PipelineConfig> parse_pipeline_file(const std::string& path, const ClassLookup& is_class,
                                           const std::map<std::string, std::string>& parameters) {
  Result<std::string> text = read_input_file(path, "pipeline file");
  if (!text) return make_error(text.error());
  return parse_pipeline(text.value(), path, is_class, parameters);
}

}  // namespace fulcrum
