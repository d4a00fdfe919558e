// Consistency check between a Program and the RunRecord of one of its runs, plus the
// small naming helpers the trace writer and the timeline share.
#include "RecordCheck.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace ptoc::profile {

using codegen::Pipe;
using target::CoreKind;

namespace {

constexpr Pipe kAicPipes[] = {Pipe::Mte2, Pipe::Mte1, Pipe::Cube, Pipe::Fixpipe};
constexpr Pipe kAivPipes[] = {Pipe::Mte2, Pipe::Vec, Pipe::Mte3};

absl::Status mismatch(const std::string &what) {
  return absl::InternalError(absl::StrCat(
      "run record does not match its program: ", what,
      " (this is a bug in the simulator or in the code that built the record)"));
}

bool validTime(double t) { return std::isfinite(t) && t >= 0; }

int coresOf(const runtime::RunRecord &record, CoreKind kind) {
  if (kind == CoreKind::AIC) return record.aicCores;
  if (kind == CoreKind::AIV) return record.aivCores;
  return 0;
}

} // namespace

llvm::ArrayRef<Pipe> pipesOf(CoreKind kind) {
  if (kind == CoreKind::AIC) return kAicPipes;
  if (kind == CoreKind::AIV) return kAivPipes;
  return {};
}

int pipeLane(CoreKind kind, Pipe pipe) {
  llvm::ArrayRef<Pipe> pipes = pipesOf(kind);
  for (size_t i = 0; i < pipes.size(); ++i)
    if (pipes[i] == pipe) return static_cast<int>(i);
  return -1;
}

llvm::StringRef coreKindLabel(CoreKind kind) {
  if (kind == CoreKind::AIC) return "AIC";
  if (kind == CoreKind::AIV) return "AIV";
  return "NONE";
}

absl::Status checkRunRecord(const codegen::Program &program, const runtime::RunRecord &record) {
  if (!std::isfinite(record.clockMHz) || record.clockMHz <= 0)
    return mismatch(absl::StrCat("clock ", record.clockMHz, " MHz is not positive"));
  if (!validTime(record.makespanCycles) || !validTime(record.bound.headCycles))
    return mismatch("makespan or head overhead is negative or not finite");
  if (record.tasks.size() != program.calls.size())
    return mismatch(absl::StrCat(record.tasks.size(), " task records for ",
                                 program.calls.size(), " calls"));
  if (record.stitches.size() != program.stitchReadyCycles.size())
    return mismatch(absl::StrCat(record.stitches.size(), " stitch records for ",
                                 program.stitchReadyCycles.size(), " stitches"));
  int numCalls = static_cast<int>(program.calls.size());
  for (int c = 0; c < numCalls; ++c) {
    const codegen::Call &call = program.calls[c];
    const runtime::TaskRecord &task = record.tasks[c];
    if (call.leaf < 0 || call.leaf >= static_cast<int>(program.leaves.size()))
      return mismatch(absl::StrCat("call ", c, " names leaf ", call.leaf, " of ",
                                   program.leaves.size()));
    for (int p : call.preds)
      if (p < 0 || p >= c)
        return mismatch(absl::StrCat("call ", c, " waits for call ", p,
                                     ", which is not an earlier call"));
    const codegen::Leaf &leaf = program.leaves[call.leaf];
    if (task.call != c)
      return mismatch(absl::StrCat("task record ", c, " says it is call ", task.call));
    if (task.core != leaf.core || (task.core != CoreKind::AIC && task.core != CoreKind::AIV))
      return mismatch(absl::StrCat("task ", c, " ran on a ", coreKindLabel(task.core).str(),
                                   " core but its leaf ", call.leaf, " is for ",
                                   coreKindLabel(leaf.core).str()));
    if (task.coreIndex < 0 || task.coreIndex >= coresOf(record, task.core))
      return mismatch(absl::StrCat("task ", c, " ran on ", coreKindLabel(task.core).str(), "_",
                                   task.coreIndex, " but the device has ",
                                   coresOf(record, task.core), " such cores"));
    if (task.thread < -1 || task.thread >= record.schedulerThreads)
      return mismatch(absl::StrCat("task ", c, " names scheduler thread ", task.thread, " of ",
                                   record.schedulerThreads));
    if (task.stitch != call.stitch || task.instance != call.instance)
      return mismatch(absl::StrCat("task ", c, " is in stitch ", task.stitch, " instance ",
                                   task.instance, " but its call is in stitch ", call.stitch,
                                   " instance ", call.instance));
    if (task.instance >= static_cast<int>(program.instances.size()) ||
        (task.instance >= 0 &&
         (program.instances[task.instance].body < 0 ||
          program.instances[task.instance].body >= static_cast<int>(program.bodies.size()))))
      return mismatch(absl::StrCat("task ", c, " names loop instance ", task.instance, " of ",
                                   program.instances.size(), " (or its body is out of range)"));
    if (!record.stitches.empty() && task.stitch >= static_cast<int>(record.stitches.size()))
      return mismatch(absl::StrCat("task ", c, " is in stitch ", task.stitch, " of ",
                                   record.stitches.size()));
    if (!validTime(task.readyCycle) || !validTime(task.dispatchCycle) ||
        !validTime(task.startCycle) || !validTime(task.endCycle) ||
        task.endCycle < task.startCycle)
      return mismatch(absl::StrCat("task ", c, " has times ready ", task.readyCycle,
                                   ", dispatch ", task.dispatchCycle, ", start ",
                                   task.startCycle, ", end ", task.endCycle,
                                   " (negative, not finite, or ending before it starts)"));
  }
  for (size_t k = 0; k < record.stitches.size(); ++k) {
    const runtime::StitchRecord &s = record.stitches[k];
    if (!validTime(s.readyCycle) || !validTime(s.barrierCycle) || !validTime(s.openCycle) ||
        s.openCycle < s.readyCycle || s.openCycle < s.barrierCycle)
      return mismatch(absl::StrCat("stitch ", k, " has ready ", s.readyCycle, ", barrier ",
                                   s.barrierCycle, " and open ", s.openCycle,
                                   " (negative, not finite, or opening before either)"));
  }
  if (!validTime(record.controlBusyCycles) || !validTime(record.controlWaitCycles) ||
      !validTime(record.barrierWaitCycles))
    return mismatch("the control thread's busy or wait time is negative or not finite");
  for (size_t i = 0; i < record.pipes.size(); ++i) {
    const runtime::PipeRecord &pipe = record.pipes[i];
    if (pipe.task < 0 || pipe.task >= numCalls)
      return mismatch(absl::StrCat("pipe record ", i, " names task ", pipe.task));
    const runtime::TaskRecord &task = record.tasks[pipe.task];
    const codegen::Leaf &leaf = program.leaves[program.calls[pipe.task].leaf];
    if (pipeLane(task.core, pipe.pipe) < 0)
      return mismatch(absl::StrCat("pipe record ", i, " of task ", pipe.task, " is on pipe ",
                                   codegen::pipeName(pipe.pipe).str(), ", which a ",
                                   coreKindLabel(task.core).str(), " core does not have"));
    if (pipe.instr < -1 || pipe.instr >= static_cast<int>(leaf.instrs.size()))
      return mismatch(absl::StrCat("pipe record ", i, " of task ", pipe.task,
                                   " names instruction ", pipe.instr, " of ",
                                   leaf.instrs.size()));
    if (pipe.instr >= 0 && leaf.instrs[pipe.instr].pipe != pipe.pipe)
      return mismatch(absl::StrCat("pipe record ", i, " of task ", pipe.task, " puts instruction ",
                                   pipe.instr, " on ", codegen::pipeName(pipe.pipe).str(),
                                   " but the leaf issues it on ",
                                   codegen::pipeName(leaf.instrs[pipe.instr].pipe).str()));
    if (!validTime(pipe.startCycle) || !validTime(pipe.endCycle) ||
        pipe.endCycle < pipe.startCycle)
      return mismatch(absl::StrCat("pipe record ", i, " of task ", pipe.task, " has start ",
                                   pipe.startCycle, " and end ", pipe.endCycle));
  }
  for (size_t i = 0; i < record.queue.size(); ++i) {
    const runtime::QueueSample &sample = record.queue[i];
    if ((sample.core != CoreKind::AIC && sample.core != CoreKind::AIV) ||
        !validTime(sample.cycle) || sample.depth < 0)
      return mismatch(absl::StrCat("ready-queue sample ", i, " (", coreKindLabel(sample.core).str(),
                                   ", cycle ", sample.cycle, ", depth ", sample.depth, ")"));
  }
  return absl::OkStatus();
}

} // namespace ptoc::profile
