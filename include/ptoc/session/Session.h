// Session: the one place that knows every layer. Compiles a tensor-level function
// (pipeline -> codegen) into a Kernel, and runs a Kernel: simulates it on the device
// model, executes it for real on host buffers in the simulated order, and (with a
// debug mode) writes the swimlane and summary. Tools and the Python module are thin
// faces over it.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "ptoc/codegen/Codegen.h"
#include "ptoc/codegen/LoopProgram.h"
#include "ptoc/codegen/Program.h"
#include "ptoc/ir/DType.h"
#include "ptoc/passes/Pass.h"
#include "ptoc/runtime/ExpandLoops.h"
#include "ptoc/runtime/HostTensor.h"
#include "ptoc/runtime/PreparedProgram.h"
#include "ptoc/runtime/RunRecord.h"
#include "ptoc/runtime/Simulator.h"
#include "ptoc/runtime/TensorRef.h"
#include "ptoc/session/CompileStats.h"
#include "ptoc/passes/PassKnobs.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::ir {
class Module;
}

namespace ptoc::session {

/// The default pipeline's knobs (passes/PassKnobs.h), the compile options' `knobs`.
using passes::PassKnobs;

/// How far compile() goes (host_options compile_stage).
enum class Stage { Tensor, Tile, Partitioned, Codegen };
/// Every stage, in pipeline order.
inline constexpr Stage kAllStages[] = {Stage::Tensor, Stage::Tile, Stage::Partitioned,
                                       Stage::Codegen};
/// "tensor", "tile", "partitioned", "codegen".
llvm::StringRef stageName(Stage s);
/// Parses a stage name; the error lists the valid names.
absl::StatusOr<Stage> parseStage(llvm::StringRef name);

/// Compile options (one struct, defaults here).
struct CompileOptions {
  /// Pass pipeline text; empty = the default pipeline (passes::defaultPipelineText())
  /// configured by `knobs`. Set one or the other, not both.
  std::string pipeline;
  /// Pass knobs (Python's set_pass_options) applied to the default pipeline.
  PassKnobs knobs;
  codegen::CodegenOptions codegen;
  /// Verify the IR after every pass that changed it.
  bool verifyEach = true;
  /// What the compile may create (tile ops; host option max_tile_ops).
  passes::CompileBudget budget;
  /// Consult the tuning knowledge bank (folder `bankPath`, "" = the default:
  /// $PTOC_TUNE_BANK_PATH or ~/.cache/ptoc/bank) before compiling a one-function
  /// module with the default pipeline to the codegen stage: when the bank knows the
  /// function on this device, its best config is compiled instead (Kernel::bankConfig
  /// says which). A bank that cannot be read, or a config that no longer compiles,
  /// is a warning (Kernel::warnings); the function as written is compiled. Off by
  /// default in C++ (a compile reads no user files unless asked); Python's
  /// `@ptoc.jit` turns it on (host option use_tune_bank).
  bool consultBank = false;
  std::string bankPath;
  /// compile_debug_mode 1: the IR after every pass is written into this folder.
  std::string irDumpDir;
  /// The function to compile; empty = the module's only function.
  std::string funcName;
  /// Stop after this stage (the Kernel then holds IR text but no program).
  Stage stopAt = Stage::Codegen;
  /// Keep the IR text of every stage in the Kernel (`irByStage`, `ir`). The tuner,
  /// which only simulates its candidates, turns it off: printing is a sizeable share
  /// of a small kernel's compile time.
  bool keepIr = true;
  /// Fill `Kernel::stats` with the subgraphs and groups of the partitioned function
  /// (pass statistics are always kept). The tuner's candidates, which are only
  /// simulated, skip it: it re-reads the whole subgraph table.
  bool collectStats = true;
};

/// A tensor's element type and shape.
struct TensorSpec {
  ir::DType dtype = ir::DType::F32;
  std::vector<int64_t> shape; ///< ir::kDynamicDim for a dynamic axis (any size)
  std::string name;
};

/// A compiled function.
struct Kernel {
  std::string funcName;
  target::DeviceSpec device;
  std::vector<TensorSpec> args, results;
  Stage stage = Stage::Codegen;
  /// The IR at the stage compilation stopped (always filled).
  std::string ir;
  /// The text of every stage reached: the module as given (tensor), after
  /// expand-tiles (tile), after the pipeline (partitioned), the program as
  /// `ptoc-opt --stage=codegen` prints it (codegen).
  std::map<Stage, std::string> irByStage;
  /// The program (stage == Codegen only, without loops; empty with loops: see
  /// runnable()).
  codegen::Program program;
  /// With loops: the root functions, each compiled once, and the control functions'
  /// loops; null without loops.
  std::shared_ptr<const codegen::LoopProgram> loops;

  /// What a run simulates and executes, with `stitchMaxNum` loop iterations per stitch
  /// and `parallelism` iterations of a parallel loop in flight
  /// (device_sched_parallelism; runtime::assignStitches):
  /// `program` without loops; with loops, every iteration instantiated as the AICPU
  /// control thread would at run time (runtime::expandLoops), on first use, and kept
  /// for later runs (copies of the kernel share it; thread-safe). Errors: a window out
  /// of range at some iteration, a bad stitch size.
  /// A kernel whose loops read values of its inputs (LoopProgram::readsTensors) is
  /// instantiated from `args` on every call, and not kept. A kernel with dynamic axes
  /// (LoopProgram::dynamicShapes) is instantiated for the sizes of `args`, kept per
  /// set of sizes (up to 16 sets; later new sizes are instantiated per call).
  absl::StatusOr<std::shared_ptr<const codegen::Program>> runnable(
      int stitchMaxNum = runtime::kDefaultStitchMaxNum,
      int parallelism = runtime::kDefaultSchedParallelism,
      llvm::ArrayRef<runtime::ConstTensorRef> args = {}) const;

  /// `program` (what runnable() returned) prepared for simulating on `device`, whose
  /// DeviceSpec::toJson() is `deviceJson` (runtime::PreparedProgram: validated,
  /// flattened, its regions identified, its bound computed). Kept with the
  /// instantiation when the kernel keeps `program` and `device` is the kernel's own, so
  /// repeated runs repeat only the event loop; prepared afresh otherwise. Thread-safe;
  /// copies of the kernel share what is kept.
  absl::StatusOr<std::shared_ptr<const runtime::PreparedProgram>> prepared(
      const std::shared_ptr<const codegen::Program> &program,
      const target::DeviceSpec &device, llvm::StringRef deviceJson) const;

  struct Expansions; ///< the instantiated programs, by stitch options (Kernel.cpp)
  static std::shared_ptr<Expansions> newExpansions();
  std::shared_ptr<Expansions> expansions = newExpansions();
  /// Subgraphs, groups and merge decisions.
  CompileStats stats;
  /// The pipeline that ran, and the knobs it was configured with (a bank config's,
  /// when bankConfig is set).
  std::string pipeline;
  PassKnobs knobs;
  double compileSeconds = 0;
  /// The knowledge bank's config this kernel was compiled with (its JSON), or ""
  /// when it is the function as written; the scheduler mode the bank measured it with.
  std::string bankConfig;
  std::optional<int> bankSchedMode;
  /// What the compile warns about (an unusable bank, a stale bank record) and the
  /// passes' warnings ("file:line:col: message", e.g. a `*_setting` key that names no
  /// group).
  std::vector<std::string> warnings;
  /// What the passes remark on ("file:line:col: remark: ..."), e.g. a whole-shape
  /// vec_tile that expand-tiles split to fit UB.
  std::vector<std::string> remarks;
  /// The tile shapes default-tiles derived for ops the function gave none, with their
  /// rules; a run's summary lists them ("tiles:").
  std::vector<passes::DerivedTile> derivedTiles;

  /// The text of `stage`; an error names the stage compilation stopped at.
  absl::StatusOr<std::string> irAt(Stage stage) const;
};

/// The largest runtime_debug_mode (RunOptions::debugMode is 0..kMaxDebugMode).
inline constexpr int kMaxDebugMode = 2;

/// Run options (one struct, defaults here).
struct RunOptions {
  /// device_sched_mode 0..3 (see runtime::SimOptions).
  int schedMode = 0;
  /// runtime_debug_mode: 0 nothing written; 1 swimlane + summary in a run folder;
  /// 2 also per-pipe lanes.
  int debugMode = 0;
  /// Base folder for run folders; empty = $PTOC_OUTPUT_DIR or ./output.
  std::string outputDir;
  /// Execute the tasks for real (false: timing only, results left untouched).
  bool numerics = true;
  /// Host threads for numerics; 0 = hardware concurrency.
  unsigned hostThreads = 0;
  /// How the kernel is launched (runtime::SimOptions::kernelKind): AICPU-scheduled, as
  /// ptoc's kernels run, or plain, to compare with a hand-written kernel.
  runtime::KernelKind kernelKind = runtime::KernelKind::Aicpu;
  /// stitch_function_max_num: iterations of loop bodies per stitch, 1..1024 (PyPTO's
  /// default 128). No effect on a kernel without loops.
  int stitchMaxNum = runtime::kDefaultStitchMaxNum;
  /// device_sched_parallelism: how many iterations of a `parallel` loop may run at
  /// once, 1..8, or 0 (the default): derived from the kernel and the device
  /// (runtime::automaticSchedParallelism). PyPTO's default is 1: none overlap, but each
  /// iteration is still a stitch of its own. No effect on a kernel without parallel
  /// loops.
  int schedParallelism = runtime::kDefaultSchedParallelism;
};

/// What a run produced besides the outputs.
struct RunReport {
  runtime::RunRecord record;
  double simulatedUs = 0;
  double boundUs = 0;
  /// bound / simulated (1 = at the roofline).
  double boundRatio = 0;
  double aicUtilization = 0, aivUtilization = 0;
  /// The device_sched_parallelism the run used (RunOptions::schedParallelism, the
  /// automatic value resolved: codegen::Program::schedParallelism); 1 without loops.
  int schedParallelism = 1;
  /// The human summary (as summary.txt).
  std::string summary;
  /// The run folder and swimlane path (debugMode > 0), else empty.
  std::string outputFolder, swimlanePath;
  double simulateSeconds = 0, executeSeconds = 0;
};

/// A compilation/run context for one device. Cheap; holds no global state, so many
/// sessions may run concurrently (each call uses its own ir::Context).
class Session {
public:
  explicit Session(target::DeviceSpec device)
      : device_(std::move(device)), deviceJson_(device_.toJson()) {}
  /// A session for a preset name or a device JSON path.
  static absl::StatusOr<Session> create(llvm::StringRef deviceNameOrPath);

  const target::DeviceSpec &device() const { return device_; }

  /// Compiles the tensor-level function of `module` (transformed in place). Errors
  /// carry every diagnostic ("file:line:col: error: ..."); running out of host
  /// memory is a ResourceExhausted error, not an exception.
  absl::StatusOr<Kernel> compile(ir::Module &module, const CompileOptions &options = {}) const;
  /// Parses `text` (named `fileName` in messages) and compiles it.
  absl::StatusOr<Kernel> compileText(llvm::StringRef text, llvm::StringRef fileName,
                                     const CompileOptions &options = {}) const;

  /// Simulates `kernel`, executes it on `args` (checked against the signature) and
  /// fills `results` (one tensor per returned value).
  absl::StatusOr<RunReport> run(const Kernel &kernel, llvm::ArrayRef<runtime::HostTensor> args,
                                std::vector<runtime::HostTensor> &results,
                                const RunOptions &options = {}) const;
  /// The same on caller-owned buffers: `args` are read in place and each result is
  /// written into `results[i]` (dtype and shape checked; errors name the result).
  /// A result buffer may be an argument's buffer (an in-place update).
  absl::StatusOr<RunReport> run(const Kernel &kernel, llvm::ArrayRef<runtime::ConstTensorRef> args,
                                llvm::ArrayRef<runtime::TensorRef> results,
                                const RunOptions &options = {}) const;

private:
  absl::StatusOr<Kernel> compileUnguarded(ir::Module &module, const CompileOptions &options) const;
  /// compile() with CompileOptions::consultBank.
  absl::StatusOr<Kernel> compileConsultingBank(ir::Module &module,
                                               const CompileOptions &options) const;
  /// Checks the kernel and buffers (`results`: the caller's, or null when results
  /// are returned as HostTensors), simulates and (with `execute`) runs the numerics;
  /// then the report and outputs.
  template <typename Execute>
  absl::StatusOr<RunReport> runWith(const Kernel &kernel,
                                    llvm::ArrayRef<runtime::ConstTensorRef> args,
                                    const llvm::ArrayRef<runtime::TensorRef> *results,
                                    const RunOptions &options, Execute execute) const;
  /// runWith after its checks; host memory running out is runWith's to report.
  template <typename Execute>
  absl::StatusOr<RunReport> runGuarded(const Kernel &kernel,
                                       llvm::ArrayRef<runtime::ConstTensorRef> args,
                                       const llvm::ArrayRef<runtime::TensorRef> *results,
                                       const RunOptions &options, Execute execute) const;

  target::DeviceSpec device_;
  /// device_.toJson(), once: what tells a kernel its kept prepared programs apply.
  std::string deviceJson_;
};

} // namespace ptoc::session
