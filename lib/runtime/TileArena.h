// Per-worker local tile storage of the numeric executor: the float and int64 arenas
// that a leaf's tiles live in while one call runs. Internal to lib/runtime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

namespace ptoc::runtime::exec {

/// Alignment of every arena and every tile slot in it. Equal alignment of a slot in
/// every worker's arena makes vectorised loops (peeling, reduction trees) take the same
/// path everywhere, so results do not depend on which worker ran a call.
inline constexpr size_t kTileAlignBytes = 64;
/// Slot offsets are multiples of this many elements: kTileAlignBytes of 4-byte floats
/// (int64 slots are then aligned to twice that).
inline constexpr int64_t kTileAlignWords = kTileAlignBytes / 4;

/// Where a call's tiles live: float tiles (f32/f16/bf16) and integer tiles (every
/// integer type and bool, widened to int64; u64 as its bits).
struct TileMemory {
  float *floats = nullptr;
  int64_t *ints = nullptr;
};

/// Aligned scratch storage owned by one worker, grown to the largest leaf it runs and
/// reused for every call (no allocation per call or per op).
class TileArena {
public:
  /// Makes room for `floatWords` floats and `intWords` int64s (never shrinks).
  void reserve(int64_t floatWords, int64_t intWords) {
    grow(floats_, floatCap_, floatWords, sizeof(float));
    grow(ints_, intCap_, intWords, sizeof(int64_t));
  }
  TileMemory memory() {
    return {reinterpret_cast<float *>(floats_.get()), reinterpret_cast<int64_t *>(ints_.get())};
  }

private:
  struct AlignedDelete {
    void operator()(std::byte *p) const { ::operator delete(p, std::align_val_t(kTileAlignBytes)); }
  };
  using Storage = std::unique_ptr<std::byte, AlignedDelete>;

  static void grow(Storage &s, int64_t &cap, int64_t words, size_t wordBytes) {
    if (words <= cap) return;
    size_t bytes = static_cast<size_t>(words) * wordBytes;
    s.reset(static_cast<std::byte *>(::operator new(bytes, std::align_val_t(kTileAlignBytes))));
    cap = words;
  }

  Storage floats_, ints_;
  int64_t floatCap_ = 0, intCap_ = 0;
};

} // namespace ptoc::runtime::exec
