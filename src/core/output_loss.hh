// OutputLoss: output a run produces besides transmitted packets' bytes (an alert log, a capture
// file) that could not be written. A run that lost output reports it and exits with a failure
// status, so a full disk never passes for success.
#pragma once

#include <cstdint>
#include <string>

namespace fulcrum {

struct OutputLoss {
  std::string what;   // "alert log alerts.json", "tx pcap out.pcap"
  std::string unit;   // what was lost: "alerts", "packets"
  uint64_t lost = 0;  // how many
  std::string error;  // the first write error ("No space left on device"), when known
};

}  // namespace fulcrum
