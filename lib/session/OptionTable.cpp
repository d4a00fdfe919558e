// The runtime, debug and host options' table (see OptionTable.h).
#include "ptoc/session/OptionTable.h"

#include "ptoc/runtime/Executor.h"
#include "ptoc/runtime/ExpandLoops.h"
#include "ptoc/runtime/Simulator.h"

namespace ptoc::session {
namespace {

using CO = CompileOptions;
using RO = RunOptions;

const SessionOption kOptions[] = {
    // runtime_options
    {"device_sched_mode", OptionDict::Runtime, [](CO &, RO &r) -> OptionField { return &r.schedMode; },
     "the AICPU scheduler's order: 0 FIFO, 1 L2 affinity, 2 fair across AICPU threads, 3 both",
     runtime::kMinSchedMode, runtime::kMaxSchedMode, "sched-mode", "N"},
    {"host_threads", OptionDict::Runtime, [](CO &, RO &r) -> OptionField { return &r.hostThreads; },
     "host threads computing the numerics (0 = all cores)", 0, runtime::kMaxHostThreads,
     "threads", "N"},
    {"run_numerics", OptionDict::Runtime, [](CO &, RO &r) -> OptionField { return &r.numerics; },
     "compute the outputs; off, only the timing is simulated and no outputs are computed or "
     "written",
     std::nullopt, std::nullopt, "no-numerics"},
    {"stitch_function_max_num", OptionDict::Runtime,
     [](CO &, RO &r) -> OptionField { return &r.stitchMaxNum; },
     "loop iterations the AICPU control thread submits per stitch, the scheduling unit it "
     "builds (modules with loops)",
     runtime::kMinStitchMaxNum, runtime::kMaxStitchMaxNum, "stitch-function-max-num", "N"},
    {"device_sched_parallelism", OptionDict::Runtime,
     [](CO &, RO &r) -> OptionField { return &r.schedParallelism; },
     "iterations of a parallel loop (ptoc.loop(..., parallel=True)) that may run at once; 0 "
     "derives it from the kernel and the device",
     runtime::kAutoSchedParallelism, runtime::kMaxSchedParallelism, "device-sched-parallelism",
     "P"},
    // debug_options
    {"runtime_debug_mode", OptionDict::Debug, [](CO &, RO &r) -> OptionField { return &r.debugMode; },
     "0 off, 1 swimlane and summary in a run folder, 2 also per-pipe lanes", 0, kMaxDebugMode,
     "debug-mode", "N"},
    {"compile_debug_mode", OptionDict::Debug, [](CO &, RO &) -> OptionField { return {}; },
     "1: the IR after every pass is written into a run folder (C++: CompileOptions::irDumpDir)",
     0, 1, "", "", "", /*pythonDefault=*/0},
    {"output_dir", OptionDict::Debug, [](CO &, RO &r) -> OptionField { return &r.outputDir; },
     "base folder of run folders", std::nullopt, std::nullopt, "output-dir", "DIR",
     "$PTOC_OUTPUT_DIR, else ./output"},
    // host_options
    {"compile_stage", OptionDict::Host, [](CO &c, RO &) -> OptionField { return &c.stopAt; },
     "stop compiling after this stage"},
    {"double_buffer", OptionDict::Host,
     [](CO &c, RO &) -> OptionField { return &c.codegen.doubleBuffer; },
     "ping-pong local buffers, so transfers overlap compute", std::nullopt, std::nullopt,
     "no-double-buffer"},
    {"verify_each", OptionDict::Host, [](CO &c, RO &) -> OptionField { return &c.verifyEach; },
     "verify the IR after every pass that changed it"},
    {"max_tile_ops", OptionDict::Host,
     [](CO &c, RO &) -> OptionField { return &c.budget.maxTileOps; },
     "stop compiling a function past this many tile ops (each takes about a kilobyte of host "
     "memory; a compile also stops where the host's free memory ends): a tile shape far too "
     "small for its tensor is an error, not an exhausted host",
     passes::CompileBudget::kMinMaxTileOps, passes::CompileBudget::kMaxMaxTileOps,
     "max-tile-ops", "N"},
    {"use_tune_bank", OptionDict::Host, [](CO &c, RO &) -> OptionField { return &c.consultBank; },
     "compile the knowledge bank's best config for this signature, if it has one "
     "(docs/tuning.md); off compiles the function as written",
     std::nullopt, std::nullopt, "", "", "", /*pythonDefault=*/1},
    {"tune_bank_path", OptionDict::Host, [](CO &c, RO &) -> OptionField { return &c.bankPath; },
     "the knowledge bank folder", std::nullopt, std::nullopt, "", "",
     "$PTOC_TUNE_BANK_PATH, else ~/.cache/ptoc/bank"},
};

} // namespace

llvm::StringRef optionDictName(OptionDict d) {
  switch (d) {
  case OptionDict::Runtime: return "runtime_options";
  case OptionDict::Debug: return "debug_options";
  case OptionDict::Host: return "host_options";
  }
  return "runtime_options";
}

llvm::ArrayRef<SessionOption> sessionOptions() { return kOptions; }

const SessionOption *findSessionOption(llvm::StringRef name) {
  for (const SessionOption &o : kOptions)
    if (name == o.name) return &o;
  return nullptr;
}

} // namespace ptoc::session
