// `ptoc run`: compile a .pto function, simulate and execute it, write outputs as .npy,
// print the report. Arguments are parsed by hand (no process-wide option registry), so
// the function can run many times in one process.
#include "ptoc/tools/PtocMain.h"

#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Diagnostics.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/profile/OutputDir.h"
#include "ptoc/runtime/Executor.h"
#include "ptoc/runtime/Npy.h"
#include "ptoc/runtime/Reference.h"
#include "ptoc/runtime/Simulator.h"
#include "ptoc/session/Session.h"
#include "ptoc/session/Version.h"
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

constexpr const char *kUsage = R"(usage: ptoc <command> [options]

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

options of 'run':
  --device NAME|FILE.json   device preset (a2, a3, b3, b4, tiny) or device file   [a2]
  --sched-mode N            AICPU scheduler: 0 FIFO, 1 L2 affinity, 2 fair, 3 both [0]
  --kernel-kind aicpu|plain how the kernel is launched: AICPU-scheduled (ptoc's
                            kernels) or plain (all cores start at once, as a
                            hand-written kernel; to compare with one)      [aicpu]
  --inputs DIR              read argument i from DIR/<name>.npy or DIR/arg<i>.npy
                            (default: random inputs from --seed)
  --seed S                  seed for random inputs                            [0]
  --debug-mode N            runtime_debug_mode: 1 writes the swimlane and summary,
                            2 also per-pipe lanes                             [0]
  --output-dir DIR          base folder of run folders ($PTOC_OUTPUT_DIR, else ./output)
  --outputs DIR             where result<i>.npy go (default: the run folder)
  --func NAME               the function to run (when the file has several)
  --pipeline TEXT           pass pipeline (default: the default pipeline)
  --pass-option NAME=VALUE  a pass option of the default pipeline, by its Python name
                            (pg_lower_bound=1024, vec_nbuffer_setting={0:4}); repeatable
  --no-double-buffer        codegen without ping-pong buffers
  --threads N               host threads for numerics (0 = all cores)        [0]
  --check                   compare the outputs with a whole-tensor reference
  --no-numerics             simulate only; no outputs are computed or written
  --max-tile-ops N          stop compiling a function past N tile ops (about 750
                            bytes of host memory each)                       [8388608]
  --tune-bank[=DIR]         consult the tuning knowledge bank (DIR, default
                            $PTOC_TUNE_BANK_PATH or ~/.cache/ptoc/bank): a function it
                            knows on this device runs with its best config (and, unless
                            --sched-mode is given, the scheduler mode it was measured with)
)";

/// Parsed `ptoc run` arguments.
struct RunArgs {
  std::string file;
  std::string device = "a2";
  int schedMode = 0;
  bool schedModeGiven = false;
  runtime::KernelKind kernelKind = runtime::KernelKind::Aicpu;
  std::string inputs;
  uint64_t seed = 0;
  int debugMode = 0;
  std::string outputDir;
  std::string outputs;
  std::string func;
  std::string pipeline;
  /// --pass-option NAME=VALUE, in order.
  std::vector<std::pair<std::string, std::string>> passOptions;
  bool doubleBuffer = true;
  unsigned threads = 0;
  bool check = false;
  bool numerics = true;
  int64_t maxTileOps = passes::CompileBudget::kDefaultMaxTileOps;
  /// --tune-bank[=DIR]: consult the knowledge bank (DIR "" = the default folder).
  bool tuneBank = false;
  std::string tuneBankPath;
};

/// Splits "--flag=value" / "--flag value" arguments. Returns an error message or "".
std::string parseRunArgs(const std::vector<std::string> &argv, RunArgs &out) {
  for (size_t i = 0; i < argv.size(); ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      if (!out.file.empty())
        return absl::StrCat("more than one input file ('", out.file, "' and '", arg, "')");
      out.file = arg;
      continue;
    }
    std::string name = arg.substr(2), value;
    bool hasValue = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      hasValue = true;
    }
    auto flag = [&](bool &field, bool v) {
      if (hasValue) return absl::StrCat("--", name, " takes no value");
      field = v;
      return std::string();
    };
    if (name == "check") { if (auto e = flag(out.check, true); !e.empty()) return e; continue; }
    if (name == "no-numerics") { if (auto e = flag(out.numerics, false); !e.empty()) return e; continue; }
    if (name == "tune-bank") {
      out.tuneBank = true;
      out.tuneBankPath = value;
      if (hasValue && value.empty()) return "--tune-bank= needs a folder (or no '=' for the default bank)";
      continue;
    }
    if (name == "no-double-buffer") { if (auto e = flag(out.doubleBuffer, false); !e.empty()) return e; continue; }
    static const char *kValued[] = {"device", "sched-mode", "inputs", "seed", "debug-mode",
                                    "output-dir", "outputs", "func", "pipeline", "threads",
                                    "pass-option", "max-tile-ops", "kernel-kind"};
    bool known = false;
    for (const char *k : kValued) known |= name == k;
    if (!known) return absl::StrCat("unknown option '--", name, "' (see 'ptoc --help')");
    if (!hasValue) {
      if (i + 1 >= argv.size()) return absl::StrCat("--", name, " needs a value");
      value = argv[++i];
    }
    auto number = [&](auto &field, int64_t lo, int64_t hi) -> std::string {
      int64_t v;
      if (!absl::SimpleAtoi(value, &v) || v < lo || v > hi)
        return absl::StrCat("--", name, " must be an integer in [", lo, ", ", hi, "], got '",
                            value, "'");
      field = static_cast<std::decay_t<decltype(field)>>(v);
      return "";
    };
    std::string err;
    if (name == "device") out.device = value;
    else if (name == "sched-mode") {
      err = number(out.schedMode, runtime::kMinSchedMode, runtime::kMaxSchedMode);
      out.schedModeGiven = true;
    } else if (name == "kernel-kind") {
      if (value == "aicpu") out.kernelKind = runtime::KernelKind::Aicpu;
      else if (value == "plain") out.kernelKind = runtime::KernelKind::Plain;
      else err = absl::StrCat("--kernel-kind must be aicpu or plain, got '", value, "'");
    } else if (name == "inputs") out.inputs = value;
    else if (name == "seed") err = number(out.seed, 0, INT64_MAX);
    else if (name == "debug-mode") err = number(out.debugMode, 0, 2);
    else if (name == "max-tile-ops") err = number(out.maxTileOps, 1, INT64_MAX);
    else if (name == "output-dir") out.outputDir = value;
    else if (name == "outputs") out.outputs = value;
    else if (name == "func") out.func = value;
    else if (name == "pipeline") out.pipeline = value;
    else if (name == "threads") err = number(out.threads, 0, runtime::kMaxHostThreads);
    else if (name == "pass-option") {
      size_t eq = value.find('=');
      if (eq == std::string::npos || eq == 0)
        return absl::StrCat("--pass-option takes NAME=VALUE (e.g. pg_lower_bound=1024), got '",
                            value, "'");
      out.passOptions.emplace_back(value.substr(0, eq), value.substr(eq + 1));
    }
    if (!err.empty()) return err;
  }
  if (out.file.empty()) return "no input file (usage: ptoc run FILE.pto [options])";
  return "";
}

/// The arguments: from --inputs (by name, then by position) or random.
absl::StatusOr<std::vector<runtime::HostTensor>> loadInputs(const Kernel &kernel,
                                                            const RunArgs &args) {
  std::vector<runtime::HostTensor> inputs;
  for (size_t i = 0; i < kernel.args.size(); ++i) {
    const TensorSpec &spec = kernel.args[i];
    if (args.inputs.empty()) {
      try {
        inputs.push_back(runtime::randomTensor(spec.dtype, spec.shape, args.seed * 1000003 + i));
      } catch (const std::bad_alloc &) {
        int64_t bytes = ir::elementSize(spec.dtype);
        for (int64_t d : spec.shape) bytes = d > 0 && bytes > INT64_MAX / d ? INT64_MAX : bytes * d;
        return absl::ResourceExhaustedError(absl::StrCat(
            "argument ", i, " ('", spec.name, "', shape [", absl::StrJoin(spec.shape, ", "), "] ",
            std::string(ir::dtypeName(spec.dtype)), ", ", bytes,
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
    if (!std::equal(t->shape().begin(), t->shape().end(), spec.shape.begin(), spec.shape.end()))
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": shape [", absl::StrJoin(t->shape(), ", "), "] does not match argument ", i,
          " ('", spec.name, "') of shape [", absl::StrJoin(spec.shape, ", "), "]"));
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
  if (std::string err = parseRunArgs(argv, args); !err.empty()) {
    llvm::errs() << "ptoc run: " << err << "\n";
    return 2;
  }
  absl::StatusOr<Session> session = Session::create(args.device);
  if (!session.ok()) return fail(ir::messageOf(session.status()));

  auto buffer = llvm::MemoryBuffer::getFile(args.file, /*IsText=*/true);
  if (!buffer)
    return fail(absl::StrCat("cannot read '", args.file, "': ", buffer.getError().message()));
  std::string text = (*buffer)->getBuffer().str();

  CompileOptions copts;
  copts.funcName = args.func;
  copts.pipeline = args.pipeline;
  for (const auto &[name, value] : args.passOptions)
    if (absl::Status st = copts.knobs.setText(name, value); !st.ok())
      return fail(absl::StrCat("--pass-option ", name, "=", value, ": ",
                               std::string(st.message())));
  copts.codegen.doubleBuffer = args.doubleBuffer;
  copts.budget.maxTileOps = args.maxTileOps;
  copts.consultBank = args.tuneBank;
  copts.bankPath = args.tuneBankPath;
  absl::StatusOr<Kernel> kernel = session->compileText(text, args.file, copts);
  if (!kernel.ok()) return fail(ir::messageOf(kernel.status()));
  for (const std::string &w : kernel->warnings) llvm::errs() << "ptoc: warning: " << w << "\n";
  if (!kernel->bankConfig.empty()) {
    llvm::outs() << "tuned: the knowledge bank's config " << kernel->bankConfig << "\n";
    if (!args.schedModeGiven && kernel->bankSchedMode) args.schedMode = *kernel->bankSchedMode;
  }

  RunOptions ropts;
  ropts.schedMode = args.schedMode;
  ropts.kernelKind = args.kernelKind;
  ropts.debugMode = args.debugMode;
  ropts.outputDir = args.outputDir;
  ropts.numerics = args.numerics;
  ropts.hostThreads = args.threads;
  std::vector<runtime::HostTensor> results;
  absl::StatusOr<std::vector<runtime::HostTensor>> inputs = std::vector<runtime::HostTensor>();
  absl::StatusOr<RunReport> report;
  if (!args.numerics) {
    // Timing only: no data is read or written, so no tensor is allocated.
    std::vector<runtime::ConstTensorRef> in;
    std::vector<runtime::TensorRef> out;
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

  if (args.numerics) {
    std::string dir = args.outputs;
    if (dir.empty()) {
      if (!report->outputFolder.empty()) {
        dir = report->outputFolder;
      } else {
        absl::StatusOr<std::string> folder =
            profile::createRunOutputDir(profile::outputBase(args.outputDir));
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

  if (args.check && args.numerics) {
    // The reference evaluates the tensor-level function, so parse it again.
    ir::Context ctx;
    absl::StatusOr<std::unique_ptr<ir::Module>> module =
        ir::parseModuleOrError(text, args.file, ctx);
    if (!module.ok()) return fail(ir::messageOf(module.status()));
    ir::Func *func = args.func.empty() ? &(*module)->func(0) : (*module)->lookup(args.func);
    std::vector<runtime::HostTensor> want;
    if (absl::Status st = runtime::evaluateReference(*func, *inputs, want); !st.ok())
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
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    (args.empty() ? llvm::errs() : llvm::outs()) << kUsage;
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") {
    llvm::outs() << "ptoc " << session::version() << "\n";
    return 0;
  }
  std::string command = args[0];
  args.erase(args.begin());
  // `ptoc prof` has its own subcommands and help.
  if (command == "prof") return profMain(args);
  if (command == "tune") return tuneMain(args);
  if (command == "calibrate") return calibrateMain(args);
  for (const std::string &a : args)
    if (a == "--help" || a == "-h") {
      llvm::outs() << kUsage;
      return 0;
    }
  if (command == "run") return runCommand(args);
  llvm::errs() << "ptoc: unknown command '" << command
               << "' (commands: run, prof, tune, calibrate; see 'ptoc --help')\n";
  return 2;
}

} // namespace ptoc::tools
