// The verifier's check of the tile level's memory order (docs/ir.md, "Memory
// order"), kept beside the verifier that runs it.
#pragma once

namespace ptoc::ir {

class Func;

/// Checks every copy_in and copy_out of `f`: a copy_out writes a `gm_tensor`;
/// each dependency operand is an earlier access of the same memory that overlaps
/// the op's region (a read waits on writes, a write on reads and writes); and
/// every earlier access the op conflicts with (ir::MemoryOrder) is ordered before
/// it, as an operand or through a chain of operands. Emits a diagnostic at each
/// op that breaks the rule; returns whether there were none.
bool checkMemoryOrder(const Func &f);

} // namespace ptoc::ir
