#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/args.hh"
#include "core/config/ast.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

bool known_class(std::string_view name) {
  static const std::set<std::string, std::less<>> kClasses = {
      "FromInput", "ToOutput",   "Discard", "CheckIPHeader",
      "IPLookup",  "Classifier", "Counter", "NoOp"};
  return kClasses.count(name) > 0;
}

PipelineConfig parse_ok(std::string_view text) {
  Result<PipelineConfig> r = parse_pipeline(text, "t.click", known_class);
  EXPECT_TRUE(r.ok()) << r.error();
  return r.ok() ? *r : PipelineConfig{};
}

std::string parse_error(std::string_view text) {
  Result<PipelineConfig> r = parse_pipeline(text, "t.click", known_class);
  return r.ok() ? std::string("(parsed)") : r.error();
}

// "from[port] -> [port]to" for each connection, by element name.
std::vector<std::string> edges(const PipelineConfig& c) {
  std::vector<std::string> out;
  for (const ConfigConnection& e : c.connections) {
    out.push_back(c.elements.at(e.from).name + "[" + std::to_string(e.from_port) + "] -> [" +
                  std::to_string(e.to_port) + "]" + c.elements.at(e.to).name);
  }
  return out;
}

std::vector<std::string> names(const PipelineConfig& c) {
  std::vector<std::string> out;
  for (const ConfigElement& e : c.elements) out.push_back(e.name);
  return out;
}

using Strings = std::vector<std::string>;

TEST(ConfigParser, EmptyInputGivesEmptyPipeline) {
  PipelineConfig c = parse_ok(" \n// nothing\n;;\n");
  EXPECT_EQ(c.file, "t.click");
  EXPECT_TRUE(c.elements.empty());
  EXPECT_TRUE(c.connections.empty());
}

TEST(ConfigParser, DeclarationWithArgs) {
  PipelineConfig c = parse_ok("rt :: IPLookup(10.0.0.0/8 0, 0.0.0.0/0 1);");
  ASSERT_EQ(c.elements.size(), 1u);
  const ConfigElement& e = c.elements[0];
  EXPECT_EQ(e.name, "rt");
  EXPECT_EQ(e.class_name, "IPLookup");
  EXPECT_EQ(e.args, (Strings{"10.0.0.0/8 0", "0.0.0.0/0 1"}));
  EXPECT_FALSE(e.anonymous);
  EXPECT_EQ(e.loc.file, "t.click");
  EXPECT_EQ(e.loc.line, 1);
  EXPECT_EQ(e.loc.column, 1);
}

TEST(ConfigParser, DeclarationWithoutArgsAndEmptyArgs) {
  PipelineConfig c = parse_ok("a :: Discard\nb :: NoOp()\nc :: Counter(  )");
  ASSERT_EQ(c.elements.size(), 3u);
  EXPECT_EQ(names(c), (Strings{"a", "b", "c"}));
  for (const ConfigElement& e : c.elements) EXPECT_TRUE(e.args.empty()) << e.name;
  EXPECT_EQ(c.elements[2].loc.line, 3);
}

TEST(ConfigParser, SeveralNamesInOneDeclaration) {
  PipelineConfig c = parse_ok("c1, c2 ,c3 :: Counter(X 1, Y)");
  ASSERT_EQ(c.elements.size(), 3u);
  EXPECT_EQ(names(c), (Strings{"c1", "c2", "c3"}));
  for (const ConfigElement& e : c.elements) {
    EXPECT_EQ(e.class_name, "Counter");
    EXPECT_EQ(e.args, (Strings{"X 1", "Y"}));
  }
  EXPECT_EQ(c.elements[1].loc.column, 5);
  EXPECT_EQ(c.elements[2].loc.column, 9);
}

TEST(ConfigParser, AnonymousElementsAreNumberedInOrder) {
  PipelineConfig c =
      parse_ok("FromInput -> CheckIPHeader -> Counter(A) -> Discard;\nNoOp -> Discard");
  EXPECT_EQ(names(c), (Strings{"FromInput@1", "CheckIPHeader@2", "Counter@3", "Discard@4", "NoOp@5",
                               "Discard@6"}));
  for (const ConfigElement& e : c.elements) EXPECT_TRUE(e.anonymous);
  EXPECT_EQ(c.elements[2].args, (Strings{"A"}));
  EXPECT_EQ(c.elements[1].loc.column, 14);
  EXPECT_EQ(c.elements[4].loc.line, 2);
  EXPECT_EQ(edges(c),
            (Strings{"FromInput@1[0] -> [0]CheckIPHeader@2", "CheckIPHeader@2[0] -> [0]Counter@3",
                     "Counter@3[0] -> [0]Discard@4", "NoOp@5[0] -> [0]Discard@6"}));
}

TEST(ConfigParser, ChainsOfDeclaredElements) {
  PipelineConfig c = parse_ok("src :: FromInput; d :: Discard;\nsrc -> d;");
  EXPECT_EQ(edges(c), (Strings{"src[0] -> [0]d"}));
  ASSERT_EQ(c.connections.size(), 1u);
  EXPECT_EQ(c.connections[0].loc.line, 2);
  EXPECT_EQ(c.connections[0].loc.column, 5);
  EXPECT_EQ(c.connections[0].loc.file, "t.click");
}

TEST(ConfigParser, PortsOnBothSides) {
  PipelineConfig c = parse_ok(
      "cl :: Classifier(12/0800, -); a :: NoOp; b :: NoOp; x :: NoOp; y :: NoOp\n"
      "cl[1] -> [0]a; cl [1] -> b; x -> [2] y; a[3]->[4]b[5] -> [6]x");
  EXPECT_EQ(edges(c), (Strings{"cl[1] -> [0]a", "cl[1] -> [0]b", "x[0] -> [2]y", "a[3] -> [4]b",
                               "b[5] -> [6]x"}));
}

TEST(ConfigParser, InlineDeclarationInChain) {
  PipelineConfig c = parse_ok(
      "src :: FromInput; src -> chk :: CheckIPHeader -> Discard;\n"
      "chk[1] -> cnt :: Counter(EVERY 5)[2] -> [1] ToOutput(0)");
  EXPECT_EQ(names(c), (Strings{"src", "chk", "Discard@1", "cnt", "ToOutput@2"}));
  EXPECT_EQ(c.elements[1].class_name, "CheckIPHeader");
  EXPECT_EQ(c.elements[1].loc.column, 26);
  EXPECT_EQ(c.elements[3].args, (Strings{"EVERY 5"}));
  EXPECT_EQ(c.elements[4].args, (Strings{"0"}));
  EXPECT_EQ(edges(c), (Strings{"src[0] -> [0]chk", "chk[0] -> [0]Discard@1", "chk[1] -> [0]cnt",
                               "cnt[2] -> [1]ToOutput@2"}));
}

TEST(ConfigParser, NamesMayBeUsedBeforeTheirDeclaration) {
  PipelineConfig c = parse_ok("a -> b; a :: NoOp; b :: Discard");
  EXPECT_EQ(names(c), (Strings{"a", "b"}));
  EXPECT_EQ(edges(c), (Strings{"a[0] -> [0]b"}));
}

TEST(ConfigParser, SemicolonsAreOptionalAndChainsSpanLines) {
  PipelineConfig c = parse_ok(
      "a :: NoOp b :: NoOp\n"
      "a\n  -> b\n  -> Discard\n"
      "b -> a;;;\n;");
  EXPECT_EQ(edges(c), (Strings{"a[0] -> [0]b", "b[0] -> [0]Discard@1", "b[0] -> [0]a"}));
}

TEST(ConfigParser, QuotedArguments) {
  PipelineConfig c = parse_ok(
      "a :: IPLookup(\"routes.txt\")\n"
      "b :: NoOp(FILE \"a b.txt\", \"x, (y\", \"q\\\"uote\\\\\", \"  pad  \", \"\", \"\\n\")");
  EXPECT_EQ(c.elements[0].args, (Strings{"routes.txt"}));
  EXPECT_EQ(c.elements[1].args,
            (Strings{"FILE a b.txt", "x, (y", "q\"uote\\", "  pad  ", "", "\\n"}));
}

TEST(ConfigParser, NestedArguments) {
  PipelineConfig c = parse_ok("a :: NoOp(f(1, 2), [3, 4], g((5), [6,7]), 8)");
  EXPECT_EQ(c.elements[0].args, (Strings{"f(1, 2)", "[3, 4]", "g((5), [6,7])", "8"}));
}

TEST(ConfigParser, MultiLineArguments) {
  PipelineConfig c = parse_ok(
      "rt :: IPLookup(\n"
      "  10.0.0.0/8 0,\n"
      "  10.1.0.0/16 1,\n"
      "  0.0.0.0/0 2\n"
      ")\n"
      "rt -> Discard");
  EXPECT_EQ(c.elements[0].args, (Strings{"10.0.0.0/8 0", "10.1.0.0/16 1", "0.0.0.0/0 2"}));
  ASSERT_EQ(c.connections.size(), 1u);
  EXPECT_EQ(c.connections[0].loc.line, 6);
  EXPECT_EQ(c.connections[0].loc.column, 4);
}

TEST(ConfigParser, EmptyArgumentsBetweenCommasAreKept) {
  PipelineConfig c = parse_ok("a :: NoOp(x,,y ,)");
  EXPECT_EQ(c.elements[0].args, (Strings{"x", "", "y", ""}));
}

TEST(ConfigParser, AllCommentForms) {
  PipelineConfig c = parse_ok(
      "// line comment\n"
      "# hash comment\n"
      "/* block\n   comment */ a :: NoOp(x /* in args */, y // to end of line\n"
      ", z # hash in args\n"
      ", /* only a comment */)\n"
      "a /* between */ -> /**/ Discard // trailing\n"
      "# last line without newline");
  EXPECT_EQ(c.elements[0].args, (Strings{"x", "y", "z", ""}));
  EXPECT_EQ(c.elements[0].loc.line, 4);
  EXPECT_EQ(c.elements[0].loc.column, 15);
  EXPECT_EQ(edges(c), (Strings{"a[0] -> [0]Discard@1"}));
}

TEST(ConfigParser, CommentMarkersInsideQuotesAreText) {
  PipelineConfig c = parse_ok("a :: NoOp(\"http://x/#y\", \"/* z */\")");
  EXPECT_EQ(c.elements[0].args, (Strings{"http://x/#y", "/* z */"}));
}

TEST(ConfigParser, IdentifiersMayContainAtAndDigits) {
  PipelineConfig c = parse_ok("_x@1 :: NoOp; y2_Z :: Discard; _x@1 -> y2_Z");
  EXPECT_EQ(edges(c), (Strings{"_x@1[0] -> [0]y2_Z"}));
}

TEST(ConfigParser, ColumnsCountBytesAndTabs) {
  PipelineConfig c = parse_ok("\t\ta :: NoOp\r\n\tb :: NoOp");
  EXPECT_EQ(c.elements[0].loc.column, 3);
  EXPECT_EQ(c.elements[1].loc.line, 2);
  EXPECT_EQ(c.elements[1].loc.column, 2);
}

struct BadInput {
  const char* text;
  const char* error;
};

TEST(ConfigParser, BadInputsGiveExactErrors) {
  const BadInput kCases[] = {
      {"a :: NoOp /* never\nends", "t.click:2:5: unterminated comment started at 1:11"},
      {"a :: NoOp(/* x", "t.click:1:15: unterminated comment started at 1:11"},
      {"a :: NoOp(x,\n  \"abc)", "t.click:2:8: unterminated string started at 2:3"},
      {"a :: NoOp(1, f(2)\n",
       "t.click:2:1: expected ')' to close argument list opened at 1:10, "
       "got end of file"},
      {"a :: NoOp; a[] -> Discard", "t.click:1:14: expected port number, got ']'"},
      {"a :: NoOp; a[x] -> Discard", "t.click:1:14: expected port number, got 'x'"},
      {"a :: NoOp; a -> [-1] Discard", "t.click:1:18: expected port number, got '-'"},
      {"a :: NoOp; a[1 x] -> Discard", "t.click:1:16: expected ']' after port number, got 'x'"},
      {"a :: NoOp; a[1", "t.click:1:15: expected ']' after port number, got end of file"},
      {"a :: NoOp; a[99999999999] -> Discard",
       "t.click:1:14: port number 99999999999 is too large"},
      {"-> Discard", "t.click:1:1: expected element name or class, got '->'"},
      {"a :: NoOp;\na ->", "t.click:2:5: expected element name or class, got end of file"},
      {"a :: NoOp; a -> ;", "t.click:1:17: expected element name or class, got ';'"},
      {"a :: NoOp; a -> 5", "t.click:1:17: expected element name or class, got integer"},
      {"a :: NoOp; a[1];", "t.click:1:16: expected '->' after output port, got ';'"},
      {"a :: ;", "t.click:1:6: expected element class after '::', got ';'"},
      {"a :: (x)", "t.click:1:6: expected element class after '::', got '('"},
      {"a :: Foo(1)", "t.click:1:6: unknown element class 'Foo'"},
      {"x -> Foo(1)", "t.click:1:6: unknown element class 'Foo'"},
      {"a :: NoOp;\na -> foo", "t.click:2:6: unknown element class or undeclared element 'foo'"},
      {"a :: Conter", "t.click:1:6: unknown element class 'Conter' (did you mean 'Counter'?)"},
      {"FromInput -> Dicsard",
       "t.click:1:14: unknown element class or undeclared element "
       "'Dicsard' (did you mean 'Discard'?)"},
      {"tally :: Counter;\nFromInput -> taly -> Discard",
       "t.click:2:14: unknown element class or undeclared element 'taly' (did you mean 'tally'?)"},
      {"a :: NoOp;\na :: Discard",
       "t.click:2:1: element 'a' redeclared (first declared at "
       "t.click:1:1)"},
      {"a, b, a :: NoOp", "t.click:1:7: element 'a' redeclared (first declared at t.click:1:1)"},
      {"Discard :: NoOp", "t.click:1:1: element name 'Discard' is an element class"},
      {"a :: NoOp $", "t.click:1:11: expected element name or class, got '$'"},
      {"a :: NoOp; a : Discard", "t.click:1:14: expected element name or class, got ':'"},
      {"a :: NoOp\x01", "t.click:1:10: expected element name or class, got '\\x01'"},
      {"a, :: NoOp", "t.click:1:4: expected element name after ',', got '::'"},
      {"a, b -> c", "t.click:1:6: expected '::' after element names, got '->'"},
      {"a, b :: NoOp -> Discard",
       "t.click:1:14: expected end of statement after a declaration of several elements, got "
       "'->'"},
      {"[0] a :: NoOp", "t.click:1:1: expected element name or class, got '['"},
      {"a :: NoOp) ", "t.click:1:10: expected element name or class, got ')'"},
      {"a :: NoOp :: Discard", "t.click:1:11: expected element name or class, got '::'"},
      {"\"x\" -> Discard", "t.click:1:1: expected element name or class, got '\"'"},
  };
  for (const BadInput& c : kCases) EXPECT_EQ(parse_error(c.text), c.error) << c.text;
}

TEST(ConfigParser, EmptyFileNameReadsAsConfig) {
  Result<PipelineConfig> r = parse_pipeline("->", "", known_class);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "<config>:1:1: expected element name or class, got '->'");
}

TEST(ConfigParser, ParsesAFile) {
  std::string path = testing::temp_path("config_parser_test.click");
  std::FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("FromInput -> d :: Discard\n", f);
  std::fclose(f);
  Result<PipelineConfig> r = parse_pipeline_file(path, known_class);
  std::remove(path.c_str());
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->file, path);
  EXPECT_EQ(r->elements.at(1).loc.file, path);
  EXPECT_EQ(edges(*r), (Strings{"FromInput@1[0] -> [0]d"}));
}

TEST(ConfigParser, UnreadableFile) {
  Result<PipelineConfig> r = parse_pipeline_file("/nonexistent/x.click", known_class);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "cannot open pipeline file /nonexistent/x.click: No such file or directory");
  Result<PipelineConfig> dir = parse_pipeline_file("/", known_class);
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.error(), "pipeline file / is a directory");
}

// A device or FIFO would be read forever (or until memory runs out): only regular files are read.
TEST(ConfigParser, SpecialFilesAreRefused) {
  for (const char* path : {"/dev/zero", "/dev/null"}) {
    Result<PipelineConfig> r = parse_pipeline_file(path, known_class);
    ASSERT_FALSE(r.ok()) << path;
    EXPECT_EQ(r.error(), std::string("pipeline file ") + path +
                             " is not a regular file (a device, FIFO or socket)");
  }
}

Result<PipelineConfig> with_parameters(std::string_view text,
                                       const std::map<std::string, std::string>& parameters) {
  return parse_pipeline(text, "t.click", known_class, parameters);
}

TEST(ConfigParameters, CommandLineValuesReplaceNamesInArguments) {
  Result<PipelineConfig> r = with_parameters(
      "FromInput -> IPLookup($ROUTES) -> c :: Classifier(12/${TYPE}, \"-$TYPE-\", $5) -> "
      "ToOutput;\nc[1] -> Discard; c[2] -> Discard;",
      {{"ROUTES", "/tmp/r 1.txt"}, {"TYPE", "0800"}});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->elements[1].args, (std::vector<std::string>{"/tmp/r 1.txt"}));
  EXPECT_EQ(r->elements[2].args, (std::vector<std::string>{"12/0800", "-0800-", "$5"}))
      << "a '$' that starts no name stays";
}

TEST(ConfigParameters, DefineGivesDefaultsTheCommandLineOverrides) {
  const std::string text =
      "define($N 3, $WHERE 10.0.0.1);\nFromInput -> Counter($N, $WHERE) -> ToOutput;";
  Result<PipelineConfig> defaults = with_parameters(text, {});
  ASSERT_TRUE(defaults.ok()) << defaults.error();
  EXPECT_EQ(defaults->elements[1].args, (std::vector<std::string>{"3", "10.0.0.1"}));
  Result<PipelineConfig> given = with_parameters(text, {{"N", "7"}});
  ASSERT_TRUE(given.ok()) << given.error();
  EXPECT_EQ(given->elements[1].args, (std::vector<std::string>{"7", "10.0.0.1"}));
}

TEST(ConfigParameters, MistakesAreNamedWithTheirPlace) {
  EXPECT_EQ(with_parameters("FromInput -> Counter($COUNT) -> ToOutput;", {{"COUNTS", "1"}}).error(),
            "t.click:1:22: undefined parameter $COUNT (did you mean 'COUNTS'?) (give COUNT=VALUE "
            "after the pipeline file, or define($COUNT VALUE) before this line)");
  EXPECT_EQ(
      with_parameters("FromInput -> Counter($N) -> ToOutput;", {{"N", "1"}, {"M", "2"}}).error(),
      "t.click: parameter M= from the command line is not used in the pipeline (did you "
      "mean 'N'?)");
  EXPECT_EQ(with_parameters("define($N 1, $N 2);\nFromInput -> ToOutput;", {}).error(),
            "t.click:1:7: define: $N is defined twice");
  EXPECT_EQ(with_parameters("define(N 1);\nFromInput -> ToOutput;", {}).error(),
            "t.click:1:7: define: expected '$NAME VALUE', got 'N 1'");
  EXPECT_EQ(with_parameters("FromInput -> Counter(${N) -> ToOutput;", {{"N", "1"}}).error(),
            "t.click:1:22: expected ${NAME}");
  EXPECT_EQ(with_parameters("define($N 1) FromInput -> ToOutput;", {}).error(),
            "t.click:1:14: expected ';' after define(...), got 'FromInput'");
}

TEST(ConfigArgs, InputFilesAreRelativeToThePipelineFolder) {
  auto file_arg = [](const std::string& pipeline, const std::string& arg) {
    Args a({arg}, SourceLoc{pipeline, 1, 1}, "e", "IPLookup");
    std::string out;
    a.positional_file("FILE", out, "route file");
    EXPECT_TRUE(a.finish().ok());
    return out;
  };
  EXPECT_EQ(file_arg("/etc/fulcrum/router.click", "routes.txt"), "/etc/fulcrum/routes.txt");
  EXPECT_EQ(file_arg("/etc/fulcrum/router.click", "../tables/./r.txt"), "/etc/tables/r.txt");
  EXPECT_EQ(file_arg("/etc/fulcrum/router.click", "/srv/r.txt"), "/srv/r.txt");
  EXPECT_EQ(file_arg("router.click", "r.txt"),
            (std::filesystem::current_path() / "r.txt").string());
  EXPECT_EQ(file_arg("", "r.txt"), "r.txt") << "a pipeline given as text has no folder";
}

}  // namespace
}  // namespace fulcrum
