// Validation and flattening of a Program for the simulator (see SimProgram.h).
#include "SimProgram.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "ptoc/ir/Diagnostics.h"
#include "ptoc/ir/Type.h"

namespace ptoc::runtime::sim {
namespace {

using codegen::Pipe;

absl::Status invalid(const std::string &msg) {
  return absl::InvalidArgumentError(absl::StrCat("simulate: ", msg));
}

std::string leafName(const codegen::Leaf &leaf, size_t index) {
  return absl::StrCat("leaf ", index, " (hash order ", leaf.hashOrder, ")");
}

/// A loop field the expansion filled inconsistently: a compiler bug, not the user's.
absl::Status badLoops(const std::string &msg) {
  return ir::internalError(absl::StrCat("simulate: loop stitches: ", msg));
}

/// Checks the loop fields (Call::stitch / instance, Program::stitchReadyCycles) and
/// flattens them into `sp`'s stitch arrays.
absl::Status flattenStitches(const codegen::Program &p, SimProgram &sp) {
  const int numCalls = static_cast<int>(p.calls.size());
  const int numStitches = std::max<int>(1, static_cast<int>(p.stitchReadyCycles.size()));
  sp.loops = !p.stitchReadyCycles.empty();
  sp.stitchReady = sp.loops ? p.stitchReadyCycles : std::vector<double>{0.0};
  for (int k = 0; k < numStitches; ++k) {
    double ready = sp.stitchReady[k];
    if (!std::isfinite(ready) || ready < 0)
      return badLoops(absl::StrCat("stitch ", k, " is ready at cycle ", ready,
                                   "; ready times must be finite and >= 0"));
    if (k > 0 && ready < sp.stitchReady[k - 1])
      return badLoops(absl::StrCat("stitch ", k, " is ready at cycle ", ready,
                                   ", before stitch ", k - 1, " (", sp.stitchReady[k - 1],
                                   "); the control thread builds stitches in order"));
  }
  if (!p.stitchWaitFor.empty()) {
    if (!sp.loops || p.stitchWaitFor.size() != size_t(numStitches))
      return badLoops(absl::StrCat("Program::stitchWaitFor has ", p.stitchWaitFor.size(),
                                   " entries for ", sp.loops ? numStitches : 0, " stitches"));
    for (int k = 0; k < numStitches; ++k)
      if (p.stitchWaitFor[k] < -1 || p.stitchWaitFor[k] >= k)
        return badLoops(absl::StrCat("stitch ", k, " waits for stitch ", p.stitchWaitFor[k],
                                     "; a stitch waits for an earlier one (or -1, none)"));
    sp.stitchWaitFor.assign(p.stitchWaitFor.begin(), p.stitchWaitFor.end());
  }
  sp.stitchBegin.assign(numStitches + 1, numCalls);
  sp.stitchBegin[0] = 0;
  if (sp.loops) sp.callStitch.resize(numCalls);
  if (!p.instances.empty()) sp.callInstance.resize(numCalls);
  int previous = 0;
  for (int c = 0; c < numCalls; ++c) {
    const codegen::Call &call = p.calls[c];
    auto where = [&] { return absl::StrCat("call ", c, " (subgraph ", call.subgraph, ")"); };
    if (call.stitch < 0 || call.stitch >= numStitches)
      return badLoops(absl::StrCat(
          where(), " is in stitch ", call.stitch, " but the program has ", numStitches,
          sp.loops ? " stitches (Program::stitchReadyCycles)"
                   : " stitch (no Program::stitchReadyCycles: every call must be in stitch 0)"));
    if (call.stitch < previous)
      return badLoops(absl::StrCat(where(), " is in stitch ", call.stitch, " after call ", c - 1,
                                   " in stitch ", previous,
                                   "; calls must be in stitch order"));
    if (call.instance < -1 || call.instance >= static_cast<int>(p.instances.size()))
      return badLoops(absl::StrCat(where(), " names loop instance ", call.instance,
                                   " but the program has ", p.instances.size()));
    if (call.instance >= 0) {
      int body = p.instances[call.instance].body;
      if (body < 0 || body >= static_cast<int>(p.bodies.size()))
        return badLoops(absl::StrCat(where(), ": its instance ", call.instance, " names body ",
                                     body, " but the program has ", p.bodies.size()));
    }
    for (int k = previous + 1; k <= call.stitch; ++k) sp.stitchBegin[k] = c;
    previous = call.stitch;
    if (sp.loops) sp.callStitch[c] = call.stitch;
    if (!sp.callInstance.empty()) sp.callInstance[c] = call.instance;
  }
  return absl::OkStatus();
}

bool isGmTransfer(Pipe p) { return p == Pipe::Mte2 || p == Pipe::Fixpipe || p == Pipe::Mte3; }

/// Flattens one leaf's instructions; checks their fields.
absl::Status flattenLeaf(const codegen::Leaf &leaf, size_t index, const target::DeviceSpec &d,
                         SimProgram &sp, int &maxRegion) {
  const int n = static_cast<int>(leaf.instrs.size());
  const int32_t first = static_cast<int32_t>(sp.instrs.size());
  int lastOnPipe[codegen::kNumPipes];
  std::fill(std::begin(lastOnPipe), std::end(lastOnPipe), -1);
  std::vector<int32_t> outDegree(n, 0);
  maxRegion = -1;
  for (int i = 0; i < n; ++i) {
    const codegen::PipeInstr &in = leaf.instrs[i];
    int pipe = static_cast<int>(in.pipe);
    if (pipe < 0 || pipe >= codegen::kNumPipes)
      return invalid(
          absl::StrCat(leafName(leaf, index), " instruction ", i, ": unknown pipe ", pipe));
    if (in.cycles < 0 || in.bytes < 0)
      return invalid(absl::StrCat(leafName(leaf, index), " instruction ", i,
                                  ": negative cycles or bytes (", in.cycles, ", ", in.bytes,
                                  "); the cost model must give non-negative estimates"));
    if (isGmTransfer(in.pipe) && in.region < 0)
      return invalid(absl::StrCat(leafName(leaf, index), " instruction ", i, ": ",
                                  codegen::pipeName(in.pipe).str(),
                                  " moves data to or from GM but names no region"));
    SimInstr s;
    s.pipe = in.pipe;
    s.bytes = in.bytes;
    s.region = in.region;
    const target::PipeSpec &ps = d.pipes;
    switch (in.pipe) {
    case Pipe::Cube:
    case Pipe::Vec:
      s.kind = InstrKind::Compute;
      s.duration = static_cast<double>(in.cycles);
      break;
    case Pipe::Mte1: {
      // L0A or L0B by its destination slot, else by the op it implements (L0A if
      // neither says).
      bool toL0b = in.dst.space == ir::MemSpace::L0B ||
                   (in.dst.space != ir::MemSpace::L0A && in.op >= 0 &&
                    in.op < static_cast<int>(leaf.ops.size()) &&
                    leaf.ops[in.op].space == ir::MemSpace::L0B);
      s.kind = InstrKind::Local;
      double rate = toL0b ? ps.mte1L0bBytesPerCycle : ps.mte1L0aBytesPerCycle;
      s.duration = ps.mte1FixedCycles + static_cast<double>(in.bytes) / rate;
      break;
    }
    case Pipe::Mte2:
      // A cube core reads into L1, converting row-major GM tiles to the fractal layout
      // the cube reads (ND -> NZ); a vector core reads into UB as is.
      s.kind = InstrKind::Read;
      if (leaf.core == target::CoreKind::AIC) {
        s.fixed = ps.nd2nzFixedCycles;
        s.rate = ps.nd2nzBytesPerCycle;
      } else {
        s.fixed = ps.gmToUbFixedCycles;
        s.rate = ps.gmToUbBytesPerCycle;
      }
      break;
    case Pipe::Fixpipe:
      s.kind = InstrKind::Write;
      s.fixed = ps.fixpipeFixedCycles;
      s.rate = ps.fixpipeBytesPerCycle;
      break;
    case Pipe::Mte3:
      s.kind = InstrKind::Write;
      s.fixed = ps.mte3FixedCycles;
      s.rate = ps.mte3BytesPerCycle;
      break;
    }
    if (isGmTransfer(in.pipe)) maxRegion = std::max(maxRegion, in.region);
    int32_t indeg = 0;
    for (int dep : in.deps) {
      if (dep < 0 || dep >= i)
        return invalid(absl::StrCat(leafName(leaf, index), " instruction ", i,
                                    " depends on instruction ", dep,
                                    ", which is not an earlier instruction of the leaf"));
      ++outDegree[dep];
      ++indeg;
    }
    if (lastOnPipe[pipe] >= 0) ++indeg; // the pipe predecessor (SimProgram::nextOnPipe)
    lastOnPipe[pipe] = i;
    sp.instrs.push_back(s);
    sp.inDegree.push_back(indeg);
  }
  // Successor lists (CSR): deps reversed; the next instruction on each pipe apart.
  std::vector<int32_t> fill(n);
  for (int i = 0; i < n; ++i) {
    fill[i] = sp.succBegin.back();
    sp.succBegin.push_back(sp.succBegin.back() + outDegree[i]);
  }
  sp.succ.resize(sp.succBegin.back());
  std::fill(std::begin(lastOnPipe), std::end(lastOnPipe), -1);
  sp.nextOnPipe.resize(first + n, -1);
  for (int i = 0; i < n; ++i) {
    const codegen::PipeInstr &in = leaf.instrs[i];
    for (int dep : in.deps) sp.succ[fill[dep]++] = i;
    int pipe = static_cast<int>(in.pipe);
    if (lastOnPipe[pipe] >= 0) sp.nextOnPipe[first + lastOnPipe[pipe]] = i;
    lastOnPipe[pipe] = i;
  }
  sp.leafBegin.push_back(first + n);
  sp.maxLeafInstrs = std::max(sp.maxLeafInstrs, n);
  return absl::OkStatus();
}

} // namespace

absl::StatusOr<SimProgram> SimProgram::build(const codegen::Program &p,
                                             const target::DeviceSpec &d) {
  if (absl::Status s = d.validate(); !s.ok()) return s;
  SimProgram sp;
  sp.leafBegin.push_back(0);
  sp.succBegin.push_back(0);
  std::vector<int> leafMaxRegion(p.leaves.size(), -1);
  for (size_t l = 0; l < p.leaves.size(); ++l) {
    const codegen::Leaf &leaf = p.leaves[l];
    if (leaf.core != target::CoreKind::AIC && leaf.core != target::CoreKind::AIV)
      return invalid(absl::StrCat(leafName(leaf, l),
                                  ": core kind is none; every leaf must run on aic or aiv"));
    if (absl::Status s = flattenLeaf(leaf, l, d, sp, leafMaxRegion[l]); !s.ok()) return s;
  }

  const int numCalls = static_cast<int>(p.calls.size());
  sp.callLeaf.resize(numCalls);
  sp.callKind.resize(numCalls);
  sp.predCount.resize(numCalls);
  std::vector<int32_t> outDegree(numCalls, 0);
  for (int c = 0; c < numCalls; ++c) {
    const codegen::Call &call = p.calls[c];
    if (call.leaf < 0 || call.leaf >= static_cast<int>(p.leaves.size()))
      return invalid(absl::StrCat("call ", c, " (subgraph ", call.subgraph, ") names leaf ",
                                  call.leaf, ", but the program has ", p.leaves.size(),
                                  " leaves"));
    const codegen::Leaf &leaf = p.leaves[call.leaf];
    if (leafMaxRegion[call.leaf] >= static_cast<int>(call.regions.size()))
      return invalid(absl::StrCat("call ", c, " (subgraph ", call.subgraph, ") has ",
                                  call.regions.size(), " regions, but ",
                                  leafName(leaf, call.leaf), " transfers region ",
                                  leafMaxRegion[call.leaf]));
    for (size_t r = 0; r < call.regions.size(); ++r) {
      int t = call.regions[r].tensor;
      if (t < 0 || t >= static_cast<int>(p.tensors.size()))
        return invalid(absl::StrCat("call ", c, " region ", r, " names tensor ", t,
                                    ", but the program has ", p.tensors.size(), " tensors"));
    }
    for (int pred : call.preds) {
      if (pred < 0 || pred >= c)
        return invalid(absl::StrCat("call ", c, " waits for call ", pred,
                                    "; calls must be in a topological order (every "
                                    "predecessor an earlier call)"));
      ++outDegree[pred];
    }
    sp.callLeaf[c] = call.leaf;
    sp.callKind[c] = leaf.core == target::CoreKind::AIC ? kAic : kAiv;
    sp.predCount[c] = static_cast<int32_t>(call.preds.size());
    ++sp.tasksOfKind[sp.callKind[c]];
  }
  if (sp.tasksOfKind[kAic] > 0 && d.aicCores <= 0)
    return invalid(absl::StrCat("the program has ", sp.tasksOfKind[kAic], " AIC tasks but device '",
                                d.name, "' has no AIC cores"));
  if (sp.tasksOfKind[kAiv] > 0 && d.aivCores <= 0)
    return invalid(absl::StrCat("the program has ", sp.tasksOfKind[kAiv], " AIV tasks but device '",
                                d.name, "' has no AIV cores"));

  if (absl::Status s = flattenStitches(p, sp); !s.ok()) return s;

  sp.callSuccBegin.assign(numCalls + 1, 0);
  for (int c = 0; c < numCalls; ++c) sp.callSuccBegin[c + 1] = sp.callSuccBegin[c] + outDegree[c];
  sp.callSucc.resize(sp.callSuccBegin.back());
  std::vector<int32_t> fill(sp.callSuccBegin.begin(), sp.callSuccBegin.end() - 1);
  for (int c = 0; c < numCalls; ++c)
    for (int pred : p.calls[c].preds) sp.callSucc[fill[pred]++] = c;
  return sp;
}

uint64_t SimProgram::approxBytes() const {
  auto bytes = [](const auto &v) { return uint64_t(v.capacity()) * sizeof(v[0]); };
  return bytes(leafBegin) + bytes(instrs) + bytes(inDegree) + bytes(succBegin) + bytes(succ) +
         bytes(nextOnPipe) +
         bytes(callLeaf) + bytes(callKind) + bytes(predCount) + bytes(callSuccBegin) +
         bytes(callSucc) + bytes(stitchBegin) + bytes(stitchReady) + bytes(callStitch) + bytes(stitchWaitFor) +
         bytes(callInstance);
}

} // namespace ptoc::runtime::sim
