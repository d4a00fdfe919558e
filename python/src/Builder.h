// Builder: the Python tracer's handle on one function being built (an ir::Context,
// Module and GraphBuilder), with values named by small integers.
#pragma once

#include <memory>
#include <optional>
#include <tuple>
#include <string>
#include <vector>

#include "ptoc/ir/Context.h"
#include "ptoc/ir/GraphBuilder.h"
#include "ptoc/ir/Module.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::python {

/// One tensor-level function under construction. Not thread-safe: one Python
/// thread traces it (the GIL is held while building).
class Builder {
public:
  struct Arg {
    std::vector<int64_t> shape;
    std::string dtype;
    std::string name;
  };
  Builder(const target::DeviceSpec &device, const std::string &funcName,
          const std::vector<Arg> &args);
  /// A loop body: another function of `parent`'s module, starting with the parent's
  /// settings (tile shapes, scope, location), as PyPTO's settings apply in program
  /// order into loops.
  static std::unique_ptr<Builder> body(Builder &parent, const std::string &funcName,
                                       const std::vector<Arg> &args);
  /// Takes over `other`'s settings (after a loop body: settings made inside it apply
  /// to the ops after the loop).
  void adoptSettings(const Builder &other) { builder_.restore(other.builder_.settings()); }

  /// A loop window: operand position, offsets (expression texts, one per dimension),
  /// sizes, the valid extents (expression texts; empty: the whole window), and where
  /// the user made it (`file:line:col`, "" when unknown; ir::LoopWindow::loc).
  using Window = std::tuple<int, std::vector<std::string>, std::vector<int64_t>,
                            std::vector<std::string>, std::string>;
  /// Records `loop` running function `body` over `operands` (value ids); returns the
  /// ids of its results (its written operands, updated, in order of first write).
  /// `parallel`: the loop op's `parallel` (independent iterations).
  std::vector<int> loop(const std::vector<int> &operands, const std::string &body,
                        const std::string &name, const std::string &index,
                        const std::string &start, const std::string &stop,
                        const std::string &step, const std::vector<Window> &ins,
                        const std::vector<Window> &outs, bool parallel = false);

  /// Ops: each returns the id of its result; errors throw StatusError(Build).
  int binary(const std::string &op, int a, int b);
  int unary(const std::string &op, int x);
  /// `mode` "" is the default rounding for the types (ir::defaultCastMode).
  int cast(int x, const std::string &dtype, const std::string &mode, bool saturate);
  int where(int cond, int a, int b);
  int reduce(const std::string &op, int x, const std::vector<int64_t> &axes, bool keepdim);
  int div(int a, int b, const std::string &precision);
  int matmul(int a, int b, bool transA, bool transB, const std::string &outDType,
             std::optional<double> scale = std::nullopt, bool relu = false, int bias = -1);
  int reshape(int x, const std::vector<int64_t> &shape);
  int transpose(int x, int64_t dim0, int64_t dim1);
  int view(int x, const std::vector<int64_t> &offsets, const std::vector<int64_t> &shape);
  int assemble(int dst, int src, const std::vector<int64_t> &offsets);
  int concat(const std::vector<int> &xs, int64_t axis);
  int full(const std::vector<int64_t> &shape, double value, const std::string &dtype);
  /// topk: the ids of its values and indices.
  std::vector<int> topk(int x, int64_t k, int64_t dim, bool largest);
  int gather(int x, int64_t dim, int index);
  int expandClone(int x, const std::vector<int64_t> &shape);
  int scatter(int x, int64_t dim, int index, int src, const std::string &reduce);

  std::vector<int64_t> shape(int v) const;
  std::string dtype(int v) const;

  // Settings for the ops created next.
  void setLocation(const std::string &file, int line);
  void setVecTile(const std::vector<int64_t> &dims);
  void clearVecTile() { builder_.clearVecTile(); }
  void setCubeTile(const std::vector<int64_t> &m, const std::vector<int64_t> &k,
                   const std::vector<int64_t> &n);
  void clearCubeTile() { builder_.clearCubeTile(); }
  void setScope(int64_t scope) { builder_.setScope(scope); }

  /// Ends the function returning `results`; the builder is then compiled once.
  void finish(const std::vector<int> &results);
  /// A loop body's stand-in for a window it reads, until the body ends: the windows a
  /// body reads are found while it is traced, so its arguments are known only then.
  int placeholder(const std::vector<int64_t> &shape, const std::string &dtype,
                  const std::string &name);
  /// Ends a loop body returning `results`, its arguments the `placeholders` in order.
  void finishBody(const std::vector<int> &results, const std::vector<int> &placeholders);
  /// Drops a loop body being traced (a runtime-branch path that writes nothing): its
  /// function leaves the module.
  void discardBody();
  /// The function's text; with `locations`, every op's `loc("file":line:col)` (the
  /// user's Python line), which the tuner keeps in its messages and candidates.
  std::string text(bool locations = false) const;

  /// The module, for compiling (after finish()). Compiling transforms it, so a
  /// builder compiles once.
  ir::Module &takeModuleForCompile();
  const std::string &funcName() const { return funcName_; }

private:
  ir::Value *value(int id) const;
  int add(absl::StatusOr<ir::Value *> v);

  Builder(std::shared_ptr<ir::Context> ctx, std::shared_ptr<ir::Module> module,
          const target::DeviceSpec &device, const std::string &funcName);
  void begin(const std::vector<Arg> &args);

  std::shared_ptr<ir::Context> ctx_;
  std::shared_ptr<ir::Module> module_; // shared by a function and its loop bodies
  target::DeviceSpec device_; // a copy: GraphBuilder checks tiles against it
  ir::GraphBuilder builder_;
  std::string funcName_;
  std::vector<ir::Value *> values_;
  bool finished_ = false, compiled_ = false;
  bool isBody_ = false;
};

} // namespace ptoc::python
