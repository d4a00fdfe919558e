// GraphBuilder: typed op construction with tile-shape scopes.
#include "ptoc/ir/GraphBuilder.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "ptoc/ir/TileShape.h"
#include "ptoc/ir/Verifier.h"

namespace ptoc::ir {

/// Why `shape` of `dtype` cannot be a tensor ("" if it can): dimensions are positive
/// and the size in bytes fits in 64 bits, as the parser requires of a written type.
/// A function argument may also have dynamic dimensions (`allowDynamic`).
static std::string shapeProblem(llvm::ArrayRef<int64_t> shape, DType dtype,
                                bool allowDynamic = false) {
  for (int64_t d : shape)
    if (d <= 0 && !(allowDynamic && d == kDynamicDim))
      return "dimensions must be positive, got " + shapeStr(shape);
  int64_t bytes = elementSize(dtype);
  for (int64_t d : shape)
    if (d != kDynamicDim && __builtin_mul_overflow(bytes, d, &bytes))
      return "a tensor of shape " + shapeStr(shape) + " is too large: its size in bytes does "
             "not fit in 64 bits";
  return "";
}

GraphBuilder::GraphBuilder(Module &m, const target::DeviceSpec *device)
    : module_(m), ctx_(m.context()), device_(device) {}

absl::Status GraphBuilder::error(llvm::StringRef opName, const std::string &msg,
                                 DiagCategory category) const {
  std::string text = "'";
  text += opName;
  text += "' op ";
  text += msg;
  Diagnostic d;
  d.category = category;
  d.loc = loc_;
  d.message = std::move(text);
  return withCategory(absl::InvalidArgumentError(d.str()), category);
}

absl::StatusOr<Func *> GraphBuilder::beginFunc(llvm::StringRef name,
                                               llvm::ArrayRef<Type> argTypes,
                                               llvm::ArrayRef<std::string> argNames) {
  if (module_.lookup(name))
    return absl::InvalidArgumentError("function '@" + name.str() +
                                      "' already exists in this module; pick another name");
  for (size_t i = 0; i < argTypes.size(); ++i) {
    if (!argTypes[i] || !argTypes[i].isTensor())
      return absl::InvalidArgumentError("argument " + std::to_string(i) + " of '@" +
                                        name.str() + "' must be a tensor type");
    if (std::string why = shapeProblem(argTypes[i].shape(), argTypes[i].dtype(), true);
        !why.empty())
      return absl::InvalidArgumentError("argument " + std::to_string(i) + " of '@" +
                                        name.str() + "': " + why);
  }
  if (!argNames.empty() && argNames.size() != argTypes.size())
    return absl::InvalidArgumentError("'@" + name.str() + "' has " +
                                      std::to_string(argTypes.size()) + " arguments but " +
                                      std::to_string(argNames.size()) + " names");
  func_ = &module_.addFunc(name, argTypes, {}, loc_);
  for (size_t i = 0; i < argNames.size(); ++i)
    if (!argNames[i].empty()) func_->arg(i)->setNameHint(ctx_.id(argNames[i]));
  return func_;
}

absl::Status GraphBuilder::endFunc(llvm::ArrayRef<Value *> results) {
  if (!func_) return absl::FailedPreconditionError("endFunc called without beginFunc");
  llvm::SmallVector<Type, 4> types;
  for (Value *v : results) {
    if (!v) return error("return", "got a null value");
    types.push_back(v->type());
  }
  func_->setResultTypes(types);
  func_->createOp(ctx_.opDef(OpCode::Return), results, {}, ctx_.emptyDict(), loc_);
  func_ = nullptr;
  return absl::OkStatus();
}

absl::StatusOr<Value *> GraphBuilder::create(OpCode code, llvm::ArrayRef<Value *> operands,
                                             llvm::ArrayRef<NamedAttr> attrs,
                                             Type resultType) {
  absl::StatusOr<Operation *> op = createOp(code, operands, attrs, resultType);
  if (!op.ok()) return op.status();
  return (*op)->result(0);
}

absl::StatusOr<Operation *> GraphBuilder::createOp(OpCode code, llvm::ArrayRef<Value *> operands,
                                                   llvm::ArrayRef<NamedAttr> attrs,
                                                   Type resultType) {
  const OpDef &def = ctx_.opDef(code);
  if (!func_) return absl::FailedPreconditionError("create op outside beginFunc/endFunc");
  if (code == OpCode::Return) return error(def.name, "is added by endFunc");
  for (size_t i = 0; i < operands.size(); ++i)
    if (!operands[i]) return error(def.name, "operand " + std::to_string(i) + " is null");
  if (operands.size() < def.minOperands || operands.size() > def.maxOperands)
    return error(def.name, "got " + std::to_string(operands.size()) + " operands");

  // Scope settings first; explicit attributes override them.
  llvm::SmallVector<NamedAttr, 6> all;
  auto has = [&](llvm::StringRef n) {
    return std::any_of(attrs.begin(), attrs.end(),
                       [&](const NamedAttr &a) { return a.name.str() == n; });
  };
  if (def.tile == TileKind::Cube && cubeTile_ && !has("cube_tile"))
    all.push_back({ctx_.id("cube_tile"), cubeTile_->toAttr(ctx_)});
  if (scope_ != -1 && !has("sg_scope"))
    all.push_back({ctx_.id("sg_scope"), ctx_.intAttr(scope_)});
  all.append(attrs.begin(), attrs.end());
  Attribute dict = ctx_.dictAttr(all, /*sortByName=*/true);

  llvm::SmallVector<Type, 4> operandTypes;
  for (Value *v : operands) operandTypes.push_back(v->type());
  RuleError err;
  Type type = def.inferType(TypeRuleInput{ctx_, operandTypes, dict, resultType}, err);
  if (!err.empty()) return error(def.name, err.message, err.category);

  if (def.tile == TileKind::Vec && vecTile_ && !has("vec_tile")) {
    // Reshapes and views are GM aliases that need a tile only when returned (or
    // written out); they take the scope's tile whenever it adapts to their rank
    // (ir::adaptVecTile: `x[i]` drops a dim, a reshape may add some), else none.
    bool alias = code == OpCode::Reshape || code == OpCode::View;
    if (!alias || adaptVecTile(*vecTile_, iterationShape(def, operandTypes, {type}))) {
      all.push_back({ctx_.id("vec_tile"), ctx_.intArrayAttr(*vecTile_)});
      dict = ctx_.dictAttr(all, /*sortByName=*/true);
    }
  }

  llvm::SmallVector<Type, 2> types{type};
  if (def.extraResults)
    def.extraResults(TypeRuleInput{ctx_, operandTypes, dict, resultType}, type, types);
  Operation *op = func_->createOp(def, operands, types, dict, loc_);
  DiagnosticCollector diags(ctx_.diag());
  if (failed(verifyOp(*op, VerifyOptions{device_}))) {
    func_->erase(op);
    return diags.toStatus();
  }
  return op;
}

absl::StatusOr<Value *> GraphBuilder::matmul(Value *a, Value *b, const MatmulOptions &opts) {
  llvm::SmallVector<NamedAttr, 2> attrs;
  if (opts.transposeA) attrs.push_back({ctx_.id("transpose_a"), ctx_.boolAttr(true)});
  if (opts.transposeB) attrs.push_back({ctx_.id("transpose_b"), ctx_.boolAttr(true)});
  Type declared;
  if (opts.outDType && a && b) {
    // Infer the shape with the operands' dtype, then ask for the requested one.
    RuleError err;
    Type t = ctx_.opDef(OpCode::Matmul)
                 .inferType(TypeRuleInput{ctx_, {a->type(), b->type()},
                                          ctx_.dictAttr(attrs, true), Type()},
                            err);
    if (!err.empty()) return error("matmul", err.message, err.category);
    declared = ctx_.withDType(t, *opts.outDType);
  }
  if (opts.scale) attrs.push_back({ctx_.id("scale"), ctx_.floatAttr(*opts.scale)});
  if (opts.relu) attrs.push_back({ctx_.id("relu"), ctx_.boolAttr(true)});
  if (opts.bias) return create(OpCode::Matmul, {a, b, opts.bias}, attrs, declared);
  return create(OpCode::Matmul, {a, b}, attrs, declared);
}

absl::StatusOr<Value *> GraphBuilder::binary(OpCode code, Value *a, Value *b) {
  if (ctx_.opDef(code).cls != OpClass::ElementwiseBinary)
    return error(ctx_.opDef(code).name, "is not a binary elementwise op");
  return create(code, {a, b});
}

absl::StatusOr<Value *> GraphBuilder::div(Value *a, Value *b, DivPrecision precision) {
  if (precision == DivPrecision::HighPrecision) return create(OpCode::Div, {a, b});
  return create(OpCode::Div, {a, b}, {{ctx_.id("precision"), ctx_.stringAttr("intrinsic")}});
}

absl::StatusOr<Value *> GraphBuilder::unary(OpCode code, Value *x) {
  if (ctx_.opDef(code).cls != OpClass::ElementwiseUnary)
    return error(ctx_.opDef(code).name, "is not a unary elementwise op");
  return create(code, {x});
}

absl::StatusOr<Value *> GraphBuilder::cast(Value *x, DType to, std::optional<CastMode> mode,
                                           bool saturate) {
  if (!x) return error("cast", "operand 0 is null");
  // Defaults are left out, so a plain cast prints (and hashes) as it always did.
  llvm::SmallVector<NamedAttr, 2> attrs;
  if (mode) attrs.push_back({ctx_.id("mode"), ctx_.stringAttr(llvm::StringRef(castModeName(*mode)))});
  if (!saturate) attrs.push_back({ctx_.id("saturate"), ctx_.boolAttr(false)});
  return create(OpCode::Cast, {x}, attrs, ctx_.withDType(x->type(), to));
}

absl::StatusOr<Value *> GraphBuilder::where(Value *cond, Value *a, Value *b) {
  return create(OpCode::Where, {cond, a, b});
}

// Normalises possibly-negative dims against `rank`; sorted and unique when `sort`.
static absl::StatusOr<llvm::SmallVector<int64_t, 4>>
normaliseDims(llvm::ArrayRef<int64_t> dims, unsigned rank, bool sort) {
  llvm::SmallVector<int64_t, 4> out;
  for (int64_t d : dims) {
    int64_t n = d < 0 ? d + rank : d;
    if (n < 0 || n >= int64_t(rank))
      return absl::InvalidArgumentError("dimension " + std::to_string(d) +
                                        " is out of range for rank " + std::to_string(rank) +
                                        " (valid: " + std::to_string(-int64_t(rank)) + ".." +
                                        std::to_string(int64_t(rank) - 1) + ")");
    out.push_back(n);
  }
  if (sort) {
    std::sort(out.begin(), out.end());
    if (std::adjacent_find(out.begin(), out.end()) != out.end())
      return absl::InvalidArgumentError("a dimension is listed twice");
  }
  return out;
}

absl::StatusOr<Value *> GraphBuilder::reduce(OpCode code, Value *x,
                                             llvm::ArrayRef<int64_t> axes, bool keepdim) {
  const OpDef &def = ctx_.opDef(code);
  if (def.cls != OpClass::Reduction) return error(def.name, "is not a reduction");
  if (!x) return error(def.name, "operand 0 is null");
  auto norm = normaliseDims(axes, x->type().rank(), /*sort=*/true);
  if (!norm.ok()) return error(def.name, std::string(norm.status().message()));
  llvm::SmallVector<NamedAttr, 2> attrs{{ctx_.id("axes"), ctx_.intArrayAttr(*norm)}};
  if (keepdim) attrs.push_back({ctx_.id("keepdim"), ctx_.boolAttr(true)});
  return create(code, {x}, attrs);
}

absl::StatusOr<Value *> GraphBuilder::reshape(Value *x, llvm::ArrayRef<int64_t> shape) {
  if (!x) return error("reshape", "operand 0 is null");
  if (std::string why = shapeProblem(shape, x->type().dtype()); !why.empty())
    return error("reshape", why);
  return create(OpCode::Reshape, {x}, {}, ctx_.withShape(x->type(), shape));
}

absl::StatusOr<Value *> GraphBuilder::transpose(Value *x, int64_t dim0, int64_t dim1) {
  if (!x) return error("transpose", "operand 0 is null");
  unsigned rank = x->type().rank();
  auto dims = normaliseDims({dim0, dim1}, rank, /*sort=*/false);
  if (!dims.ok()) return error("transpose", std::string(dims.status().message()));
  llvm::SmallVector<int64_t, 4> perm(rank);
  for (unsigned i = 0; i < rank; ++i) perm[i] = i;
  std::swap(perm[(*dims)[0]], perm[(*dims)[1]]);
  return permute(x, perm);
}

absl::StatusOr<Value *> GraphBuilder::permute(Value *x, llvm::ArrayRef<int64_t> perm) {
  return create(OpCode::Transpose, {x}, {{ctx_.id("perm"), ctx_.intArrayAttr(perm)}});
}

absl::StatusOr<Value *> GraphBuilder::view(Value *x, llvm::ArrayRef<int64_t> offsets,
                                           llvm::ArrayRef<int64_t> shape) {
  if (!x) return error("view", "operand 0 is null");
  for (int64_t d : shape)
    if (d <= 0) return error("view", "slice sizes must be positive, got " + shapeStr(shape));
  if (std::string why = shapeProblem(shape, x->type().dtype()); !why.empty())
    return error("view", why);
  return create(OpCode::View, {x}, {{ctx_.id("offsets"), ctx_.intArrayAttr(offsets)}},
                ctx_.withShape(x->type(), shape));
}

absl::StatusOr<Value *> GraphBuilder::assemble(Value *dst, Value *src,
                                               llvm::ArrayRef<int64_t> offsets) {
  return create(OpCode::Assemble, {dst, src},
                {{ctx_.id("offsets"), ctx_.intArrayAttr(offsets)}});
}

absl::StatusOr<Value *> GraphBuilder::concat(llvm::ArrayRef<Value *> values, int64_t axis) {
  if (values.empty() || !values[0]) return error("concat", "needs at least one tensor");
  auto norm = normaliseDims({axis}, values[0]->type().rank(), false);
  if (!norm.ok()) return error("concat", std::string(norm.status().message()));
  return create(OpCode::Concat, values, {{ctx_.id("axis"), ctx_.intAttr((*norm)[0])}});
}

absl::StatusOr<Value *> GraphBuilder::full(llvm::ArrayRef<int64_t> shape, double value,
                                           DType dtype) {
  if (std::string why = shapeProblem(shape, dtype); !why.empty()) return error("full", why);
  Attribute v;
  if (isInteger(dtype)) {
    // Checked before converting: a double outside int64 (or NaN) has no int64 value.
    if (std::isnan(value))
      return error("full", "value nan is not a number of the integer element type " +
                               std::string(dtypeName(dtype)),
                   DiagCategory::DType);
    if (std::trunc(value) == value && !(value >= -9223372036854775808.0 &&
                                        value < 9223372036854775808.0 &&
                                        roundToDType(value, dtype) == value)) {
      std::ostringstream text;
      text << value;
      return error("full", "value " + text.str() + " is out of range for the element type " +
                               std::string(dtypeName(dtype)),
                   DiagCategory::DType);
    }
    v = std::trunc(value) == value ? ctx_.intAttr(static_cast<int64_t>(value))
                                   : ctx_.floatAttr(value); // the verifier names it
  } else {
    v = ctx_.floatAttr(roundToDType(value, dtype));
  }
  return create(OpCode::Full, {}, {{ctx_.id("value"), v}}, ctx_.tensorType(dtype, shape));
}

absl::StatusOr<std::pair<Value *, Value *>> GraphBuilder::topk(Value *x, int64_t k, int64_t dim,
                                                               bool largest) {
  if (!x) return error("topk", "operand 0 is null");
  auto norm = normaliseDims({dim}, x->type().rank(), false);
  if (!norm.ok()) return error("topk", std::string(norm.status().message()));
  absl::StatusOr<Operation *> op =
      createOp(OpCode::TopK, {x},
               {{ctx_.id("k"), ctx_.intAttr(k)},
                {ctx_.id("dim"), ctx_.intAttr((*norm)[0])},
                {ctx_.id("largest"), ctx_.boolAttr(largest)}});
  if (!op.ok()) return op.status();
  return std::make_pair((*op)->result(0), (*op)->result(1));
}

absl::StatusOr<Value *> GraphBuilder::gather(Value *x, int64_t dim, Value *index) {
  if (!x) return error("gather", "operand 0 is null");
  auto norm = normaliseDims({dim}, x->type().rank(), false);
  if (!norm.ok()) return error("gather", std::string(norm.status().message()));
  return create(OpCode::Gather, {x, index}, {{ctx_.id("dim"), ctx_.intAttr((*norm)[0])}});
}

absl::StatusOr<Value *> GraphBuilder::scatter(Value *x, int64_t dim, Value *index, Value *src,
                                              llvm::StringRef reduce) {
  if (!x) return error("scatter", "operand 0 is null");
  auto norm = normaliseDims({dim}, x->type().rank(), false);
  if (!norm.ok()) return error("scatter", std::string(norm.status().message()));
  llvm::SmallVector<NamedAttr, 2> attrs{{ctx_.id("dim"), ctx_.intAttr((*norm)[0])}};
  if (!reduce.empty()) attrs.push_back({ctx_.id("reduce"), ctx_.stringAttr(reduce)});
  return create(OpCode::Scatter, {x, index, src}, attrs);
}

absl::StatusOr<Value *> GraphBuilder::expandClone(Value *x, llvm::ArrayRef<int64_t> shape) {
  if (!x) return error("expand_clone", "operand 0 is null");
  if (std::string why = shapeProblem(shape, x->type().dtype()); !why.empty())
    return error("expand_clone", why);
  return create(OpCode::ExpandClone, {x}, {}, ctx_.withShape(x->type(), shape));
}

} // namespace ptoc::ir
