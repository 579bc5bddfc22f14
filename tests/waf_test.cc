// The WAF: ModSecurity's transformations (known input/output pairs), the rule parser (chains,
// defaults, FILE:LINE errors) and the engine's ModSecurity semantics on small rule sets, then the
// WAF NF on Debian's CRS when it is installed.
#include "l7/nf/waf.hh"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "lib/waf/engine.hh"
#include "lib/waf/rule_parser.hh"
#include "lib/waf/transforms.hh"

namespace fulcrum::waf {
namespace {

std::string tf(Transform t, std::string s) {
  apply_transform(t, s);
  return s;
}

TEST(WafTransforms, DecodersMatchModSecurity) {
  using T = Transform;
  EXPECT_EQ(tf(T::kLowercase, "SeLeCT"), "select");
  EXPECT_EQ(tf(T::kUrlDecode, "a%20b+c%2"), "a b c%2");
  EXPECT_EQ(tf(T::kUrlDecodeUni, "%u0041%uFF21+%41%zz%u12"), "AA A%zz%u12");
  EXPECT_EQ(tf(T::kHtmlEntityDecode, "&lt;a&gt;&amp;&quot;&#65;&#x42;&#x;&foo;"),
            "<a>&\"AB&#x;&foo;");
  EXPECT_EQ(tf(T::kHtmlEntityDecode, "&nbsp"), "\xa0");
  EXPECT_EQ(tf(T::kJsDecode, "\\x41\\u0042\\n\\101\\'\\"), "AB\nA'\\");
  EXPECT_EQ(tf(T::kJsDecode, "\\uff1c"), "<");  // full-width '<' (0xff1c): low byte + 0x20
  EXPECT_EQ(tf(T::kCssDecode, "\\41\\42 C\\\nD\\z"), "ABCDz");
  EXPECT_EQ(tf(T::kCssDecode, "a\\0b"), "a\x0b");
  EXPECT_EQ(tf(T::kCssDecode, "a\\00 b"), "a");  // ModSecurity's result ends at the decoded NUL
  EXPECT_EQ(tf(T::kRemoveNulls, std::string("a\0b\0", 4)), "ab");
  EXPECT_EQ(tf(T::kReplaceNulls, std::string("a\0b", 3)), "a b");
  EXPECT_EQ(tf(T::kCompressWhitespace, "a  \t\nb c"), "a b c");
  EXPECT_EQ(tf(T::kRemoveWhitespace,
               "a b\tc\xa0"
               "d"),
            "abcd");
  EXPECT_EQ(tf(T::kReplaceComments, "SEL/*x*/ECT/*open"), "SEL ECT ");
  EXPECT_EQ(tf(T::kRemoveCommentsChar, "a/*b*/c--d#e"), "abcde");
  EXPECT_EQ(tf(T::kCmdLine, "C^OMMAND /C \"DIR\" , x;y"), "command/c dir x y");
  EXPECT_EQ(tf(T::kCmdLine, "cat '/etc/passwd'"), "cat/etc/passwd");
  EXPECT_EQ(tf(T::kUtf8ToUnicode, "caf\xc3\xa9 \xe6\x97\xa5"), "caf%u00e9 %u65e5");
  EXPECT_EQ(tf(T::kBase64Decode, "VGVzdENhc2U="), "TestCase");
  EXPECT_EQ(tf(T::kBase64Decode, "not*base64"), "");
  EXPECT_EQ(tf(T::kHexDecode, "414243"), "ABC");
  EXPECT_EQ(tf(T::kHexEncode, "AB\xff"), "4142ff");
  EXPECT_EQ(tf(T::kLength, "abcd"), "4");
  EXPECT_EQ(tf(T::kTrim, " \t x y \n"), "x y");
  EXPECT_EQ(tf(T::kHexEncode, tf(T::kSha1, "")), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
}

TEST(WafTransforms, NormalisePathResolvesDotSegments) {
  using T = Transform;
  EXPECT_EQ(tf(T::kNormalisePath, "/a/b/../c/./d//e"), "/a/c/d/e");
  EXPECT_EQ(tf(T::kNormalisePath, "/../../etc/passwd"), "/etc/passwd");
  EXPECT_EQ(tf(T::kNormalisePath, "/foo/bar/"), "/foo/bar/");
  EXPECT_EQ(tf(T::kNormalisePath, "foo/bar/../baz"), "foo/baz");
  EXPECT_EQ(tf(T::kNormalisePathWin, "C:\\a\\..\\b\\.\\c"), "C:/b/c");
}

TEST(WafTransforms, NamesParseCaseInsensitivelyBothSpellings) {
  EXPECT_EQ(parse_transform("urlDecodeUni"), Transform::kUrlDecodeUni);
  EXPECT_EQ(parse_transform("NORMALIZEPATH"), Transform::kNormalisePath);
  EXPECT_EQ(parse_transform("normalisePath"), Transform::kNormalisePath);
  EXPECT_FALSE(parse_transform("none").has_value());
  EXPECT_FALSE(parse_transform("md5").has_value());
}

Ruleset parse_ok(const std::string& text) {
  RuleParser p;
  const Status s = p.load_text(text, "t.conf", ".");
  EXPECT_TRUE(s.ok()) << s.error();
  return p.finish();
}

std::string parse_error(const std::string& text) {
  RuleParser p;
  const Status s = p.load_text(text, "t.conf", ".");
  EXPECT_FALSE(s.ok());
  return s.ok() ? std::string() : s.error();
}

TEST(WafRuleParser, ChainsDefaultsAndContinuationLines) {
  const Ruleset rs = parse_ok(
      "SecDefaultAction \"phase:2,log,pass,t:lowercase\"\n"
      "# a comment\n"
      "SecRule REQUEST_METHOD \"@rx ^POST$\" \\\n"
      "    \"id:10,phase:2,block,t:none,chain,msg:'a, b'\"\n"
      "    SecRule ARGS:foo|!ARGS:bar|&REQUEST_HEADERS:Host \"!@eq 0\" \\\n"
      "        \"setvar:'tx.score=+%{tx.x}'\"\n"
      "SecRule ARGS \"attack\" \"id:11,phase:2,nolog,deny,status:406\"\n"
      "SecMarker END\n");
  ASSERT_EQ(rs.rules.size(), 3u);
  const Rule& r = *rs.rules[0];
  EXPECT_EQ(r.id, 10u);
  EXPECT_EQ(r.line, 3);
  EXPECT_TRUE(r.chained);
  EXPECT_TRUE(r.transforms.empty());           // t:none drops the default t:lowercase
  EXPECT_EQ(r.disruptive, Disruptive::kPass);  // block = the default action's pass
  EXPECT_EQ(r.msg, "a, b");
  ASSERT_TRUE(r.child);
  const Rule& c = *r.child;
  EXPECT_EQ(c.id, 0u);
  EXPECT_EQ(c.phase, 2);
  ASSERT_EQ(c.targets.size(), 3u);
  EXPECT_EQ(c.targets[0].selector, "foo");
  EXPECT_TRUE(c.targets[1].exclude);
  EXPECT_TRUE(c.targets[2].count);
  EXPECT_TRUE(c.op.negated);
  EXPECT_EQ(c.op.op, Op::kEq);
  EXPECT_EQ(c.transforms, std::vector<Transform>{Transform::kLowercase});  // the default's
  ASSERT_EQ(c.setvars.size(), 1u);
  EXPECT_EQ(c.setvars[0].kind, SetVar::Kind::kAdd);
  EXPECT_EQ(c.setvars[0].name, "score");
  const Rule& d = *rs.rules[1];
  EXPECT_EQ(d.op.op, Op::kRx);  // no @: a regex
  EXPECT_FALSE(d.log);
  EXPECT_EQ(d.disruptive, Disruptive::kDeny);
  EXPECT_EQ(d.status, 406);
  EXPECT_TRUE(rs.rules[2]->is_marker);
  EXPECT_EQ(rs.rule_count, 2u);
}

TEST(WafRuleParser, MalformedRulesNameFileAndLine) {
  EXPECT_NE(
      parse_error("\nSecRule ARGS \"@rx a\" \"phase:2,pass\"\n").find("t.conf:2: rule has no id"),
      std::string::npos);
  EXPECT_NE(parse_error("SecRule ARGS \"@rx a\" \"id:1,phase:9\"\n").find("t.conf:1: bad phase"),
            std::string::npos);
  EXPECT_NE(parse_error("SecRule ARGS \"@rx a\n").find("t.conf:1: unterminated"),
            std::string::npos);
  EXPECT_NE(parse_error("SecRule ARGS\n").find("t.conf:1: SecRule takes"), std::string::npos);
  EXPECT_NE(parse_error("SecRule ARGS \"@rx a\" \"id:1,chain\"\nSecRule ARGS \"b\" \"id:2\"\n")
                .find("t.conf:2: a chained rule may not have an id"),
            std::string::npos);
  EXPECT_NE(parse_error("SecRule ARGS \"@validateByteRange 300-1\" \"id:1\"\n").find("bad range"),
            std::string::npos);
}

TEST(WafRuleParser, UnsupportedRulesAreKeptAndListed) {
  const Ruleset rs = parse_ok(
      "SecRule REMOTE_ADDR \"@ipMatch 10.0.0.0/8\" \"id:1,phase:1,pass\"\n"
      "SecRule FILES \"@rx x\" \"id:2,phase:2,pass\"\n"
      "SecRule ARGS \"@rx x\" \"id:3,phase:2,pass,ctl:ruleRemoveById=5\"\n"
      "SecRule RESPONSE_BODY \"@rx x\" \"id:4,phase:4,pass\"\n"
      "SecRule ARGS \"@rx x\" \"id:5,phase:2,pass,t:none,t:urlDecodeUni,multiMatch\"\n"
      "SecRule ARGS \"@rx y\" \"id:6,phase:2,pass,setvar:ip.score=+1,expirevar:ip.score=60\"\n"
      "SecRuleRemoveById 3\n");
  ASSERT_EQ(rs.rules.size(), 5u);    // 3 removed
  ASSERT_EQ(rs.ignored.size(), 1u);  // 6 runs; its IP-collection actions are ignored
  EXPECT_EQ(rs.ignored[0].id, 6u);
  EXPECT_EQ(rs.ignored[0].why, "setvar on ip; expirevar");
  std::vector<uint32_t> noted;
  for (const RuleNote& n : rs.notes) noted.push_back(n.id);
  EXPECT_EQ(noted, (std::vector<uint32_t>{1, 2, 4}));
  EXPECT_NE(rs.notes[0].why.find("operator @ipMatch"), std::string::npos);
  EXPECT_NE(rs.notes[1].why.find("variable FILES"), std::string::npos);
  EXPECT_NE(rs.notes[2].why.find("response"), std::string::npos);
  const Rule& mm = *rs.rules[3];
  EXPECT_TRUE(mm.multi_match);
  ASSERT_EQ(mm.prefix_pipelines.size(), 2u);  // before and after urlDecodeUni
  EXPECT_EQ(rs.pipelines[static_cast<size_t>(mm.prefix_pipelines[0])].size(), 0u);
}

struct Req {
  std::string method = "GET";
  std::string target = "/";
  std::vector<std::pair<std::string, std::string>> headers = {{"Host", "localhost"}};
  std::string body;
};

Outcome run(const Engine& e, const Req& r) {
  Request q;
  q.method = r.method;
  q.target = r.target;
  q.headers = &r.headers;
  q.body = r.body;
  return e.evaluate(q);
}

std::unique_ptr<Engine> engine(const std::string& text) {
  auto e = Engine::create(parse_ok(text));
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error());
  return e.ok() ? std::move(*e) : nullptr;
}

constexpr const char* kScoring =
    "SecAction \"id:1,phase:1,pass,nolog,setvar:tx.anomaly_score=0\"\n"
    "SecRule ARGS \"@rx (?i)union\\s+select\" \"id:100,phase:2,pass,t:none,t:urlDecodeUni,"
    "setvar:'tx.anomaly_score=+5'\"\n"
    "SecRule ARGS_NAMES|REQUEST_COOKIES \"@pm evil BAD\" \"id:101,phase:2,pass,t:lowercase,"
    "setvar:'tx.anomaly_score=+3'\"\n"
    "SecRule TX:ANOMALY_SCORE \"@ge 5\" \"id:949,phase:2,deny,log\"\n";

TEST(WafEngine, AnomalyScoreCountsEveryMatchingValue) {
  auto e = engine(kScoring);
  ASSERT_TRUE(e);
  Req ok;
  ok.target = "/x?q=hello";
  EXPECT_FALSE(run(*e, ok).disrupted);
  Req one;
  one.target = "/x?a=1%20UNION%20SELECT%202";
  const Outcome o1 = run(*e, one);
  EXPECT_TRUE(o1.disrupted);
  EXPECT_EQ(o1.status, 403);
  EXPECT_EQ(o1.anomaly_score, 5);
  EXPECT_EQ(o1.logged, (std::vector<uint32_t>{100, 949}));
  Req two;  // two matching values: ModSecurity 3 runs setvar once per value
  two.target = "/x?a=union+select&b=union%09select";
  EXPECT_EQ(run(*e, two).anomaly_score, 10);
  Req pm;  // @pm: case-insensitive phrases in a name and in a cookie
  pm.target = "/x?EVILname=1";
  pm.headers.push_back({"Cookie", "s=very bad; t=1"});
  EXPECT_EQ(run(*e, pm).anomaly_score, 6);
}

TEST(WafEngine, UrlencodedAndJsonBodiesBecomeArguments) {
  auto e = engine(
      "SecRule REQUEST_HEADERS:Content-Type \"^application/json\" "
      "\"id:1,phase:1,pass,nolog,t:lowercase,ctl:requestBodyProcessor=JSON\"\n"
      "SecRule ARGS_POST_NAMES \"@streq user\" \"id:10,phase:2,pass\"\n"
      "SecRule ARGS_NAMES \"@streq json.a.array_1\" \"id:11,phase:2,pass\"\n"
      "SecRule ARGS:json.b.c \"@streq x y\" \"id:12,phase:2,pass\"\n"
      "SecRule REQBODY_ERROR \"!@eq 0\" \"id:13,phase:2,deny,status:400\"\n"
      "SecRule REQBODY_PROCESSOR \"@streq JSON\" \"id:14,phase:2,pass\"\n");
  ASSERT_TRUE(e);
  Req form;
  form.method = "POST";
  form.headers.push_back({"Content-Type", "application/x-www-form-urlencoded"});
  form.body = "user=a&x=1";
  EXPECT_EQ(run(*e, form).matched, (std::vector<uint32_t>{10}));
  Req json;
  json.method = "POST";
  json.headers.push_back({"Content-Type", "Application/JSON"});
  json.body = R"({"a": [1, 2], "b": {"c": "x y"}})";
  EXPECT_EQ(run(*e, json).matched, (std::vector<uint32_t>{1, 11, 12, 14}));
  json.body = R"({"a": [1, 2)";
  const Outcome bad = run(*e, json);
  EXPECT_TRUE(bad.disrupted);
  EXPECT_EQ(bad.status, 400);
}

TEST(WafEngine, ValuesOfOneKeyComeNewestFirstAsInModSecurity) {
  // libmodsecurity's header collection gives the values of one name newest first (checked
  // against libmodsecurity 3.0.9 with two Content-Type headers): the capture of the last value
  // evaluated, the first header, is what setvar keeps.
  auto e = engine(
      "SecRule REQUEST_HEADERS:Content-Type \"@rx ^[^;\\s]+\" "
      "\"id:1,phase:1,pass,capture,setvar:'tx.ct=|%{tx.0}|'\"\n"
      "SecRule TX:ct \"@streq |application/x-www-form-urlencoded|\" \"id:2,phase:1,pass\"\n");
  ASSERT_TRUE(e);
  Req r;
  r.headers.push_back({"Content-Type", "application/x-www-form-urlencoded"});
  r.headers.push_back({"content-type", "text/plain"});
  EXPECT_EQ(run(*e, r).matched, (std::vector<uint32_t>{1, 2}));
}

TEST(WafEngine, XmlBodiesGiveXPathValues) {
  auto e = engine(
      "SecRule REQUEST_HEADERS:Content-Type \"^text/xml\" "
      "\"id:1,phase:1,pass,nolog,ctl:requestBodyProcessor=XML\"\n"
      "SecRule XML:/* \"@contains hello world\" \"id:10,phase:2,pass\"\n"
      "SecRule ARGS|XML:/*|XML://@* \"@streq v1\" \"id:11,phase:2,pass\"\n"
      "SecRule REQBODY_ERROR \"!@eq 0\" \"id:13,phase:2,deny,status:400\"\n");
  ASSERT_TRUE(e);
  Req r;
  r.method = "POST";
  r.headers.push_back({"Content-Type", "text/xml"});
  r.body = "<a k=\"v1\"><b>hello</b> <c>world</c></a>";
  EXPECT_EQ(run(*e, r).matched, (std::vector<uint32_t>{1, 10, 11}));
  r.body = "<a><b>hello</a>";
  const Outcome bad = run(*e, r);
  EXPECT_TRUE(bad.disrupted);
  EXPECT_EQ(bad.status, 400);
}

TEST(WafEngine, ChainsSkipAfterAndCaptures) {
  auto e = engine(
      "SecRule ARGS:skip \"@streq 1\" \"id:1,phase:1,pass,nolog,skipAfter:END\"\n"
      "SecRule REQUEST_METHOD \"@streq GET\" \"id:2,phase:1,pass,chain\"\n"
      "  SecRule ARGS:a \"@rx ^(\\w+)-(\\d+)$\" \"capture,chain\"\n"
      "  SecRule TX:2 \"@eq 42\" \"setvar:tx.hit=%{tx.1}\"\n"
      "SecMarker END\n"
      "SecRule TX:HIT \"@streq abc\" \"id:3,phase:2,pass\"\n"
      "SecRule &ARGS:missing \"@eq 0\" \"id:4,phase:2,pass\"\n"
      "SecRule ARGS:missing \"!@rx x\" \"id:5,phase:2,pass\"\n"
      "SecRule ARGS \"@detectSQLi\" \"id:6,phase:2,pass\"\n");
  ASSERT_TRUE(e);
  Req r;
  r.target = "/p?a=abc-42";
  EXPECT_EQ(run(*e, r).matched, (std::vector<uint32_t>{2, 3, 4}));
  r.target = "/p?a=abc-41";
  EXPECT_EQ(run(*e, r).matched, (std::vector<uint32_t>{4}));
  r.target = "/p?a=abc-42&skip=1";  // 1 matches and jumps over the chain
  EXPECT_EQ(run(*e, r).matched, (std::vector<uint32_t>{1, 4}));
}

TEST(WafEngine, RegexesHyperscanCannotRunExactlyAreConfirmedWithPcre) {
  // A back-reference (prefilter + PCRE2) and a lookbehind, against plain Hyperscan regexes.
  auto e = engine(
      "SecRule ARGS \"@rx (\\w)\\1\\1\" \"id:1,phase:2,pass\"\n"
      "SecRule ARGS \"@rx (?<!x)abc\" \"id:2,phase:2,pass\"\n"
      "SecRule ARGS \"@rx ^abc$\" \"id:3,phase:2,pass\"\n"
      "SecRule ARGS \"@rx ^0?$\" \"id:4,phase:2,pass\"\n");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->stats().hs_exact, 2u);
  EXPECT_EQ(e->stats().hs_prefilter + e->stats().pcre_only, 2u);
  Req r;
  r.target = "/?v=aaa";
  EXPECT_EQ(run(*e, r).matched, (std::vector<uint32_t>{1}));
  r.target = "/?v=abab";  // Hyperscan's prefilter for (\w)\1\1 may say yes: PCRE2 says no
  EXPECT_TRUE(run(*e, r).matched.empty());
  r.target = "/?v=xabc";
  EXPECT_TRUE(run(*e, r).matched.empty());
  r.target = "/?v=abc";
  EXPECT_EQ(run(*e, r).matched, (std::vector<uint32_t>{2, 3}));
  r.target = "/?v=";  // an empty value: Hyperscan reports the empty match too
  EXPECT_EQ(run(*e, r).matched, (std::vector<uint32_t>{4}));
}

bool exists(const char* p) {
  struct stat st {};
  return ::stat(p, &st) == 0;
}

TEST(WafNf, CrsBlocksAttacksWith403AndNamesTheRules) {
  if (!exists("/usr/share/modsecurity-crs/rules")) GTEST_SKIP() << "modsecurity-crs not installed";
  auto nf = l7::WafNf::create({});
  ASSERT_TRUE(nf.ok()) << nf.error();
  l7::Message attack;
  attack.head.method = "GET";
  attack.head.target = "/search?file=../../../../etc/passwd";
  attack.head.headers = {{"Host", "localhost"}, {"User-Agent", "curl/7.88.1"}, {"Accept", "*/*"}};
  (*nf)->process(attack, {});
  EXPECT_EQ(attack.verdict.action, l7::Action::kRespond);
  EXPECT_EQ(attack.verdict.status, 403);
  EXPECT_NE(attack.verdict.reason.find("930100"), std::string::npos) << attack.verdict.reason;
  EXPECT_NE(attack.verdict.reason.find("949110"), std::string::npos);
  l7::Message benign;
  benign.head.method = "GET";
  benign.head.target = "/products/123?sort=asc";
  benign.head.headers = attack.head.headers;
  (*nf)->process(benign, {});
  EXPECT_EQ(benign.verdict.action, l7::Action::kForward);
  EXPECT_EQ((*nf)->requests(), 2u);
  EXPECT_EQ((*nf)->blocked(), 1u);
  EXPECT_EQ((*nf)->rule_hits().at(930100), 1u);

  l7::WafNf::Config detect;
  detect.mode = "detect";
  auto d = l7::WafNf::create(detect);
  ASSERT_TRUE(d.ok());
  l7::Message again;
  again.head = attack.head;
  (*d)->process(again, {});
  EXPECT_EQ(again.verdict.action, l7::Action::kForward);
  EXPECT_GE(again.verdict.alerts, 2u);
  EXPECT_EQ((*d)->detected(), 1u);
  l7::WafNf::Config wrong;
  wrong.mode = "block-all";
  EXPECT_FALSE(l7::WafNf::create(wrong).ok());
}

}  // namespace
}  // namespace fulcrum::waf
