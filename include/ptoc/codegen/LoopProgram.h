// LoopProgram: what codegen makes of a module with loops. Every root function (a loop
// body, or a segment of code between loops) is compiled once into a Program; each
// control function becomes a list of steps (its loops) over a table of GM tensors
// (its arguments and workspaces), each step naming the body it runs per iteration
// and the windows of those tensors that an iteration reads and writes, with offsets
// as functions of the loop indices. The runtime instantiates it (runtime/ExpandLoops.h)
// into a flat Program the simulator and the executor run. Plain data, like Program.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llvm/ADT/SmallVector.h"
#include "ptoc/codegen/Program.h"
#include "ptoc/ir/SymExpr.h"

namespace ptoc::codegen {

/// A GM tensor of a control function.
struct ControlTensor {
  enum class Kind : uint8_t { Argument, Workspace };
  Kind kind = Kind::Workspace;
  std::string name;
  ir::DType dtype = ir::DType::F32;
  llvm::SmallVector<int64_t, 4> shape; ///< an Argument's may hold ir::kDynamicDim
  int argIndex = -1; ///< Argument: position in the signature
};

/// The part of a control tensor an iteration reads or writes: the box of `sizes` at
/// `offsets` (expressions of the indices in scope); the body sees it with its own
/// shape (the same elements, size-1 dimensions dropped or kept).
struct StepWindow {
  int tensor = -1; ///< index into ControlFunc::tensors
  std::vector<ir::SymExpr> offsets;
  llvm::SmallVector<int64_t, 4> sizes;
  std::vector<ir::SymExpr> valid; ///< ir::LoopWindow::valid (empty: the whole box)
  std::string location;           ///< ir::LoopWindow::loc: where the user made it ("": unknown)
};

/// One loop of a control function.
struct LoopStep {
  std::string name;  ///< the loop's name
  std::string index; ///< its index's name in expressions
  ir::SymExpr start, stop, step;
  /// The body: a compiled root function (index into LoopProgram::programs) or a
  /// control function with loops of its own (index into LoopProgram::controls).
  int program = -1, control = -1;
  std::vector<StepWindow> ins, outs; ///< per body argument / result
  std::string location;              ///< the loop's `file:line:col`
  /// The loop op's `parallel`: its iterations are independent, each is submitted as
  /// stitches of its own and up to device_sched_parallelism of them may run at once
  /// (runtime::assignStitches, docs/runtime.md "Parallel loops").
  bool parallel = false;
};

struct ControlFunc {
  std::string name;
  std::vector<ControlTensor> tensors;
  std::vector<LoopStep> steps;  ///< in program order
  std::vector<int> results;     ///< tensor index of each returned value
};

struct LoopProgram {
  std::string funcName;
  std::vector<Program> programs;     ///< the root functions, each compiled once
  std::vector<ControlFunc> controls; ///< controls[entry] is the kernel's function
  int entry = 0;
  /// Some bound or offset reads elements of the kernel's inputs (`t[i, j]`): the
  /// iterations depend on the data, so each run instantiates them anew.
  bool readsTensors = false;
  /// Some argument of the entry has a dynamic axis (ControlTensor::shape holds
  /// ir::kDynamicDim): each run binds `dim(t, k)` to its arguments' sizes, and the
  /// iterations are instantiated per distinct set of sizes.
  bool dynamicShapes = false;
};

} // namespace ptoc::codegen
