// Local-buffer allocation: a linear scan over values in program order, with the
// buffer kept as a list of segments that remember their last occupant, so a reused
// placement knows whose readers it must wait for (see BufferAllocator.h).
#include "ptoc/codegen/BufferAllocator.h"

#include <algorithm>
#include <array>
#include <functional>
#include <queue>

namespace ptoc::codegen {
namespace {

/// A piece of the buffer: live (holding `owner`), or free and last held by `owner`
/// (-1: never used) until program point `freedAt`.
struct Segment {
  int64_t begin, end;
  int owner;
  bool live;
  int freedAt;
};

/// Ranking key of a candidate placement: smaller is better, compared lexicographically.
using Rank = std::array<int64_t, 5>;

enum class State : uint8_t { Pending, Live, Freed, TakenOver };

class Allocator {
public:
  Allocator(llvm::ArrayRef<BufferValue> values, int64_t capacity, int64_t alignment,
            AllocPolicy policy, int64_t budget)
      : values_(values), capacity_(capacity), alignment_(std::max<int64_t>(alignment, 1)),
        policy_(policy), budget_(budget > 0 ? std::min(budget, capacity) : capacity),
        state_(values.size(), State::Pending) {
    segs_.push_back({0, capacity, -1, false, -1});
  }

  BufferAllocation run() {
    BufferAllocation out;
    out.offsets.assign(values_.size(), 0);
    out.overwrites.resize(values_.size());
    // Values still holding space, earliest last use first.
    using Entry = std::pair<int, int>; // (lastUse, value)
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> live;
    for (int v = 0; v < static_cast<int>(values_.size()); ++v) {
      const BufferValue &val = values_[v];
      int64_t bytes = roundUp(val.bytes);
      while (!live.empty() && live.top().first < val.def) {
        int u = live.top().second;
        live.pop();
        if (state_[u] == State::Live) release(u, out.offsets[u]);
      }
      if (bytes <= 0) continue; // needs no space
      if (takeOver(v, out)) {
        live.push({val.lastUse, v});
        continue;
      }
      int64_t offset = 0;
      size_t first = 0;
      if (!choose(bytes, val, offset, first)) {
        out.ok = false;
        out.failedValue = v;
        out.neededBytes = topRunStart() + bytes;
        out.peakBytes = peak_;
        return out;
      }
      place(v, bytes, first, out);
      live.push({val.lastUse, v});
    }
    out.ok = true;
    out.peakBytes = peak_;
    return out;
  }

private:
  int64_t roundUp(int64_t bytes) const {
    return (bytes + alignment_ - 1) / alignment_ * alignment_;
  }

  size_t segmentAt(int64_t offset) const {
    auto it = std::lower_bound(segs_.begin(), segs_.end(), offset,
                               [](const Segment &s, int64_t o) { return s.begin < o; });
    return static_cast<size_t>(it - segs_.begin());
  }

  void release(int u, int64_t offset) {
    Segment &s = segs_[segmentAt(offset)];
    s.live = false;
    s.freedAt = values_[u].lastUse;
    state_[u] = State::Freed;
  }

  // A value computed in place (an accumulating matmul, an elementwise op over an
  // operand that dies there) writes where that operand lives: no new space. It is
  // listed as overwriting the operand, so its writer also waits for the operand's
  // readers on other pipes (its own instruction, the last reader, is not waited for).
  bool takeOver(int v, BufferAllocation &out) {
    int u = values_[v].inPlaceOf;
    if (u < 0 || u >= v || state_[u] != State::Live) return false;
    if (values_[u].lastUse > values_[v].def) return false;
    Segment &s = segs_[segmentAt(out.offsets[u])];
    if (s.end - s.begin < roundUp(values_[v].bytes)) return false;
    s.owner = v;
    state_[u] = State::TakenOver;
    state_[v] = State::Live;
    out.offsets[v] = out.offsets[u];
    out.overwrites[v].push_back(u);
    return true;
  }

  // Start of the free space that reaches the end of the buffer (the end if none).
  int64_t topRunStart() const {
    int64_t start = capacity_;
    for (size_t i = segs_.size(); i-- > 0 && !segs_[i].live;) start = segs_[i].begin;
    return start;
  }

  // Picks the best placement starting at a free segment; returns false if none fits.
  bool choose(int64_t bytes, const BufferValue &val, int64_t &offset, size_t &first) const {
    bool found = false;
    Rank best{};
    for (size_t runBegin = 0; runBegin < segs_.size();) {
      if (segs_[runBegin].live) {
        ++runBegin;
        continue;
      }
      size_t runEnd = runBegin;
      while (runEnd + 1 < segs_.size() && !segs_[runEnd + 1].live) ++runEnd;
      int64_t runSize = segs_[runEnd].end - segs_[runBegin].begin;
      for (size_t i = runBegin; i <= runEnd; ++i) {
        int64_t begin = segs_[i].begin, end = begin + bytes;
        if (end > segs_[runEnd].end) continue;
        bool anyFresh = false, crossPipe = false;
        int64_t lastFreed = -1, splits = 0;
        for (size_t j = i; j <= runEnd && segs_[j].begin < end; ++j) {
          const Segment &s = segs_[j];
          splits = s.end > end; // leaves a remainder of the last segment it touches
          if (s.owner < 0) {
            anyFresh = true;
            continue;
          }
          lastFreed = std::max<int64_t>(lastFreed, s.freedAt);
          crossPipe |= (values_[s.owner].readerPipes & ~val.writerPipes) != 0;
        }
        int64_t growth = std::max<int64_t>(0, end - peak_);
        Rank rank;
        // Within a hole, its start comes first: placing in the middle would split it.
        // Tight placement prefers exactly refilling freed slots, then the most recent.
        int64_t intoRun = begin - segs_[runBegin].begin;
        if (policy_ == AllocPolicy::Tight) {
          rank = {growth, runSize, splits, -lastFreed, begin};
        } else if (end > budget_) {
          rank = {3, growth, begin, 0, 0};
        } else if (crossPipe) {
          rank = {2, lastFreed, growth, begin, 0};
        } else if (anyFresh) {
          rank = {1, growth, runSize, intoRun, begin};
        } else {
          rank = {0, runSize, intoRun, begin, 0};
        }
        if (!found || rank < best) {
          found = true;
          best = rank;
          offset = begin;
          first = i;
        }
      }
      runBegin = runEnd + 1;
    }
    return found;
  }

  void place(int v, int64_t bytes, size_t first, BufferAllocation &out) {
    int64_t begin = segs_[first].begin, end = begin + bytes;
    size_t last = first;
    while (segs_[last].end < end) ++last;
    llvm::SmallVector<int, 2> &prev = out.overwrites[v];
    for (size_t j = first; j <= last; ++j)
      if (segs_[j].owner >= 0) prev.push_back(segs_[j].owner);
    std::sort(prev.begin(), prev.end());
    prev.erase(std::unique(prev.begin(), prev.end()), prev.end());
    Segment rest = segs_[last];
    segs_[first] = {begin, end, v, true, -1};
    segs_.erase(segs_.begin() + first + 1, segs_.begin() + last + 1);
    if (rest.end > end) {
      rest.begin = end;
      segs_.insert(segs_.begin() + first + 1, rest);
    }
    out.offsets[v] = begin;
    state_[v] = State::Live;
    peak_ = std::max(peak_, end);
  }

  llvm::ArrayRef<BufferValue> values_;
  int64_t capacity_, alignment_;
  AllocPolicy policy_;
  int64_t budget_;
  std::vector<Segment> segs_;
  std::vector<State> state_;
  int64_t peak_ = 0;
};

} // namespace

BufferAllocation allocateBuffer(llvm::ArrayRef<BufferValue> values, int64_t capacity,
                                int64_t alignment, AllocPolicy policy, int64_t pingPongBudget) {
  return Allocator(values, capacity, alignment, policy, pingPongBudget).run();
}

} // namespace ptoc::codegen
