// IPFragmenter — cuts IPv4 packets longer than an MTU into fragments (RFC 791), as Click's
// IPFragmenter; packets that may not be fragmented leave by output 1.
//
// Ports:     input 0: Ethernet frames with a checked IPv4 header at offset 14 (CheckIPHeader).
//            output 0: packets whose IP total length is at most MTU, unchanged; and the
//            fragments of longer ones: each a new buffer with the Ethernet header, the IPv4
//            header (the first fragment keeps every option, the others only those whose copied
//            flag is set, RFC 791), fragment offset, MF flag, total length and checksum set, and
//            its part of the data (a multiple of 8 bytes, but the last). output 1 (optional):
//            longer packets with DF set, unchanged: connect ICMPError(SRC, 3, 4, MTU M) to
//            tell the sender (RFC 1191); left unconnected, they are dropped as "df-too-big".
//            Drops: fragmented (a packet whose bytes left as fragments: not a loss; the graph
//            counts the fragments as created packets, so the packet balance holds), df-too-big
//            (output 1 unconnected), no-buffer (the worker's pool was empty: the packet is
//            dropped whole, no partial datagram leaves; also when a fragment would not fit the
//            pool's 2 KiB buffers, i.e. MTU over 2034 with longer packets, which only
//            IPReassembler's datagrams are), not-ipv4 (not an IPv4 frame: it
//            cannot be fragmented; check the header first).
// Keys:      MTU (positional, required): the largest IP total length to send, 68..65535 (68:
//            RFC 791's minimum).
// Uses:      nothing.  Sets: nothing (fragments carry the packet's annotations).
// Counters:  fragmented (packets cut), fragments (fragments made).
// Offload:   none.
//
// In front of an IPsec gateway, MTU is the path MTU less the ESP overhead of the SA's mode
// (docs/ipsec.md, "MTU"), so that the encapsulated fragments fit the path. Fragments leave
// right after the batch their packet came in (the deferring path, as Tee's copies): a smaller
// packet of the same flow later in that batch can leave before them.
#pragma once

#include <cstdint>
#include <vector>

#include "core/element.hh"
#include "core/registry.hh"

namespace fulcrum {

class IPFragmenter final : public ElementBase<IPFragmenter> {
 public:
  static constexpr DropReasons kDropReasons{"fragmented", "df-too-big", "no-buffer", "not-ipv4"};
  static constexpr ElementTraits kTraits{"IPFragmenter", 1, 2, kDropReasons, 0b10};

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;
  void process_batch(PacketBatch& batch) override;
  void counters(std::vector<Counter>& out) const override;

  bool defers() const override { return true; }
  uint64_t held() const override { return made_.size() - next_; }
  void poll_deferred(uint64_t now_ns, PacketBatch& out) override;

 private:
  // The fragments of p into made_; false (and nothing made) when the pool runs dry.
  bool cut(Packet* p);

  uint32_t mtu_ = 0;
  rte_mempool* pool_ = nullptr;
  std::vector<Packet*> made_;
  size_t next_ = 0;
  uint64_t fragmented_ = 0;
  uint64_t fragments_ = 0;
};

FULCRUM_REGISTER_ELEMENT(IPFragmenter);

}  // namespace fulcrum
