// Type queries and text form.
#include "ptoc/ir/Type.h"

#include "llvm/Support/raw_ostream.h"

namespace ptoc::ir {

std::string_view memSpaceName(MemSpace s) {
  switch (s) {
  case MemSpace::GM: return "gm";
  case MemSpace::UB: return "ub";
  case MemSpace::L1: return "l1";
  case MemSpace::L0A: return "l0a";
  case MemSpace::L0B: return "l0b";
  case MemSpace::L0C: return "l0c";
  }
  return "?";
}

std::optional<MemSpace> parseMemSpace(std::string_view name) {
  for (MemSpace s : {MemSpace::GM, MemSpace::UB, MemSpace::L1, MemSpace::L0A, MemSpace::L0B,
                     MemSpace::L0C})
    if (memSpaceName(s) == name) return s;
  return std::nullopt;
}

bool Type::hasDynamicDims() const {
  for (int64_t d : shape())
    if (d == kDynamicDim) return true;
  return false;
}

int64_t Type::numElements() const {
  if (hasDynamicDims()) return -1;
  int64_t n = 1;
  for (int64_t d : shape()) n *= d;
  return n;
}

std::string shapeStr(llvm::ArrayRef<int64_t> shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += 'x';
    s += shape[i] == kDynamicDim ? std::string("?") : std::to_string(shape[i]);
  }
  return s;
}

std::string Type::str() const {
  if (!storage_) return "<null type>";
  std::string s = isTile() ? "tile<" : "tensor<";
  for (int64_t d : shape()) {
    s += d == kDynamicDim ? std::string("?") : std::to_string(d);
    s += 'x';
  }
  s += dtypeName(dtype());
  if (isTile()) {
    s += ", ";
    s += memSpaceName(space());
  }
  s += '>';
  return s;
}

} // namespace ptoc::ir
