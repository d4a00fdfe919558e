// HBM/L2 bandwidth reservations and the LRU L2 over region identities (see
// MemorySystem.h).
#include "MemorySystem.h"

#include <algorithm>

namespace ptoc::runtime::sim {

MemorySystem::MemorySystem(const target::DeviceSpec &d, const RegionTable &regions)
    : coreHbmRate_(d.memory.coreHbmBytesPerCycle), gmLatency_(d.memory.gmLatencyCycles),
      l2Latency_(d.memory.l2LatencyCycles), capacity_(d.memory.l2Bytes) {
  hbm_.bytesPerCycle = d.hbmBytesPerCycle();
  l2_.bytesPerCycle = d.l2BytesPerCycle();
  const int n = regions.numIds();
  entries_.resize(n);
  coverIds_ = n > 0 ? regions.cover(0).data() : nullptr;
  for (int id = 0; id < n; ++id) {
    llvm::ArrayRef<int> cover = regions.cover(id);
    entries_[id].coverBegin = static_cast<int>(cover.data() - coverIds_);
    entries_[id].coverEnd = entries_[id].coverBegin + static_cast<int>(cover.size());
    entries_[id].writeBack = regions.writeBack(id);
  }
}

void MemorySystem::unlink(int id) {
  Entry &e = entries_[id];
  if (e.prev >= 0) entries_[e.prev].next = e.next; else head_ = e.next;
  if (e.next >= 0) entries_[e.next].prev = e.prev; else tail_ = e.prev;
  e.prev = e.next = -1;
}

void MemorySystem::linkFront(int id) {
  Entry &e = entries_[id];
  e.prev = -1;
  e.next = head_;
  if (head_ >= 0) entries_[head_].prev = id;
  head_ = id;
  if (tail_ < 0) tail_ = id;
}

void MemorySystem::touch(int id) {
  if (head_ == id) return;
  unlink(id);
  linkFront(id);
}

double MemorySystem::insert(int id, int64_t bytes, bool dirty, double now, double fillDataEnd,
                            double fillEnd) {
  double waitUntil = now;
  Entry &e = entries_[id];
  if (e.state & kResident) {
    used_ -= e.footprint;
    unlink(id);
    e.state = 0;
  }
  if (bytes > capacity_) {
    // Larger than the whole L2: streams past it. Dirty data goes straight to HBM.
    if (dirty) {
      waitUntil = std::max(waitUntil, hbm_.reserve(now, bytes));
      hbmWriteBytes += bytes;
    }
    return waitUntil;
  }
  while (used_ + bytes > capacity_ && tail_ >= 0) {
    int victim = tail_;
    Entry &v = entries_[victim];
    unlink(victim);
    used_ -= v.footprint;
    if (v.state & kDirty) {
      // Write-back of an evicted intermediate; the inserting transfer waits for it.
      waitUntil = std::max(waitUntil, hbm_.reserve(now, v.footprint));
      hbmWriteBytes += v.footprint;
    }
    v.state = 0;
  }
  e.footprint = bytes;
  e.fillDataEnd = fillDataEnd;
  e.fillEnd = fillEnd;
  used_ += bytes;
  e.state = kResident | (dirty ? kDirty : 0);
  linkFront(id);
  return waitUntil;
}

MemorySystem::ReadResult MemorySystem::read(int id, int64_t bytes, double start,
                                            double pathRate) {
  ReadResult r;
  const Entry &e = entries_[id];
  const int *coverBegin = coverIds_ + e.coverBegin, *coverEnd = coverIds_ + e.coverEnd;
  bool hit = resident(id);
  if (!hit && coverBegin != coverEnd)
    hit = std::all_of(coverBegin, coverEnd, [&](int w) { return resident(w); });
  const double b = static_cast<double>(bytes);
  const double pathEnd = start + b / pathRate; // the path's own rate, nothing in the way
  if (hit) {
    // Data another core is still fetching arrives with that fill, not before: cores
    // reading the same tiles at the same time all proceed at the pace of the miss.
    double fillDataEnd = 0, fillEnd = 0;
    auto wait = [&](int w) {
      fillDataEnd = std::max(fillDataEnd, entries_[w].fillDataEnd);
      fillEnd = std::max(fillEnd, entries_[w].fillEnd);
    };
    if (resident(id)) {
      touch(id);
      wait(id);
    } else {
      for (const int *w = coverBegin; w != coverEnd; ++w) wait(*w);
    }
    for (const int *w = coverBegin; w != coverEnd; ++w)
      if (resident(*w)) touch(*w);
    double own = std::max(pathEnd, l2_.reserve(start, bytes));
    r.dataEnd = std::max(own, fillDataEnd);
    r.fillWait = r.dataEnd - own;
    r.stall = r.dataEnd - pathEnd;
    r.end = std::max(r.dataEnd + l2Latency_, fillEnd);
    r.hit = true;
    l2HitBytes += bytes;
    return r;
  }
  double rate = std::min(pathRate, coreHbmRate_);
  r.dataEnd = std::max(start + b / rate, hbm_.reserve(start, bytes));
  r.end = r.dataEnd + gmLatency_;
  hbmReadBytes += bytes;
  l2MissBytes += bytes;
  double evicted = insert(id, bytes, /*dirty=*/false, start, r.dataEnd, r.end);
  if (evicted > r.dataEnd) {
    // The fill waits for the write-backs it evicted.
    r.end += evicted - r.dataEnd;
    r.dataEnd = evicted;
    entries_[id].fillDataEnd = r.dataEnd;
    entries_[id].fillEnd = r.end;
  }
  r.stall = std::max(0.0, r.dataEnd - pathEnd);
  return r;
}

double MemorySystem::write(int id, int64_t bytes, double start, double ownRate) {
  const double b = static_cast<double>(bytes);
  double end = std::max(start + b / ownRate, l2_.reserve(start, bytes));
  bool through = entries_[id].writeBack;
  if (through) {
    end = std::max(end, hbm_.reserve(start, bytes));
    hbmWriteBytes += bytes;
  }
  double evicted = insert(id, bytes, /*dirty=*/!through, start, end, end);
  if (evicted > end) {
    end = evicted;
    entries_[id].fillDataEnd = entries_[id].fillEnd = end;
  }
  return end;
}

} // namespace ptoc::runtime::sim
