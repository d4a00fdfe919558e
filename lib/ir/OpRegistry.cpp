// The operation registry: one entry per op, declaring its arity, attributes, core
// kind, tile kind, type rule and scalar semantics. Every other part of ptoc asks
// this table instead of switching on op names.
#include "ptoc/ir/OpDef.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "ptoc/ir/CastMode.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/DivPrecision.h"

namespace ptoc::ir {

using target::CoreKind;

// ---------------------------------------------------------------- attributes

namespace {

constexpr AttrSpec kReductionAttrs[] = {
    {"axes", AttrShape::IntArray, true, "dimensions to reduce, ascending, non-negative"},
    {"keepdim", AttrShape::Bool, false, "keep reduced dimensions with size 1"},
};
constexpr AttrSpec kMeanAttrs[] = {
    {"axes", AttrShape::IntArray, true, "dimensions to reduce, ascending, non-negative"},
    {"keepdim", AttrShape::Bool, false, "keep reduced dimensions with size 1"},
    {"count", AttrShape::Int, false,
     "divide by this many elements instead of the reduced ones (a positive integer): the "
     "last step of a mean whose reduced axis expand-tiles split, over the partial sums"},
};
constexpr AttrSpec kMatmulAttrs[] = {
    {"transpose_a", AttrShape::Bool, false, "use the transpose of the left operand"},
    {"transpose_b", AttrShape::Bool, false, "use the transpose of the right operand"},
    {"acc_dtype", AttrShape::DType, false, "accumulation type (f32 for floats, i32 for i8)"},
    {"scale", AttrShape::Number, false,
     "FIXPIPE dequantisation: i8 x i8 products (i32) times scale, written as f16 or bf16 "
     "(PyPTO extend_params 'scale')"},
    {"relu", AttrShape::Bool, false,
     "FIXPIPE ReLU on the result on its way out (PyPTO extend_params 'relu_type')"},
};
// A copy_out from L0C carries its matmul's FIXPIPE epilogue (ir/Fixpipe.h).
constexpr AttrSpec kCopyOutAttrs[] = {
    {"offsets", AttrShape::IntArray, true, "start of the region in each dimension"},
    {"scale", AttrShape::Number, false, "FIXPIPE: multiply the l0c accumulator (from l0c only)"},
    {"relu", AttrShape::Bool, false, "FIXPIPE: ReLU on the way out (from l0c only)"},
};
constexpr AttrSpec kDivAttrs[] = {
    {"precision", AttrShape::String, false,
     "\"high_precision\" (default: the correctly rounded quotient) or \"intrinsic\" "
     "(reciprocal then multiply; faster), PyPTO's precision_type"},
};
constexpr AttrSpec kTransposeAttrs[] = {
    {"perm", AttrShape::IntArray, true, "result dimension i is operand dimension perm[i]"},
};
constexpr AttrSpec kOffsetAttrs[] = {
    {"offsets", AttrShape::IntArray, true, "start of the region in each dimension"},
};
constexpr AttrSpec kConcatAttrs[] = {
    {"axis", AttrShape::Int, true, "dimension along which operands are joined"},
};
constexpr AttrSpec kFullAttrs[] = {
    {"value", AttrShape::Number, true, "the value of every element"},
};
constexpr AttrSpec kSubgraphAttrs[] = {
    {"id", AttrShape::Int, true, "the subgraph id that ops name in 'sg'"},
    {"core", AttrShape::String, true, "\"aic\" or \"aiv\""},
    {"hash", AttrShape::String, true, "structural hash (equal for isomorphic subgraphs)"},
    {"hash_order", AttrShape::Int, true, "number of its isomorphism group (func<F>_<order>)"},
    {"group_size", AttrShape::Int, true, "subgraphs in its isomorphism group"},
    {"cycles", AttrShape::Int, true, "estimated cycles"},
    {"copy_in_bytes", AttrShape::Int, true, "bytes copied in from GM"},
};
constexpr AttrSpec kLoopAttrs[] = {
    {"body", AttrShape::String, true, "the function run per iteration"},
    {"name", AttrShape::String, true, "the loop's name (swimlane, summary, errors)"},
    {"index", AttrShape::String, false, "the index's name in expressions (default: the name)"},
    {"start", AttrShape::SymInt, false, "first index value (default 0)"},
    {"stop", AttrShape::SymInt, true, "the index stays below it"},
    {"step", AttrShape::SymInt, false, "index increment, a positive integer (default 1)"},
    {"ins", AttrShape::Windows, true, "per body argument: the operand window it reads"},
    {"outs", AttrShape::Windows, true, "per body result: the operand window it writes"},
    {"parallel", AttrShape::Bool, false,
     "iterations are independent: up to device_sched_parallelism of them run at once "
     "(default false)"},
    {"locs", AttrShape::Locations, false,
     "debug info: per window, ins then outs, the user's file:line:col that made it (\"\": "
     "unknown); run-time errors about a window point there"},
};
constexpr AttrSpec kCastAttrs[] = {
    {"mode", AttrShape::String, false,
     "rounding: \"rint\", \"round\", \"floor\", \"ceil\", \"trunc\" or \"odd\" (default: trunc "
     "from a float to an integer type, rint otherwise)"},
    {"saturate", AttrShape::Bool, false,
     "an integer result out of range clamps (true, the default) or keeps its low bits (false)"},
};
constexpr AttrSpec kTopKAttrs[] = {
    {"k", AttrShape::Int, true, "how many elements to select, 1 <= k <= the size of 'dim'"},
    {"dim", AttrShape::Int, true, "the dimension selected along, non-negative"},
    {"largest", AttrShape::Bool, false, "true (default): the k largest; false: the k smallest"},
};
constexpr AttrSpec kGatherAttrs[] = {
    {"dim", AttrShape::Int, true, "the dimension the index tensor indexes, non-negative"},
};
constexpr AttrSpec kScatterAttrs[] = {
    {"dim", AttrShape::Int, true, "the dimension the index tensor indexes, non-negative"},
    {"reduce", AttrShape::String, false,
     "\"add\" or \"multiply\": combine with the element there (default: replace it)"},
};
constexpr AttrSpec kCommonAttrs[] = {
    {"vec_tile", AttrShape::IntArray, false, "vector tile shape, one size per dimension"},
    {"cube_tile", AttrShape::CubeTile, false, "cube tile {m = [L0, L1], k = [..], n = [..]}"},
    {"sg_scope", AttrShape::Int, false, "ops with the same scope id form one subgraph"},
    {"sg", AttrShape::Int, false, "the subgraph this tile op belongs to (partitioned level)"},
};

// ---------------------------------------------------------------- helpers

bool fail(RuleError &error, std::string msg, DiagCategory category = DiagCategory::Shape) {
  error.message = std::move(msg);
  error.category = category;
  return false;
}

std::string typeList(llvm::ArrayRef<Type> types) {
  std::string s;
  for (size_t i = 0; i < types.size(); ++i) {
    if (i) s += ", ";
    s += types[i].str();
  }
  return s;
}

// All operands are tensors, or all are tiles in one memory space.
bool sameKind(llvm::ArrayRef<Type> ops, RuleError &error) {
  for (Type t : ops)
    if (t.isTile() != ops[0].isTile() || t.space() != ops[0].space())
      return fail(error, "operands mix tensors and tiles or memory spaces (" + typeList(ops) +
                             ")");
  return true;
}

bool sameDType(llvm::ArrayRef<Type> ops, RuleError &error) {
  for (Type t : ops)
    if (t.dtype() != ops[0].dtype())
      return fail(error, "operand element types differ (" + typeList(ops) +
                             "); insert a cast so they match", DiagCategory::DType);
  return true;
}

/// The `offsets` attribute (the start of the op's region), or nullopt after an error.
std::optional<llvm::ArrayRef<int64_t>> needOffsets(const TypeRuleInput &in, RuleError &error) {
  Attribute off = in.attrs ? in.attrs.lookup("offsets") : Attribute();
  if (!off || !off.isIntArray()) {
    fail(error, "needs an 'offsets' attribute");
    return std::nullopt;
  }
  return off.getIntArray();
}

/// Whether `dim` is a dimension of `x`; else an error naming the valid ones.
bool checkDim(int64_t dim, Type x, RuleError &error) {
  if (dim >= 0 && dim < int64_t(x.rank())) return true;
  return fail(error, "dim " + std::to_string(dim) + " is out of range for " + x.str() +
                         " (valid: 0.." + std::to_string(int64_t(x.rank()) - 1) + ")");
}

Type needDeclared(const TypeRuleInput &in, RuleError &error, const char *what) {
  if (!in.declared) fail(error, std::string("needs its result type written (") + what + ")");
  return in.declared;
}

// ---------------------------------------------------------------- type rules

Type unaryRule(const TypeRuleInput &in, RuleError &error) {
  return in.operands[0];
}

Type floatUnaryRule(const TypeRuleInput &in, RuleError &error) {
  if (!isFloat(in.operands[0].dtype())) {
    fail(error, "needs a floating-point operand, got " + in.operands[0].str() +
                    "; cast it to f32 first", DiagCategory::DType);
    return {};
  }
  return in.operands[0];
}

Type binaryRule(const TypeRuleInput &in, RuleError &error) {
  if (!sameKind(in.operands, error) || !sameDType(in.operands, error)) return {};
  auto shape = broadcastShapes(in.operands[0].shape(), in.operands[1].shape());
  if (!shape) {
    fail(error, "cannot broadcast " + in.operands[0].str() + " with " + in.operands[1].str() +
                    ": dimensions must be equal or 1 (aligned from the right)");
    return {};
  }
  return in.ctx.withShape(in.operands[0], *shape);
}

Type divRule(const TypeRuleInput &in, RuleError &error) {
  Attribute p = in.attrs ? in.attrs.lookup("precision") : Attribute();
  if (p && p.isString() && !parseDivPrecision(p.getString())) {
    fail(error, "precision \"" + p.getString().str() +
                    "\" is not a precision mode; use \"high_precision\" or \"intrinsic\"");
    return {};
  }
  return binaryRule(in, error);
}

Type castRule(const TypeRuleInput &in, RuleError &error) {
  Type d = needDeclared(in, error, "the target element type");
  if (!d) return {};
  Attribute mode = in.attrs ? in.attrs.lookup("mode") : Attribute();
  if (mode && mode.isString() && !parseCastMode(mode.getString())) {
    fail(error, "has an unknown rounding mode " + mode.str() + "; valid modes: " +
                    std::string(castModeNamesText()));
    return {};
  }
  if (d.shape() != in.operands[0].shape()) {
    fail(error, "changes the shape (" + in.operands[0].str() + " to " + d.str() +
                    "); a cast only changes the element type");
    return {};
  }
  return in.ctx.withDType(in.operands[0], d.dtype());
}

/// Comparisons and logical and/or: operands as for arithmetic, a bool result.
Type compareRule(const TypeRuleInput &in, RuleError &error) {
  Type t = binaryRule(in, error);
  return t ? in.ctx.withDType(t, DType::Bool) : t;
}

Type logicalNotRule(const TypeRuleInput &in, RuleError &error) {
  return in.ctx.withDType(in.operands[0], DType::Bool);
}

/// where(cond, a, b): cond bool, a and b of one type; the three shapes broadcast.
Type whereRule(const TypeRuleInput &in, RuleError &error) {
  if (!sameKind(in.operands, error)) return {};
  Type c = in.operands[0], a = in.operands[1], b = in.operands[2];
  if (c.dtype() != DType::Bool) {
    fail(error, "needs a bool condition (operand 0), got " + c.str() +
                    "; compare it (ne with 0) or cast it to bool", DiagCategory::DType);
    return {};
  }
  if (!sameDType(in.operands.drop_front(), error)) return {};
  auto ab = broadcastShapes(a.shape(), b.shape());
  auto shape = ab ? broadcastShapes(c.shape(), *ab) : std::nullopt;
  if (!shape) {
    fail(error, "cannot broadcast " + typeList(in.operands) +
                    ": dimensions must be equal or 1 (aligned from the right)");
    return {};
  }
  return in.ctx.withShape(a, *shape);
}

Type reductionRule(const TypeRuleInput &in, RuleError &error) {
  Type x = in.operands[0];
  Attribute axesAttr = in.attrs ? in.attrs.lookup("axes") : Attribute();
  if (!axesAttr || !axesAttr.isIntArray()) {
    fail(error, "needs an 'axes' attribute listing the dimensions to reduce");
    return {};
  }
  llvm::ArrayRef<int64_t> axes = axesAttr.getIntArray();
  if (axes.empty()) {
    fail(error, "has an empty 'axes' list; name at least one dimension");
    return {};
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= static_cast<int64_t>(x.rank())) {
      fail(error, "axis " + std::to_string(axes[i]) + " is out of range for " + x.str() +
                      " (valid: 0.." + std::to_string(int64_t(x.rank()) - 1) + ")");
      return {};
    }
    if (i && axes[i] <= axes[i - 1]) {
      fail(error, "'axes' must be strictly ascending, got " + axesAttr.str());
      return {};
    }
  }
  Attribute keep = in.attrs.lookup("keepdim");
  bool keepdim = keep && keep.isBool() && keep.getBool();
  llvm::SmallVector<int64_t, 4> shape;
  for (unsigned d = 0; d < x.rank(); ++d) {
    bool reduced = std::binary_search(axes.begin(), axes.end(), int64_t(d));
    if (!reduced)
      shape.push_back(x.dim(d));
    else if (keepdim)
      shape.push_back(1);
  }
  return in.ctx.withShape(x, shape);
}

Type meanRule(const TypeRuleInput &in, RuleError &error) {
  if (!isFloat(in.operands[0].dtype())) {
    fail(error, "needs a floating-point operand, got " + in.operands[0].str() +
                    "; cast it to f32 first", DiagCategory::DType);
    return {};
  }
  if (Attribute c = in.attrs ? in.attrs.lookup("count") : Attribute(); c && c.isInt() && c.getInt() < 1) {
    fail(error, "'count' must be a positive number of elements, got " + c.str());
    return {};
  }
  return reductionRule(in, error);
}

/// Why `bias` cannot be the bias of a matmul of `in` operands with `n` columns ("" if
/// it can): PyPTO's bias_tensor, shape [1, N] (leading 1s allowed at the tile level),
/// element type f16 or f32 for f16 operands, f32 for bf16 (A2/A3) and f32, i32 for i8.
std::string biasError(Type bias, DType in, int64_t n, bool tile) {
  auto shapeOk = [&] {
    if (bias.rank() < 2 || bias.dim(bias.rank() - 1) != n || bias.dim(bias.rank() - 2) != 1)
      return false;
    if (!tile && bias.rank() != 2) return false;
    for (unsigned d = 0; d + 2 < bias.rank(); ++d)
      if (bias.dim(d) != 1) return false;
    return true;
  };
  if (!shapeOk())
    return "bias " + bias.str() + " must have shape [1, " + std::to_string(n) +
           "] (one row of N, PyPTO's bias_tensor)";
  DType t = bias.dtype();
  bool ok = in == DType::I8 ? t == DType::I32 : (t == DType::F32 || (in == DType::F16 && t == in));
  if (!ok)
    return "bias " + bias.str() + " has element type " + std::string(dtypeName(t)) + "; with " +
           std::string(dtypeName(in)) + " operands it must be " +
           (in == DType::I8 ? "i32" : in == DType::F16 ? "f16 or f32" : "f32");
  return "";
}

Type matmulRule(const TypeRuleInput &in, RuleError &error) {
  Type a = in.operands[0], b = in.operands[1];
  if (!sameKind(in.operands.take_front(2), error)) return {};
  if (a.rank() < 2 || b.rank() < 2) {
    fail(error, "needs operands of rank >= 2, got " + a.str() + " and " + b.str());
    return {};
  }
  if (a.dtype() != b.dtype()) {
    fail(error, "operand element types differ (" + a.str() + ", " + b.str() +
                    "); cast one so they match", DiagCategory::DType);
    return {};
  }
  auto flag = [&](llvm::StringRef n) {
    Attribute v = in.attrs ? in.attrs.lookup(n) : Attribute();
    return v && v.isBool() && v.getBool();
  };
  bool ta = flag("transpose_a"), tb = flag("transpose_b");
  int64_t m = ta ? a.dim(a.rank() - 1) : a.dim(a.rank() - 2);
  int64_t ka = ta ? a.dim(a.rank() - 2) : a.dim(a.rank() - 1);
  int64_t kb = tb ? b.dim(b.rank() - 1) : b.dim(b.rank() - 2);
  int64_t n = tb ? b.dim(b.rank() - 2) : b.dim(b.rank() - 1);
  if (ka != kb) {
    fail(error, "contraction sizes differ: the left operand " + a.str() + " has K=" +
                    std::to_string(ka) + (ta ? " (its second-to-last dimension, transposed)"
                                              : " (its last dimension)") +
                    " but the right operand " + b.str() + " has K=" + std::to_string(kb) +
                    (tb ? " (its last dimension, transposed)"
                        : " (its second-to-last dimension)") +
                    "; fix the shapes or set transpose_a/transpose_b (Python: a_trans/b_trans)");
    return {};
  }
  auto batch = broadcastShapes(a.shape().drop_back(2), b.shape().drop_back(2));
  if (!batch) {
    fail(error, "batch dimensions of " + a.str() + " and " + b.str() + " do not broadcast");
    return {};
  }
  llvm::SmallVector<int64_t, 4> shape(batch->begin(), batch->end());
  shape.push_back(m);
  shape.push_back(n);
  DType in8 = a.dtype();
  Attribute scaleAttr = in.attrs ? in.attrs.lookup("scale") : Attribute();
  // At the tile level the epilogue belongs to the copy_out from l0c, not the mmad.
  bool scaled = bool(scaleAttr) && !a.isTile();
  DType out = in.declared ? in.declared.dtype() : (in8 == DType::I8 ? DType::I32 : in8);
  if (scaled && in8 != DType::I8) {
    fail(error, "has a 'scale' but " + std::string(dtypeName(in8)) +
                    " operands; the FIXPIPE scale dequantises i8 x i8 products (PyPTO's "
                    "quantisation to an i8 result is not modelled): drop the scale or use i8 "
                    "operands", DiagCategory::DType);
    return {};
  }
  if (in8 == DType::I8 && !scaled && out != DType::I32 && !a.isTile()) {
    fail(error, "with i8 operands produces i32, not " + std::string(dtypeName(out)) +
                    "; for an f16 or bf16 result give a dequantisation 'scale' (Python: "
                    "extend_params={'scale': s})", DiagCategory::DType);
    return {};
  }
  if (in8 == DType::I8 && scaled && out != DType::F16 && out != DType::BF16) {
    fail(error, "with i8 operands and a 'scale' produces f16 or bf16 (the FIXPIPE "
                    "dequantises the i32 accumulator), not " + std::string(dtypeName(out)),
         DiagCategory::DType);
    return {};
  }
  if (isFloat(in8) && !isFloat(out)) {
    fail(error, "with floating-point operands must produce a floating-point result, not " +
                    std::string(dtypeName(out)), DiagCategory::DType);
    return {};
  }
  if (!isFloat(in8) && in8 != DType::I8) {
    fail(error, "does not take " + std::string(dtypeName(in8)) +
                    " operands (the cube unit multiplies f16, bf16, f32 or i8)",
         DiagCategory::DType);
    return {};
  }
  Attribute acc = in.attrs ? in.attrs.lookup("acc_dtype") : Attribute();
  if (acc && acc.isDType()) {
    DType want = isFloat(in8) ? DType::F32 : DType::I32;
    if (acc.getDType() != want) {
      fail(error, "accumulates in " + std::string(dtypeName(want)) + ", not " +
                      std::string(dtypeName(acc.getDType())), DiagCategory::DType);
      return {};
    }
  }
  if (a.isTile()) {
    // Tile level: L1 operands, an fp32 (i32) accumulator tile in L0C, optionally
    // accumulating onto a previous partial product (the K loop).
    if (a.space() != MemSpace::L1) {
      fail(error, "takes its tile operands from l1, got " + a.str() + " and " + b.str());
      return {};
    }
    Type result = in.ctx.tileType(isFloat(in8) ? DType::F32 : DType::I32, shape, MemSpace::L0C);
    // The third operand: the previous partial product (l0c), or, on the first K step,
    // the bias row (l1) that initialises the accumulator.
    if (in.operands.size() == 3 && in.operands[2] != result) {
      Type c = in.operands[2];
      bool bias = c.isTile() && c.space() == MemSpace::L1;
      std::string why = bias ? biasError(c, in8, shape.back(), true) : "";
      if (!bias || !why.empty()) {
        fail(error, bias ? why
                         : "accumulator " + c.str() + " must have the result type " +
                               result.str() + " (or be an l1 bias row)");
        return {};
      }
    }
    return result;
  }
  if (in.operands.size() == 3) {
    // Tensor level: the bias (PyPTO extend_params 'bias_tensor'), added to every row.
    Type bias = in.operands[2];
    if (!bias.isTensor()) {
      fail(error, "bias " + bias.str() + " must be a tensor like the operands");
      return {};
    }
    if (std::string why = biasError(bias, in8, shape.back(), false); !why.empty()) {
      fail(error, why, why.find("element type") != std::string::npos ? DiagCategory::DType
                                                                      : DiagCategory::Shape);
      return {};
    }
  }
  return in.ctx.withDType(in.ctx.withShape(a, shape), out);
}

Type reshapeRule(const TypeRuleInput &in, RuleError &error) {
  Type d = needDeclared(in, error, "the new shape");
  if (!d) return {};
  if (d.numElements() != in.operands[0].numElements()) {
    fail(error, "cannot reshape " + in.operands[0].str() + " (" +
                    std::to_string(in.operands[0].numElements()) + " elements) to " + d.str() +
                    " (" + std::to_string(d.numElements()) + " elements)");
    return {};
  }
  if (d.dtype() != in.operands[0].dtype()) {
    fail(error, "changes the element type; use cast for that", DiagCategory::DType);
    return {};
  }
  return in.ctx.withShape(in.operands[0], d.shape());
}

Type transposeRule(const TypeRuleInput &in, RuleError &error) {
  Type x = in.operands[0];
  Attribute permAttr = in.attrs ? in.attrs.lookup("perm") : Attribute();
  if (!permAttr || !permAttr.isIntArray()) {
    fail(error, "needs a 'perm' attribute");
    return {};
  }
  llvm::ArrayRef<int64_t> perm = permAttr.getIntArray();
  llvm::SmallVector<bool, 8> seen(x.rank(), false);
  bool ok = perm.size() == x.rank();
  for (int64_t p : perm) {
    if (!ok || p < 0 || p >= int64_t(x.rank()) || seen[p]) {
      ok = false;
      break;
    }
    seen[p] = true;
  }
  if (!ok) {
    fail(error, "'perm' " + permAttr.str() + " is not a permutation of the " +
                    std::to_string(x.rank()) + " dimensions of " + x.str());
    return {};
  }
  llvm::SmallVector<int64_t, 4> shape;
  for (int64_t p : perm) shape.push_back(x.dim(p));
  return in.ctx.withShape(x, shape);
}

bool checkRegion(llvm::ArrayRef<int64_t> offsets, llvm::ArrayRef<int64_t> region,
                 Type whole, const char *what, RuleError &error) {
  if (offsets.size() != whole.rank())
    return fail(error, "'offsets' has " + std::to_string(offsets.size()) +
                           (offsets.size() == 1 ? " entry" : " entries") + " but " +
                           whole.str() + " has rank " +
                           std::to_string(whole.rank()));
  if (region.size() != whole.rank())
    return fail(error, std::string(what) + " has rank " + std::to_string(region.size()) +
                           " but " + whole.str() + " has rank " + std::to_string(whole.rank()));
  // Offsets come from users and may be near INT64_MAX: compare without adding (sizes
  // are positive, so whole.dim(d) - offsets[d] cannot overflow once offsets[d] >= 0).
  for (size_t d = 0; d < offsets.size(); ++d)
    if (offsets[d] < 0 || region[d] > whole.dim(d) - offsets[d]) {
      // The end of the region as text; the sum of two int64s >= 0 fits in uint64.
      std::string end = offsets[d] < 0
                            ? std::to_string(offsets[d] + region[d])
                            : std::to_string(uint64_t(offsets[d]) + uint64_t(region[d]));
      return fail(error, "region [" + std::to_string(offsets[d]) + ", " + end +
                             ") of dimension " + std::to_string(d) + " is outside " + whole.str());
    }
  return true;
}

Type viewRule(const TypeRuleInput &in, RuleError &error) {
  Type d = needDeclared(in, error, "the slice shape");
  if (!d) return {};
  std::optional<llvm::ArrayRef<int64_t>> off = needOffsets(in, error);
  if (!off) return {};
  if (d.dtype() != in.operands[0].dtype()) {
    fail(error, "changes the element type; use cast for that", DiagCategory::DType);
    return {};
  }
  if (!checkRegion(*off, d.shape(), in.operands[0], "the slice", error)) return {};
  return in.ctx.withShape(in.operands[0], d.shape());
}

Type assembleRule(const TypeRuleInput &in, RuleError &error) {
  Type dst = in.operands[0], src = in.operands[1];
  if (!sameKind(in.operands, error) || !sameDType(in.operands, error)) return {};
  std::optional<llvm::ArrayRef<int64_t>> off = needOffsets(in, error);
  if (!off) return {};
  if (!checkRegion(*off, src.shape(), dst, "the source", error)) return {};
  return dst;
}

Type concatRule(const TypeRuleInput &in, RuleError &error) {
  if (!sameKind(in.operands, error) || !sameDType(in.operands, error)) return {};
  Attribute axisAttr = in.attrs ? in.attrs.lookup("axis") : Attribute();
  if (!axisAttr || !axisAttr.isInt()) {
    fail(error, "needs an integer 'axis' attribute");
    return {};
  }
  Type first = in.operands[0];
  int64_t axis = axisAttr.getInt();
  if (axis < 0 || axis >= int64_t(first.rank())) {
    fail(error, "axis " + std::to_string(axis) + " is out of range for " + first.str() +
                    " (valid: 0.." + std::to_string(int64_t(first.rank()) - 1) + ")");
    return {};
  }
  llvm::SmallVector<int64_t, 4> shape(first.shape().begin(), first.shape().end());
  for (Type t : in.operands.drop_front()) {
    if (t.rank() != first.rank()) {
      fail(error, "operands have different ranks (" + typeList(in.operands) + ")");
      return {};
    }
    for (unsigned d = 0; d < t.rank(); ++d)
      if (int64_t(d) != axis && t.dim(d) != first.dim(d)) {
        fail(error, "operands differ in dimension " + std::to_string(d) +
                        ", which is not the concat axis (" + typeList(in.operands) + ")");
        return {};
      }
    if (__builtin_add_overflow(shape[axis], t.dim(axis), &shape[axis])) {
      fail(error, "the concatenated dimension " + std::to_string(axis) +
                      " does not fit in 64 bits (" + typeList(in.operands) + ")");
      return {};
    }
  }
  int64_t bytes = elementSize(first.dtype());
  for (int64_t d : shape)
    if (__builtin_mul_overflow(bytes, d, &bytes)) {
      fail(error, "the result is too large: its size in bytes does not fit in 64 bits (" +
                      typeList(in.operands) + ")");
      return {};
    }
  return in.ctx.withShape(first, shape);
}

Type fullRule(const TypeRuleInput &in, RuleError &error) {
  Type d = needDeclared(in, error, "the shape and element type");
  if (!d) return {};
  Attribute v = in.attrs ? in.attrs.lookup("value") : Attribute();
  if (!v || !(v.isInt() || v.isFloat())) {
    fail(error, "needs a numeric 'value' attribute");
    return {};
  }
  if (isInteger(d.dtype()) && !v.isInt()) {
    fail(error, "value " + v.str() + " is a floating-point literal but the element type is " +
                    std::string(dtypeName(d.dtype())) + "; write an integer", DiagCategory::DType);
    return {};
  }
  if (isInteger(d.dtype()) && roundToDType(v.getNumber(), d.dtype()) != v.getNumber()) {
    fail(error, "value " + v.str() + " is out of range for " +
                    std::string(dtypeName(d.dtype())));
    return {};
  }
  if (isFloat(d.dtype()) && std::isfinite(v.getNumber()) &&
      !std::isfinite(roundToDType(v.getNumber(), d.dtype()))) {
    fail(error, "value " + v.str() + " overflows " + std::string(dtypeName(d.dtype())) +
                    "; write inf if that is meant");
    return {};
  }
  return d;
}

Type returnRule(const TypeRuleInput &in, RuleError &error) { return {}; }

Type gmTensorRule(const TypeRuleInput &in, RuleError &error) {
  Type d = needDeclared(in, error, "the workspace tensor's type");
  if (d && !d.isTensor()) {
    fail(error, "declares " + d.str() + "; a GM workspace is a tensor type");
    return {};
  }
  return d;
}

// copy_in %src, %deps... {offsets}: the region of `src` at `offsets` with the
// result tile's shape; %deps are copy_out tokens that must complete first.
Type copyInRule(const TypeRuleInput &in, RuleError &error) {
  Type d = needDeclared(in, error, "the tile type");
  if (!d) return {};
  Type src = in.operands[0];
  if (!src.isTensor()) {
    fail(error, "reads from a GM tensor, got " + src.str());
    return {};
  }
  if (!d.isTile() || (d.space() != MemSpace::UB && d.space() != MemSpace::L1)) {
    fail(error, "produces a tile in ub or l1, not " + d.str());
    return {};
  }
  if (d.dtype() != src.dtype()) {
    fail(error, "cannot change the element type (" + src.str() + " to " + d.str() + ")", DiagCategory::DType);
    return {};
  }
  for (Type dep : in.operands.drop_front())
    if (!dep.isTile() || dep.space() != MemSpace::GM) {
      fail(error, "waits only on copy_out tokens (gm tiles), got " + dep.str());
      return {};
    }
  std::optional<llvm::ArrayRef<int64_t>> off = needOffsets(in, error);
  if (!off) return {};
  if (!checkRegion(*off, d.shape(), src, "the tile", error)) return {};
  return d;
}

// copy_out %tile, %dst, %deps... {offsets}: writes the tile into `dst` at `offsets`;
// the result is a token (a gm tile) that readers of that region wait on. %deps are
// the earlier accesses of the region it overwrites: copy_out tokens (gm tiles) and
// copy_in reads (ub or l1 tiles).
Type copyOutRule(const TypeRuleInput &in, RuleError &error) {
  Type t = in.operands[0], dst = in.operands[1];
  for (Type dep : in.operands.drop_front(2))
    if (!dep.isTile() || (dep.space() != MemSpace::GM && dep.space() != MemSpace::UB &&
                          dep.space() != MemSpace::L1)) {
      fail(error, "waits only on copy_out tokens (gm tiles) and copy_in reads (ub or l1 "
                  "tiles), got " + dep.str());
      return {};
    }
  if (!t.isTile() || (t.space() != MemSpace::UB && t.space() != MemSpace::L0C)) {
    fail(error, "writes a tile from ub or l0c, got " + t.str());
    return {};
  }
  if (!dst.isTensor()) {
    fail(error, "writes into a GM tensor, got " + dst.str());
    return {};
  }
  // The cube's FIXPIPE converts the accumulator on the way out; UB copies do not.
  bool epilogue = in.attrs && (in.attrs.lookup("scale") || in.attrs.lookup("relu"));
  if (epilogue && t.space() != MemSpace::L0C) {
    fail(error, "has a FIXPIPE 'scale' or 'relu' but writes from " + t.str() +
                    "; only a copy_out from l0c applies them");
    return {};
  }
  bool dequant = in.attrs && in.attrs.lookup("scale") && t.dtype() == DType::I32 &&
                 (dst.dtype() == DType::F16 || dst.dtype() == DType::BF16);
  if (t.dtype() != dst.dtype() && !dequant &&
      !(t.space() == MemSpace::L0C && isFloat(dst.dtype()) && t.dtype() == DType::F32)) {
    fail(error, "cannot convert " + t.str() + " to the element type of " + dst.str() +
                    (t.space() == MemSpace::UB ? "; cast the tile first" : ""), DiagCategory::DType);
    return {};
  }
  std::optional<llvm::ArrayRef<int64_t>> off = needOffsets(in, error);
  if (!off) return {};
  if (!checkRegion(*off, t.shape(), dst, "the tile", error)) return {};
  return in.ctx.tileType(dst.dtype(), t.shape(), MemSpace::GM);
}

Type subgraphRule(const TypeRuleInput &in, RuleError &error) {
  Attribute core = in.attrs ? in.attrs.lookup("core") : Attribute();
  if (core && core.isString() && core.getString() != "aic" && core.getString() != "aiv")
    fail(error, "core must be \"aic\" or \"aiv\", got " + core.str());
  return {};
}

/// topk / topk_indices: `x` with dimension `dim` cut to `k` (element type `dtype`).
Type selectRule(const TypeRuleInput &in, RuleError &error, DType dtype) {
  Type x = in.operands[0];
  Attribute kAttr = in.attrs ? in.attrs.lookup("k") : Attribute();
  Attribute dimAttr = in.attrs ? in.attrs.lookup("dim") : Attribute();
  if (!kAttr || !kAttr.isInt() || !dimAttr || !dimAttr.isInt()) {
    fail(error, "needs integer attributes 'k' and 'dim'");
    return {};
  }
  if (x.rank() == 0) {
    fail(error, "needs an operand of rank >= 1, got " + x.str());
    return {};
  }
  int64_t dim = dimAttr.getInt(), k = kAttr.getInt();
  if (!checkDim(dim, x, error)) return {};
  if (k < 1 || k > x.dim(dim)) {
    fail(error, "k = " + std::to_string(k) + " is not in 1.." + std::to_string(x.dim(dim)) +
                    " (the size of dimension " + std::to_string(dim) + " of " + x.str() +
                    "); choose k within it");
    return {};
  }
  llvm::SmallVector<int64_t, 4> shape(x.shape().begin(), x.shape().end());
  shape[dim] = k;
  return in.ctx.withDType(in.ctx.withShape(x, shape), dtype);
}

Type topkRule(const TypeRuleInput &in, RuleError &error) {
  if (in.operands[0].isTile()) {
    fail(error, "works on tensors, not on the tile " + in.operands[0].str() +
                    "; at the tile level it is topk_indices followed by gather");
    return {};
  }
  return selectRule(in, error, in.operands[0].dtype());
}

void topkIndexResult(const TypeRuleInput &in, Type values, llvm::SmallVectorImpl<Type> &rest) {
  rest.push_back(in.ctx.withDType(values, kIndexDType));
}

Type topkIndicesRule(const TypeRuleInput &in, RuleError &error) {
  return selectRule(in, error, kIndexDType);
}

// gather %x, %index {dim}: out[..., i, ...] = x[..., index[..., i, ...], ...] (i at `dim`).
Type gatherRule(const TypeRuleInput &in, RuleError &error) {
  if (!sameKind(in.operands, error)) return {};
  Type x = in.operands[0], index = in.operands[1];
  if (!isIndexDType(index.dtype())) {
    fail(error, "takes integer indices, got " + index.str() + "; cast the index tensor to i32",
         DiagCategory::DType);
    return {};
  }
  Attribute dimAttr = in.attrs ? in.attrs.lookup("dim") : Attribute();
  if (!dimAttr || !dimAttr.isInt()) {
    fail(error, "needs an integer 'dim' attribute");
    return {};
  }
  if (index.rank() != x.rank() || x.rank() == 0) {
    fail(error, "needs an index of the input's rank (>= 1), got " + x.str() + " and index " +
                    index.str());
    return {};
  }
  int64_t dim = dimAttr.getInt();
  if (!checkDim(dim, x, error)) return {};
  for (unsigned d = 0; d < x.rank(); ++d)
    if (int64_t(d) != dim && index.dim(d) > x.dim(d)) {
      fail(error, "index " + index.str() + " is larger than the input " + x.str() +
                      " in dimension " + std::to_string(d) +
                      ", which is not 'dim' (there it may be at most the input's size)");
      return {};
    }
  return in.ctx.withShape(x, index.shape());
}

// scatter %x, %index, %src {dim, reduce}: x with x[..., index[p], ...] = src[p] (the
// index at `dim`) for every position p of index, in row-major order.
Type scatterRule(const TypeRuleInput &in, RuleError &error) {
  if (!sameKind(in.operands, error)) return {};
  Type x = in.operands[0], index = in.operands[1], src = in.operands[2];
  if (!isIndexDType(index.dtype())) {
    fail(error, "takes integer indices, got " + index.str() + "; cast the index tensor to i32",
         DiagCategory::DType);
    return {};
  }
  if (src.dtype() != x.dtype()) {
    fail(error, "writes a source of another element type (" + src.str() + " into " + x.str() +
                    "); cast the source to the input's", DiagCategory::DType);
    return {};
  }
  Attribute dimAttr = in.attrs ? in.attrs.lookup("dim") : Attribute();
  if (!dimAttr || !dimAttr.isInt()) {
    fail(error, "needs an integer 'dim' attribute");
    return {};
  }
  if (index.rank() != x.rank() || src.rank() != x.rank() || x.rank() == 0) {
    fail(error, "needs an index and a source of the input's rank (>= 1), got " + x.str() +
                    ", index " + index.str() + " and source " + src.str());
    return {};
  }
  int64_t dim = dimAttr.getInt();
  if (!checkDim(dim, x, error)) return {};
  for (unsigned d = 0; d < x.rank(); ++d) {
    if (int64_t(d) != dim && index.dim(d) > x.dim(d)) {
      fail(error, "index " + index.str() + " is larger than the input " + x.str() +
                      " in dimension " + std::to_string(d) +
                      ", which is not 'dim' (there it may be at most the input's size)");
      return {};
    }
    if (index.dim(d) > src.dim(d)) {
      fail(error, "index " + index.str() + " is larger than the source " + src.str() +
                      " in dimension " + std::to_string(d) +
                      "; every index position needs a source element");
      return {};
    }
  }
  Attribute reduce = in.attrs.lookup("reduce");
  if (reduce && reduce.isString() && reduce.getString() != "add" &&
      reduce.getString() != "multiply") {
    fail(error, "reduce must be \"add\" or \"multiply\" (or left out to replace), got " +
                    reduce.str());
    return {};
  }
  return x;
}

// expand_clone %x : the declared shape; each dimension of x is the declared one or 1.
Type expandCloneRule(const TypeRuleInput &in, RuleError &error) {
  Type d = needDeclared(in, error, "the shape to expand to");
  if (!d) return {};
  Type x = in.operands[0];
  if (d.dtype() != x.dtype()) {
    fail(error, "changes the element type; use cast for that", DiagCategory::DType);
    return {};
  }
  if (d.rank() != x.rank()) {
    fail(error, "expands " + x.str() + " to " + d.str() +
                    ", of another rank; the shape must have the input's rank (reshape first)");
    return {};
  }
  for (unsigned i = 0; i < x.rank(); ++i)
    if (x.dim(i) != d.dim(i) && x.dim(i) != 1) {
      fail(error, "cannot expand dimension " + std::to_string(i) + " of " + x.str() + " to " +
                      std::to_string(d.dim(i)) + ": only size-1 dimensions expand");
      return {};
    }
  return in.ctx.withShape(x, d.shape());
}

/// A loop's results are the operands its `outs` write, updated; the module-level
/// check (ir::verifyLoops, ir/LoopView.h) compares them, as it needs the body.
Type loopRule(const TypeRuleInput &in, RuleError &) { return in.declared; }

// ---------------------------------------------------------------- scalar semantics

double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
/// The integral value nearest to x, ties to even (not std::round's ties away from zero).
double roundHalfEven(double x) {
  double r = std::round(x);
  if (std::fabs(x - std::trunc(x)) == 0.5) r = 2.0 * std::round(x / 2.0);
  return r;
}

struct Entry {
  OpCode code;
  CoreKind core;
  TileKind tile;
  unsigned minOperands, maxOperands, numResults;
  llvm::ArrayRef<AttrSpec> attrs;
  TypeRule rule;
  double (*unary)(double) = nullptr;
  double (*binary)(double, double) = nullptr;
  bool commutative = false;
  std::optional<double> rightIdentity = std::nullopt;
};

constexpr unsigned V = OpDef::kVariadic;

// The one declaration of every op's semantics (order irrelevant; checked complete).
std::vector<Entry> entries() {
  using C = CoreKind;
  using T = TileKind;
  return {
      {OpCode::Matmul, C::AIC, T::Cube, 2, 3, 1, kMatmulAttrs, matmulRule},
      {OpCode::Add, C::AIV, T::Vec, 2, 2, 1, {}, binaryRule, nullptr,
       [](double a, double b) { return a + b; }, true, -0.0},
      {OpCode::Sub, C::AIV, T::Vec, 2, 2, 1, {}, binaryRule, nullptr,
       [](double a, double b) { return a - b; }, false, 0.0},
      {OpCode::Mul, C::AIV, T::Vec, 2, 2, 1, {}, binaryRule, nullptr,
       [](double a, double b) { return a * b; }, true, 1.0},
      {OpCode::Div, C::AIV, T::Vec, 2, 2, 1, kDivAttrs, divRule, nullptr,
       [](double a, double b) { return a / b; }, false, 1.0},
      {OpCode::Max, C::AIV, T::Vec, 2, 2, 1, {}, binaryRule, nullptr,
       [](double a, double b) { return std::fmax(a, b); }, true},
      {OpCode::Min, C::AIV, T::Vec, 2, 2, 1, {}, binaryRule, nullptr,
       [](double a, double b) { return std::fmin(a, b); }, true},
      {OpCode::Pow, C::AIV, T::Vec, 2, 2, 1, {}, binaryRule, nullptr,
       [](double a, double b) { return std::pow(a, b); }, false, 1.0},
      {OpCode::Neg, C::AIV, T::Vec, 1, 1, 1, {}, unaryRule, [](double x) { return -x; }},
      {OpCode::Exp, C::AIV, T::Vec, 1, 1, 1, {}, floatUnaryRule, [](double x) { return std::exp(x); }},
      {OpCode::Log, C::AIV, T::Vec, 1, 1, 1, {}, floatUnaryRule, [](double x) { return std::log(x); }},
      {OpCode::Sqrt, C::AIV, T::Vec, 1, 1, 1, {}, floatUnaryRule, [](double x) { return std::sqrt(x); }},
      {OpCode::Rsqrt, C::AIV, T::Vec, 1, 1, 1, {}, floatUnaryRule,
       [](double x) { return 1.0 / std::sqrt(x); }},
      {OpCode::Abs, C::AIV, T::Vec, 1, 1, 1, {}, unaryRule, [](double x) { return std::fabs(x); }},
      {OpCode::Relu, C::AIV, T::Vec, 1, 1, 1, {}, unaryRule,
       [](double x) { return x > 0 ? x : 0.0; }},
      {OpCode::Sigmoid, C::AIV, T::Vec, 1, 1, 1, {}, floatUnaryRule, sigmoid},
      {OpCode::Tanh, C::AIV, T::Vec, 1, 1, 1, {}, floatUnaryRule, [](double x) { return std::tanh(x); }},
      {OpCode::Gelu, C::AIV, T::Vec, 1, 1, 1, {}, floatUnaryRule, gelu},
      {OpCode::Reciprocal, C::AIV, T::Vec, 1, 1, 1, {}, floatUnaryRule,
       [](double x) { return 1.0 / x; }},
      // Rounding to an integral value keeps the element type; on integers it is the
      // identity. round is half to even (numpy's and torch's rule).
      {OpCode::Ceil, C::AIV, T::Vec, 1, 1, 1, {}, unaryRule, [](double x) { return std::ceil(x); }},
      {OpCode::Floor, C::AIV, T::Vec, 1, 1, 1, {}, unaryRule,
       [](double x) { return std::floor(x); }},
      {OpCode::Trunc, C::AIV, T::Vec, 1, 1, 1, {}, unaryRule,
       [](double x) { return std::trunc(x); }},
      {OpCode::Round, C::AIV, T::Vec, 1, 1, 1, {}, unaryRule, roundHalfEven},
      {OpCode::Exp2, C::AIV, T::Vec, 1, 1, 1, {}, floatUnaryRule,
       [](double x) { return std::exp2(x); }},
      {OpCode::Expm1, C::AIV, T::Vec, 1, 1, 1, {}, floatUnaryRule,
       [](double x) { return std::expm1(x); }},
      {OpCode::Erfc, C::AIV, T::Vec, 1, 1, 1, {}, floatUnaryRule,
       [](double x) { return std::erfc(x); }},
      {OpCode::Cast, C::AIV, T::Vec, 1, 1, 1, kCastAttrs, castRule},
      {OpCode::Eq, C::AIV, T::Vec, 2, 2, 1, {}, compareRule, nullptr,
       [](double a, double b) { return double(a == b); }, true},
      {OpCode::Ne, C::AIV, T::Vec, 2, 2, 1, {}, compareRule, nullptr,
       [](double a, double b) { return double(a != b); }, true},
      {OpCode::Lt, C::AIV, T::Vec, 2, 2, 1, {}, compareRule, nullptr,
       [](double a, double b) { return double(a < b); }},
      {OpCode::Le, C::AIV, T::Vec, 2, 2, 1, {}, compareRule, nullptr,
       [](double a, double b) { return double(a <= b); }},
      {OpCode::Gt, C::AIV, T::Vec, 2, 2, 1, {}, compareRule, nullptr,
       [](double a, double b) { return double(a > b); }},
      {OpCode::Ge, C::AIV, T::Vec, 2, 2, 1, {}, compareRule, nullptr,
       [](double a, double b) { return double(a >= b); }},
      // Nonzero is true (NaN too), as numpy's logical ops read numbers.
      {OpCode::LogicalAnd, C::AIV, T::Vec, 2, 2, 1, {}, compareRule, nullptr,
       [](double a, double b) { return double(a != 0 && b != 0); }, true},
      {OpCode::LogicalOr, C::AIV, T::Vec, 2, 2, 1, {}, compareRule, nullptr,
       [](double a, double b) { return double(a != 0 || b != 0); }, true},
      {OpCode::LogicalNot, C::AIV, T::Vec, 1, 1, 1, {}, logicalNotRule,
       [](double x) { return double(x == 0); }},
      {OpCode::Where, C::AIV, T::Vec, 3, 3, 1, {}, whereRule},
      {OpCode::Sum, C::AIV, T::Vec, 1, 1, 1, kReductionAttrs, reductionRule},
      {OpCode::Amax, C::AIV, T::Vec, 1, 1, 1, kReductionAttrs, reductionRule},
      {OpCode::Amin, C::AIV, T::Vec, 1, 1, 1, kReductionAttrs, reductionRule},
      {OpCode::Mean, C::AIV, T::Vec, 1, 1, 1, kMeanAttrs, meanRule},
      {OpCode::Reshape, C::AIV, T::Vec, 1, 1, 1, {}, reshapeRule},
      {OpCode::Transpose, C::AIV, T::Vec, 1, 1, 1, kTransposeAttrs, transposeRule},
      {OpCode::View, C::AIV, T::Vec, 1, 1, 1, kOffsetAttrs, viewRule},
      {OpCode::Assemble, C::AIV, T::Vec, 2, 2, 1, kOffsetAttrs, assembleRule},
      {OpCode::Concat, C::AIV, T::Vec, 1, V, 1, kConcatAttrs, concatRule},
      {OpCode::Full, C::AIV, T::Vec, 0, 0, 1, kFullAttrs, fullRule},
      {OpCode::Return, C::None, T::None, 0, V, 0, {}, returnRule},
      {OpCode::GmTensor, C::None, T::None, 0, 0, 1, {}, gmTensorRule},
      {OpCode::CopyIn, C::None, T::None, 1, V, 1, kOffsetAttrs, copyInRule},
      {OpCode::CopyOut, C::None, T::None, 2, V, 1, kCopyOutAttrs, copyOutRule},
      {OpCode::Subgraph, C::None, T::None, 0, 0, 0, kSubgraphAttrs, subgraphRule},
      {OpCode::Loop, C::None, T::None, 1, V, V, kLoopAttrs, loopRule},
      {OpCode::TopK, C::AIV, T::Vec, 1, 1, 2, kTopKAttrs, topkRule},
      {OpCode::TopKIndices, C::AIV, T::Vec, 1, 1, 1, kTopKAttrs, topkIndicesRule},
      {OpCode::Gather, C::AIV, T::Vec, 2, 2, 1, kGatherAttrs, gatherRule},
      {OpCode::ExpandClone, C::AIV, T::Vec, 1, 1, 1, {}, expandCloneRule},
      {OpCode::Scatter, C::AIV, T::Vec, 3, 3, 1, kScatterAttrs, scatterRule},
  };
}

struct NameAndClass {
  const char *name;
  OpClass cls;
};
constexpr NameAndClass kNames[] = {
#define PTOC_OP(Code, Name, Class) {Name, OpClass::Class},
#include "ptoc/ir/Ops.def"
};

} // namespace

const AttrSpec *OpDef::findAttr(llvm::StringRef n) const {
  for (const AttrSpec &s : attrs)
    if (s.name == n) return &s;
  return nullptr;
}

llvm::ArrayRef<AttrSpec> commonAttrSpecs() { return kCommonAttrs; }

OpRegistry::OpRegistry() {
  defs_.resize(kNumOpCodes);
  std::vector<bool> seen(kNumOpCodes, false);
  for (const Entry &e : entries()) {
    unsigned i = static_cast<unsigned>(e.code);
    seen[i] = true;
    OpDef &d = defs_[i];
    d.code = e.code;
    d.name = kNames[i].name;
    d.cls = kNames[i].cls;
    d.core = e.core;
    d.tile = e.tile;
    d.minOperands = e.minOperands;
    d.maxOperands = e.maxOperands;
    d.numResults = e.numResults;
    d.attrs = e.attrs;
    d.inferType = e.rule;
    // The one multi-result op with fixed arity: its indices follow its values.
    if (e.code == OpCode::TopK) d.extraResults = topkIndexResult;
    d.unaryFn = e.unary;
    d.binaryFn = e.binary;
    d.commutative = e.commutative;
    d.boolResult = e.rule == compareRule || e.rule == logicalNotRule;
    d.rightIdentity = e.rightIdentity;
    d.hasSideEffects = e.code == OpCode::CopyOut || e.code == OpCode::GmTensor ||
                       e.code == OpCode::Subgraph || e.code == OpCode::Loop;
  }
  for (unsigned i = 0; i < kNumOpCodes; ++i)
    if (!seen[i])
      llvm::report_fatal_error(llvm::Twine("op '") + kNames[i].name +
                               "' is listed in Ops.def but has no registry entry");
}

const OpRegistry &OpRegistry::get() {
  // Immutable after construction; C++ guarantees thread-safe initialisation.
  static const OpRegistry registry;
  return registry;
}

const OpDef *OpRegistry::lookup(llvm::StringRef name) const {
  for (const OpDef &d : defs_)
    if (d.name == name) return &d;
  return nullptr;
}

llvm::ArrayRef<int64_t> iterationShape(const OpDef &def, llvm::ArrayRef<Type> operands,
                                       llvm::ArrayRef<Type> results) {
  switch (def.cls) {
  case OpClass::Reduction:
  case OpClass::TopK:
  case OpClass::TopKIndices:
  case OpClass::Transpose: return operands.empty() ? llvm::ArrayRef<int64_t>() : operands[0].shape();
  case OpClass::Assemble:
    return operands.size() < 2 ? llvm::ArrayRef<int64_t>() : operands[1].shape();
  default: return results.empty() ? llvm::ArrayRef<int64_t>() : results[0].shape();
  }
}

std::optional<llvm::SmallVector<int64_t, 4>> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                                            llvm::ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  llvm::SmallVector<int64_t, 4> out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[rank - 1 - i] = da == 1 ? db : da;
  }
  return out;
}

} // namespace ptoc::ir
