// A Program flattened for simulation: validated once, then every leaf's pipe program
// as flat instruction arrays with in-degrees, successor lists (data dependencies) and
// the in-order edge to the next instruction on the same pipe, and the execute graph as
// flat successor lists. The event loop then touches only dense arrays.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ptoc/codegen/Program.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::runtime::sim {

/// How an instruction is timed.
enum class InstrKind : uint8_t {
  Compute, ///< CUBE / VEC: fixed cycles
  Local,   ///< MTE1 (L1 -> L0A/L0B): the path's fixed cost + bytes / rate
  Read,    ///< MTE2: a GM read through L2 (MemorySystem)
  Write,   ///< FIXPIPE / MTE3: a GM write through L2 (MemorySystem)
};

/// One instruction, ready to time.
struct SimInstr {
  InstrKind kind = InstrKind::Compute;
  codegen::Pipe pipe = codegen::Pipe::Vec;
  int32_t region = -1;   ///< Read/Write: index into the call's regions
  int64_t bytes = 0;
  double duration = 0;   ///< Compute/Local: the whole duration in cycles
  double fixed = 0;      ///< Read/Write: the path's fixed cycles before its data phase
  double rate = 0;       ///< Read/Write: the path's own rate, bytes per cycle
};

/// Core kinds as array indices.
inline constexpr int kAic = 0, kAiv = 1;

/// The flattened program.
struct SimProgram {
  /// Validates `program` against `device` and flattens it. Errors name the leaf, call
  /// or instruction that is wrong.
  static absl::StatusOr<SimProgram> build(const codegen::Program &program,
                                          const target::DeviceSpec &device);

  // Leaves: instructions [leafBegin[l], leafBegin[l + 1]).
  std::vector<int32_t> leafBegin;
  std::vector<SimInstr> instrs;
  std::vector<int32_t> inDegree;  ///< per instr: its deps, plus 1 if a pipe predecessor
  std::vector<int32_t> succBegin; ///< per instr (+1): into succ
  std::vector<int32_t> succ;      ///< instrs that depend on it, as indices within the leaf
  /// Per instr: the next instruction of the leaf on the same pipe (index within the
  /// leaf), or -1. It may start when this one frees the pipe, which for a GM read is
  /// before its data arrives.
  std::vector<int32_t> nextOnPipe;
  int maxLeafInstrs = 0;

  // Calls.
  std::vector<int32_t> callLeaf;
  std::vector<uint8_t> callKind;      ///< kAic / kAiv
  std::vector<int32_t> predCount;
  std::vector<int32_t> callSuccBegin; ///< per call (+1): into callSucc
  std::vector<int32_t> callSucc;
  int64_t tasksOfKind[2] = {0, 0};

  // Stitches (loops, docs/runtime.md): the calls of stitch k are [stitchBegin[k],
  // stitchBegin[k + 1]) (calls are in stitch order). A program without loops is one
  // stitch, ready at the head, and keeps callStitch empty (callInstance too when it
  // names no loop iterations).
  bool loops = false;                 ///< Program::stitchReadyCycles is not empty
  std::vector<int32_t> stitchBegin;   ///< per stitch (+1)
  std::vector<double> stitchReady;    ///< per stitch: cycles after the head
  std::vector<int32_t> callStitch;    ///< per call (loops only)
  std::vector<int32_t> callInstance;  ///< per call (with Program::instances): Call::instance
  /// Per stitch: Program::stitchWaitFor (empty: k - 1, a barrier between consecutive
  /// stitches).
  std::vector<int32_t> stitchWaitFor;
  int numStitches() const { return static_cast<int>(stitchReady.size()); }
  int waitFor(int k) const { return stitchWaitFor.empty() ? k - 1 : stitchWaitFor[k]; }
  int stitchOf(int call) const { return callStitch.empty() ? 0 : callStitch[call]; }
  int instanceOf(int call) const { return callInstance.empty() ? -1 : callInstance[call]; }

  /// The heap bytes the arrays hold.
  uint64_t approxBytes() const;
};

} // namespace ptoc::runtime::sim
