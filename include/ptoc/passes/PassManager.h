// The pass manager: runs a pipeline with instrumentation implemented once (IR
// printing, verification after each pass, timing, statistics, disabling passes).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "llvm/Support/raw_ostream.h"

#include "ptoc/ir/LogicalResult.h"
#include "ptoc/ir/Module.h"
#include "ptoc/ir/Printer.h"
#include "ptoc/passes/Pass.h"
#include "ptoc/passes/Pipeline.h"

namespace ptoc::target {
struct DeviceSpec;
}

namespace ptoc::passes {

struct PassManagerOptions {
  /// What a compile may create (passed to every pass).
  CompileBudget budget;
  /// Run the verifier after every pass that changed the IR; a failure reads
  /// "after pass 'X': ...".
  bool verifyEach = true;
  /// Check each pass's "unchanged" claim by fingerprinting the IR around it.
  bool checkChangeClaims = false;
  std::vector<std::string> printIRBefore; ///< pass arguments
  std::vector<std::string> printIRAfter;  ///< pass arguments
  bool printIRBeforeAll = false;
  bool printIRAfterAll = false;
  /// Print after a pass only when it changed the IR.
  bool printIRAfterChange = false;
  /// Print the IR when a pass fails.
  bool printIRAfterFailure = false;
  /// Collect per-pass wall time (see printTiming).
  bool timing = false;
  /// Passes to skip (by argument), for bisection.
  std::vector<std::string> disabledPasses;
  /// Pass arguments whose debug logs are enabled ("all" for every pass).
  std::vector<std::string> debugPasses;
  /// Where IR dumps and debug logs go (stderr when null).
  llvm::raw_ostream *dumpStream = nullptr;
  /// When set, the IR after every pass that ran (a failed one too) is also written
  /// as `<dir>/<NN>_<pass>.pto`, NN = its position in the pipeline from 01; this
  /// does not depend on the print flags above.
  std::string dumpDirectory;
  ir::PrintOptions printOptions;
  /// Called after every pass that ran and succeeded (verified, when verifyEach),
  /// with its argument and the module; e.g. to keep the IR of a stage.
  std::function<void(llvm::StringRef pass, const ir::Module &m)> afterPass;
};

/// One statistic of one pass after a run.
struct PassStatisticValue {
  std::string pass;
  std::string name;
  uint64_t value = 0;
};

/// Per-pass wall time, in pipeline order.
struct PassTiming {
  std::string pass;
  double seconds = 0;
  bool changed = false;
  bool skipped = false;
};

/// Runs passes in order over a Module.
class PassManager {
public:
  PassManager(const target::DeviceSpec &device, PassManagerOptions options = {});
  ~PassManager();

  void addPass(std::unique_ptr<Pass> pass);
  /// Appends the passes of a parsed pipeline.
  void addPipeline(const std::vector<PipelineElement> &pipeline);
  /// Parses `text` against `registry` and appends it.
  absl::Status addPipeline(llvm::StringRef text, const PassRegistry &registry);
  size_t size() const { return passes_.size(); }

  /// Runs every pass. Stops at the first failure (whose diagnostics were emitted
  /// through the module's Context).
  LogicalResult run(ir::Module &m);

  const std::vector<PassTiming> &timings() const { return timings_; }
  /// The --timing table: one row per pass (wall time, share), plus the total.
  void printTiming(llvm::raw_ostream &os) const;
  /// The --pass-statistics table: each pass's statistics.
  void printStatistics(llvm::raw_ostream &os) const;
  /// Every pass's statistics, in pipeline order (a pass added twice appears twice).
  std::vector<PassStatisticValue> statistics() const;
  /// The tile shapes passes derived for ops without one (default-tiles), in the order
  /// they were recorded.
  const std::vector<DerivedTile> &derivedTiles() const { return derivedTiles_; }

private:
  const target::DeviceSpec &device_;
  PassManagerOptions options_;
  std::vector<std::unique_ptr<Pass>> passes_;
  std::vector<PassTiming> timings_;
  std::vector<DerivedTile> derivedTiles_;
};

} // namespace ptoc::passes
