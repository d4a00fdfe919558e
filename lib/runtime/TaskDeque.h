// A double-ended queue of task ids on a power-of-two ring buffer: the scheduler's
// ready queues (FIFO pops the front, LIFO the back) without std::deque's per-block
// allocations.
#pragma once

#include <cassert>
#include <cstddef>
#include <vector>

namespace ptoc::runtime::sim {

/// Ring-buffer deque of ints; grows by doubling, never shrinks.
class TaskDeque {
public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  void pushBack(int v) {
    if (size_ == buf_.size()) grow();
    buf_[(head_ + size_) & (buf_.size() - 1)] = v;
    ++size_;
  }
  int popFront() {
    assert(size_ > 0);
    int v = buf_[head_];
    head_ = (head_ + 1) & (buf_.size() - 1);
    --size_;
    return v;
  }
  int popBack() {
    assert(size_ > 0);
    --size_;
    return buf_[(head_ + size_) & (buf_.size() - 1)];
  }

private:
  void grow() {
    size_t cap = buf_.empty() ? 16 : buf_.size() * 2;
    std::vector<int> next(cap);
    for (size_t i = 0; i < size_; ++i) next[i] = buf_[(head_ + i) & (buf_.size() - 1)];
    buf_.swap(next);
    head_ = 0;
  }

  std::vector<int> buf_;
  size_t head_ = 0, size_ = 0;
};

} // namespace ptoc::runtime::sim
