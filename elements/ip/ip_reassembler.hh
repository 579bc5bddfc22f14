// IPReassembler — puts IPv4 and IPv6 fragments back together (DPDK's ip_frag library), so that
// what follows (IDSMatch, IPsecESPDecap) sees whole datagrams.
//
// Ports:     input 0: Ethernet frames. output 0: every frame that is not a fragment, unchanged
//            and in order; and each datagram once its last fragment arrives, as one new frame
//            (the first fragment's Ethernet header and annotations, the IPv4 header with the
//            fragment fields cleared, total length and checksum set; for IPv6 the fragment
//            header removed and the payload length set). A datagram leaves right after the
//            batch that completed it.
//            Drops: reassembled (a fragment whose bytes went into a datagram that left: not a
//            loss; the graph counts the datagram as a created packet, so the packet balance
//            holds), incomplete (a datagram that timed out, overlapped, had more fragments than
//            the library takes, or found the table full: its held fragments), too-big (a
//            datagram longer than 65,407 bytes with its Ethernet header), no-buffer (the
//            element's pool of datagram buffers was empty).
// Keys:      TIMEOUT_MS (default 30000, as Linux's ipfrag_time): a datagram not completed
//            within it is dropped; MAX_DATAGRAMS (default 4096): datagrams being reassembled at
//            once per worker (the table's bound: with IPv4 fragments of at most 1500 bytes and
//            the library's limit of 8 fragments a datagram, at most 4096 x 8 buffers are held).
// Uses:      nothing.  Sets: nothing (the datagram carries its first fragment's annotations).
// Counters:  datagrams (reassembled and sent on), fragments (taken in).
// Offload:   none.
//
// Limits of the library (rte_ip_frag, DPDK 22.11): at most RTE_LIBRTE_IP_FRAG_MAX_FRAG (8)
// fragments per datagram; IPv6 fragment headers directly after the IPv6 header (a fragment
// behind other extension headers is sent on unchanged, as are frames with VLAN tags); no
// overlap policies (overlapping fragments fail the datagram). Each worker has its own table, so
// the fragments of a datagram must reach the same worker: with several workers, steer
// fragments by addresses only (a NIC's RSS on the IPv4/IPv6 addresses, not the ports, which
// only the first fragment carries).
#pragma once

#include <rte_ip_frag.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "core/element.hh"
#include "core/registry.hh"
#include "io/mempool.hh"

namespace fulcrum {

class IPReassembler final : public ElementBase<IPReassembler> {
 public:
  static constexpr DropReasons kDropReasons{"reassembled", "incomplete", "too-big", "no-buffer"};
  static constexpr ElementTraits kTraits{"IPReassembler", 1, 1, kDropReasons};

  ~IPReassembler() override;

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;
  void process_batch(PacketBatch& batch) override;
  void counters(std::vector<Counter>& out) const override;

  bool defers() const override { return true; }
  uint64_t held() const override { return held_ + out_.size() - next_; }
  void poll_deferred(uint64_t now_ns, PacketBatch& out) override;
  // The input has ended: datagrams still missing fragments leave as "incomplete".
  void drain() override;

  // The clock the table's timeouts read (TSC cycles); tests replace it.
  void set_clock(uint64_t (*now)()) { now_ = now; }

 private:
  struct Leaving {
    Packet* packet;
    Verdict verdict;
    bool created;  // a datagram made here (not a packet that came in)
  };
  // Takes fragment p (held by the table now); a completed datagram is queued to leave.
  void take(Packet* p, uint32_t l3_len, bool v6);
  void complete(Packet* chain);
  uint32_t collect_death_row();

  uint32_t timeout_ms_ = 30000;
  uint32_t max_datagrams_ = 4096;
  rte_ip_frag_tbl* table_ = nullptr;
  rte_ip_frag_death_row death_row_{};
  struct DatagramPool {
    PoolHandle pool;
  };
  std::shared_ptr<const DatagramPool> pool_;
  uint64_t (*now_)() = nullptr;
  uint64_t held_ = 0;         // fragments in the table
  std::vector<Leaving> out_;  // to leave by poll_deferred, in order
  size_t next_ = 0;
  uint64_t datagrams_ = 0;
  uint64_t fragments_ = 0;
};

FULCRUM_REGISTER_ELEMENT(IPReassembler);

}  // namespace fulcrum
