// `ptoc run`: compile a .pto function, simulate and execute it, write outputs as .npy,
// print the report; and the dispatch to the other commands. Arguments go through the
// commands' one parser (ArgParser.h): no process-wide option registry, so the
// function can run many times in one process.
#include <algorithm>
#include "ptoc/tools/PtocMain.h"

#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "CommonOptions.h"
#include "OutOfMemory.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Diagnostics.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/profile/OutputDir.h"
#include "ptoc/runtime/Executor.h"
#include "ptoc/runtime/ExpandLoops.h"
#include "ptoc/runtime/Npy.h"
#include "ptoc/runtime/Reference.h"
#include "ptoc/runtime/Simulator.h"
#include "ptoc/session/Session.h"
#include "ptoc/session/Version.h"
#include "ptoc/support/ReadFile.h"
#include "ptoc/support/HostMemory.h"
#include "ptoc/target/DeviceSpec.h"
#include "ptoc/tools/ArgParser.h"
#include "ptoc/tools/CalibrateMain.h"
#include "ptoc/tools/ProfMain.h"
#include "ptoc/tools/TuneMain.h"

namespace ptoc::tools {

using session::CompileOptions;
using session::Kernel;
using session::RunOptions;
using session::RunReport;
using session::Session;
using session::TensorSpec;
namespace {

constexpr const char *kCommands = R"(usage: ptoc <command> [options]

commands:
  run FILE.pto   compile a tensor-level function, simulate it on the device model,
                 execute it for real on the host, write its outputs as .npy and print
                 the run report
  prof PATH      analyse a run (its folder or merged_swimlane.json): print the analysis
                 and write analysis.json; `ptoc prof report` / `ptoc prof compare` write
                 and compare performance reports (see 'ptoc prof --help')
  tune FILE.pto  search the knobs of a function on the simulator (strategies, budget,
                 knowledge bank); `ptoc tune show|merge|add|lookup` manage the bank
                 (see 'ptoc tune --help')
  calibrate MEASUREMENTS.json... -o OUT.json
                 fit device fields to kernels timed on your own part and write the
                 calibrated device description (see 'ptoc calibrate --help')
)";

/// `ptoc run` arguments: the compile and run options are the session's structs, so
/// their defaults are the session's.
struct RunArgs {
  std::string file;
  std::string device = target::kDefaultPreset;
  CompileOptions compile;
  RunOptions run;
  std::string inputs;
  uint64_t seed = 0;
  std::string outputs;
  PassOptionTexts passOptions;
  bool check = false;
};

CommandSpec runSpec(RunArgs &a) {
  return CommandSpec{
      "ptoc run",
      "Compiles a tensor-level function, simulates it on the device model, executes it for\n"
      "real on the host, writes its outputs as .npy and prints the run report.\n",
      ArgPositional{"FILE.pto", &a.file, "input file", 1, 1,
                    "no input file (usage: ptoc run FILE.pto [options])"},
      {
          deviceOption(&a.device),
          schedModeOption(&a.run.schedMode),
          {"kernel-kind",
           choiceOf(&a.run.kernelKind, {{runtime::kernelKindName(runtime::KernelKind::Aicpu),
                                         runtime::KernelKind::Aicpu},
                                        {runtime::kernelKindName(runtime::KernelKind::Plain),
                                         runtime::KernelKind::Plain}}),
           "aicpu|plain",
           "how the kernel is launched: AICPU-scheduled (ptoc's kernels) or plain (all cores "
           "start at once, as a hand-written kernel; to compare with one)"},
          {"inputs", &a.inputs, "DIR", "read argument i from DIR/<name>.npy or DIR/arg<i>.npy",
           {}, "random inputs from --seed"},
          {"seed", &a.seed, "S", "seed for random inputs", Bounds::atMost(INT64_MAX)},
          tableOption("runtime_debug_mode", a.compile, a.run),
          tableOption("output_dir", a.compile, a.run),
          {"outputs", &a.outputs, "DIR", "where result<i>.npy go", {}, "the run folder"},
          funcOption(&a.compile.funcName),
          pipelineOption(&a.compile.pipeline),
          passOptionOption(&a.passOptions),
          noDoubleBufferOption(&a.compile.codegen.doubleBuffer),
          tableOption("stitch_function_max_num", a.compile, a.run),
          tableOption("device_sched_parallelism", a.compile, a.run),
          tableOption("host_threads", a.compile, a.run),
          {"check", &a.check, "", "compare the outputs with a whole-tensor reference"},
          tableOption("run_numerics", a.compile, a.run),
          tableOption("max_tile_ops", a.compile, a.run),
          {"tune-bank", OptionalValue{&a.compile.consultBank, &a.compile.bankPath}, "DIR",
           "consult the tuning knowledge bank (DIR, default $PTOC_TUNE_BANK_PATH or "
           "~/.cache/ptoc/bank): a function it knows on this device runs with its best config "
           "(and, unless --sched-mode is given, the scheduler mode it was measured with)"},
      }};
}

/// `ptoc --help`: the commands, then the options of `run`.
std::string topHelp() {
  RunArgs defaults;
  return std::string(kCommands) + "\noptions of 'run':\n" +
         ArgParser(runSpec(defaults)).optionsHelp();
}

/// The bytes of a tensor of `spec` (a dynamic axis counts as 0; saturating).
int64_t tensorBytes(const TensorSpec &spec) {
  int64_t bytes = ir::elementSize(spec.dtype);
  for (int64_t d : spec.shape)
    bytes = d > 0 && bytes > INT64_MAX / d ? INT64_MAX : bytes * std::max<int64_t>(d, 0);
  return bytes;
}

/// The arguments: from --inputs (by name, then by position) or random.
absl::StatusOr<std::vector<runtime::HostTensor>> loadInputs(const Kernel &kernel,
                                                            const RunArgs &args) {
  std::vector<runtime::HostTensor> inputs;
  // All of them must fit before any is made (or read): a clear error, not a host
  // that runs out half way.
  int64_t total = 0;
  for (const TensorSpec &spec : kernel.args) {
    int64_t bytes = tensorBytes(spec);
    total = bytes > INT64_MAX - total ? INT64_MAX : total + bytes;
  }
  support::MemoryHeadroom headroom = support::memoryHeadroom();
  if (total > headroom.bytes)
    return absl::ResourceExhaustedError(absl::StrCat(
        "the arguments of '", kernel.funcName, "' take ", support::bytesText(double(total)),
        " of host memory, and this process may allocate ",
        support::bytesText(double(headroom.bytes)), " more, limited by ", headroom.limit,
        ": raise the memory limit, or use --no-numerics to simulate the timing without any data"));
  for (size_t i = 0; i < kernel.args.size(); ++i) {
    const TensorSpec &spec = kernel.args[i];
    bool dynamic = std::count(spec.shape.begin(), spec.shape.end(), ir::kDynamicDim) > 0;
    if (args.inputs.empty() && dynamic)
      return absl::InvalidArgumentError(absl::StrCat(
          "argument ", i, " ('", spec.name, "') has a dynamic axis (", ir::shapeStr(spec.shape),
          "), so ptoc cannot make up its data: give the inputs as .npy files with --inputs DIR"));
    if (args.inputs.empty()) {
      try {
        inputs.push_back(runtime::randomTensor(spec.dtype, spec.shape, args.seed * 1000003 + i));
      } catch (const std::bad_alloc &) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "argument ", i, " ('", spec.name, "', shape [", absl::StrJoin(spec.shape, ", "), "] ",
            std::string(ir::dtypeName(spec.dtype)), ", ", tensorBytes(spec),
            " bytes) does not fit in host memory: use --no-numerics to simulate the timing "
            "without any data"));
      }
      continue;
    }
    llvm::SmallString<256> byName(args.inputs), byPos(args.inputs);
    llvm::sys::path::append(byName, spec.name + ".npy");
    llvm::sys::path::append(byPos, absl::StrCat("arg", i, ".npy"));
    std::string path = llvm::sys::fs::exists(byName) ? std::string(byName) : std::string(byPos);
    if (!llvm::sys::fs::exists(path))
      return absl::InvalidArgumentError(absl::StrCat(
          "no input for argument ", i, " ('", spec.name, "'): expected '", std::string(byName),
          "' or '", std::string(byPos), "'"));
    absl::StatusOr<runtime::HostTensor> t = runtime::readNpy(path, spec.dtype);
    if (!t.ok()) return t.status();
    if (!std::equal(t->shape().begin(), t->shape().end(), spec.shape.begin(), spec.shape.end(),
                    [](int64_t got, int64_t want) { return want == ir::kDynamicDim || got == want; }))
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": shape [", absl::StrJoin(t->shape(), ", "), "] does not match argument ", i,
          " ('", spec.name, "') of shape [", ir::shapeStr(spec.shape), "] ('?': any size)"));
    inputs.push_back(*std::move(t));
  }
  return inputs;
}

int fail(llvm::StringRef msg) {
  llvm::errs() << "ptoc: " << msg << "\n";
  return 1;
}

int runCommand(const std::vector<std::string> &argv) {
  RunArgs args;
  ArgParser parser(runSpec(args));
  if (std::optional<int> status = parser.parse(argv)) return *status;
  absl::StatusOr<Session> session = Session::create(args.device);
  if (!session.ok()) return fail(ir::messageOf(session.status()));

  absl::StatusOr<std::string> text = support::readFile(args.file, support::kMaxSourceBytes);
  if (!text.ok()) return fail(ir::messageOf(text.status()));

  if (absl::Status st = setPassOptions(args.passOptions, args.compile.knobs); !st.ok())
    return fail(std::string(st.message()));
  setOutOfMemoryDoing(absl::StrCat("compiling ", args.file));
  absl::StatusOr<Kernel> kernel = session->compileText(*text, args.file, args.compile);
  if (!kernel.ok()) return fail(ir::messageOf(kernel.status()));
  setOutOfMemoryDoing(absl::StrCat("running '", kernel->funcName, "' of ", args.file, " (",
                                   kernel->program.calls.size(), " tasks",
                                   args.run.numerics ? ", with its tensors" : "", ")"));
  for (const std::string &w : kernel->warnings) llvm::errs() << "ptoc: warning: " << w << "\n";
  if (!kernel->bankConfig.empty()) {
    llvm::outs() << "tuned: the knowledge bank's config " << kernel->bankConfig << "\n";
    if (!parser.given("sched-mode") && kernel->bankSchedMode)
      args.run.schedMode = *kernel->bankSchedMode;
  }

  const RunOptions &ropts = args.run;
  std::vector<runtime::HostTensor> results;
  absl::StatusOr<std::vector<runtime::HostTensor>> inputs = std::vector<runtime::HostTensor>();
  absl::StatusOr<RunReport> report;
  if (!ropts.numerics) {
    // Timing only: no data is read or written, so no tensor is allocated.
    std::vector<runtime::ConstTensorRef> in;
    std::vector<runtime::TensorRef> out;
    for (const TensorSpec &a : kernel->args)
      if (std::count(a.shape.begin(), a.shape.end(), ir::kDynamicDim))
        return fail(absl::StrCat("argument '", a.name, "' has a dynamic axis (",
                                 ir::shapeStr(a.shape), "): --no-numerics runs without data, "
                                 "so its size is unknown; run with --inputs DIR instead"));
    for (const TensorSpec &a : kernel->args) in.emplace_back(a.dtype, a.shape, nullptr);
    for (const TensorSpec &r : kernel->results) out.emplace_back(r.dtype, r.shape, nullptr);
    report = session->run(*kernel, in, out, ropts);
  } else {
    inputs = loadInputs(*kernel, args);
    if (!inputs.ok()) return fail(ir::messageOf(inputs.status()));
    report = session->run(*kernel, *inputs, results, ropts);
  }
  if (!report.ok()) return fail(ir::messageOf(report.status()));

  llvm::outs() << report->summary;
  if (!report->swimlanePath.empty()) llvm::outs() << "swimlane: " << report->swimlanePath << "\n";

  if (ropts.numerics) {
    std::string dir = args.outputs;
    if (dir.empty()) {
      if (!report->outputFolder.empty()) {
        dir = report->outputFolder;
      } else {
        absl::StatusOr<std::string> folder =
            profile::createRunOutputDir(profile::outputBase(ropts.outputDir));
        if (!folder.ok()) return fail(ir::messageOf(folder.status()));
        dir = *folder;
      }
    } else if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
      return fail(absl::StrCat("cannot create '", dir, "': ", ec.message()));
    }
    for (size_t i = 0; i < results.size(); ++i) {
      llvm::SmallString<256> path(dir);
      llvm::sys::path::append(path, absl::StrCat("result", i, ".npy"));
      if (absl::Status st = runtime::writeNpy(std::string(path), results[i]); !st.ok())
        return fail(ir::messageOf(st));
      llvm::outs() << "output " << i << ": " << path << "\n";
    }
  }

  if (args.check && ropts.numerics) {
    // The reference evaluates the tensor-level module as written, so parse it again;
    // the function is the one compiled (with loops: the entry, its bodies in the module).
    ir::Context ctx;
    absl::StatusOr<std::unique_ptr<ir::Module>> module =
        ir::parseModuleOrError(*text, args.file, ctx);
    if (!module.ok()) return fail(ir::messageOf(module.status()));
    ir::Func *func = (*module)->lookup(kernel->funcName);
    if (!func)
      return fail(absl::StrCat("a bug: the compiled function '", kernel->funcName,
                               "' is not in the module parsed again for --check"));
    std::vector<runtime::HostTensor> want;
    if (absl::Status st = runtime::evaluateReference(**module, *func, *inputs, want); !st.ok())
      return fail(ir::messageOf(st));
    bool ok = true;
    for (size_t i = 0; i < results.size(); ++i) {
      runtime::Tolerance tol = runtime::tolerance(results[i].dtype());
      if (auto bad = runtime::compareTensors(results[i], want[i], tol.rtol, tol.atol)) {
        llvm::outs() << "check: result " << i << " differs from the reference: "
                     << bad->describe() << "\n";
        ok = false;
      } else {
        llvm::outs() << "check: result " << i << " matches the reference\n";
      }
    }
    if (!ok) return 1;
  }
  return 0;
}

} // namespace

int ptocMain(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  exitOnOutOfMemory("ptoc", absl::StrCat("running 'ptoc ", absl::StrJoin(args, " "), "'"));
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    (args.empty() ? llvm::errs() : llvm::outs()) << topHelp();
    return args.empty() ? kExitUsage : kExitOk;
  }
  if (args[0] == "--version") {
    llvm::outs() << "ptoc " << session::version() << "\n";
    return kExitOk;
  }
  std::string command = args[0];
  args.erase(args.begin());
  // `ptoc prof` has its own subcommands and help.
  if (command == "prof") return profMain(args);
  if (command == "tune") return tuneMain(args);
  if (command == "calibrate") return calibrateMain(args);
  if (command == "run") return runCommand(args);
  llvm::errs() << "ptoc: unknown command '" << command
               << "' (commands: run, prof, tune, calibrate; see 'ptoc --help')\n";
  return kExitUsage;
}

} // namespace ptoc::tools
