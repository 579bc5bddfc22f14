// Fuzz target: the IPsec SA file parser (src/lib/ipsec_sa.*, parse_sa_file) and the SA table
// built from what it accepts (SaTable::build: key expansion, selectors, inbound SPIs).
//
// Input: an SA file's text. Checked: every accepted SA has an SPI >= 256 and a selector length
// <= 32; a table built from them answers an inbound lookup of each inbound SPI.
#include <cstdint>
#include <string>

#include "fuzz_support.hh"
#include "lib/ipsec_sa.hh"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fulcrum;
  Result<std::vector<SaConfig>> r = parse_sa_file(fuzz::as_text(data, size), "fuzz-sa.txt");
  if (!r.ok()) return 0;
  for (const SaConfig& sa : r.value()) {
    FUZZ_CHECK(sa.spi >= kMinSpi, "SPI " + std::to_string(sa.spi));
    FUZZ_CHECK(sa.selector_len <= 32, "selector length " + std::to_string(sa.selector_len));
  }
  Result<std::shared_ptr<SaTable>> table = SaTable::build(r.value(), "fuzz-sa.txt");
  if (!table.ok()) return 0;
  for (const SaConfig& sa : r.value()) {
    if (sa.dir != SaDir::kIn) continue;
    const uint16_t i = table.value()->lookup_in(sa.spi);
    FUZZ_CHECK(i != SaTable::kNoSa && table.value()->at(i).cfg.spi == sa.spi,
               "inbound SPI " + std::to_string(sa.spi) + " not found");
  }
  return 0;
}
