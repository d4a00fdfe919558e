// The Pass interface: a named transformation over a Module that reports whether it
// changed the IR, with statistics and access to the device and debug output.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include "ptoc/ir/Module.h"
#include "ptoc/passes/DerivedTile.h"

namespace ptoc::target {
struct DeviceSpec;
}

namespace ptoc::passes {

/// What a pass run did. A pass that fails has emitted diagnostics saying why.
class [[nodiscard]] PassResult {
public:
  static PassResult changed(bool didChange = true) { return PassResult(didChange ? kChanged : kUnchanged); }
  static PassResult unchanged() { return PassResult(kUnchanged); }
  static PassResult failure() { return PassResult(kFailed); }
  bool failed() const { return kind_ == kFailed; }
  bool didChange() const { return kind_ == kChanged; }

private:
  enum Kind { kUnchanged, kChanged, kFailed };
  explicit PassResult(Kind k) : kind_(k) {}
  Kind kind_;
};

/// How much a compile may create, so that a tile shape far too small for its tensor
/// stops with an error instead of exhausting the host (docs/reliability.md).
struct CompileBudget {
  /// Host memory per tile op of a compile that keeps its IR text and is then
  /// simulated, with a margin: measured 843 MB peak address space (795 MB resident)
  /// for 786,432 tile ops, 1,097 bytes each (`ptoc run --no-numerics` on
  /// test/resource/Inputs/big-exp.pto, an 8192x16384 `exp` with 8x64 tiles; the peak
  /// is the compile's, the simulation stays below it); a matmul and exp with small
  /// tiles, 1,088 (435 MB for 409,600). A compile alone (ptoc-opt --pipeline=default
  /// --stage=codegen) takes 903. docs/reliability.md, "Host memory".
  static constexpr int64_t kBytesPerTileOp = 1200;
  /// The default: 2^23 tile ops, about 9.4 GiB at kBytesPerTileOp.
  static constexpr int64_t kDefaultMaxTileOps = int64_t(1) << 23;
  /// The bounds of maxTileOps every face checks (Python's host option, `ptoc run` and
  /// `ptoc-opt --max-tile-ops`): at least one tile op, and at most 2^62, far past any
  /// host's memory while leaving headroom below INT64_MAX for the counts added to it.
  static constexpr int64_t kMinMaxTileOps = 1;
  static constexpr int64_t kMaxMaxTileOps = int64_t(1) << 62;
  /// Tile ops one function may have after expand-tiles (host option max_tile_ops;
  /// ptoc-opt / ptoc run --max-tile-ops). Beyond it, and beyond what the host's free
  /// memory holds at kBytesPerTileOp (support::memoryHeadroom, for the whole module),
  /// a compile stops with an error naming the op.
  int64_t maxTileOps = kDefaultMaxTileOps;
};

/// What a running pass may consult besides the IR.
struct PassContext {
  const target::DeviceSpec &device;
  /// Where a pass writes its decision log when debugging is enabled for it
  /// (`--debug-only=<pass>`); null when disabled. Use `debugStream(pass)`.
  llvm::raw_ostream *debugOut = nullptr;
  /// Pass arguments whose debug output is enabled; "all" enables every pass.
  std::vector<std::string> debugPasses;
  /// What a compile may create.
  CompileBudget budget = {};
  /// Where a pass records the tile shapes it derived for ops without one
  /// (default-tiles); null when nobody keeps them.
  std::vector<DerivedTile> *derivedTiles = nullptr;

  /// The debug stream for pass `argument`, or null when its debugging is off.
  llvm::raw_ostream *debugStream(llvm::StringRef argument) const;
};

class Pass;

/// A counter a pass bumps (e.g. ops folded); listed by `--pass-statistics`.
class PassStatistic {
public:
  PassStatistic(Pass *owner, const char *name, const char *description);
  PassStatistic &operator+=(uint64_t n) {
    value_ += n;
    return *this;
  }
  PassStatistic &operator++() {
    ++value_;
    return *this;
  }
  uint64_t value() const { return value_; }
  const char *name() const { return name_; }
  const char *description() const { return description_; }

private:
  const char *name_;
  const char *description_;
  uint64_t value_ = 0;
};

/// A transformation over a Module. Implementations live in an anonymous namespace
/// in their own .cpp; their header exports a factory only.
class Pass {
public:
  virtual ~Pass() = default;
  /// The registry name (`canonicalize`), used in pipelines and instrumentation.
  virtual llvm::StringRef argument() const = 0;
  /// Runs on `m`. Returns whether the IR changed, or failure after emitting
  /// diagnostics. A pass must not claim "unchanged" when it changed the IR
  /// (the pass manager can check the claim).
  virtual PassResult run(ir::Module &m, PassContext &ctx) = 0;

  const std::vector<PassStatistic *> &statistics() const { return statistics_; }

private:
  friend class PassStatistic;
  std::vector<PassStatistic *> statistics_;
};

} // namespace ptoc::passes
