// The FIXPIPE epilogue's numerics (see Fixpipe.h; docs/ir.md "matmul").
#include "ptoc/ir/Fixpipe.h"

#include <bit>
#include <cstdint>

#include "ptoc/ir/Operation.h"

namespace ptoc::ir {

FixpipeEpilogue FixpipeEpilogue::of(Attribute attrs) {
  FixpipeEpilogue e;
  if (!attrs) return e;
  if (Attribute s = attrs.lookup("scale"); s && (s.isFloat() || s.isInt())) e.scale = s.getNumber();
  if (Attribute r = attrs.lookup("relu"); r && r.isBool()) e.relu = r.getBool();
  return e;
}

FixpipeEpilogue FixpipeEpilogue::of(const Operation &op) { return of(op.attrDict()); }

float FixpipeEpilogue::effectiveScale(double scale) {
  // f32 has 23 mantissa bits; the FIXPIPE keeps the top 10.
  constexpr uint32_t kDroppedMantissa = (1u << 13) - 1;
  uint32_t bits = std::bit_cast<uint32_t>(static_cast<float>(scale));
  return std::bit_cast<float>(bits & ~kDroppedMantissa);
}

double FixpipeEpilogue::apply(double acc, DType out) const {
  float v = static_cast<float>(acc);
  if (scale) v = v * effectiveScale(*scale);
  if (relu && !(v > 0.0f)) v = v < 0.0f ? 0.0f : v; // NaN stays NaN, -0 stays -0
  return roundToDType(static_cast<double>(v), out);
}

} // namespace ptoc::ir
