// Local-buffer allocation for one leaf and one core-local buffer (UB, L1, L0A, L0B,
// L0C): offsets for values with known lifetimes, under a tight or a ping-pong
// (double-buffering) policy, and which earlier values each one overwrites (so codegen
// can add write-after-read dependencies).
#pragma once

#include <cstdint>
#include <vector>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

namespace ptoc::codegen {

/// One value that needs space in a buffer. Program points are instruction indices of
/// the leaf: the value is written at `def` and read up to `lastUse`; its space may be
/// reused by a value whose `def` is after `lastUse`.
struct BufferValue {
  int64_t bytes = 0;        ///< space it needs (a multiple of the alignment)
  int def = 0;              ///< program point of its (first) writer
  int lastUse = 0;          ///< program point of its last reader (== def when unread)
  uint8_t writerPipes = 0;  ///< bit mask (1 << Pipe) of the pipe that writes it
  uint8_t readerPipes = 0;  ///< bit mask of the pipes that read it (the writer's when unread)
  /// An earlier value whose space this one takes over in place (a matmul accumulating
  /// into its `acc`, an elementwise op over an operand of its shape), when that
  /// value's last use is this value's def; -1 for none.
  int inPlaceOf = -1;
};

/// How freed space is reused.
enum class AllocPolicy : uint8_t {
  /// The smallest footprint: reuse freed space before growing (best fit, then the most
  /// recently freed, then the lowest offset). Consecutive tiles land in the same
  /// space, so each waits for the readers of the previous one (serialises).
  Tight,
  /// Double buffering: a value first takes space last read on its own writer's pipe
  /// (free to wait for: that pipe runs in order anyway), then never-used space within
  /// the ping-pong budget, then the least recently freed space (first in, first out),
  /// and grows past the budget only as a last resort. So a copy_in of the next tile
  /// does not land where the current tile's compute still reads, and consecutive
  /// tiles alternate between two sets of slots.
  PingPong,
};

/// The placement of every value, or why it failed.
struct BufferAllocation {
  bool ok = false;
  std::vector<int64_t> offsets;  ///< per value
  /// Per value: the earlier values whose (freed) space it overwrites, ascending
  /// (for a value placed in place: the value it took over). Its writer must wait for
  /// their readers (write after read).
  std::vector<llvm::SmallVector<int, 2>> overwrites;
  int64_t peakBytes = 0;         ///< highest end offset used
  // On failure:
  int failedValue = -1;          ///< the value that did not fit
  int64_t neededBytes = 0;       ///< the buffer size its placement would have needed
};

/// Places `values` (sorted by `def`) in a buffer of `capacity` bytes with offsets that
/// are multiples of `alignment`. `pingPongBudget` (PingPong only) is the footprint
/// the policy may use before it prefers reusing recently freed space over growing
/// (typically twice the tight peak). Deterministic. Fails (ok = false) when a value
/// finds no space.
BufferAllocation allocateBuffer(llvm::ArrayRef<BufferValue> values, int64_t capacity,
                                int64_t alignment, AllocPolicy policy,
                                int64_t pingPongBudget = 0);

} // namespace ptoc::codegen
