// Codegen entry points: partitioned function -> Program, and the Program's text form.
#pragma once

#include "absl/status/statusor.h"
#include "llvm/Support/raw_ostream.h"
#include "ptoc/codegen/LoopProgram.h"
#include "ptoc/codegen/Program.h"

namespace ptoc::ir {
class Func;
}
namespace ptoc::target {
struct DeviceSpec;
}

namespace ptoc::codegen {

/// Codegen options (one struct; defaults here).
struct CodegenOptions {
  /// Ping-pong local buffers so the next tile's transfer overlaps this tile's compute.
  /// Off: every tile reuses the most recently freed space, which serialises transfers
  /// and compute (useful to measure what double buffering buys).
  bool doubleBuffer = true;
  /// Run the IR verifier (with the device) before compiling. A caller that has just
  /// verified the function (a pass manager with verify-each) may skip it: it is a
  /// full pass over the IR.
  bool verify = true;
};

/// Compiles a function at the partitioned level (every tile op has `sg`). Errors name
/// the subgraph, the buffer, the bytes needed and available. Uses the function's walk
/// marks (Func::reserveWalkMarks) as scratch: do not run it concurrently with another
/// walk of the same function. `funcIndex` is the function's position in its module (the
/// F of its group keys `func<F>_<order>`). docs/codegen.md describes the result.
absl::StatusOr<Program> buildProgram(const ir::Func &func, const target::DeviceSpec &device,
                                     const CodegenOptions &options = {},
                                     unsigned funcIndex = 0);

/// Text form: the tensors, each leaf with its ops, buffer slots and per-pipe
/// instructions, then the execute graph (one line per call). Deterministic.
void printProgram(const Program &program, llvm::raw_ostream &os);
/// Text form of a module with loops: each root function's program, then each control
/// function's tensors and loops (windows as expressions of the indices).
void printLoopProgram(const LoopProgram &program, llvm::raw_ostream &os);

} // namespace ptoc::codegen
