// Checks IR invariants: types, shapes, attributes, SSA dominance, acyclicity and
// tile-shape rules against a device.
#pragma once

#include "absl/status/status.h"

#include "ptoc/ir/LogicalResult.h"
#include "ptoc/ir/Module.h"

namespace ptoc::target {
struct DeviceSpec;
}

namespace ptoc::ir {

struct VerifyOptions {
  /// Buffer capacities for tile-shape checks; null skips the capacity checks (the
  /// alignment and divisibility rules still apply).
  const target::DeviceSpec *device = nullptr;
};

/// Verifies every function; each problem is emitted as a diagnostic at the op's
/// location through the module's Context. Fails if any error was emitted.
LogicalResult verify(const Module &m, const VerifyOptions &opts = {});
LogicalResult verify(const Func &f, const VerifyOptions &opts = {});

/// Checks one operation on its own: operand/result counts, attributes, type rule and
/// tile shapes (not its position or dominance). Used by builders to fail early.
LogicalResult verifyOp(const Operation &op, const VerifyOptions &opts = {});

/// The same, returning the diagnostics' text as an InvalidArgument status.
absl::Status verifyOrError(const Module &m, const VerifyOptions &opts = {});

} // namespace ptoc::ir
