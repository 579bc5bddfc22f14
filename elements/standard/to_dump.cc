#include "elements/standard/to_dump.hh"

#include "core/shared_storage.hh"

namespace fulcrum {

Status ToDump::configure(Args& args) {
  loc_ = args.loc();
  uint32_t snaplen = 0;
  int64_t limit = 0;
  args.positional("FILE", path_,
                  "capture file, created (or emptied) when the pipeline loads; one file for "
                  "all workers")
      .key("SNAPLEN", snaplen, "bytes of each packet to record; 0: the whole packet")
      .key("LIMIT", limit, "packets to record in all, over every worker; 0: no limit");
  if (Status s = args.finish(); !s) return s;
  if (snaplen > PcapFile::kMaxSnapLen)
    return args.error("SNAPLEN must be 0.." + std::to_string(PcapFile::kMaxSnapLen));
  if (limit < 0) return args.error("LIMIT must not be negative");
  snaplen_ = snaplen == 0 ? PcapFile::kMaxSnapLen : snaplen;
  limit_ = static_cast<uint64_t>(limit);
  return {};
}

Status ToDump::initialize(const InitContext& ctx) {
  const Args args({}, loc_, name(), kTraits.class_name);
  // Every replica (one per worker, and the one `run` builds first to check the pipeline) gets
  // the file the first one created.
  Result<std::shared_ptr<const PcapFile>> file = shared_or_own<PcapFile>(
      ctx.shared, "pcap-file:" + path_, [&] { return PcapFile::create(path_, snaplen_, name()); });
  if (!file) return args.error(file.error());
  if (file.value()->owner() != name())
    return args.error("capture " + path_ + " is written by '" + file.value()->owner() +
                      "' already (one ToDump a file)");
  // Shared to be written: every replica appends to it (PcapFile locks per buffer).
  file_ = std::const_pointer_cast<PcapFile>(file.value());
  reports_losses_ = ctx.worker == 0;
  verdict_ =
      output_connected(kOutput) ? Verdict::out(kOutput) : Verdict::drop(kDropReasons["dumped"]);
  return {};
}

void ToDump::output_losses(std::vector<OutputLoss>& out) const {
  if (!reports_losses_ || file_ == nullptr) return;
  if (const uint64_t lost = file_->lost(); lost > 0)
    out.push_back({"capture " + path_, "packets", lost, file_->first_error()});
}

void ToDump::counters(std::vector<Counter>& out) const {
  out.push_back({"captured", captured_});
  out.push_back({"lost", lost_});
}

}  // namespace fulcrum
