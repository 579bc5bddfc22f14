#include "elements/hash/md5_digest_offload.hh"

#include <string>

namespace fulcrum {

Status MD5DigestOffload::configure(Args& args) {
  bool trailer = false;
  args.key("TRAILER", trailer, "append the digest to the frame, as MD5Digest");
  if (Status s = configure_offload(args); !s) return s;
  Args cpu_args({std::string("TRAILER ") + (trailer ? "true" : "false")}, args.loc(), name(),
                kTraits.class_name);
  return cpu_.configure(cpu_args);
}

Status MD5DigestOffload::initialize(const InitContext& ctx) {
  cpu_.set_name(name());
  if (Status s = cpu_.initialize(ctx); !s) return s;
  return initialize_offload(ctx);
}

void MD5DigestOffload::counters(std::vector<Counter>& out) const {
  std::vector<Counter> cpu;
  cpu_.counters(cpu);
  for (Counter& c : cpu)
    if (c.name == "bytes") c.value += device_bytes_;
  out.insert(out.end(), cpu.begin(), cpu.end());
  OffloadElement<MD5DigestOffload>::counters(out);
}

}  // namespace fulcrum
