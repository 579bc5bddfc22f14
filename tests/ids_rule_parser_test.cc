// The IDS rule parser: the supported Snort/Suricata subset parses into the expected fields, and
// every malformed rule is rejected with "PATH:LINE: what was expected".
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lib/ids/rule_engine.hh"
#include "lib/ids/rule_parser.hh"

namespace fulcrum::ids {
namespace {

constexpr uint32_t kIp10_0_0_1 = 0x0A000001;
constexpr uint32_t kIp10_1_2_3 = 0x0A010203;
constexpr uint32_t kIp192_168_0_9 = 0xC0A80009;

Rule parse_ok(const std::string& text) {
  Result<Rule> r = parse_rule(text);
  EXPECT_TRUE(r.ok()) << text << ": " << (r.ok() ? "" : r.error());
  return r.ok() ? r.value() : Rule{};
}

std::string parse_error(const std::string& text) {
  Result<Rule> r = parse_rule(text);
  return r.ok() ? "(no error)" : r.error();
}

TEST(IdsRuleParser, ParsesHeaderAndOptions) {
  const Rule r = parse_ok(
      "alert tcp 10.0.0.0/8 any -> [192.168.0.0/16,!192.168.0.9] [80,8000:8080] "
      "(msg:\"web; \\\"x\\\"\"; content:\"GET \"; offset:0; depth:4; content:\"|0d 0a|Host\"; "
      "nocase; pcre:\"/user=[a-z]+/i\"; sid:1000001; rev:3; classtype:web;)");
  EXPECT_EQ(r.proto, Proto::kTcp);
  EXPECT_EQ(r.sid, 1000001u);
  EXPECT_EQ(r.rev, 3u);
  EXPECT_EQ(r.msg, "web; \"x\"");
  EXPECT_FALSE(r.bidirectional);
  EXPECT_TRUE(r.src.contains(kIp10_1_2_3));
  EXPECT_FALSE(r.src.contains(kIp192_168_0_9));
  EXPECT_TRUE(r.dst.contains(kIp192_168_0_9 + 1));
  EXPECT_FALSE(r.dst.contains(kIp192_168_0_9));  // negated list item
  EXPECT_FALSE(r.dst.contains(kIp10_0_0_1));
  EXPECT_TRUE(r.sport.contains(1));
  EXPECT_TRUE(r.dport.contains(80));
  EXPECT_TRUE(r.dport.contains(8040));
  EXPECT_FALSE(r.dport.contains(81));
  ASSERT_EQ(r.contents.size(), 2u);
  EXPECT_EQ(r.contents[0].bytes, "GET ");
  EXPECT_EQ(r.contents[0].depth, 4u);
  EXPECT_FALSE(r.contents[0].nocase);
  EXPECT_EQ(r.contents[1].bytes, std::string("\r\nHost"));
  EXPECT_TRUE(r.contents[1].nocase);
  ASSERT_EQ(r.pcres.size(), 1u);
  EXPECT_EQ(r.pcres[0].expr, "user=[a-z]+");
  EXPECT_TRUE(r.pcres[0].caseless);
  EXPECT_FALSE(r.pcres[0].dotall);
}

TEST(IdsRuleParser, NegationBidirectionAndPortRanges) {
  const Rule r =
      parse_ok("alert udp !10.0.0.1 :1023 <> any 5000: (content:!\"|00|\"; offset:2; sid:7;)");
  EXPECT_TRUE(r.bidirectional);
  EXPECT_FALSE(r.src.contains(kIp10_0_0_1));
  EXPECT_TRUE(r.src.contains(kIp10_1_2_3));
  EXPECT_TRUE(r.sport.contains(0));
  EXPECT_TRUE(r.sport.contains(1023));
  EXPECT_FALSE(r.sport.contains(1024));
  EXPECT_TRUE(r.dport.contains(65535));
  EXPECT_FALSE(r.dport.contains(4999));
  ASSERT_EQ(r.contents.size(), 1u);
  EXPECT_TRUE(r.contents[0].negated);
  EXPECT_EQ(r.contents[0].bytes, std::string(1, '\0'));
  EXPECT_EQ(r.contents[0].offset, 2u);
  const Rule n = parse_ok("alert tcp any !80 -> any ![1:10,20] (sid:8;)");
  EXPECT_FALSE(n.sport.contains(80));
  EXPECT_TRUE(n.sport.contains(81));
  EXPECT_FALSE(n.dport.contains(5));
  EXPECT_FALSE(n.dport.contains(20));
  EXPECT_TRUE(n.dport.contains(11));
  const Rule esc = parse_ok("alert tcp any any -> any any (pcre:\"/\\/bin\\/sh\\;/\"; sid:10;)");
  EXPECT_EQ(esc.pcres[0].expr, "\\/bin\\/sh\\;");  // regex escapes are kept
  const Rule ip = parse_ok("alert ip any any -> 0.0.0.0/0 any (pcre:\"/a.b/sm\"; sid:9;)");
  EXPECT_EQ(ip.proto, Proto::kIp);
  EXPECT_TRUE(ip.dst.contains(kIp10_0_0_1));
  EXPECT_TRUE(ip.pcres[0].dotall);
  EXPECT_TRUE(ip.pcres[0].multiline);
}

Ip6Addr a6(uint64_t hi, uint64_t lo) {
  return {hi, lo};
}

// IPv6 items and prefixes; lists mixing families; an address is looked up among the items of
// its own family (a list without one never holds it, negated or not), negations as for IPv4.
TEST(IdsRuleParser, Ipv6AddressSets) {
  const Ip6Addr db8_1 = a6(0x20010db800000000, 1);
  const Ip6Addr db8_1_x = a6(0x20010db800010000, 5);  // 2001:db8:1::5
  const Ip6Addr other = a6(0x2001ffff00000000, 1);
  const Rule r =
      parse_ok("alert tcp 2001:db8::/32 any -> [10.0.0.0/8,2001:db8::1,::/0] any (sid:1;)");
  EXPECT_TRUE(r.src.contains(db8_1));
  EXPECT_TRUE(r.src.contains(db8_1_x));
  EXPECT_FALSE(r.src.contains(other));
  EXPECT_FALSE(r.src.contains(kIp10_0_0_1)) << "no IPv4 item";
  EXPECT_TRUE(r.dst.contains(other)) << "::/0";
  EXPECT_TRUE(r.dst.contains(kIp10_1_2_3));
  EXPECT_FALSE(r.dst.contains(kIp192_168_0_9));

  const Rule neg = parse_ok(
      "alert ip [2001:db8::/32,!2001:db8:1::/48] any -> ![2001:db8::1,10.0.0.0/8] any (sid:2;)");
  EXPECT_TRUE(neg.src.contains(db8_1));
  EXPECT_FALSE(neg.src.contains(db8_1_x));  // in the negated item
  EXPECT_FALSE(neg.src.contains(other));
  EXPECT_FALSE(neg.src.contains(kIp10_0_0_1));
  EXPECT_FALSE(neg.dst.contains(db8_1));
  EXPECT_TRUE(neg.dst.contains(other));
  EXPECT_FALSE(neg.dst.contains(kIp10_0_0_1));
  EXPECT_TRUE(neg.dst.contains(kIp192_168_0_9));

  // A negation alone holds every address of its family and none of the other.
  const Rule only_neg = parse_ok("alert ip !2001:db8::/32 any -> [!10.0.0.0/8] any (sid:3;)");
  EXPECT_FALSE(only_neg.src.contains(db8_1));
  EXPECT_TRUE(only_neg.src.contains(other));
  EXPECT_FALSE(only_neg.src.contains(kIp10_0_0_1));
  EXPECT_TRUE(only_neg.dst.contains(kIp192_168_0_9));
  EXPECT_FALSE(only_neg.dst.contains(kIp10_0_0_1));
  EXPECT_FALSE(only_neg.dst.contains(db8_1));
  // Mixed: the IPv4 negation applies to IPv4 alone, the IPv6 item to IPv6 alone.
  const Rule mixed = parse_ok("alert ip [!10.0.0.0/8,2001:db8::/32] any -> any any (sid:4;)");
  EXPECT_TRUE(mixed.src.contains(kIp192_168_0_9));
  EXPECT_FALSE(mixed.src.contains(kIp10_0_0_1));
  EXPECT_TRUE(mixed.src.contains(db8_1));
  EXPECT_FALSE(mixed.src.contains(other));
  // any holds both families; prefix lengths across the 64-bit halves; inet_pton's forms.
  EXPECT_TRUE(mixed.dst.contains(db8_1) && mixed.dst.contains(kIp10_0_0_1));
  const Rule lens = parse_ok(
      "alert ip [2001:db8:0:1:8000::/65,::ffff:10.0.0.1] any -> [2001:db8::1/128,::/0] any "
      "(sid:5;)");
  EXPECT_TRUE(lens.src.contains(a6(0x20010db800000001, 0x8000000000000000)));
  EXPECT_TRUE(lens.src.contains(a6(0x20010db800000001, 0xFFFFFFFFFFFFFFFF)));
  EXPECT_FALSE(lens.src.contains(a6(0x20010db800000001, 0x7FFFFFFFFFFFFFFF)));
  EXPECT_TRUE(lens.src.contains(a6(0, 0x0000FFFF0A000001)));
  EXPECT_FALSE(lens.src.contains(kIp10_0_0_1)) << "an IPv4-mapped address is an IPv6 item";
  EXPECT_TRUE(lens.dst.contains(other));
  // Protocols: icmp is both ICMPs (Suricata), icmpv4 and icmpv6 one each.
  EXPECT_EQ(parse_ok("alert icmp any any -> any any (sid:6;)").proto, Proto::kIcmp);
  EXPECT_EQ(parse_ok("alert icmpv4 any any -> any any (sid:6;)").proto, Proto::kIcmpv4);
  EXPECT_EQ(parse_ok("alert icmpv6 any any -> any any (sid:6;)").proto, Proto::kIcmpv6);
  EXPECT_EQ(parse_error("alert icmpv6 any 1 -> any any (sid:6;)"),
            "expected ports 'any' for protocol icmpv6 (ports apply to tcp and udp only)");
}

TEST(IdsRuleParser, RejectsMalformedRulesWithWhatWasExpected) {
  const std::string opts = " (sid:1;)";
  EXPECT_EQ(parse_error("drop tcp any any -> any any" + opts),
            "expected action 'alert', got 'drop'");
  EXPECT_EQ(parse_error("alert sctp any any -> any any" + opts),
            "expected protocol tcp, udp, icmp, icmpv4, icmpv6 or ip, got 'sctp'");
  EXPECT_EQ(parse_error("alert tcp 10.0.0 any -> any any" + opts),
            "expected source address (any, A.B.C.D, A.B.C.D/LEN, X:X::X, X:X::X/LEN or [list], "
            "optionally '!'), got '10.0.0'");
  EXPECT_EQ(parse_error("alert tcp $HOME_NET any -> any any" + opts),
            "got '$HOME_NET' in the header: variables ($HOME_NET, $HTTP_PORTS) are not supported");
  EXPECT_EQ(parse_error("alert tcp any any -> any [80,$HTTP_PORTS]" + opts),
            "got '[80,$HTTP_PORTS]' in the header: variables ($HOME_NET, $HTTP_PORTS) are not "
            "supported");
  EXPECT_EQ(parse_error("alert tcp any any -> 1.2.3.4/33 any" + opts),
            "expected destination address (any, A.B.C.D, A.B.C.D/LEN, X:X::X, X:X::X/LEN or "
            "[list], optionally '!'), got '1.2.3.4/33'");
  const std::string v6_form =
      "(any, A.B.C.D, A.B.C.D/LEN, X:X::X, X:X::X/LEN or [list], optionally '!'), got ";
  EXPECT_EQ(parse_error("alert tcp 2001:db8::/129 any -> any any" + opts),
            "expected source address " + v6_form + "'2001:db8::/129'");
  EXPECT_EQ(parse_error("alert tcp 2001:db8:::1 any -> any any" + opts),
            "expected source address " + v6_form + "'2001:db8:::1'");
  EXPECT_EQ(parse_error("alert tcp [::1,] any -> any any" + opts),
            "expected source address " + v6_form + "'[::1,]'");
  EXPECT_EQ(parse_error("alert tcp any any -> 2001:db8::/ any" + opts),
            "expected destination address " + v6_form + "'2001:db8::/'");
  EXPECT_EQ(parse_error("alert tcp any 70000 -> any any" + opts),
            "expected source port (any, N, N:M or [list], optionally '!'), got '70000'");
  EXPECT_EQ(parse_error("alert tcp any any -> any 90:80" + opts),
            "expected destination port (any, N, N:M or [list], optionally '!'), got '90:80'");
  EXPECT_EQ(parse_error("alert tcp any any => any any" + opts), "expected '->' or '<>', got '=>'");
  EXPECT_EQ(parse_error("alert icmp any 5 -> any any" + opts),
            "expected ports 'any' for protocol icmp (ports apply to tcp and udp only)");
  EXPECT_EQ(parse_error("alert tcp any any -> any any sid:1;"),
            "expected '(' to open the rule options");
  EXPECT_EQ(parse_error("alert tcp any any -> any any (sid:1;"),
            "expected ')' at the end of the rule");
  EXPECT_EQ(parse_error("alert tcp any any -> any any (msg:\"x\";)"), "expected a sid:N option");
  EXPECT_EQ(parse_error("alert tcp any any -> any any (sid:x;)"),
            "sid: expected a non-negative integer, got 'x'");
  EXPECT_EQ(parse_error("alert tcp any any -> any any (nocase; sid:1;)"),
            "'nocase' without a preceding content");
  EXPECT_EQ(parse_error("alert tcp any any -> any any (content:abc; sid:1;)"),
            "content: expected a quoted string");
  EXPECT_EQ(parse_error("alert tcp any any -> any any (content:\"|0g|\"; sid:1;)"),
            "content: expected hex digits between '|', got '0g'");
  EXPECT_EQ(parse_error("alert tcp any any -> any any (content:\"|0d 0|\"; sid:1;)"),
            "content: expected pairs of hex digits between '|', got '0d 0'");
  EXPECT_EQ(parse_error("alert tcp any any -> any any (content:\"ab|0d\"; sid:1;)"),
            "content: expected a closing '|' after the hex bytes");
  EXPECT_EQ(parse_error("alert tcp any any -> any any (content:\"abc\"; depth:2; sid:1;)"),
            "depth: expected at least the content length 3, got 2");
  EXPECT_EQ(parse_error("alert tcp any any -> any any (pcre:\"abc\"; sid:1;)"),
            "pcre: expected \"/regex/flags\"");
  EXPECT_EQ(parse_error("alert tcp any any -> any any (pcre:\"/abc/R\"; sid:1;)"),
            "pcre: unsupported flag 'R' (supported: i, s, m)");
  EXPECT_EQ(parse_error("alert tcp any any -> any any (dsize:10; sid:1;)"),
            "unsupported option 'dsize'");
  EXPECT_EQ(parse_error("alert tcp any any -> any any (sid:1)"),
            "expected ';' after option 'sid:1'");
}

TEST(IdsRuleParser, FileErrorsNameTheLine) {
  const std::string good = "alert tcp any any -> any 80 (content:\"a#b\"; sid:1;)\n";
  Result<std::vector<Rule>> rules =
      parse_rules("# comment\n\n" + good + "  # indented comment\n", "r.rules");
  ASSERT_TRUE(rules.ok()) << rules.error();
  ASSERT_EQ(rules->size(), 1u);
  EXPECT_EQ((*rules)[0].line, 3u);
  EXPECT_EQ((*rules)[0].contents[0].bytes, "a#b");  // '#' inside a rule is not a comment
  Result<std::vector<Rule>> dup = parse_rules(good + "\n" + good, "r.rules");
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error(), "r.rules:3: duplicate sid 1 (first on line 1)");
  Result<std::vector<Rule>> bad =
      parse_rules(good + "alert tcp any any -> any any (sid:2)\n", "r.rules");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), "r.rules:2: expected ';' after option 'sid:2'");
  Result<std::vector<Rule>> missing = load_rules("/nonexistent/x.rules");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().rfind("cannot open rule file /nonexistent/x.rules", 0), 0u);
}

// A rule set as found: rules needing what Fulcrum lacks are skipped and counted by that
// feature; the rest loads. Strictly, the first such rule is an error.
constexpr const char* kMixed =
    "alert tcp any any -> any 80 (msg:\"ok\"; content:\"GET\"; sid:1;)\n"
    "alert tcp any any -> any any (byte_test:1,>,2,0; content:\"x\"; sid:2;)\n"
    "alert tcp any any -> any any (byte_test:1,=,3,0; content:\"y\"; sid:3;)\n"
    "drop tcp any any -> any any (content:\"z\"; sid:4;)\n"
    "alert http any any -> any any (content:\"z\"; sid:5;)\n"
    "alert tcp $HOME_NET any -> any $HTTP_PORTS (content:\"z\"; sid:6;)\n"
    "alert tcp any any -> any any (pcre:\"/(a)\\1/\"; sid:7;)\n"
    "alert tcp any any -> any any (content:\"w\"; sid:1;)\n"
    "alert tcp any any -> any any (msg:\"bad\" content:\"w\"; sid:8;)\n"
    "alert tcp any any -> any any (content:\"a\"; pcre:\"/b/R\"; sid:9;)\n"
    "alert tcp any any -> any any (content:\"ok\"; sid:10;)\n";

TEST(RuleFile, UnsupportedRulesAreSkippedAndCountedByFeature) {
  Result<RuleFile> file = parse_rule_file(kMixed, "r.rules", false);
  ASSERT_TRUE(file.ok()) << file.error();
  std::vector<uint32_t> sids;
  for (const Rule& r : file->rules) sids.push_back(r.sid);
  EXPECT_EQ(sids, (std::vector<uint32_t>{1, 7, 10}));
  std::vector<SkippedRule> skipped = file->skipped;
  EXPECT_EQ(
      skipped_summary(skipped),
      "byte_test 2, action drop 1, duplicate sid 1, malformed 1, pcre flag R 1, protocol http 1, "
      "variables 1");
  EXPECT_EQ(skipped[0].line, 2u);
  EXPECT_EQ(skipped[0].reason, "unsupported option 'byte_test'");
  // sid 7's backreference parses but Hyperscan cannot compile it: left out at compile time.
  Result<std::shared_ptr<RuleSet>> set = RuleSet::compile(file->rules, &skipped);
  ASSERT_TRUE(set.ok()) << set.error();
  EXPECT_EQ(set.value()->rules().size(), 2u);
  ASSERT_EQ(skipped.size(), 9u);
  EXPECT_EQ(skipped.back().line, 7u);
  EXPECT_EQ(skipped.back().feature, "pcre: Hyperscan");
  EXPECT_EQ(skipped.back().reason.rfind("sid 7 (line 7): ", 0), 0u) << skipped.back().reason;
  EXPECT_FALSE(RuleSet::compile(file->rules).ok()) << "without a list, an error";
}

TEST(RuleFile, StrictRefusesTheFirstRuleThatDoesNotLoad) {
  Result<RuleFile> file = parse_rule_file(kMixed, "r.rules", true);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.error(), "r.rules:2: unsupported option 'byte_test'");
}

}  // namespace
}  // namespace fulcrum::ids
