// `fulcrum graph PIPELINE [--dot | --svg] [--out FILE]`: the pipeline as a drawing. DOT is
// written by us; SVG by Graphviz's `dot` (Debian graphviz), run as a child process.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hh"
#include "cli/pipeline_options.hh"
#include "core/args.hh"
#include "core/registry.hh"
#include "runtime/runtime.hh"

namespace fulcrum::cli {
namespace {

constexpr const char* kGraphUsage =
    R"(usage: fulcrum graph PIPELINE.click [NAME=VALUE ...] [--dot | --svg] [--out FILE]

  Draws the pipeline: one box per element (name and class), one arrow per connection, labelled
  with the output (and input) port where an element has several; outputs left unconnected are
  drawn as red dashed arrows to a dot (their packets would be dropped; optional outputs, such as
  DecIPTTL's for expired packets, are left out).
  --dot        Graphviz DOT text (the default)
  --svg        SVG, laid out by Graphviz's dot (Debian package graphviz)
  --out FILE   write to FILE instead of standard output
)";

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "fulcrum graph: %s\n\n%s", msg.c_str(), kGraphUsage);
  return 2;
}

std::string dot_quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The DOT text, or the first configuration error (output counts come from configure()).
Result<std::string> to_dot(const PipelineConfig& config) {
  std::vector<int> outputs(config.elements.size(), 0), inputs(config.elements.size(), 0);
  std::vector<uint64_t> optional(config.elements.size(), 0);
  for (size_t i = 0; i < config.elements.size(); ++i) {
    const ConfigElement& ce = config.elements[i];
    const ElementClassInfo* info = Registry::instance().find(ce.class_name);
    if (info == nullptr)
      return make_error(ce.loc.str() + ": unknown element class '" + ce.class_name + "'");
    std::unique_ptr<Element> e = info->create();
    e->set_name(ce.name);
    Args args(ce.args, ce.loc, ce.name, ce.class_name);
    if (Status s = e->configure(args); !s) return make_error(s.error());
    outputs[i] = e->noutputs();
    inputs[i] = e->traits().inputs;
    optional[i] = e->traits().optional_outputs;
  }
  std::ostringstream o;
  o << "digraph " << dot_quoted(config.file) << " {\n"
    << "  rankdir=LR;\n  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n"
    << "  edge [fontname=\"Helvetica\", fontsize=10];\n";
  for (size_t i = 0; i < config.elements.size(); ++i) {
    const ConfigElement& ce = config.elements[i];
    const std::string label = ce.anonymous ? ce.class_name : ce.name + "\n" + ce.class_name;
    o << "  n" << i << " [label=" << dot_quoted(label) << "];\n";
  }
  std::vector<std::vector<bool>> connected(config.elements.size());
  for (size_t i = 0; i < config.elements.size(); ++i)
    connected[i].assign(static_cast<size_t>(std::max(outputs[i], 0)), false);
  for (const ConfigConnection& c : config.connections) {
    o << "  n" << c.from << " -> n" << c.to;
    std::vector<std::string> attrs;
    if (outputs[c.from] > 1) attrs.push_back("taillabel=\"" + std::to_string(c.from_port) + "\"");
    if (inputs[c.to] > 1) attrs.push_back("headlabel=\"" + std::to_string(c.to_port) + "\"");
    if (!attrs.empty()) {
      o << " [";
      for (size_t k = 0; k < attrs.size(); ++k) o << (k ? ", " : "") << attrs[k];
      o << "]";
    }
    o << ";\n";
    if (c.from_port >= 0 && c.from_port < outputs[c.from])
      connected[c.from][static_cast<size_t>(c.from_port)] = true;
  }
  for (size_t i = 0; i < connected.size(); ++i)
    for (size_t p = 0; p < connected[i].size(); ++p) {
      if (connected[i][p] || ((optional[i] >> p) & 1) != 0) continue;
      o << "  u" << i << "_" << p << " [shape=point, color=red];\n"
        << "  n" << i << " -> u" << i << "_" << p << " [color=red, style=dashed, label=\"out " << p
        << ": unconnected\"];\n";
    }
  o << "}\n";
  return o.str();
}

// Runs `dot -Tsvg` on `dot_text`, its output to `out` (standard output when empty).
Status render_svg(const std::string& dot_text, const std::string& out) {
  int to_child[2];
  if (::pipe(to_child) != 0) return make_error(std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) return make_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::dup2(to_child[0], STDIN_FILENO);
    ::close(to_child[0]);
    ::close(to_child[1]);
    if (out.empty())
      ::execlp("dot", "dot", "-Tsvg", static_cast<char*>(nullptr));
    else
      ::execlp("dot", "dot", "-Tsvg", "-o", out.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(to_child[0]);
  size_t written = 0;
  while (written < dot_text.size()) {
    const ssize_t n = ::write(to_child[1], dot_text.data() + written, dot_text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  ::close(to_child[1]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    return make_error("Graphviz's dot is not installed (Debian: apt-get install graphviz)");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return make_error("dot -Tsvg failed (exit status " + std::to_string(WEXITSTATUS(status)) + ")");
  return {};
}

}  // namespace

int cmd_graph(const std::vector<std::string>& args) {
  RunOptions opt;
  bool svg = false;
  std::string out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kGraphUsage, stdout);
      return 0;
    } else if (a == "--dot") {
      svg = false;
    } else if (a == "--svg") {
      svg = true;
    } else if (a == "--out") {
      if (i + 1 >= args.size()) return usage_error("--out needs a file name");
      out = args[++i];
    } else if (std::string e = positional_pipeline(a, opt, {"--dot", "--svg", "--out", "--help"});
               !e.empty()) {
      return usage_error(e);
    }
  }
  if (opt.pipeline_file.empty()) return usage_error("no pipeline file given");
  Result<PipelineConfig> config = load_pipeline(opt);
  Result<std::string> dot = config ? to_dot(config.value()) : make_error(config.error());
  if (!dot) {
    std::fprintf(stderr, "%s\n", dot.error().c_str());
    return 1;
  }
  if (svg) {
    if (Status s = render_svg(dot.value(), out); !s) {
      std::fprintf(stderr, "fulcrum graph: %s\n", s.error().c_str());
      return 1;
    }
    return 0;
  }
  if (out.empty()) {
    std::cout << dot.value();
    return 0;
  }
  std::ofstream file(out);
  file << dot.value();
  file.close();
  if (!file) {
    std::fprintf(stderr, "fulcrum graph: cannot write %s\n", out.c_str());
    return 1;
  }
  return 0;
}

}  // namespace fulcrum::cli
