// Codegen of a module with loops: every root function a loop runs compiled once, and
// each control function's loops as steps over its tensors (LoopProgram.h).
#pragma once

#include "absl/status/statusor.h"
#include "ptoc/codegen/Codegen.h"
#include "ptoc/codegen/LoopProgram.h"

namespace ptoc::ir {
class Func;
class Module;
} // namespace ptoc::ir

namespace ptoc::codegen {

/// Builds the LoopProgram of control function `entry` of `module`. The module must be
/// past outline-segments and the pipeline: control functions hold only workspaces,
/// loops and their return; every root function is partitioned. A violation is a bug
/// in ptoc (an Internal error).
absl::StatusOr<LoopProgram> buildLoopProgram(const ir::Module &module, const ir::Func &entry,
                                             const target::DeviceSpec &device,
                                             const CodegenOptions &options = {});

} // namespace ptoc::codegen
