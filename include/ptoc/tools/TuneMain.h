// `ptoc tune`: the tuning knowledge bank from the command line (show, merge, add,
// lookup).
#pragma once

#include <string>
#include <vector>

namespace ptoc::tools {

/// `ptoc tune show|merge|add|lookup ...`: `args` are the arguments after `tune`.
/// Returns the exit status (0 success, 1 error or (lookup) no record, 2 usage error);
/// never aborts.
int tuneMain(const std::vector<std::string> &args);

} // namespace ptoc::tools
