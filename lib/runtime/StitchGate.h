// The loop stitches as both schedulers see them (docs/runtime.md "Loops"): a call may
// be dispatched only once its stitch is open. Stitches open in order; stitch k opens
// when the AICPU control thread has built it (head + its ready time), stitch k - 1 has
// opened, and every call of the stitches up to its wait stitch (SimProgram::waitFor:
// k - 1, or an earlier one for the first stitch of a parallel loop's iteration) has
// ended. It posts a StitchOpen event for an opening that lies in the future and fills
// the run's StitchRecords. A program without loops is one stitch that opens at the head.
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

  /// The head ended at `head`: a stitch that waits for none may open from here.
  void start(double head);
  /// `task`'s stitch is open (its calls may be dispatched once their predecessors end).
  bool isOpen(int task) const { return program_.stitchOf(task) < opened_; }
  /// `task` ended at `now`; the next stitch may become due.
  void taskEnded(int task, double now);
  /// The stitch that opens now (its StitchOpen event came, or its wait condition and
  /// ready time both hold at the current instant), or -1. The scheduler opens it
  /// (open()) and asks again: the next stitch may be due at once.
  int due() const { return due_; }
  /// Opens stitch `k` (== due()) at `now`; returns its first call (its calls are
  /// [first, end(k))).
  int open(int k, double now);
  int end(int k) const { return program_.stitchBegin[k + 1]; }
  /// The StitchOpen event of stitch `k`.
  void onEvent(int k) { due_ = k; }

private:
  /// Stitch `k` finished at `now` (its last call ended, or it opened empty).
  void finished(int k, double now);
  /// Arms the next stitch to open once its wait condition holds: records its barrier
  /// and makes it due now or at its ready time.
  void arm(double now);

  const SimProgram &program_;
  EventQueue &events_;
  RunRecord &record_;
  double head_ = 0;
  int opened_ = 0;      ///< stitches 0..opened_-1 are open
  int armed_ = -1;      ///< the last stitch armed (its opening is scheduled)
  int due_ = -1;
  std::vector<int32_t> left_;    ///< per stitch: calls not yet ended
  std::vector<uint8_t> done_;    ///< per stitch: finished
  int donePrefix_ = 0;           ///< stitches 0..donePrefix_-1 have all finished
  /// donePrefixAt_[m]: when stitches 0..m-1 had all finished (m <= donePrefix_).
  std::vector<double> donePrefixAt_;
};

} // namespace ptoc::runtime::sim
