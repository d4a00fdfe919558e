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

template <typename Visit> void MemoryOrder::visit(Root &root, const Box &box, Visit &&f) {
  ++stamp_;
  auto see = [&](uint32_t i) {
    Entry &e = root.entries[i];
    if (e.dead || e.stamp == stamp_) return;
    e.stamp = stamp_;
    f(e);
  };
  int64_t cells = 1;
  Dims lo(box.rank()), hi(box.rank());
  for (unsigned d = 0; d < box.rank() && cells <= kMaxQueryCells; ++d) {
    lo[d] = floorDiv(box.off[d], root.cell[d]);
    hi[d] = floorDiv(box.end(d) - 1, root.cell[d]);
    cells *= hi[d] - lo[d] + 1;
  }
  if (cells > kMaxQueryCells) {
    for (uint32_t i = 0; i < root.entries.size(); ++i) see(i);
    return;
  }
  for (uint32_t i : root.wide) see(i);
  Dims c = lo;
  while (true) {
    uint64_t key = 0x6d656d6fULL;
    for (int64_t x : c) key = hashMix(key, static_cast<uint64_t>(x));
    if (auto it = root.cells.find(key); it != root.cells.end()) {
      auto &list = it->second;
      list.erase(std::remove_if(list.begin(), list.end(),
                                [&](uint32_t i) { return root.entries[i].dead; }),
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

void MemoryOrder::index(Root &root, uint32_t i) {
  const Box &b = root.entries[i].box;
  if (root.cell.empty())
    for (int64_t s : b.size) root.cell.push_back(std::max<int64_t>(1, s));
  Dims lo(b.rank()), hi(b.rank());
  int64_t cells = 1;
  for (unsigned d = 0; d < b.rank() && cells <= kMaxEntryCells; ++d) {
    lo[d] = floorDiv(b.off[d], root.cell[d]);
    hi[d] = floorDiv(b.end(d) - 1, root.cell[d]);
    cells *= hi[d] - lo[d] + 1;
  }
  if (cells > kMaxEntryCells) {
    root.wide.push_back(i);
    return;
  }
  Dims c = lo;
  while (true) {
    uint64_t key = 0x6d656d6fULL;
    for (int64_t x : c) key = hashMix(key, static_cast<uint64_t>(x));
    root.cells[key].push_back(i);
    int d = int(c.size()) - 1;
    for (; d >= 0; --d) {
      if (++c[d] <= hi[d]) break;
      c[d] = lo[d];
    }
    if (d < 0) break;
  }
}

void MemoryOrder::rebuild(Root &root) {
  std::vector<Entry> live;
  live.reserve(root.live);
  Dims cell;
  for (Entry &e : root.entries) {
    if (e.dead) continue;
    if (cell.empty()) cell = e.box.size;
    for (unsigned d = 0; d < cell.size(); ++d) cell[d] = std::min(cell[d], e.box.size[d]);
    live.push_back(std::move(e));
  }
  root.entries = std::move(live);
  root.cells.clear();
  root.wide.clear();
  root.cell = cell;
  for (int64_t &s : root.cell) s = std::max<int64_t>(1, s);
  root.dead = 0;
  for (uint32_t i = 0; i < root.entries.size(); ++i) index(root, i);
}

void MemoryOrder::conflicts(const GmRegion &region, bool write,
                            llvm::SmallVectorImpl<const Operation *> &out) {
  auto it = roots_.find(region.root);
  if (it == roots_.end() || it->second.live == 0) return;
  visit(it->second, region.box, [&](const Entry &e) {
    if (!write && !e.write) return; // reads never wait on reads
    if (!e.range.meets(region.range)) return;
    for (const Box &p : e.parts)
      if (overlaps(p, region.box)) {
        out.push_back(e.op);
        return;
      }
  });
}

void MemoryOrder::record(const Operation *op, const GmRegion &region, bool write) {
  Root &root = roots_[region.root];
  if (write && root.live) {
    llvm::SmallVector<Box, 4> left;
    visit(root, region.box, [&](Entry &e) {
      left.clear();
      for (const Box &p : e.parts) subtract(p, region.box, left);
      if (left.empty()) {
        e.dead = true;
        --root.live;
        ++root.dead;
      } else if (left.size() <= kMaxParts) {
        e.parts.assign(left.begin(), left.end());
      }
    });
  }
  Entry &e = root.entries.emplace_back();
  e.op = op;
  e.write = write;
  e.range = region.range;
  e.box = region.box;
  e.parts.push_back(region.box);
  ++root.live;
  index(root, uint32_t(root.entries.size() - 1));
  if (root.dead > kCompactAfter && root.dead > root.live) rebuild(root);
}

size_t MemoryOrder::numLive(const Value *root) const {
  auto it = roots_.find(root);
  return it == roots_.end() ? 0 : it->second.live;
}

} // namespace ptoc::ir
