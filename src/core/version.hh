// What was built: the release version (CMakeLists.txt's project version) and the git commit the
// build came from ("-dirty" when tracked files had changes; "unknown" outside a git checkout).
// `fulcrum --version` prints them; every run report records them.
#pragma once

namespace fulcrum {

const char* version();
const char* git_hash();

}  // namespace fulcrum
