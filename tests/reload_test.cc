// Hot reload (runtime/reload.hh, core/table_slot.hh, runtime/rcu.hh): a table taken out of
// service is freed only after every online reader has passed a quiescent point; a file that
// does not load leaves the table in service; elements are chosen by name.
#include "runtime/reload.hh"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "lib/ipsec_sa.hh"

namespace fulcrum {
namespace {

// A table that says when it is destroyed and which file it came from.
struct Table {
  Table(std::string f, std::atomic<int>* d) : file(std::move(f)), destroyed(d) {}
  ~Table() { destroyed->fetch_add(1); }
  Table(const Table&) = delete;
  Table& operator=(const Table&) = delete;
  std::string file;
  std::atomic<int>* destroyed;
};

constexpr auto kNoWait = std::chrono::milliseconds(0);
// Long enough never to be reached in these tests: the reader always passes its point.
constexpr auto kForever = std::chrono::hours(1);

class ReloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<Rcu>> r = Rcu::create(1);
    ASSERT_TRUE(r) << r.error();
    rcu = std::move(r.value());
    slot = std::make_shared<TableSlot<Table>>("test tables", "first", build("first").value(),
                                              [this](const std::string& f) { return build(f); });
  }

  Result<std::shared_ptr<Table>> build(const std::string& file) {
    if (file == "broken") return make_error("broken:3: expected \"A.B.C.D/LEN PORT\"");
    return std::make_shared<Table>(file, &destroyed);
  }

  std::atomic<int> destroyed{0};
  std::unique_ptr<Rcu> rcu;
  std::shared_ptr<TableSlot<Table>> slot;
};

TEST_F(ReloadTest, AnOfflineReaderIsNotWaitedFor) {
  Reloader reloader({{"rt", "IPLookup", slot.get()}}, *rcu, kForever);
  Result<std::string> r = reloader.reload("rt", "second");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(slot->current()->file, "second");
  EXPECT_EQ(destroyed.load(), 1);  // the first table, freed at once
  EXPECT_NE(r.value().find("test tables from second in service"), std::string::npos) << r.value();
}

TEST_F(ReloadTest, AReaderHoldingTheOldTableKeepsItAlive) {
  rcu->online(0);
  const Table* held = slot->current();  // the reader is inside a batch
  Reloader reloader({{"rt", "IPLookup", slot.get()}}, *rcu, kNoWait);
  Result<std::string> r = reloader.reload("rt", "second");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(slot->current()->file, "second");  // new batches see the new table
  EXPECT_EQ(destroyed.load(), 0);              // the reader's table is not freed under it
  EXPECT_EQ(held->file, "first");
  EXPECT_NE(r.value().find("old table is kept"), std::string::npos) << r.value();
  rcu->offline(0);
}

TEST_F(ReloadTest, TheOldTableIsFreedOnceTheReaderPassesAQuiescentPoint) {
  rcu->online(0);
  const Table* held = slot->current();
  Reloader reloader({{"rt", "IPLookup", slot.get()}}, *rcu, kForever);
  std::atomic<bool> returned{false};
  std::thread writer([&] {
    EXPECT_TRUE(reloader.reload("rt", "second"));
    returned.store(true);
  });
  // The swap happens first; the writer then waits for this reader.
  while (slot->current() == held) std::this_thread::yield();
  EXPECT_EQ(held->file, "first");
  EXPECT_EQ(destroyed.load(), 0);
  EXPECT_FALSE(returned.load());
  rcu->quiescent(0);  // the batch is over
  writer.join();
  EXPECT_EQ(destroyed.load(), 1);
  rcu->offline(0);
}

TEST_F(ReloadTest, AFileThatDoesNotLoadLeavesTheTableInService) {
  Reloader reloader({{"rt", "IPLookup", slot.get()}}, *rcu, kForever);
  Result<std::string> r = reloader.reload("rt", "broken");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("rt (IPLookup): broken:3: expected"), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("the test tables in service stay"), std::string::npos) << r.error();
  EXPECT_EQ(slot->current()->file, "first");
  EXPECT_EQ(slot->file(), "first");
  EXPECT_EQ(destroyed.load(), 0);
  EXPECT_EQ(reloader.counts().failed, 1u);
  EXPECT_EQ(reloader.counts().done, 0u);
}

TEST_F(ReloadTest, NoFileMeansTheFileTheTableCameFrom) {
  Reloader reloader({{"rt", "IPLookup", slot.get()}}, *rcu, kForever);
  ASSERT_TRUE(reloader.reload("rt", "second"));
  ASSERT_TRUE(reloader.reload("", ""));
  EXPECT_EQ(slot->current()->file, "second");
  EXPECT_EQ(destroyed.load(), 2);
}

TEST_F(ReloadTest, ElementsAreChosenByNameAndASharedTableIsReloadedOnce) {
  auto other = std::make_shared<TableSlot<Table>>(
      "other tables", "o1", build("o1").value(), [this](const std::string& f) { return build(f); });
  // rt and rt2 share one table (the same file), names another one.
  Reloader reloader({{"rt", "IPLookup", slot.get()},
                     {"rt2", "IPLookup", slot.get()},
                     {"names", "NDNLookup", other.get()}},
                    *rcu, kForever);
  Result<std::string> unknown = reloader.reload("rtt", "");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().find("no reloadable table in an element named 'rtt' (reloadable: rt, "
                                 "rt2, names)"),
            std::string::npos)
      << unknown.error();
  Result<std::string> both = reloader.reload("", "x");
  ASSERT_FALSE(both);
  EXPECT_NE(both.error().find("name the element"), std::string::npos) << both.error();

  Result<std::string> all = reloader.reload("", "");
  ASSERT_TRUE(all) << all.error();
  EXPECT_NE(all.value().find("rt (IPLookup), rt2 (IPLookup): "), std::string::npos) << all.value();
  EXPECT_NE(all.value().find("names (NDNLookup): "), std::string::npos) << all.value();
  EXPECT_EQ(reloader.counts().done, 2u);
  ASSERT_TRUE(reloader.reload("rt2", "second"));
  EXPECT_EQ(slot->current()->file, "second");
  EXPECT_EQ(other->current()->file, "o1");
}

TEST_F(ReloadTest, NoReloadOnceClosed) {
  Reloader reloader({{"rt", "IPLookup", slot.get()}}, *rcu, kForever);
  reloader.close();
  Result<std::string> r = reloader.reload("rt", "second");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("the run is ending"), std::string::npos);
  EXPECT_EQ(slot->current()->file, "first");
}

// SA tables across a reload: what carries over and what does not.
class SaReloadTest : public ::testing::Test {
 protected:
  static constexpr const char* kKeys =
      "000102030405060708090a0b0c0d0e0f10111213 2122232425262728292a2b2c2d2e2f3031323334";
  static constexpr const char* kOtherKeys =
      "f00102030405060708090a0b0c0d0e0f10111213 2122232425262728292a2b2c2d2e2f3031323334";

  static std::shared_ptr<SaTable> table(const std::string& text) {
    Result<std::vector<SaConfig>> sas = parse_sa_file(text, "sa.txt");
    EXPECT_TRUE(sas) << sas.error();
    Result<std::shared_ptr<SaTable>> t = SaTable::build(sas.value(), "sa.txt");
    EXPECT_TRUE(t) << t.error();
    return t.value();
  }
  static std::string line(uint32_t spi, const char* keys, const char* rest) {
    return std::to_string(spi) + " 192.0.2.1 198.51.100.1 " + keys + " " + rest + "\n";
  }
  static SecurityAssociation& sa(const SaTable& t, uint32_t spi, bool in) {
    for (size_t i = 0; i < t.size(); ++i)
      if (t.at(i).cfg.spi == spi && (t.at(i).cfg.dir == SaDir::kIn) == in) return t.at(i);
    ADD_FAILURE() << "no SA " << spi;
    return t.at(0);
  }
};

TEST_F(SaReloadTest, TheSameSaGoesOnPastTheReserveAndANewKeyStartsOver) {
  auto old =
      table(line(4096, kKeys, "10.0.0.0/8 DIR out") + line(8192, kKeys, "172.16.0.0/12 DIR out") +
            line(4096, kKeys, "0.0.0.0/0 DIR in"));
  sa(*old, 4096, false).last_seq = 500;
  sa(*old, 8192, false).last_seq = 700;
  for (uint32_t seq = 10; seq <= 20; ++seq) ASSERT_TRUE(sa(*old, 4096, true).replay.update(seq));

  // 4096 out moves to another selector (the same SA); 8192 gets new keys (a new SA).
  auto fresh = table(line(4096, kKeys, "10.1.0.0/16 DIR out") +
                     line(8192, kOtherKeys, "172.16.0.0/12 DIR out") +
                     line(4096, kKeys, "0.0.0.0/0 DIR in"));
  fresh->take_over(*old);
  EXPECT_EQ(fresh->carried(), 2u);
  EXPECT_EQ(sa(*fresh, 4096, false).last_seq.load(), 500 + SaTable::kSeqReserve);
  EXPECT_EQ(sa(*fresh, 8192, false).last_seq.load(), 0u);
  EXPECT_FALSE(sa(*fresh, 4096, true).replay.check(15));  // received before the reload
  EXPECT_TRUE(sa(*fresh, 4096, true).replay.check(21));

  // Until the grace period ends, workers still use the old table.
  sa(*old, 4096, false).last_seq += 64;
  ASSERT_TRUE(sa(*old, 4096, true).replay.update(21));
  ASSERT_TRUE(fresh->settle(*old));
  EXPECT_FALSE(sa(*fresh, 4096, true).replay.check(21));  // merged: a replay of it is refused
  EXPECT_TRUE(sa(*fresh, 4096, true).replay.check(22));
}

TEST_F(SaReloadTest, SettleReportsSequenceNumbersUsedPastTheReserve) {
  auto old = table(line(4096, kKeys, "10.0.0.0/8 DIR out"));
  auto fresh = table(line(4096, kKeys, "10.0.0.0/8 DIR out"));
  fresh->take_over(*old);
  sa(*old, 4096, false).last_seq = SaTable::kSeqReserve + 1;
  Status s = fresh->settle(*old);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find("SA(s) 4096"), std::string::npos) << s.error();
}

TEST_F(SaReloadTest, ATablePinnedByAnOffloadElementIsNotReplaced) {
  auto slot = std::make_shared<TableSlot<SaTable>>(
      "IPsec SAs", "sa.txt", table(line(4096, kKeys, "10.0.0.0/8 DIR out")),
      [](const std::string&) { return table(line(4096, kKeys, "10.0.0.0/8 DIR out")); });
  const SaTable* before = slot->current();
  slot->pin("x.click:3:1: aes :: IPsecAESOffload");
  Result<std::shared_ptr<const void>> r = slot->replace("sa.txt");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("also used by x.click:3:1: aes :: IPsecAESOffload"), std::string::npos)
      << r.error();
  EXPECT_EQ(slot->current(), before);
}

TEST_F(SaReloadTest, AWorkerSeesOneTableForItsWholeLoopIteration) {
  auto slot = std::make_shared<TableSlot<SaTable>>(
      "IPsec SAs", "sa.txt", table(line(4096, kKeys, "10.0.0.0/8 DIR out")),
      [](const std::string&) { return table(line(4096, kKeys, "10.0.0.0/8 DIR out")); });
  const SaTable* first = slot->for_worker(0);
  ASSERT_TRUE(slot->replace("sa.txt"));
  EXPECT_NE(slot->current(), first);
  EXPECT_EQ(slot->for_worker(0), first);  // the same iteration: encap and crypto agree
  ++t_table_epoch;                        // the worker's quiescent point
  EXPECT_EQ(slot->for_worker(0), slot->current());
}

}  // namespace
}  // namespace fulcrum
