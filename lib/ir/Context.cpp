// Uniquing of types, attributes and identifiers for one compilation.
#include "ptoc/ir/Context.h"

#include <algorithm>
#include <cstring>

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Allocator.h"

#include "AttrStorage.h"
#include "ptoc/ir/StableHash.h"
#include "ptoc/support/DenseMapGrowth.h"

namespace ptoc::ir {

using detail::AttrStorage;
using detail::TypeStorage;

struct Context::Impl {
  llvm::BumpPtrAllocator alloc;
  llvm::StringSet<> identifiers;
  // Buckets keyed by content hash; collisions resolved by comparing contents.
  llvm::DenseMap<uint64_t, llvm::SmallVector<const TypeStorage *, 1>> types;
  llvm::DenseMap<uint64_t, llvm::SmallVector<const AttrStorage *, 1>> attrs;

  template <typename T> T *copyArray(llvm::ArrayRef<T> a) {
    if (a.empty()) return nullptr;
    T *p = alloc.Allocate<T>(a.size());
    std::uninitialized_copy(a.begin(), a.end(), p);
    return p;
  }
};

Context::Context() : impl_(std::make_unique<Impl>()) { sgKey_ = id("sg"); }
Context::~Context() = default;

// ---------------------------------------------------------------- types

static uint64_t typeHash(bool isTile, DType dt, MemSpace sp, llvm::ArrayRef<int64_t> shape) {
  uint64_t h = hashMix(isTile ? 0x7469 : 0x7465, static_cast<uint64_t>(dt));
  h = hashMix(h, static_cast<uint64_t>(sp));
  h = hashMix(h, shape.size());
  for (int64_t d : shape) h = hashMix(h, static_cast<uint64_t>(d));
  return h;
}

static Type uniqueType(Context::Impl &impl, bool isTile, DType dt, MemSpace sp,
                       llvm::ArrayRef<int64_t> shape) {
  uint64_t h = typeHash(isTile, dt, sp, shape);
  support::reserveOneMore(impl.types); // the host's memory running out leaves it whole
  auto &bucket = impl.types[h];
  for (const TypeStorage *s : bucket)
    if (s->isTile == isTile && s->dtype == dt && s->space == sp &&
        llvm::ArrayRef<int64_t>(s->dims, s->rank) == shape)
      return Type(s);
  auto *s = impl.alloc.Allocate<TypeStorage>();
  *s = TypeStorage{isTile, dt, sp, static_cast<uint32_t>(shape.size()),
                   impl.copyArray(shape), h};
  bucket.push_back(s);
  return Type(s);
}

Type Context::tensorType(DType dtype, llvm::ArrayRef<int64_t> shape) {
  return uniqueType(*impl_, false, dtype, MemSpace::GM, shape);
}
Type Context::tileType(DType dtype, llvm::ArrayRef<int64_t> shape, MemSpace space) {
  return uniqueType(*impl_, true, dtype, space, shape);
}
Type Context::withShape(Type t, llvm::ArrayRef<int64_t> shape) {
  return uniqueType(*impl_, t.isTile(), t.dtype(), t.space(), shape);
}
Type Context::withDType(Type t, DType dtype) {
  return uniqueType(*impl_, t.isTile(), dtype, t.space(), t.shape());
}

// ---------------------------------------------------------------- identifiers

Identifier Context::id(llvm::StringRef s) {
  auto &entry = *impl_->identifiers.insert(s).first;
  return Identifier(entry.getKeyData(), static_cast<uint32_t>(entry.getKeyLength()));
}

Location Context::loc(llvm::StringRef file, uint32_t line, uint32_t col) {
  return Location{id(file).data(), line, col};
}

// ---------------------------------------------------------------- attributes

namespace {

bool sameContent(const AttrStorage &a, const AttrStorage &b) {
  if (a.kind != b.kind || a.size != b.size) return false;
  switch (a.kind) {
  case AttrKind::Int: return a.i == b.i;
  case AttrKind::Float: return std::memcmp(&a.f, &b.f, sizeof(double)) == 0;
  case AttrKind::Bool: return a.b == b.b;
  case AttrKind::DType: return a.dt == b.dt;
  case AttrKind::String: return a.size == 0 || std::memcmp(a.str, b.str, a.size) == 0;
  case AttrKind::IntArray:
    return a.size == 0 || std::memcmp(a.ints, b.ints, a.size * sizeof(int64_t)) == 0;
  case AttrKind::Array:
    for (uint32_t i = 0; i < a.size; ++i)
      if (a.elems[i] != b.elems[i]) return false;
    return true;
  case AttrKind::Dict:
    for (uint32_t i = 0; i < a.size; ++i)
      if (a.entries[i].name != b.entries[i].name || a.entries[i].value != b.entries[i].value)
        return false;
    return true;
  }
  return false;
}

} // namespace

// Looks up `key` (whose array payload still points at caller memory); on a miss,
// copies the payload into the context and stores it.
static Attribute uniqueAttr(Context::Impl &impl, AttrStorage key) {
  support::reserveOneMore(impl.attrs); // the host's memory running out leaves it whole
  auto &bucket = impl.attrs[key.hash];
  for (const AttrStorage *s : bucket)
    if (sameContent(*s, key)) return Attribute(s);
  auto *s = impl.alloc.Allocate<AttrStorage>();
  *s = key;
  switch (key.kind) {
  case AttrKind::String: {
    char *p = impl.alloc.Allocate<char>(key.size + 1);
    if (key.size) std::memcpy(p, key.str, key.size);
    p[key.size] = 0;
    s->str = p;
    break;
  }
  case AttrKind::IntArray: s->ints = impl.copyArray(llvm::ArrayRef(key.ints, key.size)); break;
  case AttrKind::Array: s->elems = impl.copyArray(llvm::ArrayRef(key.elems, key.size)); break;
  case AttrKind::Dict:
    s->entries = impl.copyArray(llvm::ArrayRef(key.entries, key.size));
    break;
  default: break;
  }
  bucket.push_back(s);
  return Attribute(s);
}

Attribute Context::intAttr(int64_t v) {
  AttrStorage k{AttrKind::Int, 0, 0, {}};
  k.i = v;
  k.hash = hashMix(1, static_cast<uint64_t>(v));
  return uniqueAttr(*impl_, k);
}

Attribute Context::floatAttr(double v) {
  AttrStorage k{AttrKind::Float, 0, 0, {}};
  k.f = v;
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  k.hash = hashMix(2, bits);
  return uniqueAttr(*impl_, k);
}

Attribute Context::boolAttr(bool v) {
  AttrStorage k{AttrKind::Bool, 0, 0, {}};
  k.b = v;
  k.hash = hashMix(3, v);
  return uniqueAttr(*impl_, k);
}

Attribute Context::stringAttr(llvm::StringRef v) {
  AttrStorage k{AttrKind::String, 0, 0, {}};
  k.str = v.data();
  k.size = static_cast<uint32_t>(v.size());
  k.hash = hashBytes(v, 4);
  return uniqueAttr(*impl_, k);
}

Attribute Context::dtypeAttr(DType v) {
  AttrStorage k{AttrKind::DType, 0, 0, {}};
  k.dt = v;
  k.hash = hashMix(5, static_cast<uint64_t>(v));
  return uniqueAttr(*impl_, k);
}

Attribute Context::intArrayAttr(llvm::ArrayRef<int64_t> v) {
  AttrStorage k{AttrKind::IntArray, 0, 0, {}};
  k.ints = v.data();
  k.size = static_cast<uint32_t>(v.size());
  uint64_t h = hashMix(6, v.size());
  for (int64_t x : v) h = hashMix(h, static_cast<uint64_t>(x));
  k.hash = h;
  return uniqueAttr(*impl_, k);
}

Attribute Context::arrayAttr(llvm::ArrayRef<Attribute> v) {
  if (std::all_of(v.begin(), v.end(), [](Attribute a) { return a.isInt(); })) {
    llvm::SmallVector<int64_t, 8> ints;
    for (Attribute a : v) ints.push_back(a.getInt());
    return intArrayAttr(ints);
  }
  AttrStorage k{AttrKind::Array, 0, 0, {}};
  k.elems = v.data();
  k.size = static_cast<uint32_t>(v.size());
  uint64_t h = hashMix(7, v.size());
  for (Attribute a : v) h = hashMix(h, a.contentHash());
  k.hash = h;
  return uniqueAttr(*impl_, k);
}

Attribute Context::dictAttr(llvm::ArrayRef<NamedAttr> entries, bool sortByName) {
  llvm::SmallVector<NamedAttr, 4> sorted;
  if (sortByName && !std::is_sorted(entries.begin(), entries.end(),
                                    [](const NamedAttr &a, const NamedAttr &b) {
                                      return a.name < b.name;
                                    })) {
    sorted.assign(entries.begin(), entries.end());
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const NamedAttr &a, const NamedAttr &b) { return a.name < b.name; });
    entries = sorted;
  }
  AttrStorage k{AttrKind::Dict, 0, 0, {}};
  k.entries = entries.data();
  k.size = static_cast<uint32_t>(entries.size());
  uint64_t h = hashMix(8, entries.size());
  for (const NamedAttr &e : entries) {
    h = hashMix(h, hashBytes(e.name.str()));
    h = hashMix(h, e.value.contentHash());
  }
  k.hash = h;
  return uniqueAttr(*impl_, k);
}

} // namespace ptoc::ir
