// ToDump — writes the packets it sees to a pcap capture file (Click's ToDump).
//
// Ports:     input 0: any packet. output 0 (optional): the same packet, unchanged; when it is
//            not connected the packets end here, dropped with reason "dumped".
// Uses:      nothing.  Sets: nothing.
// Counters:  captured (packets recorded, at most LIMIT over all workers), lost (recorded
//            packets that a failed write lost: the run reports them as output lost and exits
//            with status 4).
// Offload:   none.
//
// The file is libpcap's format (lib/pcap_file.hh) with the Ethernet link type: a record holds
// the first SNAPLEN bytes of a frame and its whole length, stamped with the wall-clock time its
// batch reached ToDump (one clock read per batch). FILE is created when the pipeline loads, so
// a path that cannot be written is an error then, naming the element's place in the pipeline;
// a relative FILE is taken from the working directory. A FIFO works too (`wireshark -k -i
// FIFO` shows the packets live); opening it waits for its reader.
//
// Several workers write one FILE. Each replica gathers whole records in a 64 KiB buffer of its
// own and appends the buffer to the file when it is full, when its oldest record is a second
// old (looked at when a batch comes), when LIMIT is reached and when the run ends: one lock and
// one write() per buffer, none per packet or batch, and the file reads whole at any moment.
// Records of different workers interleave buffer by buffer, each worker's in order (reordercap
// sorts a capture by time). LIMIT is counted over all workers: one shared atomic add a batch.
#pragma once

#include <cstdint>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "core/element.hh"
#include "core/location.hh"
#include "core/registry.hh"
#include "lib/pcap_file.hh"

namespace fulcrum {

class ToDump final : public ElementBase<ToDump> {
 public:
  static constexpr DropReasons kDropReasons{"dumped"};
  static constexpr int kOutput = 0;  // optional: without it the packets end here
  static constexpr ElementTraits kTraits{"ToDump", 1, 1, kDropReasons, 1u << kOutput};

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;
  void counters(std::vector<Counter>& out) const override;
  void finish() override { flush(); }
  void output_losses(std::vector<OutputLoss>& out) const override;

  void process_batch(PacketBatch& batch) override {
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    const uint64_t live = batch.live();
    const uint64_t granted = limit_ == 0 ? live : file_->claim(live, limit_);
    if (buffer_.empty() && granted > 0) oldest_s_ = now.tv_sec;
    uint64_t take = granted;
    batch.for_each([&](uint32_t i, Packet* p) {
      if (take > 0) {
        --take;
        buffer_.add(p, snaplen_, now);
      }
      batch.set_result(i, verdict_);
    });
    captured_ += granted;
    if (buffer_.full() || granted < live || now.tv_sec - oldest_s_ >= kFlushAfterS) flush();
  }

 private:
  static constexpr time_t kFlushAfterS = 1;

  void flush() {
    const uint64_t n = buffer_.packets();
    if (!file_->append(buffer_)) lost_ += n;
  }

  std::string path_;
  uint32_t snaplen_ = PcapFile::kMaxSnapLen;
  uint64_t limit_ = 0;
  SourceLoc loc_;
  Verdict verdict_ = Verdict::out(kOutput);
  std::shared_ptr<PcapFile> file_;  // shared by the replicas of every worker
  bool reports_losses_ = false;     // worker 0's replica reports the file's losses
  PcapBuffer buffer_;
  time_t oldest_s_ = 0;  // when the buffer's first record was taken
  uint64_t captured_ = 0;
  uint64_t lost_ = 0;
};

FULCRUM_REGISTER_ELEMENT(ToDump);

}  // namespace fulcrum
