// The GM tensors of a function as codegen sees them: arguments, workspaces and
// aliases (view, reshape) resolved to strided windows of the memory they live in.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "llvm/ADT/DenseMap.h"
#include "ptoc/codegen/Program.h"
#include "ptoc/ir/Func.h"

namespace ptoc::codegen {

/// The tensors of Program::tensors, and which IR value each one is.
struct GmTensorTable {
  std::vector<GmTensor> tensors;
  llvm::DenseMap<const ir::Value *, int> index; ///< GM value -> tensor index
  std::vector<int> arguments;                   ///< Program::arguments
  std::vector<int> results;                     ///< Program::results
};

/// Collects the arguments (first, in signature order), then in op order every
/// `gm_tensor` and every `view`/`reshape` of a GM tensor (an alias: the window of its
/// base tensor's memory it covers). Errors: a reshape of a non-contiguous window, a
/// view whose offsets do not match its source, a returned value that is not a GM
/// tensor.
absl::StatusOr<GmTensorTable> collectGmTensors(const ir::Func &func);

} // namespace ptoc::codegen
