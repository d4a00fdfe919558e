// Builder: GraphBuilder calls by op name, values by id.
#include "Builder.h"

#include "Conversions.h"
#include "Errors.h"
#include "absl/strings/str_cat.h"
#include "ptoc/ir/Func.h"
#include "ptoc/ir/Clone.h"
#include "ptoc/ir/LoopView.h"
#include "ptoc/ir/Module.h"
#include "ptoc/ir/OpDef.h"
#include "ptoc/ir/Printer.h"

namespace ptoc::python {
namespace {

absl::Status internal(const std::string &msg) {
  return absl::InternalError(absl::StrCat("ptoc bug in the Python bindings: ", msg));
}

llvm::SmallVector<int64_t, 4> small(const std::vector<int64_t> &v) {
  return llvm::SmallVector<int64_t, 4>(v.begin(), v.end());
}

} // namespace

Builder::Builder(const target::DeviceSpec &device, const std::string &funcName,
                 const std::vector<Arg> &args)
    : Builder(std::make_shared<ir::Context>(), nullptr, device, funcName) {
  begin(args);
}

Builder::Builder(std::shared_ptr<ir::Context> ctx, std::shared_ptr<ir::Module> module,
                 const target::DeviceSpec &device, const std::string &funcName)
    : ctx_(std::move(ctx)),
      module_(module ? std::move(module) : std::make_shared<ir::Module>(*ctx_)),
      device_(device), builder_(*module_, &device_), funcName_(funcName) {}

std::unique_ptr<Builder> Builder::body(Builder &parent, const std::string &funcName,
                                       const std::vector<Arg> &args) {
  std::unique_ptr<Builder> b(new Builder(parent.ctx_, parent.module_, parent.device_, funcName));
  b->isBody_ = true;
  b->begin(args);
  b->builder_.restore(parent.builder_.settings());
  b->builder_.setLocation(parent.builder_.location());
  return b;
}

std::vector<int> Builder::loop(const std::vector<int> &operands, const std::string &body,
                               const std::string &name, const std::string &index,
                               const std::string &start, const std::string &stop,
                               const std::string &step, const std::vector<Window> &ins,
                               const std::vector<Window> &outs, bool parallel) {
  if (finished_)
    throw StatusError(ErrorStage::Build,
                      absl::FailedPreconditionError("the traced function has already ended"));
  auto sym = [&](const std::string &text, const char *what) {
    absl::StatusOr<ir::SymExpr> e = ir::SymExpr::parse(text);
    if (!e.ok())
      throw StatusError(ErrorStage::Build, internal(absl::StrCat("loop ", what, ": ",
                                                                 e.status().message())));
    return *std::move(e);
  };
  auto windows = [&](const std::vector<Window> &ws) {
    std::vector<ir::LoopWindow> out;
    for (const Window &w : ws) {
      ir::LoopWindow lw;
      lw.operand = std::get<0>(w);
      for (const std::string &o : std::get<1>(w)) lw.offsets.push_back(sym(o, "window offset"));
      lw.sizes.assign(std::get<2>(w).begin(), std::get<2>(w).end());
      for (const std::string &v : std::get<3>(w)) lw.valid.push_back(sym(v, "window valid extent"));
      lw.loc = std::get<4>(w);
      out.push_back(std::move(lw));
    }
    return out;
  };
  ir::LoopView loop;
  loop.body = body;
  loop.name = name;
  loop.index = index;
  loop.start = sym(start, "start");
  loop.stop = sym(stop, "stop");
  loop.step = sym(step, "step");
  loop.ins = windows(ins);
  loop.outs = windows(outs);
  loop.parallel = parallel;
  std::vector<ir::Value *> values;
  for (int o : operands) values.push_back(value(o));
  // One result per written operand, of its type (the loop updates it in place).
  llvm::SmallVector<int, 4> written = ir::writtenOperands(loop.outs);
  std::vector<ir::Type> types;
  for (int w : written) {
    if (w < 0 || size_t(w) >= values.size())
      throw StatusError(ErrorStage::Build, internal("loop window of an unknown operand"));
    types.push_back(values[w]->type());
  }
  ir::Operation *op = builder_.func()->createOp(ctx_->opDef(ir::OpCode::Loop), values, types,
                                                loop.toAttr(*ctx_), builder_.location());
  std::vector<int> ids;
  for (unsigned r = 0; r < op->numResults(); ++r) {
    op->result(r)->setNameHint(values[written[r]]->nameHint());
    values_.push_back(op->result(r));
    ids.push_back(int(values_.size()) - 1);
  }
  return ids;
}

void Builder::begin(const std::vector<Arg> &args) {
  std::vector<ir::Type> types;
  std::vector<std::string> names;
  for (const Arg &a : args) {
    types.push_back(ctx_->tensorType(dtypeFromName(a.dtype), a.shape));
    names.push_back(a.name);
  }
  ir::Func *f = valueOrThrow(ErrorStage::Build, builder_.beginFunc(funcName_, types, names));
  for (unsigned i = 0; i < f->numArgs(); ++i) values_.push_back(f->arg(i));
}

ir::Value *Builder::value(int id) const {
  if (id < 0 || size_t(id) >= values_.size())
    throw StatusError(ErrorStage::Build, internal(absl::StrCat("unknown value id ", id)));
  return values_[id];
}

int Builder::add(absl::StatusOr<ir::Value *> v) {
  if (finished_)
    throw StatusError(ErrorStage::Build,
                      absl::FailedPreconditionError("the traced function has already ended"));
  values_.push_back(valueOrThrow(ErrorStage::Build, std::move(v)));
  return int(values_.size()) - 1;
}

static ir::OpCode opCode(const std::string &name) {
  const ir::OpDef *def = ir::OpRegistry::get().lookup(name);
  if (!def) throw StatusError(ErrorStage::Build, internal("unknown op '" + name + "'"));
  return def->code;
}

int Builder::binary(const std::string &op, int a, int b) {
  return add(builder_.binary(opCode(op), value(a), value(b)));
}
int Builder::div(int a, int b, const std::string &precision) {
  std::optional<ir::DivPrecision> p = ir::parseDivPrecision(precision);
  if (!p)
    throw std::invalid_argument("div precision must be \"high_precision\" or \"intrinsic\", got \"" +
                                precision + "\"");
  return add(builder_.div(value(a), value(b), *p));
}
int Builder::unary(const std::string &op, int x) {
  return add(builder_.unary(opCode(op), value(x)));
}
int Builder::cast(int x, const std::string &dtype, const std::string &mode, bool saturate) {
  std::optional<ir::CastMode> m;
  if (!mode.empty()) {
    m = ir::parseCastMode(mode);
    if (!m)
      throw StatusError(ErrorStage::Build,
                        absl::InvalidArgumentError(absl::StrCat(
                            "cast: unknown rounding mode '", mode, "'; valid modes: ",
                            std::string(ir::castModeNamesText()))));
  }
  return add(builder_.cast(value(x), dtypeFromName(dtype), m, saturate));
}
int Builder::where(int cond, int a, int b) {
  return add(builder_.where(value(cond), value(a), value(b)));
}
int Builder::reduce(const std::string &op, int x, const std::vector<int64_t> &axes,
                    bool keepdim) {
  return add(builder_.reduce(opCode(op), value(x), small(axes), keepdim));
}
int Builder::matmul(int a, int b, bool transA, bool transB, const std::string &outDType,
                    std::optional<double> scale, bool relu, int bias) {
  ir::MatmulOptions opts;
  opts.transposeA = transA;
  opts.transposeB = transB;
  if (!outDType.empty()) opts.outDType = dtypeFromName(outDType);
  opts.scale = scale;
  opts.relu = relu;
  if (bias >= 0) opts.bias = value(bias);
  return add(builder_.matmul(value(a), value(b), opts));
}
int Builder::reshape(int x, const std::vector<int64_t> &shape) {
  return add(builder_.reshape(value(x), small(shape)));
}
int Builder::transpose(int x, int64_t dim0, int64_t dim1) {
  return add(builder_.transpose(value(x), dim0, dim1));
}
int Builder::view(int x, const std::vector<int64_t> &offsets, const std::vector<int64_t> &shape) {
  return add(builder_.view(value(x), small(offsets), small(shape)));
}
int Builder::assemble(int dst, int src, const std::vector<int64_t> &offsets) {
  return add(builder_.assemble(value(dst), value(src), small(offsets)));
}
int Builder::concat(const std::vector<int> &xs, int64_t axis) {
  llvm::SmallVector<ir::Value *, 4> values;
  for (int x : xs) values.push_back(value(x));
  return add(builder_.concat(values, axis));
}
int Builder::full(const std::vector<int64_t> &shape, double value, const std::string &dtype) {
  return add(builder_.full(small(shape), value, dtypeFromName(dtype)));
}

std::vector<int> Builder::topk(int x, int64_t k, int64_t dim, bool largest) {
  auto both = valueOrThrow(ErrorStage::Build, builder_.topk(value(x), k, dim, largest));
  int values = add(both.first);
  return {values, add(both.second)};
}
int Builder::gather(int x, int64_t dim, int index) {
  return add(builder_.gather(value(x), dim, value(index)));
}
int Builder::scatter(int x, int64_t dim, int index, int src, const std::string &reduce) {
  return add(builder_.scatter(value(x), dim, value(index), value(src), reduce));
}
int Builder::expandClone(int x, const std::vector<int64_t> &shape) {
  return add(builder_.expandClone(value(x), small(shape)));
}

std::vector<int64_t> Builder::shape(int v) const {
  llvm::ArrayRef<int64_t> s = value(v)->type().shape();
  return std::vector<int64_t>(s.begin(), s.end());
}
std::string Builder::dtype(int v) const { return dtypeToName(value(v)->type().dtype()); }

void Builder::setLocation(const std::string &file, int line) {
  builder_.setLocation(ctx_->loc(file, uint32_t(std::max(line, 0)), 1));
}

void Builder::setVecTile(const std::vector<int64_t> &dims) { builder_.setVecTile(small(dims)); }

void Builder::setCubeTile(const std::vector<int64_t> &m, const std::vector<int64_t> &k,
                          const std::vector<int64_t> &n) {
  auto pair = [](const char *what, const std::vector<int64_t> &v) {
    if (v.size() != 2)
      throw StatusError(ErrorStage::Build,
                        absl::InvalidArgumentError(absl::StrCat(
                            "set_cube_tile_shapes: ", what, " must be [L0, L1] (two sizes), got ",
                            v.size(), " values")));
    return std::array<int64_t, 2>{v[0], v[1]};
  };
  ir::CubeTile tile;
  tile.m = pair("m", m);
  tile.k = pair("k", k);
  tile.n = pair("n", n);
  builder_.setCubeTile(tile);
}

void Builder::finish(const std::vector<int> &results) {
  if (finished_)
    throw StatusError(ErrorStage::Build,
                      absl::FailedPreconditionError("the traced function has already ended"));
  std::vector<ir::Value *> values;
  for (int r : results) values.push_back(value(r));
  throwIfError(ErrorStage::Build, builder_.endFunc(values));
  finished_ = true;
}

int Builder::placeholder(const std::vector<int64_t> &shape, const std::string &dtype,
                         const std::string &name) {
  ir::Type t = ctx_->tensorType(dtypeFromName(dtype), shape);
  if (t.hasDynamicDims()) {
    // A tensor with dynamic axes passed whole into a nested loop's body: a stand-in
    // for the body's argument (finishBody makes it one), not verified as an op.
    if (finished_)
      throw StatusError(ErrorStage::Build,
                        absl::FailedPreconditionError("the traced function has already ended"));
    ir::Operation *op = builder_.func()->createOp(ctx_->opDef(ir::OpCode::GmTensor), {}, {t},
                                                  ir::Attribute(), builder_.location());
    values_.push_back(op->result());
  } else {
    add(builder_.create(ir::OpCode::GmTensor, {}, {}, t));
  }
  int id = int(values_.size()) - 1;
  values_[id]->setNameHint(ctx_->id(name));
  return id;
}

void Builder::finishBody(const std::vector<int> &results, const std::vector<int> &placeholders) {
  ir::Func &traced = *builder_.func(); // endFunc (in finish) forgets it
  finish(results);
  std::vector<ir::Type> argTypes;
  llvm::DenseMap<ir::Value *, ir::Value *> mapped;
  for (int p : placeholders) argTypes.push_back(value(p)->type());
  ir::Func &f = module_->addFunc(funcName_, argTypes, traced.resultTypes(), traced.loc());
  for (size_t i = 0; i < placeholders.size(); ++i) {
    ir::Value *p = value(placeholders[i]);
    f.arg(unsigned(i))->setNameHint(p->nameHint());
    mapped[p] = f.arg(unsigned(i));
  }
  std::vector<ir::Operation *> ops;
  for (ir::Operation &op : traced.ops())
    if (!mapped.count(op.numResults() ? op.result() : nullptr)) ops.push_back(&op);
  ir::cloneOpsInto(ops, f, mapped); // the return included
  module_->eraseFunc(traced);
  values_.clear(); // they pointed into the traced function
}

void Builder::discardBody() {
  if (!isBody_ || finished_)
    throw StatusError(ErrorStage::Build, internal("discarding a function that is not a loop "
                                                  "body being traced"));
  ir::Func *traced = builder_.func();
  finished_ = true;
  values_.clear();
  if (traced) module_->eraseFunc(*traced);
}

std::string Builder::text(bool locations) const {
  ir::PrintOptions options;
  options.printLocations = locations;
  return ir::toString(*module_, options);
}

ir::Module &Builder::takeModuleForCompile() {
  if (isBody_)
    throw StatusError(ErrorStage::Build, internal("compiling a loop body on its own"));
  if (!finished_)
    throw StatusError(ErrorStage::Build, internal("compiling a function that has not ended"));
  if (compiled_)
    throw StatusError(ErrorStage::Build, internal("a traced function compiles only once"));
  compiled_ = true;
  return *module_;
}

} // namespace ptoc::python
