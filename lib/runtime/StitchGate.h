// The loop stitches as both schedulers see them (docs/runtime.md "Loops"): a call may
// be dispatched only once its stitch is open, and stitch k opens when the AICPU control
// thread has built it (head + its ready time) and every call of stitch k - 1 has ended.
// It posts a StitchOpen event for an opening that lies in the future and fills the
// run's StitchRecords. A program without loops is one stitch that opens at the head.
#pragma once

#include <cstdint>
#include <vector>

#include "EventQueue.h"
#include "SimProgram.h"
#include "ptoc/runtime/RunRecord.h"

namespace ptoc::runtime::sim {

class StitchGate {
public:
  StitchGate(const SimProgram &program, EventQueue &events, RunRecord &record);

  /// The head ended at `head`: stitch 0's barrier holds from here.
  void start(double head);
  /// `task`'s stitch is open (its calls may be dispatched once their predecessors end).
  bool isOpen(int task) const { return program_.stitchOf(task) < opened_; }
  /// `task` ended at `now`; the stitch after its own may become due.
  void taskEnded(int task, double now);
  /// The stitch that opens now (its StitchOpen event came, or its barrier and ready
  /// time both hold at the current instant), or -1. The scheduler opens it (open())
  /// and asks again: an empty stitch lets the next one through at once.
  int due() const { return due_; }
  /// Opens stitch `k` (== due()) at `now`; returns its first call (its calls are
  /// [first, end(k))).
  int open(int k, double now);
  int end(int k) const { return program_.stitchBegin[k + 1]; }
  /// The StitchOpen event of stitch `k`.
  void onEvent(int k) { due_ = k; }

private:
  /// Every call of stitch `k` - 1 has ended at `now` (stitch 0: the head ended).
  void barrier(int k, double now);

  const SimProgram &program_;
  EventQueue &events_;
  RunRecord &record_;
  double head_ = 0;
  int opened_ = 0;      ///< stitches 0..opened_-1 are open
  int due_ = -1;
  std::vector<int32_t> left_; ///< per stitch: calls not yet ended
};

} // namespace ptoc::runtime::sim
