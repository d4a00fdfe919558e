// The tile level's memory order: root regions and the live-access index.
#include "ptoc/ir/MemoryOrder.h"

#include <algorithm>

#include "ptoc/ir/Operation.h"
#include "ptoc/ir/StableHash.h"

namespace ptoc::ir {
namespace {

/// An access touching more grid cells than this is kept in the root's wide list.
constexpr int64_t kMaxEntryCells = 16;
/// A query touching more cells than this scans the root's accesses instead.
constexpr int64_t kMaxQueryCells = 64;
/// A partly overwritten access keeps at most this many uncovered parts; beyond,
/// it stays whole (waiting on it is still right, only not needed).
constexpr size_t kMaxParts = 8;
/// Dead accesses are dropped from the index once there are this many and more
/// than live ones.
constexpr size_t kCompactAfter = 1024;

int64_t floorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

} // namespace

GmRegion resolveGmRegion(const Value *tensor, const Box &box) {
  Box b = box;
  bool exactRange = false; // `range` is exact in the coordinates of `v`
  LinearRange range;
  const Value *v = tensor;
  while (true) {
    if (!v || !v->type().isTensor() || b.rank() != v->type().rank()) return {};
    const Operation *def = v->definingOp();
    if (!def || def->code() == OpCode::GmTensor) break;
    if (def->numOperands() != 1 || (def->code() != OpCode::View && def->code() != OpCode::Reshape))
      return {};
    const Value *base = def->operand(0);
    if (!base->type().isTensor()) return {};
    if (def->code() == OpCode::View) {
      Attribute offsets = def->attr("offsets");
      if (!offsets || !offsets.isIntArray() || offsets.getIntArray().size() != b.rank())
        return {};
      for (unsigned d = 0; d < b.rank(); ++d) b.off[d] += offsets.getIntArray()[d];
      exactRange = false;
    } else {
      // A reshape keeps the linear element order: the region's elements keep their
      // linear range, whose bounding box in the base holds them all.
      if (!exactRange) range = linearRange(b, v->type().shape());
      b = boundingBox(range, base->type().shape());
      exactRange = true;
    }
    v = base;
  }
  GmRegion r;
  r.root = v;
  r.range = exactRange ? range : linearRange(b, v->type().shape());
  r.box = std::move(b);
  return r;
}

bool overlaps(const GmRegion &a, const GmRegion &b) {
  return a.root == b.root && overlaps(a.box, b.box) && a.range.meets(b.range);
}

template <typename Visit> void MemoryOrder::visit(Index &index, const Box &box, Visit &&f) {
  if (index.live == 0) return;
  ++stamp_;
  auto see = [&](uint32_t i) {
    Entry &e = index.entries[i];
    if (e.dead || e.stamp == stamp_) return;
    e.stamp = stamp_;
    f(e);
  };
  int64_t cells = 1;
  Dims lo(box.rank()), hi(box.rank());
  for (unsigned d = 0; d < box.rank() && cells <= kMaxQueryCells; ++d) {
    lo[d] = floorDiv(box.off[d], index.cell[d]);
    hi[d] = floorDiv(box.end(d) - 1, index.cell[d]);
    cells *= hi[d] - lo[d] + 1;
  }
  if (cells > kMaxQueryCells) {
    for (uint32_t i = 0; i < index.entries.size(); ++i) see(i);
    return;
  }
  for (uint32_t i : index.wide) see(i);
  Dims c = lo;
  while (true) {
    uint64_t key = 0x6d656d6fULL;
    for (int64_t x : c) key = hashMix(key, static_cast<uint64_t>(x));
    if (auto it = index.cells.find(key); it != index.cells.end()) {
      auto &list = it->second;
      list.erase(std::remove_if(list.begin(), list.end(),
                                [&](uint32_t i) { return index.entries[i].dead; }),
                 list.end());
      for (uint32_t i : list) see(i);
    }
    int d = int(c.size()) - 1;
    for (; d >= 0; --d) {
      if (++c[d] <= hi[d]) break;
      c[d] = lo[d];
    }
    if (d < 0) break;
  }
}

void MemoryOrder::add(Index &index, uint32_t i) {
  const Box &b = index.entries[i].box;
  if (index.cell.empty())
    for (int64_t s : b.size) index.cell.push_back(std::max<int64_t>(1, s));
  Dims lo(b.rank()), hi(b.rank());
  int64_t cells = 1;
  for (unsigned d = 0; d < b.rank() && cells <= kMaxEntryCells; ++d) {
    lo[d] = floorDiv(b.off[d], index.cell[d]);
    hi[d] = floorDiv(b.end(d) - 1, index.cell[d]);
    cells *= hi[d] - lo[d] + 1;
  }
  if (cells > kMaxEntryCells) {
    index.wide.push_back(i);
    return;
  }
  Dims c = lo;
  while (true) {
    uint64_t key = 0x6d656d6fULL;
    for (int64_t x : c) key = hashMix(key, static_cast<uint64_t>(x));
    index.cells[key].push_back(i);
    int d = int(c.size()) - 1;
    for (; d >= 0; --d) {
      if (++c[d] <= hi[d]) break;
      c[d] = lo[d];
    }
    if (d < 0) break;
  }
}

void MemoryOrder::rebuild(Index &index) {
  std::vector<Entry> live;
  live.reserve(index.live);
  Dims cell;
  for (Entry &e : index.entries) {
    if (e.dead) continue;
    if (cell.empty()) cell = e.box.size;
    for (unsigned d = 0; d < cell.size(); ++d) cell[d] = std::min(cell[d], e.box.size[d]);
    live.push_back(std::move(e));
  }
  index.entries = std::move(live);
  index.cells.clear();
  index.wide.clear();
  index.cell = cell;
  for (int64_t &s : index.cell) s = std::max<int64_t>(1, s);
  index.dead = 0;
  for (uint32_t i = 0; i < index.entries.size(); ++i) add(index, i);
}

void MemoryOrder::conflicts(const GmRegion &region, bool write,
                            llvm::SmallVectorImpl<const Operation *> &out) {
  auto it = roots_.find(region.root);
  if (it == roots_.end()) return;
  found_.clear();
  auto check = [&](const Entry &e) {
    if (!e.range.meets(region.range)) return;
    for (const Box &p : e.parts)
      if (overlaps(p, region.box)) {
        found_.push_back({e.seq, e.op});
        return;
      }
  };
  visit(it->second.writes, region.box, check);
  if (write) visit(it->second.reads, region.box, check); // reads never wait on reads
  // In program order, whatever order the index visited them in.
  std::sort(found_.begin(), found_.end());
  for (auto &[seq, op] : found_) out.push_back(op);
}

void MemoryOrder::supersede(Index &index, const Box &written) {
  llvm::SmallVector<Box, 4> left;
  visit(index, written, [&](Entry &e) {
    left.clear();
    for (const Box &p : e.parts) subtract(p, written, left);
    if (left.empty()) {
      e.dead = true;
      --index.live;
      ++index.dead;
    } else if (left.size() <= kMaxParts) {
      e.parts.assign(left.begin(), left.end());
    }
  });
  if (index.dead > kCompactAfter && index.dead > index.live) rebuild(index);
}

void MemoryOrder::insert(Index &index, const Operation *op, const GmRegion &region) {
  Entry &e = index.entries.emplace_back();
  e.op = op;
  e.seq = ++seq_;
  e.range = region.range;
  e.box = region.box;
  e.parts.push_back(region.box);
  ++index.live;
  add(index, uint32_t(index.entries.size() - 1));
}

void MemoryOrder::record(const Operation *op, const GmRegion &region, bool write) {
  Root &root = roots_[region.root];
  if (!write) {
    insert(root.reads, op, region);
    return;
  }
  supersede(root.writes, region.box);
  supersede(root.reads, region.box);
  insert(root.writes, op, region);
}

void MemoryOrder::unwritten(const GmRegion &region, llvm::SmallVectorImpl<Box> &out) {
  size_t first = out.size();
  out.push_back(region.box);
  auto it = roots_.find(region.root);
  if (it == roots_.end()) return;
  // The live writes' uncovered parts together cover everything ever written (a
  // superseded part lies under a later live write).
  llvm::SmallVector<Box, 4> next;
  visit(it->second.writes, region.box, [&](const Entry &e) {
    if (out.size() == first) return;
    for (const Box &p : e.parts) {
      next.clear();
      for (size_t i = first; i < out.size(); ++i) subtract(out[i], p, next);
      out.resize(first);
      out.append(next.begin(), next.end());
    }
  });
}

size_t MemoryOrder::numLive(const Value *root) const {
  auto it = roots_.find(root);
  return it == roots_.end() ? 0 : it->second.writes.live + it->second.reads.live;
}

} // namespace ptoc::ir
