// The ptoc-opt driver as a library function: parse a .pto file, run a pipeline,
// print the result; with the test-harness modes (split input, diagnostics
// verification, round trip). tools/ptoc-opt is a one-line main over it.
#pragma once

namespace ptoc::tools {

/// Runs ptoc-opt with command-line arguments. Returns the process exit status
/// (0 success, 1 any error); never exits or aborts on bad input.
int optMain(int argc, char **argv);

} // namespace ptoc::tools
