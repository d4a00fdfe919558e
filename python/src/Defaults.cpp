// `_ptoc.default_options()` and `_ptoc.DEFAULT_DEVICE` (see Defaults.h).
#include "Defaults.h"

#include "ptoc/target/DeviceSpec.h"
#include "ptoc/tune/Search.h"

namespace py = pybind11;

namespace ptoc::python {

void bindDefaults(py::module_ &m) {
  m.attr("DEFAULT_DEVICE") = target::kDefaultPreset;
  m.def(
      "default_options",
      [] {
        const session::CompileOptions &c = kCompileDefaults;
        const session::RunOptions &r = kRunDefaults;
        const session::TuneOptions &t = kTuneDefaults;
        py::dict runtime, debug, host, tune;
        runtime["device_sched_mode"] = r.schedMode;
        runtime["host_threads"] = r.hostThreads;
        runtime["run_numerics"] = r.numerics;
        runtime["stitch_function_max_num"] = r.stitchMaxNum;
        runtime["device_sched_parallelism"] = r.schedParallelism;
        debug["runtime_debug_mode"] = r.debugMode;
        // compile_debug_mode 1 dumps the IR into a run folder; C++ dumps when it is given
        // a folder (CompileOptions::irDumpDir), none by default.
        debug["compile_debug_mode"] = c.irDumpDir.empty() ? 0 : 1;
        debug["output_dir"] = r.outputDir;
        host["compile_stage"] = session::stageName(c.stopAt).str();
        host["double_buffer"] = c.codegen.doubleBuffer;
        host["verify_each"] = c.verifyEach;
        host["max_tile_ops"] = c.budget.maxTileOps;
        // Python's one policy of its own: @ptoc.jit consults the knowledge bank unless
        // told not to, while a C++ compile reads no user files unless asked
        // (CompileOptions::consultBank).
        host["use_tune_bank"] = true;
        host["tune_bank_path"] = c.bankPath;
        tune["strategy"] = tune::strategyName(t.search.strategy).str();
        tune["budget"] = t.search.budget;
        tune["seed"] = t.search.seed;
        tune["threads"] = t.threads;
        tune["use_bank"] = t.useBank;
        py::dict all;
        all["runtime_options"] = runtime;
        all["debug_options"] = debug;
        all["host_options"] = host;
        all["tune"] = tune;
        return all;
      },
      "The defaults of the Python options, by name, from the C++ option structs.");
}

} // namespace ptoc::python
