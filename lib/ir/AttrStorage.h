// Private layout of uniqued attribute storage (shared by Attribute.cpp and Context.cpp).
#pragma once

#include <cstdint>

#include "ptoc/ir/Attribute.h"

namespace ptoc::ir::detail {

struct AttrStorage {
  AttrKind kind;
  uint32_t size = 0; // elements of arrays/dicts, bytes of strings
  uint64_t hash = 0; // content hash, stable across processes
  union {
    int64_t i;
    double f;
    bool b;
    DType dt;
    const char *str;
    const int64_t *ints;
    const Attribute *elems;
    const NamedAttr *entries;
  };
};

} // namespace ptoc::ir::detail
