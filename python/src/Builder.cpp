// Builder: GraphBuilder calls by op name, values by id.
#include "Builder.h"

#include "Conversions.h"
#include "Errors.h"
#include "absl/strings/str_cat.h"
#include "ptoc/ir/Func.h"
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
    : ctx_(std::make_unique<ir::Context>()), module_(std::make_unique<ir::Module>(*ctx_)),
      device_(device), builder_(*module_, &device_), funcName_(funcName) {
  std::vector<ir::Type> types;
  std::vector<std::string> names;
  for (const Arg &a : args) {
    types.push_back(ctx_->tensorType(dtypeFromName(a.dtype), a.shape));
    names.push_back(a.name);
  }
  ir::Func *f = valueOrThrow(ErrorStage::Build, builder_.beginFunc(funcName, types, names));
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
int Builder::unary(const std::string &op, int x) {
  return add(builder_.unary(opCode(op), value(x)));
}
int Builder::cast(int x, const std::string &dtype) {
  return add(builder_.cast(value(x), dtypeFromName(dtype)));
}
int Builder::reduce(const std::string &op, int x, const std::vector<int64_t> &axes,
                    bool keepdim) {
  return add(builder_.reduce(opCode(op), value(x), small(axes), keepdim));
}
int Builder::matmul(int a, int b, bool transA, bool transB, const std::string &outDType) {
  ir::MatmulOptions opts;
  opts.transposeA = transA;
  opts.transposeB = transB;
  if (!outDType.empty()) opts.outDType = dtypeFromName(outDType);
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

std::string Builder::text(bool locations) const {
  ir::PrintOptions options;
  options.printLocations = locations;
  return ir::toString(*module_, options);
}

ir::Module &Builder::takeModuleForCompile() {
  if (!finished_)
    throw StatusError(ErrorStage::Build, internal("compiling a function that has not ended"));
  if (compiled_)
    throw StatusError(ErrorStage::Build, internal("a traced function compiles only once"));
  compiled_ = true;
  return *module_;
}

} // namespace ptoc::python
