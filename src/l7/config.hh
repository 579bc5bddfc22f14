// The L7 proxy's configuration: the NF chain, as text.
//
//   # a comment (also // ...)
//   WAF(CRS /usr/share/modsecurity-crs) -> L7Balancer(POOL web 127.0.0.1:9000 127.0.0.1:9001)
//
// NFs in order, separated by "->", ";" or line ends; each is a name registered in NfRegistry
// (nf/nf.hh), optionally followed by its arguments in parentheses, comma-separated (an argument
// list may span lines; "..." quotes a comma). Arguments are read by the NF with core/args.hh
// (KEY value keywords and positionals), so its errors name file:line:column. A file with no NF
// is the empty chain (every message forwarded).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/result.hh"
#include "l7/nf/chain.hh"

namespace fulcrum::l7 {

// Parses `text` (named `file` in errors) into a chain.
Result<std::unique_ptr<Chain>> parse_chain(std::string_view text, const std::string& file);
// Reads and parses the file at `path`.
Result<std::unique_ptr<Chain>> load_chain(const std::string& path);

}  // namespace fulcrum::l7
