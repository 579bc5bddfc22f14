// The dashboard's static files (src/control/dashboard/), embedded into the binary at build time
// by tools/embed_files.py: the control plane serves them without any file on disk.
#pragma once

#include <span>
#include <string_view>

namespace fulcrum::control {

struct DashboardFile {
  std::string_view path;  // "/index.html"
  std::string_view content_type;
  std::string_view content;
};

std::span<const DashboardFile> dashboard_files();

}  // namespace fulcrum::control
