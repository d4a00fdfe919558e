// The simulator's event queue: a binary min-heap of timed events ordered by (time,
// posting order), so events at equal times run in the order they were posted and every
// run of the same inputs is identical.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ptoc::runtime::sim {

/// What an event does when its time comes.
enum class EventKind : uint8_t {
  ThreadActionEnd, ///< a scheduler thread finished its current action (a = thread)
  TransferStart,   ///< a GM transfer instruction begins (a = core, b = instr in its leaf)
  TaskEnd,         ///< the running task of a core finished (a = core)
  StitchOpen,      ///< a loop stitch's ready time came and its barrier holds (a = stitch)
};

/// One timed event (the kind takes the low 2 bits of `order`). 24 bytes, so the heap stays cache-friendly.
struct Event {
  double time = 0;
  uint64_t order = 0; ///< posting sequence << 2 | kind: the tie-breaker at equal times
  uint32_t a = 0, b = 0;

  EventKind kind() const { return static_cast<EventKind>(order & 3); }
};

/// Min-heap of events. No allocation per event once the heap has grown to its peak.
class EventQueue {
public:
  void reserve(std::size_t n) { heap_.reserve(n); }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }

  void push(double time, EventKind kind, uint32_t a, uint32_t b = 0) {
    Event e{time, (next_++ << 2) | static_cast<uint64_t>(kind), a, b};
    std::size_t i = heap_.size();
    heap_.push_back(e);
    // Sift up.
    while (i > 0) {
      std::size_t parent = (i - 1) / 2;
      if (!less(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }

  /// Removes and returns the earliest event. Precondition: !empty().
  Event pop() {
    Event top = heap_.front();
    Event last = heap_.back();
    heap_.pop_back();
    std::size_t n = heap_.size();
    if (n == 0) return top;
    // Sift `last` down from the root.
    std::size_t i = 0;
    while (true) {
      std::size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && less(heap_[child + 1], heap_[child])) ++child;
      if (!less(heap_[child], last)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = last;
    return top;
  }

private:
  static bool less(const Event &x, const Event &y) {
    return x.time < y.time || (x.time == y.time && x.order < y.order);
  }

  std::vector<Event> heap_;
  uint64_t next_ = 0;
};

} // namespace ptoc::runtime::sim
