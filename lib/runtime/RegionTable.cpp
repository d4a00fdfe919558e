// Region identities, read covers and compulsory HBM bytes (see RegionTable.h).
#include "RegionTable.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "llvm/ADT/SmallVector.h"

namespace ptoc::runtime::sim {
namespace {

using codegen::GmTensor;
using codegen::Pipe;
using codegen::Program;

/// splitmix64's finaliser: a cheap, well-mixed and process-independent 64-bit hash
/// step (std::hash and absl::Hash are seeded or unspecified; ids must not depend on the
/// process).
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Interning of 64-bit region keys (already well mixed; 0 is reserved for "empty"):
/// open addressing with linear probing over one flat array, so a caller can prefetch
/// the bucket of a key it will look up soon (the table is far larger than the caches
/// for big programs, and these lookups dominate building the table).
class KeyTable {
public:
  /// Starts with room for about `expectedKeys` at a load of at most 3/4; grows by
  /// doubling beyond that.
  explicit KeyTable(size_t expectedKeys) {
    size_t cap = 16;
    while (cap * 3 < expectedKeys * 4) cap *= 2;
    entries_.assign(cap, Entry{0, -1});
    mask_ = cap - 1;
  }
  void prefetch(uint64_t key) const { __builtin_prefetch(&entries_[key & mask_]); }
  /// The value of `key`, inserting `value` if absent; second: inserted.
  std::pair<int, bool> findOrInsert(uint64_t key, int value) {
    for (size_t i = key & mask_;; i = (i + 1) & mask_) {
      Entry &e = entries_[i];
      if (e.key == key) return {e.value, false};
      if (e.key == 0) {
        e = Entry{key, value};
        if (++size_ * 4 > entries_.size() * 3) grow();
        return {value, true};
      }
    }
  }

private:
  struct Entry {
    uint64_t key;
    int value;
  };
  void grow() {
    std::vector<Entry> old(entries_.size() * 2, Entry{0, -1});
    old.swap(entries_);
    mask_ = entries_.size() - 1;
    for (const Entry &e : old) {
      if (e.key == 0) continue;
      size_t i = e.key & mask_;
      while (entries_[i].key != 0) i = (i + 1) & mask_;
      entries_[i] = e;
    }
  }
  std::vector<Entry> entries_;
  size_t mask_ = 0, size_ = 0;
};

/// How one leaf uses one of its region indices.
struct RegionUse {
  int region = -1;
  int shapeOp = -1; ///< the LeafOp whose shape is the window's shape
  bool read = false, written = false;
  int64_t bytes = std::numeric_limits<int64_t>::max();
};

/// A tensor's place in its base tensor's memory.
struct TensorMap {
  int base = -1;
  /// The base's recycled workspace (GmTensor::pool, poolOffset; -1: its own memory)
  /// and its element size: a pooled region's identity is its bytes in the pool.
  int pool = -1;
  int64_t poolOffset = 0, elementBytes = 1;
  llvm::SmallVector<int64_t, 4> strides; ///< element strides into the base's memory
  int64_t offset = 0;                    ///< element offset into the base's memory
  bool box = false;                      ///< a same-rank row-major window of the base
  llvm::SmallVector<int64_t, 4> origin;  ///< box: base coordinates of element 0
};

llvm::SmallVector<int64_t, 4> rowMajor(llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t, 4> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

int resolveBase(const Program &p, int t) {
  // Follow alias links (bounded, in case of a malformed cycle).
  for (size_t step = 0; step <= p.tensors.size(); ++step) {
    const GmTensor &g = p.tensors[t];
    if (g.kind != GmTensor::Kind::Alias || g.base < 0 || g.base == t ||
        g.base >= static_cast<int>(p.tensors.size()))
      return t;
    t = g.base;
  }
  return t;
}

std::vector<TensorMap> mapTensors(const Program &p) {
  std::vector<TensorMap> maps(p.tensors.size());
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    const GmTensor &g = p.tensors[t];
    TensorMap &m = maps[t];
    m.base = resolveBase(p, static_cast<int>(t));
    m.strides = g.strides.size() == g.shape.size() ? g.strides : rowMajor(g.shape);
    m.offset = m.base == static_cast<int>(t) ? 0 : g.baseOffset;
    const GmTensor &b = p.tensors[m.base];
    m.pool = b.pool;
    m.poolOffset = b.poolOffset;
    m.elementBytes = static_cast<int64_t>(ir::elementSize(b.dtype));
    llvm::SmallVector<int64_t, 4> baseStrides = rowMajor(b.shape);
    if (g.shape.size() == b.shape.size() && m.strides == baseStrides && m.offset >= 0) {
      m.box = true;
      m.origin.resize(b.shape.size());
      int64_t rest = m.offset;
      for (size_t d = 0; d < b.shape.size(); ++d) {
        m.origin[d] = baseStrides[d] ? rest / baseStrides[d] : 0;
        rest -= m.origin[d] * baseStrides[d];
      }
    }
  }
  return maps;
}

/// The shape of the tile a leaf transfers through region use `u` (empty if unknown).
llvm::ArrayRef<int64_t> shapeOf(const codegen::Leaf &leaf, const RegionUse &u) {
  if (u.shapeOp < 0 || u.shapeOp >= static_cast<int>(leaf.ops.size())) return {};
  return leaf.ops[u.shapeOp].shape;
}

/// A region's identity: the memory it addresses, not the tensor it names. The base
/// tensor, the element offset of the tile's first element in the base's memory, and
/// per dimension of more than one element its extent and its stride there: windows of
/// different tensors over the same bytes (a loop's per-iteration views of one K block)
/// are one region, so the L2 sees the second read as the hit it is. A base in recycled
/// workspace memory (GmTensor::pool) is named by its pool and the tile's first byte
/// there (and its element size), so iterations that reuse the bytes with the same
/// tiles write and read the same regions. Never 0.
uint64_t memoryKey(const TensorMap &m, llvm::ArrayRef<int64_t> offsets,
                   llvm::ArrayRef<int64_t> shape) {
  constexpr uint64_t kPoolTag = 0x6a09e667f3bcc909ULL;
  uint64_t key = m.pool >= 0 ? mix(kPoolTag ^ static_cast<uint64_t>(m.pool))
                             : mix(static_cast<uint64_t>(m.base));
  if (offsets.size() != m.strides.size()) { // not a tile of this tensor: keep it apart
    key = mix(key ^ 0x9b05688c2b3e6c1fULL);
    if (m.pool >= 0) key = mix(key ^ static_cast<uint64_t>(m.base)); // nor of its pool
    for (int64_t o : offsets) key = mix(key ^ static_cast<uint64_t>(o));
    return key == 0 ? 1 : key;
  }
  int64_t first = m.offset;
  for (size_t d = 0; d < offsets.size(); ++d) first += offsets[d] * m.strides[d];
  if (m.pool >= 0) {
    first = m.poolOffset + first * m.elementBytes;
    key = mix(key ^ static_cast<uint64_t>(m.elementBytes) ^ 0x3c6ef372fe94f82bULL);
  }
  key = mix(key ^ static_cast<uint64_t>(first));
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    int64_t stride = d < m.strides.size() ? m.strides[d] : 0;
    key = mix(key ^ static_cast<uint64_t>(shape[d]) ^ 0x5bd1e995ULL);
    key = mix(key ^ static_cast<uint64_t>(stride));
  }
  return key == 0 ? 1 : key;
}

/// The window of one region in its base's coordinates.
struct Geometry {
  bool valid = false;
  int64_t lo = 0, hi = 0;   ///< linear element span in the base's memory
  int64_t elements = 0;     ///< elements in the window
  bool box = false;
  llvm::SmallVector<int64_t, 4> start, extent;
};

Geometry geometryOf(const Program &p, const std::vector<TensorMap> &maps, int call, int region,
                    int shapeOp) {
  Geometry g;
  const codegen::Call &c = p.calls[call];
  const codegen::Region &r = c.regions[region];
  const codegen::Leaf &leaf = p.leaves[c.leaf];
  if (shapeOp < 0 || shapeOp >= static_cast<int>(leaf.ops.size())) return g;
  llvm::ArrayRef<int64_t> shape = leaf.ops[shapeOp].shape;
  const TensorMap &m = maps[r.tensor];
  if (r.offsets.size() != shape.size() || m.strides.size() != shape.size()) return g;
  g.valid = true;
  g.lo = g.hi = m.offset;
  g.elements = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t first = r.offsets[d] * m.strides[d];
    int64_t last = (r.offsets[d] + std::max<int64_t>(shape[d], 1) - 1) * m.strides[d];
    g.lo += std::min(first, last);
    g.hi += std::max(first, last);
    g.elements *= std::max<int64_t>(shape[d], 0);
  }
  g.hi += 1;
  if (m.box) {
    g.box = true;
    for (size_t d = 0; d < shape.size(); ++d) {
      g.start.push_back(m.origin[d] + r.offsets[d]);
      g.extent.push_back(shape[d]);
    }
  }
  return g;
}

/// Elements two windows of one base share (exact for boxes, span overlap otherwise).
int64_t overlap(const Geometry &a, const Geometry &b) {
  if (a.box && b.box && a.start.size() == b.start.size()) {
    int64_t v = 1;
    for (size_t d = 0; d < a.start.size(); ++d) {
      int64_t lo = std::max(a.start[d], b.start[d]);
      int64_t hi = std::min(a.start[d] + a.extent[d], b.start[d] + b.extent[d]);
      if (hi <= lo) return 0;
      v *= hi - lo;
    }
    return v;
  }
  return std::max<int64_t>(0, std::min(a.hi, b.hi) - std::max(a.lo, b.lo));
}

int lengthClass(int64_t len) {
  int c = 0;
  while (c < 62 && (int64_t(1) << (c + 1)) <= len) ++c;
  return c;
}

int64_t tensorBytes(const GmTensor &g) {
  int64_t n = static_cast<int64_t>(ir::elementSize(g.dtype));
  for (int64_t d : g.shape) n *= std::max<int64_t>(d, 0);
  return n;
}

} // namespace

uint64_t RegionTable::approxBytes() const {
  return callBegin_.capacity() * sizeof(int) + ids_.capacity() * sizeof(int) +
         bytes_.capacity() * sizeof(int64_t) + writeBack_.capacity() +
         coverBegin_.capacity() * sizeof(int) + coverIds_.capacity() * sizeof(int);
}

RegionTable RegionTable::build(const Program &p) {
  RegionTable t;
  const int numTensors = static_cast<int>(p.tensors.size());
  std::vector<TensorMap> maps = mapTensors(p);

  // How each leaf uses its region indices (once per leaf, not per call).
  std::vector<std::vector<RegionUse>> uses(p.leaves.size());
  for (size_t l = 0; l < p.leaves.size(); ++l) {
    const codegen::Leaf &leaf = p.leaves[l];
    std::vector<RegionUse> &u = uses[l];
    for (const codegen::PipeInstr &in : leaf.instrs) {
      bool read = in.pipe == Pipe::Mte2;
      bool written = in.pipe == Pipe::Fixpipe || in.pipe == Pipe::Mte3;
      if ((!read && !written) || in.region < 0) continue;
      auto it = std::find_if(u.begin(), u.end(),
                             [&](const RegionUse &x) { return x.region == in.region; });
      if (it == u.end()) {
        u.push_back({});
        it = u.end() - 1;
        it->region = in.region;
        it->shapeOp = in.op;
      }
      it->read |= read;
      it->written |= written;
      it->bytes = std::min(it->bytes, std::max<int64_t>(in.bytes, 0));
    }
  }

  // Dense ids in first-use order.
  t.callBegin_.assign(p.calls.size() + 1, 0);
  for (size_t c = 0; c < p.calls.size(); ++c)
    t.callBegin_[c + 1] = t.callBegin_[c] + static_cast<int>(p.calls[c].regions.size());
  t.ids_.assign(t.callBegin_.back(), -1);
  // Pass 1: every used (call, region index) slot's key (0: unused slot).
  std::vector<uint64_t> keys(t.ids_.size(), 0);
  for (size_t c = 0; c < p.calls.size(); ++c) {
    const codegen::Call &call = p.calls[c];
    if (call.leaf < 0 || call.leaf >= static_cast<int>(p.leaves.size())) continue;
    const codegen::Leaf &leaf = p.leaves[call.leaf];
    for (const RegionUse &u : uses[call.leaf]) {
      if (u.region >= static_cast<int>(call.regions.size())) continue;
      const codegen::Region &r = call.regions[u.region];
      if (r.tensor < 0 || r.tensor >= numTensors) continue;
      keys[t.callBegin_[c] + u.region] = memoryKey(maps[r.tensor], r.offsets, shapeOf(leaf, u));
    }
  }
  // Pass 2: intern, in slot order, prefetching a few slots ahead.
  constexpr size_t kPrefetchDistance = 16;
  // Most regions are used twice (written, then read): start at half the slots.
  KeyTable idOfKey(keys.size() / 2);
  std::vector<int> baseOf;
  std::vector<uint8_t> readFlag, writtenFlag;
  std::vector<uint8_t> readKinds; ///< per id: 1 read by an AIC task, 2 by an AIV task
  std::vector<int> repCall, repRegion, repOp; // a representative use, for geometry
  for (size_t c = 0; c < p.calls.size(); ++c) {
    const codegen::Call &call = p.calls[c];
    if (call.leaf < 0 || call.leaf >= static_cast<int>(p.leaves.size())) continue;
    const uint8_t kind = p.leaves[call.leaf].core == target::CoreKind::AIC ? 1 : 2;
    for (const RegionUse &u : uses[call.leaf]) {
      if (u.region >= static_cast<int>(call.regions.size())) continue;
      const size_t slot = t.callBegin_[c] + u.region;
      if (keys[slot] == 0) continue;
      if (slot + kPrefetchDistance < keys.size() && keys[slot + kPrefetchDistance] != 0)
        idOfKey.prefetch(keys[slot + kPrefetchDistance]);
      const codegen::Region &r = call.regions[u.region];
      auto [id, inserted] = idOfKey.findOrInsert(keys[slot], static_cast<int>(t.bytes_.size()));
      if (inserted) {
        t.bytes_.push_back(u.bytes);
        baseOf.push_back(maps[r.tensor].base);
        readFlag.push_back(0);
        writtenFlag.push_back(0);
        readKinds.push_back(0);
        repCall.push_back(static_cast<int>(c));
        repRegion.push_back(u.region);
        repOp.push_back(u.shapeOp);
      } else {
        t.bytes_[id] = std::min(t.bytes_[id], u.bytes);
      }
      readFlag[id] |= u.read;
      writtenFlag[id] |= u.written;
      if (u.read) readKinds[id] |= kind;
      t.ids_[slot] = id;
    }
  }
  const int numIds = t.numIds();

  // Per base: written at all, visible outside the kernel, distinct bytes read / written.
  std::vector<uint8_t> baseWritten(numTensors, 0), visible(numTensors, 0);
  std::vector<uint8_t> baseReadKinds(numTensors, 0);
  std::vector<int64_t> readBytes(numTensors, 0), writtenBytes(numTensors, 0);
  for (int id = 0; id < numIds; ++id) {
    if (writtenFlag[id]) {
      baseWritten[baseOf[id]] = 1;
      writtenBytes[baseOf[id]] += t.bytes_[id];
    }
    if (readFlag[id]) readBytes[baseOf[id]] += t.bytes_[id];
    baseReadKinds[baseOf[id]] |= readKinds[id];
  }
  for (int r : p.results)
    if (r >= 0 && r < numTensors) visible[maps[r].base] = 1;
  for (int b = 0; b < numTensors; ++b)
    if (p.tensors[b].kind == GmTensor::Kind::Argument && baseWritten[b]) visible[b] = 1;
  for (int b = 0; b < numTensors; ++b) {
    if (maps[b].base != b) continue;
    int64_t size = tensorBytes(p.tensors[b]);
    if (!baseWritten[b]) {
      t.compulsoryHbmBytes_ += std::min(size, readBytes[b]);
      t.compulsoryReadBytes_[baseReadKinds[b] & 3] += std::min(size, readBytes[b]);
    } else if (visible[b]) t.compulsoryHbmBytes_ += std::min(size, writtenBytes[b]);
  }
  // Only bases with a read that no transfer writes exactly need covers.
  std::vector<uint8_t> baseNeedsCover(numTensors, 0);
  for (int id = 0; id < numIds; ++id)
    if (readFlag[id] && !writtenFlag[id] && baseWritten[baseOf[id]]) baseNeedsCover[baseOf[id]] = 1;
  auto needsCover = [&](int id) { return baseNeedsCover[baseOf[id]] != 0; };
  t.writeBack_.resize(numIds);
  for (int id = 0; id < numIds; ++id) t.writeBack_[id] = visible[baseOf[id]];

  // Covers: written windows grouped by (base, span length class), sorted by span start.
  // A written window of class c is shorter than 2^(c+1) elements, so the ones that can
  // overlap a read [lo, hi) start in (lo - 2^(c+1), hi). Geometry is recomputed for
  // the few candidates rather than stored for every written window.
  struct Written {
    int base, cls;
    int64_t lo, hi;
    int id;
  };
  std::vector<Written> written;
  for (int id = 0; id < numIds; ++id) {
    if (!writtenFlag[id] || !needsCover(id)) continue;
    Geometry g = geometryOf(p, maps, repCall[id], repRegion[id], repOp[id]);
    if (!g.valid || g.hi <= g.lo) continue;
    written.push_back({baseOf[id], lengthClass(g.hi - g.lo), g.lo, g.hi, id});
  }
  std::sort(written.begin(), written.end(), [](const Written &a, const Written &b) {
    if (a.base != b.base) return a.base < b.base;
    if (a.cls != b.cls) return a.cls < b.cls;
    if (a.lo != b.lo) return a.lo < b.lo;
    return a.id < b.id;
  });
  // Runs of equal (base, class): [groupBegin[g], groupBegin[g + 1]).
  std::vector<int> groupBegin;
  std::vector<int> firstGroupOfBase(numTensors + 1, -1);
  for (size_t i = 0; i < written.size(); ++i) {
    if (i > 0 && written[i].base == written[i - 1].base && written[i].cls == written[i - 1].cls)
      continue;
    if (i == 0 || written[i].base != written[i - 1].base)
      firstGroupOfBase[written[i].base] = static_cast<int>(groupBegin.size());
    groupBegin.push_back(static_cast<int>(i));
  }
  groupBegin.push_back(static_cast<int>(written.size()));

  t.coverBegin_.assign(numIds + 1, 0);
  llvm::SmallVector<int, 8> found;
  for (int id = 0; id < numIds; ++id) {
    t.coverBegin_[id] = static_cast<int>(t.coverIds_.size());
    if (!readFlag[id] || writtenFlag[id] || !needsCover(id)) continue;
    int base = baseOf[id];
    if (firstGroupOfBase[base] < 0) continue;
    Geometry g = geometryOf(p, maps, repCall[id], repRegion[id], repOp[id]);
    if (!g.valid || g.elements == 0) continue;
    found.clear();
    int64_t covered = 0;
    for (int grp = firstGroupOfBase[base];
         grp + 1 < static_cast<int>(groupBegin.size()) && written[groupBegin[grp]].base == base;
         ++grp) {
      auto first = written.begin() + groupBegin[grp], last = written.begin() + groupBegin[grp + 1];
      int64_t from = g.lo - (int64_t(1) << (first->cls + 1));
      auto w = std::lower_bound(first, last, from,
                                [](const Written &x, int64_t v) { return x.lo <= v; });
      for (; w != last && w->lo < g.hi; ++w) {
        if (w->hi <= g.lo) continue;
        int64_t v = overlap(g, geometryOf(p, maps, repCall[w->id], repRegion[w->id], repOp[w->id]));
        if (v <= 0) continue;
        found.push_back(w->id);
        covered += v;
      }
    }
    if (covered >= g.elements) t.coverIds_.insert(t.coverIds_.end(), found.begin(), found.end());
  }
  t.coverBegin_[numIds] = static_cast<int>(t.coverIds_.size());
  return t;
}

} // namespace ptoc::runtime::sim
