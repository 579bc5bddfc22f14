#include "l7/config.hh"

#include <fstream>
#include <sstream>
#include <vector>

#include "core/args.hh"
#include "core/location.hh"
#include "core/suggest.hh"
#include "l7/nf/nf.hh"

namespace fulcrum::l7 {

namespace {

class ChainParser {
 public:
  ChainParser(std::string_view text, std::string file) : t_(text), file_(std::move(file)) {}

  Result<std::unique_ptr<Chain>> parse() {
    auto chain = std::make_unique<Chain>();
    bool need_nf = false;  // after "->"
    for (;;) {
      skip_blank(true);
      if (at_end()) {
        if (need_nf) return fail("expected an NF name after '->'");
        return chain;
      }
      if (!ident_start(peek())) return fail("expected an NF name");
      const SourceLoc loc = here();
      std::string name;
      while (!at_end() && ident_char(peek())) name += next();
      std::vector<std::string> args;
      skip_blank(false);
      if (!at_end() && peek() == '(') {
        const SourceLoc open = here();
        next();
        Status st = read_args(args, open);
        if (!st) return make_error(st.error());
      }
      const NfFactory* factory = NfRegistry::instance().find(name);
      if (!factory) {
        std::vector<std::string> known;
        for (const auto& [k, f] : NfRegistry::instance().all()) known.push_back(k);
        std::string list;
        for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
        return make_error(loc.str() + ": unknown NF '" + name + "'" + did_you_mean(name, known) +
                          " (known: " + (list.empty() ? "none" : list) + ")");
      }
      Args a(args, loc, name + "@" + std::to_string(chain->size() + 1), name);
      Result<std::unique_ptr<FlowNf>> nf = (*factory)(a);
      if (!nf) return make_error(nf.error());
      chain->add(std::move(*nf));
      // Separator: "->", ";", a line end or the end.
      skip_blank(false);
      need_nf = false;
      if (at_end()) continue;
      if (peek() == '-' && pos_ + 1 < t_.size() && t_[pos_ + 1] == '>') {
        next();
        next();
        need_nf = true;
      } else if (peek() == ';' || peek() == '\n') {
        next();
      } else {
        return fail(std::string("expected '->', ';' or a line end after ") + name + ", got '" +
                    peek() + "'");
      }
    }
  }

 private:
  Status read_args(std::vector<std::string>& args, const SourceLoc& open) {
    std::string cur;
    int depth = 0;
    bool quoted = false;
    while (!at_end()) {
      const char c = next();
      if (quoted) {
        if (c == '"')
          quoted = false;
        else
          cur += c;
        continue;
      }
      if (c == '"') {
        quoted = true;
      } else if (c == '(') {
        ++depth;
        cur += c;
      } else if (c == ')' && depth > 0) {
        --depth;
        cur += c;
      } else if (c == ')') {
        args.push_back(cur);
        if (args.size() == 1 && args[0].find_first_not_of(" \t\r\n") == std::string::npos)
          args.clear();
        return {};
      } else if (c == ',' && depth == 0) {
        args.push_back(cur);
        cur.clear();
      } else if (c == '#' && cur.find_first_not_of(" \t\r\n") == std::string::npos) {
        while (!at_end() && peek() != '\n') next();
      } else {
        cur += c;
      }
    }
    return make_error(open.str() + ": expected ')' to close the argument list opened here");
  }

  void skip_blank(bool newlines) {
    while (!at_end()) {
      const char c = peek();
      if (c == ' ' || c == '\t' || c == '\r' || (newlines && (c == '\n' || c == ';'))) {
        next();
      } else if (c == '#' || (c == '/' && pos_ + 1 < t_.size() && t_[pos_ + 1] == '/')) {
        while (!at_end() && peek() != '\n') next();
      } else {
        return;
      }
    }
  }

  static bool ident_start(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
  }
  static bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }
  bool at_end() const { return pos_ >= t_.size(); }
  char peek() const { return t_[pos_]; }
  char next() {
    const char c = t_[pos_++];
    if (c == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    return c;
  }
  SourceLoc here() const { return SourceLoc{file_, line_, col_}; }
  Error fail(const std::string& what) const { return make_error(here().str() + ": " + what); }

  std::string_view t_;
  std::string file_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
};

}  // namespace

Result<std::unique_ptr<Chain>> parse_chain(std::string_view text, const std::string& file) {
  return ChainParser(text, file).parse();
}

Result<std::unique_ptr<Chain>> load_chain(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error(path + ": cannot read the file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_chain(ss.str(), path);
}

}  // namespace fulcrum::l7
