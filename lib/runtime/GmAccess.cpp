// GM memory of one execution: argument and tensor checks, windows, region checks,
// and row-wise tile transfers (memcpy when the dtypes match and rows are contiguous).
#include "GmAccess.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <vector>

#include <Eigen/Core>

#include "PartialTiles.h"
#include "StridedWalk.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ptoc/ir/Diagnostics.h"

namespace ptoc::runtime::exec {
namespace {

using codegen::GmTensor;
using ir::DType;

/// Upper bound on the elements of one GM tensor (keeps offset arithmetic exact).
constexpr int64_t kMaxGmElements = int64_t(1) << 40;

std::string dimsStr(llvm::ArrayRef<int64_t> s) { return "[" + absl::StrJoin(s, ", ") + "]"; }

std::string tensorName(const codegen::Program &p, int t) {
  return absl::StrCat("%", p.tensors[t].name, " ", tensorTypeStr(p.tensors[t].dtype,
                                                                 p.tensors[t].shape));
}

/// The region's GM addresses as rows: a start offset and, innermost last, merged
/// dimensions with their GM strides (the tile itself is dense, row-major).
struct RowTransfer {
  int64_t start = 0;
  Dims sizes, strides;
};

RowTransfer rowsOf(const GmView &v, llvm::ArrayRef<int64_t> offsets,
                   llvm::ArrayRef<int64_t> shape) {
  RowTransfer t;
  t.start = v.offset;
  for (size_t d = 0; d < offsets.size(); ++d) t.start += offsets[d] * v.strides[d];
  Dims sizes, strides; // innermost first
  for (int d = int(shape.size()) - 1; d >= 0; --d) {
    if (shape[d] == 1) continue;
    if (!sizes.empty() && strides.back() * sizes.back() == v.strides[d]) {
      sizes.back() *= shape[d];
      continue;
    }
    sizes.push_back(shape[d]);
    strides.push_back(v.strides[d]);
  }
  if (sizes.empty()) {
    sizes.push_back(1);
    strides.push_back(1);
  }
  t.sizes.assign(sizes.rbegin(), sizes.rend());
  t.strides.assign(strides.rbegin(), strides.rend());
  return t;
}

/// Calls f(gmElementOffset, tileElementOffset, rowLength, gmRowStride) per row.
template <class F>
void forEachRow(const RowTransfer &t, F f) {
  int64_t n = t.sizes.back(), stride = t.strides.back();
  int64_t row = 0;
  walkStrided<1>(llvm::ArrayRef<int64_t>(t.sizes).drop_back(),
                 {llvm::ArrayRef<int64_t>(t.strides).drop_back()},
                 [&](const std::array<int64_t, 1> &off) {
                   f(t.start + off[0], row * n, n, stride);
                   ++row;
                 });
}

template <class T>
inline T load(const std::byte *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <class T>
inline void store(std::byte *p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

void readFloatRow(const std::byte *src, int64_t stride, int64_t n, DType t, float *dst) {
  size_t es = ir::elementSize(t), step = size_t(stride) * es;
  switch (t) {
  case DType::F32:
    if (stride == 1) std::memcpy(dst, src, size_t(n) * es);
    else
      for (int64_t i = 0; i < n; ++i) dst[i] = load<float>(src + i * step);
    break;
  case DType::F16:
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(load<Eigen::half>(src + i * step));
    break;
  case DType::BF16:
    for (int64_t i = 0; i < n; ++i)
      dst[i] = static_cast<float>(load<Eigen::bfloat16>(src + i * step));
    break;
  default: break; // integer tensors go through readIntRow (checked)
  }
}

/// Calls f(value) with a zero of the storage type of integer dtype `t`.
template <class F>
void withIntStorage(DType t, F f) {
  switch (t) {
  case DType::I8: f(int8_t()); break;
  case DType::I16: f(int16_t()); break;
  case DType::I32: f(int32_t()); break;
  case DType::I64: f(int64_t()); break;
  case DType::Bool:
  case DType::U8: f(uint8_t()); break;
  case DType::U16: f(uint16_t()); break;
  case DType::U32: f(uint32_t()); break;
  case DType::U64: f(uint64_t()); break;
  default: break; // float tensors go through readFloatRow (checked)
  }
}

// Integer tiles hold every integer type as int64 (u64 as its bits).
void readIntRow(const std::byte *src, int64_t stride, int64_t n, DType t, int64_t *dst) {
  size_t step = size_t(stride) * ir::elementSize(t);
  bool isBool = t == DType::Bool;
  withIntStorage(t, [&](auto zero) {
    using S = decltype(zero);
    if (sizeof(S) == 8 && stride == 1) std::memcpy(dst, src, size_t(n) * 8);
    else if (isBool)
      for (int64_t i = 0; i < n; ++i) dst[i] = load<S>(src + i * step) != 0;
    else
      for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<int64_t>(load<S>(src + i * step));
  });
}

void writeFloatRow(const float *src, int64_t n, DType t, std::byte *dst, int64_t stride) {
  size_t es = ir::elementSize(t), step = size_t(stride) * es;
  switch (t) {
  case DType::F32:
    if (stride == 1) std::memcpy(dst, src, size_t(n) * es);
    else
      for (int64_t i = 0; i < n; ++i) store(dst + i * step, src[i]);
    break;
  case DType::F16:
    for (int64_t i = 0; i < n; ++i) store(dst + i * step, Eigen::half(src[i]));
    break;
  case DType::BF16:
    for (int64_t i = 0; i < n; ++i) store(dst + i * step, Eigen::bfloat16(src[i]));
    break;
  default: break;
  }
}

/// The tile's values are already in the type's range (every op saturates).
void writeIntRow(const int64_t *src, int64_t n, DType t, std::byte *dst, int64_t stride) {
  size_t step = size_t(stride) * ir::elementSize(t);
  withIntStorage(t, [&](auto zero) {
    using S = decltype(zero);
    if (sizeof(S) == 8 && stride == 1) std::memcpy(dst, src, size_t(n) * 8);
    else
      for (int64_t i = 0; i < n; ++i) store(dst + i * step, static_cast<S>(src[i]));
  });
}

/// The part of a tile at `offsets` of `v` that lies inside v's valid extents, per
/// dimension (the tile's shape when `v` is not clipped); sets `clipped` when smaller.
Dims validPart(const GmView &v, llvm::ArrayRef<int64_t> offsets, llvm::ArrayRef<int64_t> shape,
               bool &clipped) {
  Dims e(shape.begin(), shape.end());
  clipped = false;
  for (size_t d = 0; d < v.valid.size() && d < e.size(); ++d) {
    int64_t room = std::max<int64_t>(0, v.valid[d] - offsets[d]);
    if (room < e[d]) {
      e[d] = room;
      clipped = true;
    }
  }
  return e;
}

/// Calls f(gmElementOffset, tileElementOffset, rowLength, gmRowStride) per row of the
/// sub-box `extents` (from the tile's origin) of a dense row-major tile of `shape` at
/// `offsets` of `v`.
template <class F>
void forEachClippedRow(const GmView &v, llvm::ArrayRef<int64_t> offsets,
                       llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> extents, F f) {
  size_t rank = shape.size();
  for (int64_t e : extents)
    if (e <= 0) return;
  if (rank == 0) return;
  Dims tileStrides(rank, 1);
  for (int d = int(rank) - 2; d >= 0; --d) tileStrides[d] = tileStrides[d + 1] * shape[d + 1];
  Dims idx(rank, 0);
  while (true) {
    int64_t gm = v.offset, tile = 0;
    for (size_t d = 0; d < rank; ++d) {
      gm += (offsets[d] + idx[d]) * v.strides[d];
      tile += idx[d] * tileStrides[d];
    }
    f(gm, tile, extents[rank - 1], v.strides[rank - 1]);
    int d = int(rank) - 2;
    while (d >= 0 && ++idx[d] == extents[d]) idx[d--] = 0;
    if (d < 0) return;
  }
}

} // namespace

std::string tensorTypeStr(ir::DType dtype, llvm::ArrayRef<int64_t> shape) {
  std::string s = "tensor<";
  for (int64_t d : shape) absl::StrAppend(&s, d, "x");
  absl::StrAppend(&s, dtypeStr(dtype), ">");
  return s;
}

absl::Status GmMemory::init(const codegen::Program &program, llvm::ArrayRef<ConstTensorRef> args,
                            llvm::ArrayRef<std::byte *> externalStorage) {
  const auto &tensors = program.tensors;
  int numTensors = int(tensors.size());
  auto bad = [&](int t, const std::string &what) {
    return ir::internalError(absl::StrCat("program @", program.funcName, ": tensor ", t, " (%",
                                          tensors[t].name, "): ", what));
  };
  // An intermediate's first contents: zeros, or a copy of the argument it starts as
  // (GmTensor::initFrom: an argument a loop updates), wherever its memory lives.
  auto initialize = [&](int t, int64_t elements, std::byte *dst) -> absl::Status {
    const GmTensor &g = tensors[t];
    size_t bytes = size_t(elements) * ir::elementSize(g.dtype);
    if (g.initFrom < 0) {
      std::memset(dst, 0, bytes);
      return absl::OkStatus();
    }
    int from = g.initFrom;
    if (from >= numTensors || tensors[from].kind != GmTensor::Kind::Argument ||
        tensors[from].dtype != g.dtype || tensors[from].shape != g.shape ||
        tensors[from].argIndex < 0 || size_t(tensors[from].argIndex) >= args.size())
      return bad(t, absl::StrCat("starts as a copy of tensor ", from,
                                 ", which is not an argument of its type"));
    // memmove: the caller may pass the argument's own buffer as the result's.
    std::memmove(dst, args[tensors[from].argIndex].data, bytes);
    return absl::OkStatus();
  };

  // Arguments: the caller's mistakes, so InvalidArgument naming the argument.
  if (args.size() != program.arguments.size())
    return absl::InvalidArgumentError(absl::StrCat("@", program.funcName, " takes ",
                                                   program.arguments.size(), " arguments, got ",
                                                   args.size()));
  for (size_t i = 0; i < program.arguments.size(); ++i) {
    int t = program.arguments[i];
    if (t < 0 || t >= numTensors)
      return ir::internalError(absl::StrCat("program @", program.funcName, ": argument ", i,
                                            " names tensor ", t, ", but there are ", numTensors));
    const GmTensor &g = tensors[t];
    if (g.kind != GmTensor::Kind::Argument || g.argIndex != int(i))
      return bad(t, absl::StrCat("is listed as argument ", i,
                                 " but is not an Argument tensor with that index"));
    if (args[i].dtype != g.dtype || args[i].shape != llvm::ArrayRef<int64_t>(g.shape))
      return absl::InvalidArgumentError(absl::StrCat(
          "@", program.funcName, " argument ", i, " (%", g.name, "): expected ",
          tensorTypeStr(g.dtype, g.shape), ", got ", tensorTypeStr(args[i].dtype, args[i].shape),
          "; pass a tensor of the declared element type and shape"));
    if (!args[i].data && args[i].numElements() > 0)
      return absl::InvalidArgumentError(absl::StrCat("@", program.funcName, " argument ", i, " (%",
                                                     g.name, "): the buffer pointer is null"));
  }

  views_.assign(numTensors, GmView());
  hasPartialData_ = false;
  owned_.clear();
  ownedSlot_.assign(numTensors, -1);
  computedStrides_.clear();
  std::vector<int64_t> ownerElements(numTensors, 0);
  // Owners first (arguments, intermediates), then aliases into them.
  for (int pass = 0; pass < 2; ++pass) {
    for (int t = 0; t < numTensors; ++t) {
      const GmTensor &g = tensors[t];
      bool alias = g.kind == GmTensor::Kind::Alias;
      if (alias != (pass == 1)) continue;
      int64_t elements = 1;
      for (int64_t d : g.shape) {
        if (d < 0 || (d > 0 && elements > kMaxGmElements / d))
          return bad(t, "has an invalid shape " + dimsStr(g.shape));
        elements *= d;
      }
      GmView &v = views_[t];
      v.dtype = g.dtype;
      v.shape = g.shape;
      v.offset = g.baseOffset;
      v.strides = g.strides;
      if (v.strides.empty() && !alias && !g.shape.empty()) {
        Dims &strides = computedStrides_.emplace_back(g.shape.size(), 1);
        for (int d = int(g.shape.size()) - 2; d >= 0; --d)
          strides[d] = strides[d + 1] * g.shape[d + 1];
        v.strides = strides;
      }
      if (v.strides.size() != g.shape.size())
        return bad(t, absl::StrCat("has ", v.strides.size(), " strides for rank ", g.shape.size()));
      int owner = t;
      if (alias) {
        owner = g.base;
        if (owner < 0 || owner >= numTensors || tensors[owner].kind == GmTensor::Kind::Alias)
          return bad(t, absl::StrCat("is an alias of tensor ", owner,
                                     ", which is not an argument or intermediate tensor"));
        if (tensors[owner].dtype != g.dtype)
          return bad(t, absl::StrCat("is a ", dtypeStr(g.dtype), " alias of ",
                                     tensorName(program, owner)));
        v.data = views_[owner].data;
        v.writable = views_[owner].writable;
      } else if (g.kind == GmTensor::Kind::Argument) {
        if (g.argIndex < 0 || g.argIndex >= int(args.size()) ||
            program.arguments[g.argIndex] != t)
          return bad(t, absl::StrCat("is an argument with index ", g.argIndex,
                                     " that the program's argument list does not give it"));
        v.data = args[g.argIndex].data;
        ownerElements[t] = args[g.argIndex].numElements();
      } else if (size_t(t) < externalStorage.size() && externalStorage[t]) {
        // Copy-outs may leave parts unwritten (as in owned memory, those read as 0,
        // or as the argument the tensor starts as a copy of).
        v.writable = externalStorage[t];
        v.data = v.writable;
        if (absl::Status st = initialize(t, elements, v.writable); !st.ok()) return st;
        ownerElements[t] = elements;
      } else {
        try {
          owned_.push_back(HostTensor(g.dtype, g.shape));
        } catch (const std::bad_alloc &) {
          return absl::ResourceExhaustedError(absl::StrCat(
              "@", program.funcName, ": cannot allocate ", elements * ir::elementSize(g.dtype),
              " bytes for intermediate tensor ", tensorName(program, t)));
        }
        ownedSlot_[t] = int32_t(owned_.size() - 1);
        v.writable = owned_.back().data();
        v.data = v.writable;
        if (g.initFrom >= 0) // (else it is zero-filled already)
          if (absl::Status st = initialize(t, elements, v.writable); !st.ok()) return st;
        ownerElements[t] = elements;
      }
      if (elements == 0) continue;
      // The whole window (its valid part) must lie inside the base's memory (so must
      // every region).
      if (!g.valid.empty()) {
        if (!alias || g.valid.size() != g.shape.size())
          return bad(t, absl::StrCat("has valid extents ", dimsStr(g.valid), " but is ",
                                     alias ? "of another rank" : "not an alias"));
        for (size_t d = 0; d < g.valid.size(); ++d)
          if (g.valid[d] < 0 || g.valid[d] > g.shape[d])
            return bad(t, absl::StrCat("has valid extents ", dimsStr(g.valid),
                                       " outside its shape ", dimsStr(g.shape)));
        v.valid = g.valid;
        hasPartialData_ = true;
        // An empty window (a valid extent of 0) reads and writes nothing.
        if (llvm::is_contained(g.valid, 0)) continue;
      }
      __int128 lo = v.offset, hi = v.offset;
      for (size_t d = 0; d < g.shape.size(); ++d) {
        int64_t extent = g.valid.empty() ? g.shape[d] : g.valid[d];
        __int128 span = __int128(extent - 1) * v.strides[d];
        (span < 0 ? lo : hi) += span;
      }
      if (lo < 0 || hi >= ownerElements[owner])
        return bad(t, absl::StrCat("window (offset ", v.offset, ", strides ", dimsStr(v.strides),
                                   ", shape ", dimsStr(g.shape), ") leaves the ",
                                   ownerElements[owner], " elements of ",
                                   tensorName(program, owner)));
    }
  }
  if (hasPartialData_) mapOwners(program);
  return absl::OkStatus();
}

void GmMemory::mapOwners(const codegen::Program &program) {
  int numTensors = int(program.tensors.size());
  ownerMaps_.assign(numTensors, OwnerMap());
  recordsWrites_.assign(numTensors, false);
  partialWrites_.assign(numTensors, {});
  partialCounts_.reset(new std::atomic<uint32_t>[numTensors]);
  for (int t = 0; t < numTensors; ++t) {
    partialCounts_[t].store(0, std::memory_order_relaxed);
    const GmTensor &g = program.tensors[t];
    bool alias = g.kind == GmTensor::Kind::Alias;
    recordsWrites_[t] = g.kind == GmTensor::Kind::Intermediate;
    int owner = alias ? g.base : t;
    const GmView &o = views_[owner], &v = views_[t];
    OwnerMap &m = ownerMaps_[t];
    m.owner = owner;
    m.start.assign(o.shape.size(), 0);
    m.ownerDim.assign(v.shape.size(), -1);
    // The view's first element in the owner's coordinates.
    int64_t rest = v.offset - o.offset;
    for (size_t e = 0; e < o.shape.size(); ++e) {
      m.start[e] = o.strides[e] ? rest / o.strides[e] : 0;
      rest -= m.start[e] * o.strides[e];
    }
    m.ok = rest == 0;
    llvm::SmallVector<bool, 4> used(o.shape.size(), false);
    for (size_t d = 0; d < v.shape.size() && m.ok; ++d) {
      if (v.shape[d] == 1) continue;
      int found = -1;
      for (size_t e = 0; e < o.shape.size() && found < 0; ++e)
        if (!used[e] && o.shape[e] > 1 && o.strides[e] == v.strides[d]) found = int(e);
      m.ok = found >= 0 && m.start[found] + v.shape[d] <= o.shape[found];
      if (m.ok) {
        used[found] = true;
        m.ownerDim[d] = found;
      }
    }
  }
}

Dims GmMemory::readExtents(const codegen::Region &region, const OpPlan &op) const {
  if (!hasPartialData_) return {};
  const GmView &v = views_[region.tensor];
  bool clipped = false;
  Dims e = validPart(v, region.offsets, op.shape, clipped);
  const OwnerMap &m = ownerMaps_[region.tensor];
  if (!m.ok || m.owner < 0 || partialCounts_[m.owner].load(std::memory_order_acquire) == 0 ||
      region.offsets.size() != op.shape.size() || m.ownerDim.size() != op.shape.size())
    return clipped ? e : Dims();
  // The tile's box in the owner's coordinates.
  size_t rank = m.start.size();
  Dims lo(m.start.begin(), m.start.end()), hi(rank);
  for (size_t q = 0; q < rank; ++q) hi[q] = lo[q] + 1;
  for (size_t d = 0; d < op.shape.size(); ++d)
    if (int q = m.ownerDim[d]; q >= 0) {
      lo[q] += region.offsets[d];
      hi[q] = lo[q] + op.shape[d];
    }
  // Writes that overlap it were ordered before this read (memory order), so the
  // answer does not depend on the writes still running elsewhere.
  std::lock_guard<std::mutex> lock(partialMutex_);
  for (const PartialWrite &w : partialWrites_[m.owner]) {
    bool overlaps = true;
    for (size_t q = 0; q < rank && overlaps; ++q) overlaps = w.lo[q] < hi[q] && lo[q] < w.hi[q];
    if (!overlaps) continue;
    for (size_t q = 0; q < rank; ++q) {
      if (w.end[q] == INT64_MAX) continue;
      int64_t room = std::max<int64_t>(0, w.end[q] - lo[q]);
      bool cut = false;
      for (size_t d = 0; d < op.shape.size(); ++d)
        if (m.ownerDim[d] == int(q)) {
          if (room < e[d]) e[d] = room;
          cut = true;
        }
      if (!cut && room == 0) std::fill(e.begin(), e.end(), 0); // a size-1 dim past the end
    }
  }
  return coversAll(e, op.shape) ? Dims() : e;
}

void GmMemory::recordPartialWrite(const codegen::Region &region, const OpPlan &op,
                                  llvm::ArrayRef<int64_t> extents) const {
  if (!hasPartialData_ || !recordsWrites_[region.tensor] || extents.size() != op.shape.size() ||
      region.offsets.size() != op.shape.size())
    return;
  PartialWrite w;
  for (size_t d = 0; d < op.shape.size(); ++d) {
    w.lo.push_back(region.offsets[d]);
    w.hi.push_back(region.offsets[d] + op.shape[d]);
    w.end.push_back(extents[d] < op.shape[d] ? region.offsets[d] + extents[d] : INT64_MAX);
  }
  std::lock_guard<std::mutex> lock(partialMutex_);
  partialWrites_[region.tensor].push_back(std::move(w));
  partialCounts_[region.tensor].fetch_add(1, std::memory_order_release);
}

absl::Status GmMemory::checkRegion(const codegen::Program &program, int callIndex,
                                   const OpPlan &op) const {
  const codegen::Call &call = program.calls[callIndex];
  // The messages are built only on failure: this check runs for every transfer.
  auto where = [&] {
    return absl::StrCat("program @", program.funcName, ": call ", callIndex, " (leaf ", call.leaf,
                        ", subgraph ", call.subgraph, "), region ", op.region);
  };
  bool write = op.code == ir::OpCode::CopyOut;
  if (op.region >= int(call.regions.size()))
    return ir::internalError(absl::StrCat(where(), ": the call has only ", call.regions.size(),
                                          " regions"));
  const codegen::Region &r = call.regions[op.region];
  if (r.tensor < 0 || r.tensor >= int(views_.size()))
    return ir::internalError(absl::StrCat(where(), ": tensor index ", r.tensor, " out of range (",
                                          views_.size(), " tensors)"));
  const GmView &v = views_[r.tensor];
  auto what = [&] {
    return absl::StrCat(where(), ": ", write ? "copy_out of tile " : "copy_in of tile ",
                        dimsStr(op.shape), " at offsets ", dimsStr(r.offsets), " of ",
                        tensorName(program, r.tensor));
  };
  if (r.offsets.size() != v.shape.size() || op.shape.size() != v.shape.size())
    return ir::internalError(absl::StrCat(what(), ": ranks differ"));
  if (op.dtype != v.dtype)
    return ir::internalError(absl::StrCat(what(), ": the tile's GM element type is ",
                                          dtypeStr(op.dtype)));
  for (size_t d = 0; d < v.shape.size(); ++d)
    if (r.offsets[d] < 0 || r.offsets[d] > v.shape[d] || op.shape[d] > v.shape[d] - r.offsets[d])
      return ir::internalError(absl::StrCat(what(), ": out of bounds in dimension ", d,
                                            " (elements [", r.offsets[d], ", ",
                                            r.offsets[d] + op.shape[d], ") of ", v.shape[d], ")"));
  if (write && !v.writable)
    return ir::internalError(absl::StrCat(what(), ": the tensor is (a view of) a function "
                                                "argument, which is read-only"));
  return absl::OkStatus();
}

void GmMemory::copyIn(const codegen::Region &region, const OpPlan &op, TileMemory mem) const {
  const GmView &v = views_[region.tensor];
  if (op.numElements == 0) return;
  size_t es = ir::elementSize(v.dtype);
  auto row = [&](int64_t gm, int64_t tile, int64_t n, int64_t stride) {
    const std::byte *src = v.data + gm * int64_t(es);
    if (op.rep == Rep::Float) readFloatRow(src, stride, n, v.dtype, mem.floats + op.offset + tile);
    else readIntRow(src, stride, n, v.dtype, mem.ints + op.offset + tile);
  };
  bool clipped = false;
  Dims extents = validPart(v, region.offsets, op.shape, clipped);
  if (!clipped) {
    forEachRow(rowsOf(v, region.offsets, op.shape), row);
    return;
  }
  // A tile reaching past a window's valid_shape: zeros there, data inside.
  if (op.rep == Rep::Float) std::fill_n(mem.floats + op.offset, op.numElements, 0.0f);
  else std::fill_n(mem.ints + op.offset, op.numElements, 0);
  forEachClippedRow(v, region.offsets, op.shape, extents, row);
}

void GmMemory::copyOut(const codegen::Region &region, const OpPlan &op, const OpPlan &tile,
                       TileMemory mem) const {
  const GmView &v = views_[region.tensor];
  if (op.numElements == 0) return;
  size_t es = ir::elementSize(v.dtype);
  std::vector<float> epilogued;
  std::vector<int64_t> words;
  auto row = [&](int64_t gm, int64_t at, int64_t n, int64_t stride) {
    std::byte *dst = v.writable + gm * int64_t(es);
    if (!op.epilogue.empty()) {
      // The FIXPIPE epilogue (ir/Fixpipe.h), element by element, then a row write.
      epilogued.resize(size_t(n));
      for (int64_t i = 0; i < n; ++i) {
        double acc = tile.rep == Rep::Float ? double(mem.floats[tile.offset + at + i])
                                            : double(mem.ints[tile.offset + at + i]);
        epilogued[size_t(i)] = static_cast<float>(op.epilogue.apply(acc, v.dtype));
      }
      if (repOf(v.dtype) == Rep::Float) {
        writeFloatRow(epilogued.data(), n, v.dtype, dst, stride);
      } else {
        words.assign(epilogued.begin(), epilogued.end());
        writeIntRow(words.data(), n, v.dtype, dst, stride);
      }
      return;
    }
    if (tile.rep == Rep::Float) writeFloatRow(mem.floats + tile.offset + at, n, v.dtype, dst, stride);
    else writeIntRow(mem.ints + tile.offset + at, n, v.dtype, dst, stride);
  };
  bool clipped = false;
  Dims extents = validPart(v, region.offsets, op.shape, clipped);
  // Past a window's valid_shape nothing lands.
  if (clipped) forEachClippedRow(v, region.offsets, op.shape, extents, row);
  else forEachRow(rowsOf(v, region.offsets, op.shape), row);
}

HostTensor GmMemory::materialize(int tensor) const {
  const GmView &v = views_[tensor];
  HostTensor out(v.dtype, v.shape);
  if (out.numElements() > 0) materializeInto(tensor, out.data());
  return out;
}

void GmMemory::materializeInto(int tensor, std::byte *dst) const {
  const GmView &v = views_[tensor];
  int64_t elements = 1;
  for (int64_t d : v.shape) elements *= d;
  if (elements == 0) return;
  Dims zeros(v.shape.size(), 0);
  RowTransfer t = rowsOf(v, zeros, v.shape);
  size_t es = ir::elementSize(v.dtype);
  forEachRow(t, [&](int64_t gm, int64_t at, int64_t n, int64_t stride) {
    const std::byte *src = v.data + gm * int64_t(es);
    if (stride == 1) std::memcpy(dst + at * es, src, size_t(n) * es);
    else
      for (int64_t i = 0; i < n; ++i) std::memcpy(dst + (at + i) * es, src + i * stride * es, es);
  });
}

bool GmMemory::canTake(int tensor) const {
  const GmView &v = views_[tensor];
  int slot = ownedSlot_[tensor];
  if (slot < 0 || owned_[slot].sizeInBytes() == 0 || v.offset != 0) return false;
  int64_t stride = 1;
  for (int d = int(v.shape.size()) - 1; d >= 0; --d) {
    if (v.shape[d] != 1 && v.strides[d] != stride) return false;
    stride *= v.shape[d];
  }
  return true;
}

HostTensor GmMemory::take(int tensor) {
  int slot = ownedSlot_[tensor];
  if (slot < 0) return HostTensor(); // (callers check canTake first)
  HostTensor out = std::move(owned_[slot]);
  ownedSlot_[tensor] = -1;
  views_[tensor] = GmView();
  return out;
}

} // namespace ptoc::runtime::exec
