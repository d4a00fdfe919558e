// Test-only builders of codegen::Programs for the simulator tests: hand-made leaves
// (AIV: MTE2 / VEC / MTE3; AIC: MTE2 / MTE1 / CUBE / FIXPIPE), tensors and calls, and
// seeded random programs (random DAGs of calls over a few tensors, with producer and
// consumer tiles of different shapes) and random devices.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "ptoc/codegen/Program.h"
#include "ptoc/runtime/Simulator.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::testprog {

using codegen::Call;
using codegen::GmTensor;
using codegen::Leaf;
using codegen::LeafOp;
using codegen::Pipe;
using codegen::PipeInstr;
using codegen::Program;
using codegen::Region;

inline int64_t elements(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

/// Adds a tensor that owns its memory; returns its index.
inline int addTensor(Program &p, const std::string &name, GmTensor::Kind kind,
                     std::vector<int64_t> shape, ir::DType dtype = ir::DType::F16) {
  GmTensor t;
  t.name = name;
  t.kind = kind;
  t.dtype = dtype;
  t.shape.assign(shape.begin(), shape.end());
  t.base = static_cast<int>(p.tensors.size());
  t.strides.assign(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i)
    t.strides[i] = t.strides[i + 1] * shape[i + 1];
  if (kind == GmTensor::Kind::Argument) {
    t.argIndex = static_cast<int>(p.arguments.size());
    p.arguments.push_back(t.base);
  }
  p.tensors.push_back(t);
  return t.base;
}

/// Adds a row slice `rows` x (all columns) of 2-D tensor `base` starting at `firstRow`.
inline int addRowView(Program &p, const std::string &name, int base, int64_t firstRow,
                      int64_t rows) {
  const GmTensor &b = p.tensors[base];
  GmTensor t;
  t.name = name;
  t.kind = GmTensor::Kind::Alias;
  t.dtype = b.dtype;
  t.shape = {rows, b.shape[1]};
  t.base = base;
  t.baseOffset = firstRow * b.shape[1];
  t.strides = {b.shape[1], 1};
  p.tensors.push_back(t);
  return static_cast<int>(p.tensors.size()) - 1;
}

/// Appends an op and returns its index.
inline int addOp(Leaf &l, ir::OpCode code, std::vector<int64_t> shape, ir::DType dtype,
                 ir::MemSpace space, std::vector<int> operands = {}, int region = -1) {
  LeafOp op;
  op.code = code;
  op.shape.assign(shape.begin(), shape.end());
  op.dtype = dtype;
  op.space = space;
  op.operands.assign(operands.begin(), operands.end());
  op.region = region;
  op.bytes = elements(shape) * ir::elementSize(dtype);
  l.ops.push_back(op);
  return static_cast<int>(l.ops.size()) - 1;
}

/// Appends an instruction and returns its index.
inline int addInstr(Leaf &l, Pipe pipe, int op, int64_t cycles, int64_t bytes, int region,
                    std::vector<int> deps) {
  PipeInstr in;
  in.pipe = pipe;
  in.op = op;
  in.cycles = cycles;
  in.bytes = bytes;
  in.region = region;
  in.deps.assign(deps.begin(), deps.end());
  l.instrs.push_back(in);
  return static_cast<int>(l.instrs.size()) - 1;
}

/// Vector cycles of one full-width pass over `bytes` (as the cost model estimates).
inline int64_t vecCycles(int64_t bytes) { return 23 + (bytes + 255) / 256; }

/// An AIV leaf: reads `inputs` tiles (regions 0..inputs-1), runs `vecOps` chained
/// vector ops of `cyclesPerOp` cycles (0: the cost-model estimate), writes one tile
/// (region `inputs`). All tiles are `rows` x `cols` of `dtype`.
inline int addAivLeaf(Program &p, int64_t rows, int64_t cols, int inputs = 1, int vecOps = 1,
                      int64_t cyclesPerOp = 0, ir::DType dtype = ir::DType::F16) {
  Leaf l;
  l.id = static_cast<int>(p.leaves.size());
  l.core = target::CoreKind::AIV;
  l.hashOrder = l.id;
  std::vector<int64_t> tile = {rows, cols};
  int64_t bytes = rows * cols * ir::elementSize(dtype);
  std::vector<int> loads;
  std::vector<int> loadOps;
  for (int r = 0; r < inputs; ++r) {
    int op = addOp(l, ir::OpCode::CopyIn, tile, dtype, ir::MemSpace::UB, {}, r);
    loadOps.push_back(op);
    loads.push_back(addInstr(l, Pipe::Mte2, op, 0, bytes, r, {}));
  }
  int64_t opCycles = cyclesPerOp > 0 ? cyclesPerOp : vecCycles(bytes);
  int lastOp = loadOps.empty() ? -1 : loadOps[0];
  int lastInstr = -1;
  for (int v = 0; v < vecOps; ++v) {
    std::vector<int> operands = lastOp >= 0 ? std::vector<int>{lastOp} : std::vector<int>{};
    int op = addOp(l, ir::OpCode::Exp, tile, dtype, ir::MemSpace::UB, operands);
    std::vector<int> deps = v == 0 ? loads : std::vector<int>{lastInstr};
    lastInstr = addInstr(l, Pipe::Vec, op, opCycles, 0, -1, deps);
    lastOp = op;
    l.vectorBytes += bytes;
  }
  int out = addOp(l, ir::OpCode::CopyOut, tile, dtype, ir::MemSpace::GM, {lastOp}, inputs);
  std::vector<int> deps = lastInstr >= 0 ? std::vector<int>{lastInstr} : loads;
  addInstr(l, Pipe::Mte3, out, 0, bytes, inputs, deps);
  l.numRegions = inputs + 1;
  l.copyInBytes = bytes * inputs;
  l.copyOutBytes = bytes;
  p.leaves.push_back(l);
  return l.id;
}

/// An AIC leaf computing one m x n tile of A x B over `kSteps` k-blocks of size k:
/// per step MTE2 A and B blocks (regions 2s, 2s+1), MTE1 them to L0A / L0B, CUBE; then
/// FIXPIPE the accumulator (region 2*kSteps). With `pingPong`, the loads of step s+1
/// wait only for the MTE1 moves of step s-1 (two L1 buffers); otherwise for the CUBE
/// of step s (one buffer).
inline int addAicLeaf(Program &p, int64_t m, int64_t k, int64_t n, int kSteps = 1,
                      bool pingPong = true, ir::DType dtype = ir::DType::F16) {
  Leaf l;
  l.id = static_cast<int>(p.leaves.size());
  l.core = target::CoreKind::AIC;
  l.hashOrder = l.id;
  const int64_t es = ir::elementSize(dtype);
  int acc = -1, lastCube = -1;
  std::vector<int> moveA, moveB;
  for (int s = 0; s < kSteps; ++s) {
    int opA = addOp(l, ir::OpCode::CopyIn, {m, k}, dtype, ir::MemSpace::L1, {}, 2 * s);
    int opB = addOp(l, ir::OpCode::CopyIn, {k, n}, dtype, ir::MemSpace::L1, {}, 2 * s + 1);
    std::vector<int> wait;
    if (pingPong && s >= 2) wait = {moveA[s - 2], moveB[s - 2]};
    if (!pingPong && s >= 1) wait = {lastCube};
    int ldA = addInstr(l, Pipe::Mte2, opA, 0, m * k * es, 2 * s, wait);
    int ldB = addInstr(l, Pipe::Mte2, opB, 0, k * n * es, 2 * s + 1, wait);
    int opA0 = addOp(l, ir::OpCode::View, {m, k}, dtype, ir::MemSpace::L0A, {opA});
    int opB0 = addOp(l, ir::OpCode::View, {k, n}, dtype, ir::MemSpace::L0B, {opB});
    moveA.push_back(addInstr(l, Pipe::Mte1, opA0, 0, m * k * es, -1, {ldA}));
    l.instrs.back().dst = {ir::MemSpace::L0A, 0, m * k * es};
    moveB.push_back(addInstr(l, Pipe::Mte1, opB0, 0, k * n * es, -1, {ldB}));
    l.instrs.back().dst = {ir::MemSpace::L0B, 0, k * n * es};
    std::vector<int> operands = {opA0, opB0};
    if (acc >= 0) operands.push_back(acc);
    acc = addOp(l, ir::OpCode::Matmul, {m, n}, ir::DType::F32, ir::MemSpace::L0C, operands);
    int64_t flops = 2 * m * n * k;
    l.flops += flops;
    int64_t cycles = (flops + 8191) / 8192 + 32;
    std::vector<int> deps = {moveA.back(), moveB.back()};
    if (lastCube >= 0) deps.push_back(lastCube);
    lastCube = addInstr(l, Pipe::Cube, acc, cycles, 0, -1, deps);
  }
  int out = addOp(l, ir::OpCode::CopyOut, {m, n}, dtype, ir::MemSpace::GM, {acc}, 2 * kSteps);
  addInstr(l, Pipe::Fixpipe, out, 0, m * n * es, 2 * kSteps, {lastCube});
  l.numRegions = 2 * kSteps + 1;
  l.copyInBytes = kSteps * (m * k + k * n) * es;
  l.copyOutBytes = m * n * es;
  p.leaves.push_back(l);
  return l.id;
}

/// An AIV leaf streaming `tiles` tiles: per tile, MTE2 load (region i), VEC of
/// `cycles`, MTE3 store (region tiles + i). With `pingPong` (two UB buffers) the load of
/// tile i waits only for the VEC of tile i - 2, so loads overlap compute; otherwise it
/// waits for the store of tile i - 1 (one buffer: fully serial).
inline int addStreamingAivLeaf(Program &p, int tiles, int64_t rows, int64_t cols,
                               int64_t cycles, bool pingPong, ir::DType dtype = ir::DType::F16) {
  Leaf l;
  l.id = static_cast<int>(p.leaves.size());
  l.core = target::CoreKind::AIV;
  l.hashOrder = l.id;
  std::vector<int64_t> tile = {rows, cols};
  int64_t bytes = rows * cols * ir::elementSize(dtype);
  std::vector<int> vec, store;
  for (int i = 0; i < tiles; ++i) {
    std::vector<int> wait;
    if (pingPong && i >= 2) wait = {vec[i - 2]};
    if (!pingPong && i >= 1) wait = {store[i - 1]};
    int in = addOp(l, ir::OpCode::CopyIn, tile, dtype, ir::MemSpace::UB, {}, i);
    int ld = addInstr(l, Pipe::Mte2, in, 0, bytes, i, wait);
    int op = addOp(l, ir::OpCode::Exp, tile, dtype, ir::MemSpace::UB, {in});
    vec.push_back(addInstr(l, Pipe::Vec, op, cycles, 0, -1, {ld}));
    int out = addOp(l, ir::OpCode::CopyOut, tile, dtype, ir::MemSpace::GM, {op}, tiles + i);
    store.push_back(addInstr(l, Pipe::Mte3, out, 0, bytes, tiles + i, {vec.back()}));
    l.vectorBytes += bytes;
  }
  l.numRegions = 2 * tiles;
  l.copyInBytes = l.copyOutBytes = tiles * bytes;
  p.leaves.push_back(l);
  return l.id;
}

/// Appends a call; `regions` are (tensor, offsets) pairs; returns its index.
inline int addCall(Program &p, int leaf, std::vector<Region> regions, std::vector<int> preds = {}) {
  Call c;
  c.leaf = leaf;
  c.subgraph = static_cast<int>(p.calls.size());
  c.regions = std::move(regions);
  std::sort(preds.begin(), preds.end());
  preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
  c.preds = std::move(preds);
  p.calls.push_back(std::move(c));
  return static_cast<int>(p.calls.size()) - 1;
}

/// Appends iteration `iteration` of body `body` (a loop named `loop`, outside parallel
/// loops, no intermediates of its own); returns its index.
inline int addInstance(Program &p, int body, const std::string &loop, int64_t iteration) {
  codegen::Instance in;
  in.body = body;
  in.loop = loop;
  in.iteration = iteration;
  p.instances.push_back(std::move(in));
  return static_cast<int>(p.instances.size()) - 1;
}

inline Region region(int tensor, int64_t row, int64_t col) {
  Region r;
  r.tensor = tensor;
  r.offsets = {row, col};
  return r;
}

/// An AIV leaf that only computes for `cycles` (no GM traffic).
inline int computeLeaf(Program &p, int64_t cycles) {
  Leaf l;
  l.id = static_cast<int>(p.leaves.size());
  l.core = target::CoreKind::AIV;
  l.hashOrder = l.id;
  int op = addOp(l, ir::OpCode::Full, {16, 16}, ir::DType::F32, ir::MemSpace::UB);
  addInstr(l, Pipe::Vec, op, cycles, 0, -1, {});
  l.vectorBytes = 16 * 16 * 4;
  p.leaves.push_back(l);
  return l.id;
}

/// Knobs of randomProgram().
struct RandomProgramOptions {
  int calls = 80;
  int maxPreds = 3;       ///< predecessors per call: 0..maxPreds among earlier calls
  int predWindow = 40;    ///< predecessors come from the last `predWindow` calls
};

/// A random valid program: arguments A, B (256 x 256 f16), intermediates T1 (written
/// by AIC 64 x 64 tiles), T2 (written by AIV 32 x 64 tiles), a result R, and a row
/// view of T2. AIV leaves read 32 x 64 tiles (of T1: smaller than its producer tiles)
/// or 64 x 64 tiles (of T2: spanning two producer tiles); AIC leaves read 64 x 64
/// blocks. Random DAG of calls, every predecessor earlier.
inline Program randomProgram(uint64_t seed, const RandomProgramOptions &o = {}) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  Program p;
  p.funcName = "random" + std::to_string(seed);
  const int64_t N = 256;
  int A = addTensor(p, "a", GmTensor::Kind::Argument, {N, N});
  int B = addTensor(p, "b", GmTensor::Kind::Argument, {N, N});
  int T1 = addTensor(p, "t1", GmTensor::Kind::Intermediate, {N, N});
  int T2 = addTensor(p, "t2", GmTensor::Kind::Intermediate, {N, N});
  int R = addTensor(p, "r", GmTensor::Kind::Intermediate, {N, N});
  int V = addRowView(p, "t2_lower", T2, N / 2, N / 2);
  p.results = {R};

  int aic1 = addAicLeaf(p, 64, 64, 64, 1);
  int aic2 = addAicLeaf(p, 64, 64, 64, 2, true);
  int aic3 = addAicLeaf(p, 64, 64, 64, 3, false);
  int aivSmall = addAivLeaf(p, 32, 64, 1, 1);           // 32 x 64 tiles, one input
  int aivPair = addAivLeaf(p, 32, 64, 2, 2);            // two inputs, two vec ops
  int aivBig = addAivLeaf(p, 64, 64, 1, 3);             // 64 x 64 tiles
  const int aicLeaves[] = {aic1, aic2, aic3};

  auto tile64 = [&](int t) { return region(t, 64 * pick(0, 3), 64 * pick(0, 3)); };
  auto tile32 = [&](int t) { return region(t, 32 * pick(0, 7), 64 * pick(0, 3)); };
  for (int c = 0; c < o.calls; ++c) {
    std::vector<int> preds;
    int np = c == 0 ? 0 : static_cast<int>(pick(0, o.maxPreds));
    for (int i = 0; i < np; ++i)
      preds.push_back(static_cast<int>(pick(std::max(0, c - o.predWindow), c - 1)));
    int kind = static_cast<int>(pick(0, 5));
    if (kind <= 1) { // AIC: A/T2 x B -> T1 or R
      int leaf = aicLeaves[pick(0, 2)];
      int steps = static_cast<int>((p.leaves[leaf].numRegions - 1) / 2);
      std::vector<Region> regs;
      for (int s = 0; s < steps; ++s) {
        regs.push_back(tile64(pick(0, 1) ? A : T2));
        regs.push_back(tile64(B));
      }
      regs.push_back(tile64(pick(0, 3) ? T1 : R));
      addCall(p, leaf, regs, preds);
    } else if (kind <= 3) { // AIV 32 x 64: T1 or A -> T2
      addCall(p, aivSmall, {tile32(pick(0, 2) ? T1 : A), tile32(T2)}, preds);
    } else if (kind == 4) { // AIV pair: T1 + view of T2 -> R or T2
      Region v = region(V, 32 * pick(0, 3), 64 * pick(0, 3));
      addCall(p, aivPair, {tile32(T1), v, tile32(pick(0, 1) ? R : T2)}, preds);
    } else { // AIV 64 x 64 over T2 (two producer tiles) -> R
      addCall(p, aivBig, {tile64(T2), tile64(R)}, preds);
    }
  }
  return p;
}

/// A random valid device: 1-8 AIC (AIV 1x or 2x), 1-3 threads, varied bandwidths, L2
/// sizes (some small enough to evict), latencies and scheduler costs.
inline target::DeviceSpec randomDevice(uint64_t seed) {
  std::mt19937_64 rng(seed * 7919 + 17);
  auto pick = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  target::DeviceSpec d; // a2 defaults
  d.name = "random" + std::to_string(seed);
  const int aic[] = {1, 2, 3, 4, 8};
  d.aicCores = aic[pick(0, 4)];
  d.aivCores = d.aicCores * static_cast<int>(pick(1, 2));
  d.scheduler.threads = static_cast<int>(pick(1, std::min(3, d.aicCores)));
  d.scheduler.dispatchCycles = static_cast<double>(pick(0, 400));
  d.scheduler.completionCycles = static_cast<double>(pick(0, 400));
  d.scheduler.dependencyResolveCycles = static_cast<double>(pick(0, 600));
  const double hbm[] = {0.05e12, 0.2e12, 1.6e12, 6.4e12};
  d.memory.hbmBytesPerSecond = hbm[pick(0, 3)];
  const double l2bw[] = {0.3e12, 4.7e12};
  d.memory.l2BytesPerSecond = l2bw[pick(0, 1)];
  const int64_t l2[] = {16 << 10, 96 << 10, 1 << 20, int64_t(192) << 20};
  d.memory.l2Bytes = l2[pick(0, 3)];
  d.memory.coreHbmBytesPerCycle = static_cast<double>(pick(8, 64));
  d.pipes.gmToUbBytesPerCycle = d.memory.coreHbmBytesPerCycle * static_cast<double>(pick(1, 4));
  d.pipes.nd2nzBytesPerCycle = d.memory.coreHbmBytesPerCycle * static_cast<double>(pick(1, 6));
  d.memory.gmLatencyCycles = static_cast<double>(pick(0, 2000));
  d.memory.l2LatencyCycles =
      static_cast<double>(pick(0, static_cast<int64_t>(d.memory.gmLatencyCycles)));
  d.launchOverheadUs = static_cast<double>(pick(0, 20));
  d.plainKernelStartUs = static_cast<double>(pick(0, 4));
  return d;
}

/// Simulates `p` on `d` (scheduler mode `mode`, as a kernel of `kind`); a simulator
/// error fails the test.
inline runtime::RunRecord run(const codegen::Program &p, const target::DeviceSpec &d,
                              int mode = 0, bool pipes = false,
                              runtime::KernelKind kind = runtime::SimOptions().kernelKind) {
  runtime::SimOptions o;
  o.schedMode = mode;
  o.recordPipes = pipes;
  o.kernelKind = kind;
  auto r = runtime::simulate(p, d, o);
  if (!r.ok()) FAIL(std::string(r.status().message()));
  return *std::move(r);
}

/// A device preset; an unknown name fails the test.
inline target::DeviceSpec preset(const char *name) {
  auto d = target::DeviceSpec::preset(name);
  REQUIRE(d.ok());
  return *d;
}

} // namespace ptoc::testprog
