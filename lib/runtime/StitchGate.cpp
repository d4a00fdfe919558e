// Opening loop stitches in order (see StitchGate.h).
#include "StitchGate.h"

#include <algorithm>

namespace ptoc::runtime::sim {

StitchGate::StitchGate(const SimProgram &program, EventQueue &events, RunRecord &record)
    : program_(program), events_(events), record_(record) {
  const int n = program.numStitches();
  left_.resize(n);
  done_.assign(n, 0);
  donePrefixAt_.assign(n + 1, 0);
  for (int k = 0; k < n; ++k) left_[k] = program.stitchBegin[k + 1] - program.stitchBegin[k];
  if (program.loops) {
    record_.stitches.resize(n);
    for (int k = 0; k < n; ++k) record_.stitches[k].tasks = left_[k];
  }
}

void StitchGate::start(double head) {
  head_ = head;
  donePrefixAt_[0] = head;
  arm(head);
}

void StitchGate::arm(double now) {
  const int k = opened_;
  if (k >= program_.numStitches() || armed_ >= k) return;
  const int wait = program_.waitFor(k);
  if (donePrefix_ <= wait) return; // stitch `wait` (or one before it) is still running
  armed_ = k;
  const double ready = head_ + program_.stitchReady[k];
  if (program_.loops) {
    record_.stitches[k].readyCycle = ready;
    // When its wait condition held: the head for a stitch that waits for none.
    record_.stitches[k].barrierCycle = donePrefixAt_[wait + 1];
  }
  if (ready <= now) due_ = k;
  else events_.push(ready, EventKind::StitchOpen, static_cast<uint32_t>(k));
}

void StitchGate::finished(int k, double now) {
  done_[k] = 1;
  const int n = program_.numStitches();
  while (donePrefix_ < n && done_[donePrefix_]) donePrefixAt_[++donePrefix_] = now;
  arm(now);
}

void StitchGate::taskEnded(int task, double now) {
  const int k = program_.stitchOf(task);
  if (--left_[k] == 0) finished(k, now);
}

int StitchGate::open(int k, double now) {
  due_ = -1;
  opened_ = k + 1;
  if (program_.loops) record_.stitches[k].openCycle = now;
  // An empty stitch is finished the moment it opens; else the next may be armed now.
  if (left_[k] == 0) finished(k, now);
  else arm(now);
  return program_.stitchBegin[k];
}

} // namespace ptoc::runtime::sim
