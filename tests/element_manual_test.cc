// The manual of every element class is generated from what its configure() reads
// (Args::describe()): these tests check that the record is complete and truthful.
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/args.hh"
#include "core/registry.hh"

namespace fulcrum {
namespace {

std::vector<ArgDoc> describe(const ElementClassInfo& info) {
  const std::unique_ptr<Element> e = info.create();
  Args a = Args::describe(info.traits->class_name);
  const Status s = e->configure(a);
  EXPECT_FALSE(s.ok()) << info.traits->class_name << ": configure must stop at finish()";
  return a.docs();
}

bool has(const std::vector<ArgDoc>& docs, std::string_view name) {
  for (const ArgDoc& d : docs)
    if (d.name == name) return true;
  return false;
}

TEST(ElementManual, EveryArgumentHasHelpAndAUniqueName) {
  for (const auto& [name, info] : Registry::instance().all()) {
    std::set<std::string> seen;
    for (const ArgDoc& d : describe(info)) {
      EXPECT_FALSE(d.help.empty()) << name << " " << d.name;
      EXPECT_TRUE(seen.insert(d.name).second) << name << " reads " << d.name << " twice";
      if (!d.required && d.kind != ArgDoc::Kind::kRest) {
        EXPECT_FALSE(d.default_value.empty()) << name << " " << d.name;
      }
    }
  }
}

// The header block no longer documents arguments by hand (it would drift from the code).
TEST(ElementManual, HeaderBlocksHaveNoHandWrittenConfigSection) {
  for (const auto& [name, info] : Registry::instance().all())
    EXPECT_EQ(element_doc(name).find("\nConfig:"), std::string_view::npos) << name;
}

// Every default the manual prints is a value configure() accepts: an element configured with
// each of its printed keyword defaults spelled out is configured as with none of them.
TEST(ElementManual, PrintedDefaultsAreAcceptedValues) {
  int checked = 0;
  for (const auto& [name, info] : Registry::instance().all()) {
    const std::vector<ArgDoc> docs = describe(info);
    std::vector<std::string> raw;
    bool needs_more = false;
    for (const ArgDoc& d : docs) {
      if (d.required || d.kind == ArgDoc::Kind::kRest) needs_more = true;
      if (d.kind == ArgDoc::Kind::kKeyword && d.default_value != "none")
        raw.push_back(d.name + " " + d.default_value);
    }
    if (needs_more || raw.empty()) continue;
    const std::unique_ptr<Element> e = info.create();
    Args a(raw, SourceLoc{"manual.click", 1, 1}, "e", name);
    const Status s = e->configure(a);
    EXPECT_TRUE(s.ok()) << name << ": " << (s.ok() ? "" : s.error());
    ++checked;
  }
  EXPECT_GE(checked, 5);
}

// The offload stage's keys are read by every offloadable element, TASK_BYTES only where a
// whole-packet region goes to the device.
TEST(ElementManual, OffloadElementsListTheStageKeys) {
  const char* items_only[] = {"IPLookupOffload", "IP6LookupOffload"};
  const char* whole_packet[] = {"IPsecAESOffload", "IPsecAuthHMACSHA1Offload", "MD5DigestOffload",
                                "IDSMatchOffload", "CheckIPChecksumOffload"};
  const auto docs_of = [](const char* cls) {
    const ElementClassInfo* info = Registry::instance().find(cls);
    EXPECT_NE(info, nullptr) << cls;
    return info ? describe(*info) : std::vector<ArgDoc>{};
  };
  for (const char* cls : items_only) {
    const std::vector<ArgDoc> d = docs_of(cls);
    for (const char* key :
         {"AGGREGATE", "FLUSH_US", "AFFINITY", "TASK_TIMEOUT_MS", "CHAIN", "FUSE"})
      EXPECT_TRUE(has(d, key)) << cls << " " << key;
    EXPECT_FALSE(has(d, "TASK_BYTES")) << cls;
    EXPECT_TRUE(has(d, "FILE")) << cls;
  }
  for (const char* cls : whole_packet) {
    const std::vector<ArgDoc> d = docs_of(cls);
    for (const char* key : {"AGGREGATE", "TASK_BYTES", "CHAIN", "FUSE"})
      EXPECT_TRUE(has(d, key)) << cls << " " << key;
  }
}

TEST(ElementManual, DescribeRecordsKindTypeAndDefault) {
  uint32_t n = 7;
  bool flag = true;
  std::string file;
  Args a = Args::describe("X");
  a.positional("FILE", file, "the file").key("N", n, "how many").key("FLAG", flag, "on?");
  static_cast<void>(a.rest("MORE", "the rest"));
  EXPECT_FALSE(a.finish().ok());
  ASSERT_EQ(a.docs().size(), 4u);
  EXPECT_EQ(a.docs()[0].kind, ArgDoc::Kind::kPositional);
  EXPECT_TRUE(a.docs()[0].required);
  EXPECT_EQ(a.docs()[1].default_value, "7");
  EXPECT_EQ(a.docs()[1].type, "integer");
  EXPECT_EQ(a.docs()[2].default_value, "true");
  EXPECT_EQ(a.docs()[3].kind, ArgDoc::Kind::kRest);
  EXPECT_EQ(n, 7u);  // describing parses nothing
}

}  // namespace
}  // namespace fulcrum
