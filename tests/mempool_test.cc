// Packet pools without reserved hugepages: on Fulcrum's own memory, objects packed so that the
// headers and frames of a batch spread over the L1 cache's sets (DPDK's 4 KiB-page pool puts
// one mbuf per page, every one at the same offset), usable mbufs, memory returned on free.
#include "io/mempool.hh"

#include <gtest/gtest.h>
#include <rte_eal.h>
#include <rte_mbuf.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>
#include <vector>

#include "core/packet.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

constexpr unsigned kBatch = 64;
constexpr uintptr_t kLine = 64;
constexpr uintptr_t kL1Sets = 64;  // 32 KiB, 8 ways, 64-byte lines

unsigned l1_set(const void* p) {
  return static_cast<unsigned>((reinterpret_cast<uintptr_t>(p) / kLine) % kL1Sets);
}

TEST(PacketPool, WithoutHugepagesABatchSpreadsOverTheL1Sets) {
  ASSERT_EQ(rte_eal_has_hugepages(), 0) << "tests run without hugepages";
  Result<rte_mempool*> pool = create_packet_pool("layout", 4095);
  ASSERT_TRUE(pool.ok()) << pool.error();
  PoolHandle owned(pool.value());
  std::vector<Packet*> batch(kBatch);
  ASSERT_EQ(rte_pktmbuf_alloc_bulk(pool.value(), batch.data(), kBatch), 0);
  std::set<unsigned> header_sets, frame_sets;
  for (Packet* m : batch) {
    header_sets.insert(l1_set(m));
    frame_sets.insert(l1_set(rte_pktmbuf_mtod(m, const uint8_t*)));
  }
  // One mbuf per 4 KiB page puts all 64 headers in one set (and all 64 frames in another).
  EXPECT_GE(header_sets.size(), kL1Sets / 2);
  EXPECT_GE(frame_sets.size(), kL1Sets / 2);
  rte_pktmbuf_free_bulk(batch.data(), kBatch);
}

TEST(PacketPool, MbufsCarryTheDataRoomAndThePrivateArea) {
  Result<rte_mempool*> pool = create_packet_pool("room", 1023, 4096 + RTE_PKTMBUF_HEADROOM);
  ASSERT_TRUE(pool.ok()) << pool.error();
  PoolHandle owned(pool.value());
  EXPECT_EQ(rte_pktmbuf_data_room_size(pool.value()), 4096 + RTE_PKTMBUF_HEADROOM);
  EXPECT_EQ(rte_pktmbuf_priv_size(pool.value()), kPacketPrivSize);
  std::vector<Packet*> all;
  while (Packet* m = rte_pktmbuf_alloc(pool.value())) {
    EXPECT_EQ(rte_pktmbuf_headroom(m), RTE_PKTMBUF_HEADROOM);
    EXPECT_EQ(rte_pktmbuf_tailroom(m), 4096);
    EXPECT_EQ(m->pool, pool.value());
    char* p = rte_pktmbuf_append(m, 4096);
    ASSERT_NE(p, nullptr);
    std::memset(p, 0xA5, 4096);  // the whole data room is writable (ASan checks the bounds)
    all.push_back(m);
  }
  EXPECT_EQ(all.size(), 1023u) << "every object of the pool can be taken";
  for (size_t i = 1; i < all.size(); ++i)  // no two mbufs share bytes
    EXPECT_NE(rte_pktmbuf_mtod(all[i], char*), rte_pktmbuf_mtod(all[i - 1], char*));
  for (Packet* m : all) rte_pktmbuf_free(m);
  EXPECT_EQ(rte_mempool_avail_count(pool.value()), 1023u);
}

// The generator and replayed captures prefetch a buffer's frame line without reading the mbuf
// (prefetch_fill_lines): the offset they compute must be where the frame is, in a packed pool and
// in one on DPDK's memory.
TEST(PacketPool, TheFillPrefetchFindsTheFrameWithoutReadingTheMbuf) {
  for (const bool packed : {true, false}) {
    allow_packed_pools(packed);
    Result<rte_mempool*> pool = create_packet_pool(packed ? "fill-packed" : "fill-dpdk", 1023);
    allow_packed_pools(true);
    ASSERT_TRUE(pool.ok()) << pool.error();
    PoolHandle owned(pool.value());
    std::vector<Packet*> batch(kBatch);
    ASSERT_EQ(rte_pktmbuf_alloc_bulk(pool.value(), batch.data(), kBatch), 0);
    const size_t offset = fill_frame_offset(pool.value());
    for (Packet* m : batch) {
      m->data_off = RTE_PKTMBUF_HEADROOM;
      EXPECT_EQ(reinterpret_cast<char*>(m) + offset, rte_pktmbuf_mtod(m, char*))
          << (packed ? "packed pool" : "DPDK's pool");
    }
    rte_pktmbuf_free_bulk(batch.data(), kBatch);
  }
}

// Resident memory of this process, in bytes (/proc/self/statm).
long resident_bytes() {
  long size = 0, resident = 0;
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  const int n = std::fscanf(f, "%ld %ld", &size, &resident);
  std::fclose(f);
  return n == 2 ? resident * sysconf(_SC_PAGESIZE) : -1;
}

TEST(PacketPool, FreedPoolsGiveTheirMemoryBack) {
  constexpr int kPools = 40;  // ~10 MiB each, every object touched at creation
  rte_mempool_free(create_packet_pool("cycle", 4095).value());
  const long before = resident_bytes();
  ASSERT_GT(before, 0);
  for (int i = 0; i < kPools; ++i) {
    Result<rte_mempool*> pool = create_packet_pool("cycle", 4095);
    ASSERT_TRUE(pool.ok()) << pool.error();
    Packet* m = rte_pktmbuf_alloc(pool.value());
    ASSERT_NE(m, nullptr);
    rte_pktmbuf_free(m);
    rte_mempool_free(pool.value());
  }
  EXPECT_LT(resident_bytes() - before, long{32} << 20) << "freed pools left their memory mapped";
}

}  // namespace
}  // namespace fulcrum
