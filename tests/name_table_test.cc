// NameTable and the NDN wire helpers: unit tests and a differential test of longest-name-prefix
// match against a std::map of prefixes on 100k names.
#include "lib/name_table.hh"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "lib/ndn_wire.hh"

namespace fulcrum {
namespace {

using Components = std::vector<std::string>;

constexpr uint16_t kNone = NameTable::kNoRoute;
constexpr uint8_t kMac[6] = {0x02, 0, 0, 0, 0, 1};

// The URI of `components`, escaping every byte but letters and digits.
std::string to_uri(const Components& components) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  constexpr uint32_t kNibble = 4, kNibbleMask = 0xF;
  if (components.empty()) return "/";
  std::string uri;
  for (const std::string& c : components) {
    uri += '/';
    for (const char ch : c) {
      const auto b = static_cast<uint8_t>(ch);
      if (std::isalnum(b)) {
        uri += ch;
      } else {
        uri += '%';
        uri += kHex[b >> kNibble];
        uri += kHex[b & kNibbleMask];
      }
    }
  }
  return uri;
}

ParsedName parse(const std::vector<uint8_t>& frame) {
  ParsedName p;
  EXPECT_EQ(NameTable::parse_frame(frame.data(), static_cast<uint32_t>(frame.size()), p),
            NameTable::Parse::kOk);
  return p;
}

TEST(NdnWire, ParsesUris) {
  EXPECT_EQ(ndn::parse_uri("/"), Components{});
  EXPECT_EQ(ndn::parse_uri("/a/bc/d"), (Components{"a", "bc", "d"}));
  EXPECT_EQ(ndn::parse_uri("/a%2Fb/%41"), (Components{"a/b", "A"}));
  EXPECT_FALSE(ndn::parse_uri(""));
  EXPECT_FALSE(ndn::parse_uri("a/b"));
  EXPECT_FALSE(ndn::parse_uri("/a//b"));
  EXPECT_FALSE(ndn::parse_uri("/a/"));
  EXPECT_FALSE(ndn::parse_uri("/a%4"));
  EXPECT_FALSE(ndn::parse_uri("/a%zz"));
}

TEST(NdnWire, VarNumbers) {
  for (uint32_t v : {0u, 252u, 253u, 1000u, 65535u, 65536u, 1u << 30}) {
    std::string s;
    ndn::append_var(s, v);
    uint32_t pos = 0, out = 0;
    ASSERT_TRUE(ndn::read_var(reinterpret_cast<const uint8_t*>(s.data()),
                              static_cast<uint32_t>(s.size()), &pos, &out));
    EXPECT_EQ(out, v);
    EXPECT_EQ(pos, s.size());
    pos = 0;
    EXPECT_FALSE(ndn::read_var(reinterpret_cast<const uint8_t*>(s.data()),
                               static_cast<uint32_t>(s.size() - 1), &pos, &out));
  }
  const uint8_t eight[9] = {ndn::kVarNumber64, 0, 0, 0, 0, 0, 0, 0, 1};
  uint32_t pos = 0, out = 0;
  EXPECT_FALSE(ndn::read_var(eight, sizeof eight, &pos, &out));
}

TEST(NameTable, SampledNamesAreTheTablesOwnEachDrawn) {
  // PREFETCH auto's probe keys: names of the table (each finds its own port), every name drawn;
  // none from a table without names.
  NameTable t;
  ASSERT_TRUE(t.add("/a/b", 1).ok());
  ASSERT_TRUE(t.add("/c", 2).ok());
  ASSERT_TRUE(t.add("/d/e/f", 3).ok());
  ASSERT_TRUE(t.build().ok());
  const std::vector<ParsedName> names = t.sample_names(256);
  ASSERT_EQ(names.size(), 256u);
  std::vector<uint16_t> ports;
  for (const ParsedName& n : names) {
    const uint16_t port = t.lookup(n);
    EXPECT_EQ(n.components, port == 3 ? 3u : port == 1 ? 2u : 1u);
    ports.push_back(port);
  }
  std::sort(ports.begin(), ports.end());
  EXPECT_EQ(std::unique(ports.begin(), ports.end()) - ports.begin(), 3);
  EXPECT_EQ(ports.front(), 1);
  EXPECT_EQ(ports.back(), 3);
  EXPECT_TRUE(NameTable{}.sample_names(256).empty());
}

TEST(NameTable, LongestPrefixWins) {
  NameTable t;
  ASSERT_TRUE(t.add("/a", 1).ok());
  ASSERT_TRUE(t.add("/a/b/c", 3).ok());
  ASSERT_TRUE(t.add("/x/y", 4).ok());
  ASSERT_TRUE(t.build().ok());
  EXPECT_EQ(t.lookup("/a"), 1);
  EXPECT_EQ(t.lookup("/a/b"), 1);
  EXPECT_EQ(t.lookup("/a/b/c"), 3);
  EXPECT_EQ(t.lookup("/a/b/c/d/e"), 3);
  EXPECT_EQ(t.lookup("/a/bc"), 1);
  EXPECT_EQ(t.lookup("/ab"), kNone);
  EXPECT_EQ(t.lookup("/x"), kNone);
  EXPECT_EQ(t.lookup("/x/y/z"), 4);
  EXPECT_EQ(t.lookup("/"), kNone);
  EXPECT_EQ(t.size(), 3u);
}

TEST(NameTable, DefaultRouteAndDuplicates) {
  NameTable t;
  ASSERT_TRUE(t.add("/", 9).ok());
  ASSERT_TRUE(t.add("/a", 1).ok());
  ASSERT_TRUE(t.add("/a", 2).ok());
  ASSERT_TRUE(t.build().ok());
  EXPECT_EQ(t.lookup("/a/z"), 2);
  EXPECT_EQ(t.lookup("/b"), 9);
  EXPECT_EQ(t.lookup("/"), 9);
  EXPECT_EQ(t.size(), 1u);
}

TEST(NameTable, RejectsBadNames) {
  NameTable t;
  EXPECT_FALSE(t.add("a", 1).ok());
  EXPECT_FALSE(t.add("/a//b", 1).ok());
  EXPECT_FALSE(t.add("/a", NameTable::kMaxPort + 1).ok());
  std::string deep;
  for (uint32_t i = 0; i <= NameTable::kMaxComponents; ++i) deep += "/c";
  EXPECT_FALSE(t.add(deep, 1).ok());
}

TEST(NameTable, ParsesFrames) {
  NameTable t;
  ASSERT_TRUE(t.add("/video/ucla", 2).ok());
  ASSERT_TRUE(t.build().ok());
  const std::vector<uint8_t> f = ndn::interest_frame({"video", "ucla", "clip1"}, kMac, kMac);
  const ParsedName p = parse(f);
  EXPECT_EQ(p.components, 3u);
  EXPECT_EQ(t.lookup(p), 2);
  // Every shorter prefix of the frame: not NDN below the Ethernet header, malformed above.
  for (uint32_t n = 0; n < f.size(); ++n) {
    ParsedName q;
    EXPECT_EQ(NameTable::parse_frame(f.data(), n, q),
              n < ndn::kEtherHeaderLen ? NameTable::Parse::kNotNdn : NameTable::Parse::kMalformed)
        << n;
  }
  std::vector<uint8_t> other = f;
  other[ndn::kEtherTypeOffset] = 0x08;
  ParsedName q;
  EXPECT_EQ(NameTable::parse_frame(other.data(), static_cast<uint32_t>(other.size()), q),
            NameTable::Parse::kNotNdn);
}

TEST(NameTable, LongComponentsUseMultiByteLengths) {
  const std::string big(300, 'z');
  NameTable t;
  ASSERT_TRUE(t.add("/a/" + big, 5).ok());
  ASSERT_TRUE(t.build().ok());
  const std::vector<uint8_t> frame = ndn::interest_frame({"a", big, "tail"}, kMac, kMac);
  const ParsedName p = parse(frame);  // points into `frame`
  EXPECT_EQ(t.lookup(p), 5);
  EXPECT_EQ(t.lookup("/a/" + std::string(299, 'z')), kNone);
}

TEST(NameTable, NamesDeeperThanTheParseLimitMatchTheirPrefixes) {
  NameTable t;
  Components deep;
  std::string uri;
  for (uint32_t i = 0; i < NameTable::kMaxComponents; ++i) {
    deep.push_back("c" + std::to_string(i));
    uri += "/" + deep.back();
  }
  ASSERT_TRUE(t.add(uri, 7).ok());
  ASSERT_TRUE(t.build().ok());
  Components deeper = deep;
  deeper.push_back("more");
  deeper.push_back("still");
  EXPECT_EQ(t.lookup(parse(ndn::interest_frame(deeper, kMac, kMac))), 7);
  deep.pop_back();
  EXPECT_EQ(t.lookup(parse(ndn::interest_frame(deep, kMac, kMac))), kNone);
}

// The reference: longest prefix by trying every prefix in a std::map, longest first.
uint16_t reference_lookup(const std::map<Components, uint16_t>& ref, const Components& name) {
  const size_t max = std::min<size_t>(name.size(), NameTable::kMaxComponents);
  for (size_t c = max + 1; c-- > 0;) {
    auto it = ref.find(Components(name.begin(), name.begin() + c));
    if (it != ref.end()) return it->second;
  }
  return kNone;
}

// 100k names built as a tree (most extend an existing name, as real name spaces do), looked up
// by 300k names: table names, their extensions and truncations, and unrelated names; through
// lookup(URI), per-frame parse + lookup, and lookup_bulk.
TEST(NameTable, DifferentialAgainstMapOf100kNames) {
  constexpr size_t kNames = 100000;
  constexpr size_t kQueries = 300000;
  constexpr uint32_t kVocabulary = 200;
  constexpr uint32_t kPorts = 64;
  constexpr uint32_t kMaxExtra = 5;
  constexpr size_t kUriCheckEvery = 10;  // URI lookups are slow: every tenth query
  constexpr uint32_t kRareLong = 1000;   // one component in this many is 253..400 bytes long
  constexpr uint32_t kLongMin = 253, kLongSpan = 148;
  std::mt19937 rng(99);
  auto component = [&]() -> std::string {
    if (rng() % kRareLong == 0) return std::string(kLongMin + rng() % kLongSpan, 'L');
    const uint32_t w = rng() % kVocabulary;
    return w % 7 == 0 ? "w-" + std::to_string(w) + ".x" : "w" + std::to_string(w);
  };
  std::map<Components, uint16_t> ref;
  std::vector<Components> names;
  NameTable t;
  while (names.size() < kNames) {
    Components n;
    if (!names.empty() && rng() % 10 < 8) n = names[rng() % names.size()];
    if (n.size() >= NameTable::kMaxComponents) n.resize(rng() % NameTable::kMaxComponents);
    n.push_back(component());
    const uint16_t port = static_cast<uint16_t>(rng() % kPorts);
    ASSERT_TRUE(t.add(to_uri(n), port).ok()) << to_uri(n);
    if (ref.emplace(n, port).second)
      names.push_back(n);
    else
      ref[n] = port;
  }
  ASSERT_TRUE(t.build().ok());
  EXPECT_EQ(t.size(), ref.size());

  std::vector<Components> queries;
  for (size_t i = 0; i < kQueries; ++i) {
    Components q;
    switch (rng() % 4) {
      case 0:
        q = names[rng() % names.size()];
        break;
      case 1:
        q = names[rng() % names.size()];
        for (uint32_t k = rng() % kMaxExtra + 1; k > 0; --k) q.push_back(component());
        break;
      case 2:
        q = names[rng() % names.size()];
        q.resize(rng() % (q.size() + 1));
        break;
      default:
        for (uint32_t k = rng() % kMaxExtra + 1; k > 0; --k) q.push_back(component());
        break;
    }
    queries.push_back(std::move(q));
  }
  std::vector<std::vector<uint8_t>> frames;
  std::vector<ParsedName> parsed(kQueries);
  for (size_t i = 0; i < kQueries; ++i) {
    frames.push_back(ndn::interest_frame(queries[i], kMac, kMac));
    ASSERT_EQ(NameTable::parse_frame(frames[i].data(), static_cast<uint32_t>(frames[i].size()),
                                     parsed[i]),
              NameTable::Parse::kOk);
  }
  std::vector<uint16_t> bulk(kQueries);
  t.lookup_bulk(parsed.data(), bulk.data(), kQueries);
  size_t routed = 0;
  for (size_t i = 0; i < kQueries; ++i) {
    const uint16_t want = reference_lookup(ref, queries[i]);
    routed += want != kNone;
    ASSERT_EQ(t.lookup(parsed[i]), want) << to_uri(queries[i]);
    ASSERT_EQ(bulk[i], want) << to_uri(queries[i]);
    if (i % kUriCheckEvery == 0) {
      ASSERT_EQ(t.lookup(to_uri(queries[i])), want) << to_uri(queries[i]);
    }
  }
  EXPECT_GT(routed, kQueries / 2);
  EXPECT_LT(routed, kQueries);
}

}  // namespace
}  // namespace fulcrum
