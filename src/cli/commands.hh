// The fulcrum subcommands. Each takes the arguments after its name and returns an exit code.
#pragma once

#include <string>
#include <vector>

namespace fulcrum::cli {

int cmd_run(const std::vector<std::string>& args);
int cmd_elements(const std::vector<std::string>& args);
int cmd_bench(const std::vector<std::string>& args);
int cmd_devices(const std::vector<std::string>& args);
int cmd_profile(const std::vector<std::string>& args);
int cmd_check(const std::vector<std::string>& args);
int cmd_graph(const std::vector<std::string>& args);
int cmd_pcap(const std::vector<std::string>& args);
int cmd_proxy(const std::vector<std::string>& args);
int cmd_plan(const std::vector<std::string>& args);

}  // namespace fulcrum::cli
