// Opening loop stitches in order (see StitchGate.h).
#include "StitchGate.h"

#include <algorithm>

namespace ptoc::runtime::sim {

StitchGate::StitchGate(const SimProgram &program, EventQueue &events, RunRecord &record)
    : program_(program), events_(events), record_(record) {
  const int n = program.numStitches();
  left_.resize(n);
  for (int k = 0; k < n; ++k) left_[k] = program.stitchBegin[k + 1] - program.stitchBegin[k];
  if (program.loops) {
    record_.stitches.resize(n);
    for (int k = 0; k < n; ++k) record_.stitches[k].tasks = left_[k];
  }
}

void StitchGate::start(double head) {
  head_ = head;
  barrier(0, head);
}

void StitchGate::barrier(int k, double now) {
  if (k >= program_.numStitches()) return;
  const double ready = head_ + program_.stitchReady[k];
  if (program_.loops) {
    record_.stitches[k].readyCycle = ready;
    record_.stitches[k].barrierCycle = now;
  }
  if (ready <= now) due_ = k;
  else events_.push(ready, EventKind::StitchOpen, static_cast<uint32_t>(k));
}

void StitchGate::taskEnded(int task, double now) {
  const int k = program_.stitchOf(task);
  if (--left_[k] == 0) barrier(k + 1, now);
}

int StitchGate::open(int k, double now) {
  due_ = -1;
  opened_ = k + 1;
  if (program_.loops) record_.stitches[k].openCycle = now;
  // An empty stitch is finished the moment it opens.
  if (left_[k] == 0) barrier(k + 1, now);
  return program_.stitchBegin[k];
}

} // namespace ptoc::runtime::sim
