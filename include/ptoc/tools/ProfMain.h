// `ptoc prof`: analyse a run (its merged_swimlane.json or its output folder), write
// analysis.json, and the `report` / `compare` subcommands for regression gates.
#pragma once

#include <string>
#include <vector>

namespace ptoc::tools {

/// `ptoc prof PATH [options]`, `ptoc prof report ...`, `ptoc prof compare ...`:
/// `args` are the arguments after `prof`. Returns the exit status (0 success, 1 error
/// or (compare) a regression beyond the threshold, 2 usage error); never aborts.
int profMain(const std::vector<std::string> &args);

/// `ptoc prof report ...` (args after `report`).
int profReportMain(const std::vector<std::string> &args);
/// `ptoc prof compare BASE.json NEW.json [--threshold 5%]` (args after `compare`).
int profCompareMain(const std::vector<std::string> &args);

} // namespace ptoc::tools
