// The `ptoc` command as a library function: `ptoc run FILE.pto ...` compiles, runs
// (simulated timing + real numerics) and reports. tools/ptoc is a one-line main over it.
#pragma once

namespace ptoc::tools {

/// Runs `ptoc` with command-line arguments; returns the exit status (0 success,
/// 1 error, 2 usage error). Never exits or aborts on bad input.
int ptocMain(int argc, char **argv);

} // namespace ptoc::tools
