// Session: compile (pipeline -> codegen) and run (simulate, execute, write outputs).
#include "ptoc/session/Session.h"

#include <algorithm>
#include <chrono>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ptoc/analysis/Subgraphs.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Diagnostics.h"
#include "ptoc/ir/Func.h"
#include "ptoc/codegen/BuildLoopProgram.h"
#include "ptoc/ir/Level.h"
#include "ptoc/ir/LoopView.h"
#include "ptoc/ir/Module.h"
#include "ptoc/ir/Operation.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/ir/Printer.h"
#include "ptoc/ir/Verifier.h"
#include "ptoc/passes/PassManager.h"
#include "ptoc/passes/Passes.h"
#include "ptoc/profile/RunOutputs.h"
#include "ptoc/profile/Summary.h"
#include "ptoc/runtime/Executor.h"
#include "ptoc/runtime/ExpandLoops.h"
#include "ptoc/session/Tuner.h"
#include "ptoc/support/HostMemory.h"

namespace ptoc::session {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// The passes that bring a tensor-level function to `stage` when the user did not
/// name a pipeline: the default pipeline with the user's knobs.
std::string pipelineFor(Stage stage, const PassKnobs &knobs) {
  switch (stage) {
  case Stage::Tensor: return "";
  case Stage::Tile: return knobs.pipeline(/*throughExpandTiles=*/true);
  case Stage::Partitioned:
  case Stage::Codegen: return knobs.pipeline();
  }
  return "";
}

TensorSpec specOf(ir::Type t, std::string name) {
  TensorSpec s;
  s.dtype = t.dtype();
  s.shape.assign(t.shape().begin(), t.shape().end());
  s.name = std::move(name);
  return s;
}

std::string describe(const TensorSpec &s) {
  return absl::StrCat("tensor<", ir::shapeStr(s.shape), s.shape.empty() ? "" : "x",
                      std::string(ir::dtypeName(s.dtype)), ">");
}

/// The buffers a run was given match the kernel's `specs` in count, dtype and
/// shape; `what` names them in errors ("argument", "result").
template <typename Ref>
absl::Status checkBuffers(const Kernel &kernel, llvm::ArrayRef<TensorSpec> specs,
                          llvm::ArrayRef<Ref> given, llvm::StringRef what) {
  if (given.size() != specs.size())
    return absl::InvalidArgumentError(absl::StrCat("kernel '", kernel.funcName, "' has ",
                                                   specs.size(), " ", what.str(), "s, got ",
                                                   given.size(), " ", what.str(), " buffers"));
  for (size_t i = 0; i < given.size(); ++i) {
    const TensorSpec &want = specs[i];
    if (given[i].dtype == want.dtype &&
        std::equal(given[i].shape.begin(), given[i].shape.end(), want.shape.begin(),
                   want.shape.end(), [](int64_t got, int64_t spec) {
                     return spec == ir::kDynamicDim || got == spec;
                   }))
      continue;
    TensorSpec got;
    got.dtype = given[i].dtype;
    got.shape.assign(given[i].shape.begin(), given[i].shape.end());
    return absl::InvalidArgumentError(absl::StrCat(what.str(), " ", i, " ('", want.name,
                                                   "') of kernel '", kernel.funcName,
                                                   "' must be ", describe(want), ", got ",
                                                   describe(got)));
  }
  return absl::OkStatus();
}

} // namespace

llvm::StringRef stageName(Stage s) {
  switch (s) {
  case Stage::Tensor: return "tensor";
  case Stage::Tile: return "tile";
  case Stage::Partitioned: return "partitioned";
  case Stage::Codegen: return "codegen";
  }
  return "?";
}

absl::StatusOr<Stage> parseStage(llvm::StringRef name) {
  for (Stage s : kAllStages)
    if (name == stageName(s)) return s;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown compile stage '", name.str(), "' (valid: tensor, tile, partitioned, codegen)"));
}

absl::StatusOr<std::string> Kernel::irAt(Stage s) const {
  auto it = irByStage.find(s);
  if (it != irByStage.end()) return it->second;
  if (irByStage.empty())
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel '", funcName, "' kept no IR text (compiled with CompileOptions::keepIr = "
        "false); compile it with keepIr = true to read its IR"));
  return absl::InvalidArgumentError(absl::StrCat(
      "kernel '", funcName, "' has no ", stageName(s).str(), " IR: it was compiled to the ",
      stageName(stage).str(), " stage with the pipeline '", pipeline,
      "'; compile further (compile_stage) or use a pipeline that reaches that stage"));
}

absl::StatusOr<Session> Session::create(llvm::StringRef deviceNameOrPath) {
  absl::StatusOr<target::DeviceSpec> device = target::DeviceSpec::load(deviceNameOrPath);
  if (!device.ok()) return device.status();
  return Session(*std::move(device));
}

absl::StatusOr<Kernel> Session::compile(ir::Module &module, const CompileOptions &options) const {
  try {
    // The bank holds configs of whole compiles; a compile that stops earlier has no use for one.
    if (options.consultBank && options.stopAt == Stage::Codegen)
      return compileConsultingBank(module, options);
    return compileUnguarded(module, options);
  } catch (const std::bad_alloc &) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "compiling ran out of host memory (max_tile_ops allows ", options.budget.maxTileOps,
        " tile ops, about ",
        support::bytesText(double(options.budget.maxTileOps) *
                           passes::CompileBudget::kBytesPerTileOp),
        "): raise the memory limit, or use bigger tiles (set_vec_tile_shapes / "
        "set_cube_tile_shapes), or lower max_tile_ops to the memory this host has"));
  }
}

absl::StatusOr<Kernel> Session::compileConsultingBank(ir::Module &module,
                                                      const CompileOptions &options) const {
  CompileOptions plain = options;
  plain.consultBank = false;
  std::vector<std::string> warnings;
  auto asWritten = [&](std::string why) -> absl::StatusOr<Kernel> {
    absl::StatusOr<Kernel> kernel = compileUnguarded(module, plain);
    if (kernel.ok() && !why.empty())
      kernel->warnings.push_back(absl::StrCat("the tuning knowledge bank was not consulted: ", why));
    return kernel;
  };
  // The bank keys a record by one function's text and the default pipeline's knobs;
  // a module with loops is compiled as written (the bank does not know loops yet).
  for (const ir::Func &f : module.funcs())
    if (ir::levelOf(f) == ir::Level::Control) return asWritten("");
  if (module.numFuncs() != 1)
    return asWritten(absl::StrCat("the module has ", module.numFuncs(),
                                  " functions and the bank knows one-function modules; put the "
                                  "function in a file of its own"));
  if (!options.pipeline.empty())
    return asWritten("an explicit pipeline replaces the knobs a bank config sets; drop the "
                     "pipeline to use the bank");
  // The function with the user's locations: a tuned kernel's errors name their lines.
  ir::PrintOptions withLocations;
  withLocations.printLocations = true;
  std::string text = ir::toString(module, withLocations);
  absl::StatusOr<std::optional<BankAnswer>> answer =
      lookupTuned(*this, text, options.bankPath, options.knobs, warnings);
  if (!answer.ok()) {
    warnings.push_back(absl::StrCat("the tuning knowledge bank was not consulted: ",
                                    std::string(answer.status().message())));
  } else if (*answer) {
    const BankAnswer &a = **answer;
    CompileOptions tuned = plain;
    tuned.knobs = a.config.knobs;
    absl::StatusOr<Kernel> kernel = compileText(a.config.moduleText, "<tuned>", tuned);
    if (kernel.ok()) {
      kernel->bankConfig = a.config.configJson;
      kernel->bankSchedMode = a.config.schedMode;
      kernel->warnings.insert(kernel->warnings.begin(), warnings.begin(), warnings.end());
      return kernel;
    }
    warnings.push_back(absl::StrCat("the knowledge bank's config ", a.config.configJson,
                                    " for this function does not compile (",
                                    std::string(kernel.status().message()),
                                    "); compiling the function as written"));
  }
  absl::StatusOr<Kernel> kernel = compileUnguarded(module, plain);
  if (kernel.ok())
    kernel->warnings.insert(kernel->warnings.begin(), warnings.begin(), warnings.end());
  return kernel;
}

absl::StatusOr<Kernel> Session::compileUnguarded(ir::Module &module,
                                                 const CompileOptions &options) const {
  // A description built in code was never read through fromJson's checks.
  if (absl::Status s = device_.validate(); !s.ok()) return s;
  auto start = Clock::now();
  ir::Context &ctx = module.context();
  ir::DiagnosticCollector diags(ctx.diag());

  ir::Func *func = nullptr;
  if (!options.funcName.empty()) {
    func = module.lookup(options.funcName);
    if (!func)
      return absl::InvalidArgumentError(
          absl::StrCat("no function named '", options.funcName, "' in the module"));
  } else if (module.numFuncs() == 1) {
    func = &module.func(0);
  } else if (ir::Func *entry = ir::loopEntry(module)) {
    func = entry; // the one function no loop runs: the others are its bodies
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "the module has ", module.numFuncs(),
        " functions; name the one to compile (CompileOptions::funcName)"));
  }
  // A control function (with loops) is compiled with the root functions its loops run.
  bool loops = ir::levelOf(*func) == ir::Level::Control;
  if (loops ? failed(ir::verify(module, ir::VerifyOptions{&device_}))
            : failed(ir::verify(*func, ir::VerifyOptions{&device_})))
    return diags.toStatus();

  Kernel kernel;
  kernel.funcName = func->name().str();
  kernel.device = device_;
  for (unsigned i = 0; i < func->numArgs(); ++i) {
    ir::Identifier hint = func->arg(i)->nameHint();
    kernel.args.push_back(
        specOf(func->arg(i)->type(), hint ? hint.str().str() : absl::StrCat("arg", i)));
  }
  for (size_t i = 0; i < func->resultTypes().size(); ++i)
    kernel.results.push_back(specOf(func->resultTypes()[i], absl::StrCat("result", i)));

  if (!options.pipeline.empty() && !options.knobs.empty())
    return absl::InvalidArgumentError(
        "both a pass pipeline and pass knobs were given; put the options into the pipeline "
        "text, or leave the pipeline empty to configure the default one with the knobs");
  std::string pipeline =
      options.pipeline.empty() ? pipelineFor(options.stopAt, options.knobs) : options.pipeline;
  // Code between loops becomes root functions first (docs/ir.md, "Loops").
  if (loops && !pipeline.empty()) pipeline = absl::StrCat("outline-segments,", pipeline);
  kernel.pipeline = pipeline;
  kernel.knobs = options.knobs;
  unsigned funcIndex = 0;
  while (funcIndex < module.numFuncs() && &module.func(funcIndex) != func) ++funcIndex;
  auto text = [&] { return loops ? ir::toString(module) : ir::toString(*func); };
  if (options.keepIr) kernel.irByStage[Stage::Tensor] = text();
  if (!pipeline.empty()) {
    passes::PassManagerOptions pmOptions;
    pmOptions.verifyEach = options.verifyEach;
    pmOptions.budget = options.budget;
    pmOptions.dumpDirectory = options.irDumpDir;
    pmOptions.afterPass = [&](llvm::StringRef pass, const ir::Module &) {
      if (options.keepIr && pass == "expand-tiles") kernel.irByStage[Stage::Tile] = text();
    };
    passes::PassManager pm(device_, pmOptions);
    passes::PassRegistry registry;
    passes::registerAllPasses(registry);
    if (absl::Status st = pm.addPipeline(pipeline, registry); !st.ok()) return st;
    if (failed(pm.run(module))) return diags.toStatus();
    kernel.stats.passStatistics = pm.statistics();
    kernel.derivedTiles = pm.derivedTiles();
    kernel.stats.tileOps = int64_t(kernel.stats.statistic("expand-tiles", "tile-ops"));
  }
  kernel.stage = options.stopAt;
  if (options.collectStats) {
    if (!loops) {
      collectSubgraphStats(*func, funcIndex, device_, kernel.stats);
    } else {
      for (size_t i = 0; i < module.numFuncs(); ++i) {
        if (ir::levelOf(module.func(i)) == ir::Level::Control) continue;
        ++kernel.stats.rootFunctions;
        collectSubgraphStats(module.func(i), unsigned(i), device_, kernel.stats);
      }
    }
  }
  if (options.keepIr) {
    kernel.ir = text();
    if (kernel.stats.subgraphs > 0) kernel.irByStage[Stage::Partitioned] = kernel.ir;
    if (options.stopAt != Stage::Codegen) kernel.irByStage[options.stopAt] = kernel.ir;
  }

  if (options.stopAt == Stage::Codegen) {
    // A function with nothing to run (it returns its arguments or views of them) is
    // fine: its program has no calls and its results are read from the arguments.
    if (loops) {
      absl::StatusOr<codegen::LoopProgram> lp =
          codegen::buildLoopProgram(module, *func, device_, options.codegen);
      if (!lp.ok()) return lp.status();
      kernel.loops = std::make_shared<const codegen::LoopProgram>(*std::move(lp));
    } else if (ir::Level l = ir::levelOf(*func); l != ir::Level::Partitioned && l != ir::Level::Empty)
      return absl::InvalidArgumentError(absl::StrCat(
          "function '", kernel.funcName,
          "' is not partitioned after the pipeline '", pipeline,
          "'; codegen needs subgraphs (include expand-tiles and partition, or use the default "
          "pipeline)"));
    if (!loops) {
      absl::StatusOr<codegen::Program> program =
          codegen::buildProgram(*func, device_, options.codegen, funcIndex);
      if (!program.ok()) return program.status();
      kernel.program = *std::move(program);
    }
  }
  if (options.stopAt == Stage::Codegen && options.keepIr) {
    std::string printed;
    llvm::raw_string_ostream os(printed);
    if (kernel.loops) codegen::printLoopProgram(*kernel.loops, os);
    else codegen::printProgram(kernel.program, os);
    kernel.irByStage[Stage::Codegen] = std::move(os.str());
  }
  if (diags.hasErrors()) return diags.toStatus();
  for (const ir::Diagnostic &d : diags.diagnostics())
    if (d.severity == ir::Severity::Remark) kernel.remarks.push_back(d.str());
    else if (d.severity == ir::Severity::Warning)
      // Where and what; the tools and the jit say "warning" themselves.
      kernel.warnings.push_back(d.loc.isKnown() ? absl::StrCat(d.loc.str(), ": ", d.message)
                                                : d.message);
  kernel.compileSeconds = secondsSince(start);
  return kernel;
}

absl::StatusOr<Kernel> Session::compileText(llvm::StringRef text, llvm::StringRef fileName,
                                            const CompileOptions &options) const {
  ir::Context ctx;
  absl::StatusOr<std::unique_ptr<ir::Module>> module = ir::parseModuleOrError(text, fileName, ctx);
  if (!module.ok()) return module.status();
  return compile(**module, options);
}

absl::StatusOr<RunReport> Session::run(const Kernel &kernel,
                                       llvm::ArrayRef<runtime::HostTensor> args,
                                       std::vector<runtime::HostTensor> &results,
                                       const RunOptions &options) const {
  std::vector<runtime::ConstTensorRef> refs(args.begin(), args.end());
  return runWith(kernel, refs, nullptr, options,
                 [&](const codegen::Program &program, llvm::ArrayRef<runtime::ConstTensorRef>,
                     llvm::ArrayRef<int> order, const runtime::ExecOptions &exec) {
                   return runtime::execute(program, args, results, order, exec);
                 });
}

absl::StatusOr<RunReport> Session::run(const Kernel &kernel,
                                       llvm::ArrayRef<runtime::ConstTensorRef> args,
                                       llvm::ArrayRef<runtime::TensorRef> results,
                                       const RunOptions &options) const {
  return runWith(kernel, args, &results, options,
                 [&](const codegen::Program &program, llvm::ArrayRef<runtime::ConstTensorRef> in,
                     llvm::ArrayRef<int> order, const runtime::ExecOptions &exec) {
                   return runtime::executeInto(program, in, results, order, exec);
                 });
}

namespace {

/// Whether the host has the memory executing `program` on `args` (into `results`,
/// when given) allocates for its tensors (runtime::executionBytes); else a
/// ResourceExhausted error naming the limit, before anything is simulated or
/// allocated.
absl::Status checkExecutionFits(const Kernel &kernel, const codegen::Program &program,
                                llvm::ArrayRef<runtime::ConstTensorRef> args,
                                const llvm::ArrayRef<runtime::TensorRef> *results) {
  int64_t needed = runtime::executionBytes(program, args, results);
  support::MemoryHeadroom headroom = support::memoryHeadroom();
  if (needed <= headroom.bytes) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "running '", kernel.funcName, "' with numerics needs ", support::bytesText(double(needed)),
      " of host memory for its intermediate and result tensors, and this process may allocate ",
      support::bytesText(double(headroom.bytes)), " more, limited by ", headroom.limit,
      ": raise the memory limit, use smaller tensors, or simulate only (run_numerics=False, "
      "ptoc run --no-numerics)"));
}

} // namespace

template <typename Execute>
absl::StatusOr<RunReport> Session::runWith(const Kernel &kernel,
                                           llvm::ArrayRef<runtime::ConstTensorRef> args,
                                           const llvm::ArrayRef<runtime::TensorRef> *results,
                                           const RunOptions &options, Execute execute) const {
  if (kernel.stage != Stage::Codegen)
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel '", kernel.funcName, "' was compiled only to the ", stageName(kernel.stage).str(),
        " stage; compile to the codegen stage to run it"));
  if (options.debugMode < 0 || options.debugMode > kMaxDebugMode)
    return absl::InvalidArgumentError(absl::StrCat(
        "runtime_debug_mode must be 0 (off), 1 (swimlane) or 2 (swimlane with pipe lanes), got ",
        options.debugMode));
  if (options.stitchMaxNum < runtime::kMinStitchMaxNum ||
      options.stitchMaxNum > runtime::kMaxStitchMaxNum)
    return absl::InvalidArgumentError(absl::StrCat(
        "stitch_function_max_num must be between ", runtime::kMinStitchMaxNum, " and ",
        runtime::kMaxStitchMaxNum, " (loop iterations per stitch), got ", options.stitchMaxNum));
  if (absl::Status s = runtime::checkSchedParallelism(options.schedParallelism); !s.ok())
    return s;
  if (options.hostThreads > runtime::kMaxHostThreads)
    return absl::InvalidArgumentError(absl::StrCat(
        "host_threads must be between 0 (all cores) and ", runtime::kMaxHostThreads, ", got ",
        options.hostThreads));
  if (absl::Status st = checkBuffers(kernel, kernel.args, args, "argument"); !st.ok())
    return st;
  if (results)
    if (absl::Status st = checkBuffers(kernel, kernel.results, *results, "result"); !st.ok())
      return st;

  try {
    return runGuarded(kernel, args, results, options, execute);
  } catch (const std::bad_alloc &) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "running '", kernel.funcName, "' ran out of host memory (simulating ",
        kernel.loops ? "the loops'" : std::to_string(kernel.program.calls.size()), " tasks",
        options.numerics ? " and computing its tensors" : "",
        "): raise the memory limit, or use bigger tiles (fewer tasks)",
        options.numerics ? ", or run_numerics=False to simulate only" : ""));
  }
}

template <typename Execute>
absl::StatusOr<RunReport> Session::runGuarded(const Kernel &kernel,
                                              llvm::ArrayRef<runtime::ConstTensorRef> args,
                                              const llvm::ArrayRef<runtime::TensorRef> *results,
                                              const RunOptions &options, Execute execute) const {
  RunReport report;
  runtime::SimOptions sim;
  sim.schedMode = options.schedMode;
  sim.recordPipes = options.debugMode >= 2;
  sim.kernelKind = options.kernelKind;
  // A kernel with loops has its iterations instantiated (once per stitch size).
  absl::StatusOr<std::shared_ptr<const codegen::Program>> runnable =
      kernel.runnable(options.stitchMaxNum, options.schedParallelism, args);
  if (!runnable.ok()) return runnable.status();
  const codegen::Program *program = runnable->get();
  if (options.numerics)
    if (absl::Status st = checkExecutionFits(kernel, *program, args, results); !st.ok())
      return st;
  auto simStart = Clock::now();
  // Validated, flattened and its regions identified once per kept program.
  absl::StatusOr<std::shared_ptr<const runtime::PreparedProgram>> prepared =
      kernel.prepared(*runnable, device_, deviceJson_);
  if (!prepared.ok()) return prepared.status();
  absl::StatusOr<runtime::RunRecord> record = runtime::simulate(**prepared, sim);
  if (!record.ok()) return record.status();
  report.simulateSeconds = secondsSince(simStart);
  report.record = *std::move(record);
  report.schedParallelism = program->schedParallelism;

  if (options.numerics) {
    // Start calls in the order the simulated schedule started them.
    std::vector<int> order(report.record.tasks.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return report.record.tasks[a].startCycle < report.record.tasks[b].startCycle;
    });
    runtime::ExecOptions exec;
    exec.threads = options.hostThreads;
    auto execStart = Clock::now();
    if (absl::Status st = execute(*program, args, order, exec); !st.ok()) return st;
    report.executeSeconds = secondsSince(execStart);
  }

  const runtime::RunRecord &r = report.record;
  report.simulatedUs = r.simulatedUs();
  report.boundUs = r.boundUs();
  report.boundRatio = report.simulatedUs > 0 ? report.boundUs / report.simulatedUs : 0;
  report.aicUtilization = r.utilization(target::CoreKind::AIC);
  report.aivUtilization = r.utilization(target::CoreKind::AIV);
  absl::StatusOr<profile::Summary> summary = profile::summarize(*program, r);
  if (!summary.ok()) return summary.status();
  summary->derivedTiles = kernel.derivedTiles;
  report.summary = profile::summaryText(*summary);
  if (options.debugMode > 0) {
    absl::StatusOr<std::string> folder =
        profile::writeRunOutputs(*program, r, *summary, options.outputDir);
    if (!folder.ok()) return folder.status();
    report.outputFolder = *folder;
    report.swimlanePath = absl::StrCat(*folder, "/merged_swimlane.json");
  }
  return report;
}

} // namespace ptoc::session
