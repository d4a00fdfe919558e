// The synthetic programs the simulator and profiler benchmarks run: layers of
// `kWidth` tasks alternating AIC (two MTE2 loads, two MTE1 moves, CUBE, FIXPIPE) and
// AIV (two loads, three VEC, MTE3) leaves; each task waits for 1-2 tasks of the
// previous layer and reads their output tiles plus one of `kWeightTiles` shared
// weight tiles; the last layer writes the result.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "llvm/ADT/StringRef.h"
#include "ptoc/codegen/Program.h"

namespace ptoc::bench {

using codegen::Pipe;

constexpr int kWidth = 1000;       ///< tasks per layer
constexpr int64_t kTile = 64;      ///< tiles are kTile x kTile f16
constexpr int kWeightTiles = 16;   ///< distinct shared weight tiles

inline int addOp(codegen::Leaf &l, ir::OpCode code, ir::MemSpace space, int region = -1) {
  codegen::LeafOp op;
  op.code = code;
  op.shape = {kTile, kTile};
  op.dtype = ir::DType::F16;
  op.space = space;
  op.region = region;
  op.bytes = kTile * kTile * 2;
  l.ops.push_back(op);
  return static_cast<int>(l.ops.size()) - 1;
}

inline int addInstr(codegen::Leaf &l, Pipe pipe, int op, int64_t cycles, int64_t bytes, int region,
             std::initializer_list<int> deps) {
  codegen::PipeInstr in;
  in.pipe = pipe;
  in.op = op;
  in.cycles = cycles;
  in.bytes = bytes;
  in.region = region;
  in.deps.assign(deps.begin(), deps.end());
  l.instrs.push_back(in);
  return static_cast<int>(l.instrs.size()) - 1;
}

/// Regions: 0 = first input tile, 1 = weight tile, 2 = output tile.
inline codegen::Leaf aicLeaf() {
  codegen::Leaf l;
  l.id = 0;
  l.core = target::CoreKind::AIC;
  l.hashOrder = 0;
  const int64_t bytes = kTile * kTile * 2;
  int a = addOp(l, ir::OpCode::CopyIn, ir::MemSpace::L1, 0);
  int b = addOp(l, ir::OpCode::CopyIn, ir::MemSpace::L1, 1);
  int a0 = addOp(l, ir::OpCode::View, ir::MemSpace::L0A);
  int b0 = addOp(l, ir::OpCode::View, ir::MemSpace::L0B);
  int mm = addOp(l, ir::OpCode::Matmul, ir::MemSpace::L0C);
  int out = addOp(l, ir::OpCode::CopyOut, ir::MemSpace::GM, 2);
  int la = addInstr(l, Pipe::Mte2, a, 0, bytes, 0, {});
  int lb = addInstr(l, Pipe::Mte2, b, 0, bytes, 1, {});
  int ma = addInstr(l, Pipe::Mte1, a0, 0, bytes, -1, {la});
  int mb = addInstr(l, Pipe::Mte1, b0, 0, bytes, -1, {lb});
  int cube = addInstr(l, Pipe::Cube, mm, 96, 0, -1, {ma, mb});
  addInstr(l, Pipe::Fixpipe, out, 0, bytes, 2, {cube});
  l.flops = 2 * kTile * kTile * kTile;
  return l;
}

inline codegen::Leaf aivLeaf() {
  codegen::Leaf l;
  l.id = 1;
  l.core = target::CoreKind::AIV;
  l.hashOrder = 1;
  const int64_t bytes = kTile * kTile * 2;
  int x = addOp(l, ir::OpCode::CopyIn, ir::MemSpace::UB, 0);
  int w = addOp(l, ir::OpCode::CopyIn, ir::MemSpace::UB, 1);
  int e = addOp(l, ir::OpCode::Exp, ir::MemSpace::UB);
  int m = addOp(l, ir::OpCode::Mul, ir::MemSpace::UB);
  int s = addOp(l, ir::OpCode::Add, ir::MemSpace::UB);
  int out = addOp(l, ir::OpCode::CopyOut, ir::MemSpace::GM, 2);
  int lx = addInstr(l, Pipe::Mte2, x, 0, bytes, 0, {});
  int lw = addInstr(l, Pipe::Mte2, w, 0, bytes, 1, {});
  int ve = addInstr(l, Pipe::Vec, e, 87, 0, -1, {lx});
  int vm = addInstr(l, Pipe::Vec, m, 55, 0, -1, {ve, lw});
  int vs = addInstr(l, Pipe::Vec, s, 55, 0, -1, {vm});
  addInstr(l, Pipe::Mte3, out, 0, bytes, 2, {vs});
  l.vectorBytes = 3 * bytes;
  return l;
}

inline codegen::GmTensor tensor(const char *name, codegen::GmTensor::Kind kind, int64_t rows, int index) {
  codegen::GmTensor t;
  t.name = name;
  t.kind = kind;
  t.dtype = ir::DType::F16;
  t.shape = {rows, kTile};
  t.strides = {kTile, 1};
  t.base = index;
  return t;
}

inline codegen::Region region(int tensor, int64_t tileRow) {
  codegen::Region r;
  r.tensor = tensor;
  r.offsets = {tileRow * kTile, 0};
  return r;
}

/// A layered program of about `tasks` calls.
inline codegen::Program layeredProgram(int tasks) {
  codegen::Program p;
  p.funcName = "layered";
  enum { kIn, kWeights, kWork, kOut };
  const int layers = std::max(1, (tasks + kWidth - 1) / kWidth);
  const int width = std::min(tasks, kWidth);
  p.tensors.push_back(tensor("x", codegen::GmTensor::Kind::Argument, width * kTile, kIn));
  p.tensors.push_back(
      tensor("w", codegen::GmTensor::Kind::Argument, kWeightTiles * kTile, kWeights));
  p.tensors.push_back(tensor("work", codegen::GmTensor::Kind::Intermediate,
                             int64_t(layers) * width * kTile, kWork));
  p.tensors.push_back(tensor("y", codegen::GmTensor::Kind::Intermediate, width * kTile, kOut));
  p.tensors[kIn].argIndex = 0;
  p.tensors[kWeights].argIndex = 1;
  p.arguments = {kIn, kWeights};
  p.results = {kOut};
  p.leaves = {aicLeaf(), aivLeaf()};
  p.calls.reserve(size_t(layers) * width);
  uint64_t rng = 0x243f6a8885a308d3ULL;
  auto next = [&]() {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
  };
  for (int layer = 0; layer < layers; ++layer) {
    for (int i = 0; i < width; ++i) {
      codegen::Call c;
      c.leaf = layer % 2;
      c.subgraph = static_cast<int>(p.calls.size());
      int self = layer * width + i;
      if (layer == 0) {
        c.regions.push_back(region(kIn, i));
      } else {
        int a = (layer - 1) * width + i;
        int b = (layer - 1) * width + static_cast<int>(next() % width);
        c.preds = {std::min(a, b), std::max(a, b)};
        if (a == b) c.preds.pop_back();
        c.regions.push_back(region(kWork, a)); // the producer's output tile
      }
      c.regions.push_back(region(kWeights, static_cast<int64_t>(next() % kWeightTiles)));
      c.regions.push_back(layer + 1 == layers ? region(kOut, i) : region(kWork, self));
      p.calls.push_back(std::move(c));
    }
  }
  return p;
}

inline std::vector<int> parseList(const char *arg) {
  std::vector<int> out;
  for (llvm::StringRef rest(arg); !rest.empty();) {
    auto [head, tail] = rest.split(',');
    int v = 0;
    if (!head.getAsInteger(10, v)) out.push_back(v);
    rest = tail;
  }
  return out;
}


} // namespace ptoc::bench
