// The memory system every core shares: HBM and L2 bandwidth as reservation timelines,
// and an LRU L2 over GM region identities (write-back for intermediates, write-through
// for tensors visible after the kernel).
#pragma once

#include <cstdint>
#include <vector>

#include "RegionTable.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::runtime::sim {

/// A bandwidth shared by all cores. A transfer of b bytes that can start at s occupies
/// the resource's timeline for b / rate from max(s, the end of the previous
/// reservation). Reservations never overlap, so the bytes a resource carried divided
/// by its rate never exceed the time it has been in use: no schedule beats the device's
/// bandwidth. O(1) per transfer; transfers are reserved in simulated-time order, so
/// this is first-come first-served sharing.
struct SharedBandwidth {
  double bytesPerCycle = 1;
  double freeAt = 0;
  /// Reserves `bytes` from `start`; returns when the reservation ends.
  double reserve(double start, int64_t bytes) {
    double begin = start > freeAt ? start : freeAt;
    freeAt = begin + static_cast<double>(bytes) / bytesPerCycle;
    return freeAt;
  }
};

/// HBM, L2 and the L2's contents.
class MemorySystem {
public:
  MemorySystem(const target::DeviceSpec &device, const RegionTable &regions);

  struct ReadResult {
    double dataEnd = 0; ///< the last byte has streamed: the pipe is free for the next read
    double end = 0;     ///< the data is usable (dataEnd plus the access latency)
    bool hit = false;
    /// How much later the data phase ended than `pathRate` alone allows: the core's
    /// HBM rate on a miss, HBM or L2 bandwidth other cores took, a fill or write-back
    /// waited for (runtime::TaskRecord::readStallCycles).
    double stall = 0;
    /// Of `stall`, on a hit on data another core was still fetching: how much later
    /// its data phase ended than the L2 alone would have let it (the fill's pace).
    double fillWait = 0;
  };
  /// A read (MTE2) of region `id` of `bytes` whose data phase starts at `start` (after
  /// the path's fixed cost), at most `pathRate` bytes per cycle. Hit: L2 bandwidth, the
  /// L2 latency; a region whose fill is still in flight (another core's miss) is
  /// usable no earlier than that fill. Miss: the core's HBM rate, HBM bandwidth, the GM
  /// latency; the region is inserted.
  ReadResult read(int id, int64_t bytes, double start, double pathRate);
  /// A write (FIXPIPE / MTE3) of region `id` at `ownRate` bytes per cycle (the path's
  /// rate), through L2. Writes to tensors visible after the kernel also go to HBM;
  /// others stay dirty in L2 until evicted. Writes are posted: returns when the last
  /// byte has streamed.
  double write(int id, int64_t bytes, double start, double ownRate);

  int64_t hbmReadBytes = 0, hbmWriteBytes = 0;
  int64_t l2HitBytes = 0, l2MissBytes = 0;

private:
  /// Everything the model touches per region, in one record (one cache miss per region
  /// in big programs rather than one per array).
  struct Entry {
    int prev = -1, next = -1;       ///< intrusive LRU list: prev is more recent
    int coverBegin = 0, coverEnd = 0; ///< the region's cover in RegionTable
    int64_t footprint = 0;          ///< bytes it takes while resident
    double fillDataEnd = 0;         ///< the transfer that made it resident streamed until
    double fillEnd = 0;             ///< and its data was usable from
    uint8_t state = 0;              ///< kResident | kDirty
    bool writeBack = false;         ///< RegionTable::writeBack
  };

  bool resident(int id) const { return entries_[id].state & kResident; }
  void touch(int id);
  /// Makes `id` resident (most recently used) with `bytes`; evicts least recently used
  /// regions to make room. Dirty evictions are written to HBM at `now`; returns the end
  /// of those write-backs (the inserting transfer waits for them), or `now`.
  double insert(int id, int64_t bytes, bool dirty, double now, double fillDataEnd,
                double fillEnd);
  void unlink(int id);
  void linkFront(int id);

  static constexpr uint8_t kResident = 1, kDirty = 2;

  const int *coverIds_;
  SharedBandwidth hbm_, l2_;
  double coreHbmRate_;
  double gmLatency_, l2Latency_;
  int64_t capacity_, used_ = 0;
  std::vector<Entry> entries_;
  int head_ = -1, tail_ = -1; ///< most / least recently used
};

} // namespace ptoc::runtime::sim
