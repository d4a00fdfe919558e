// tuneModule: the knowledge bank first, else a lib/tune search whose candidates are
// compiled and simulated (no numerics) in parallel on host threads; the run is written
// as a tune_result file and every valid config measured goes into the bank.
#include "ptoc/session/Tuner.h"

#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/profile/OutputDir.h"
#include "ptoc/runtime/Executor.h"
#include "ptoc/runtime/Simulator.h"
#include "ptoc/session/Version.h"
#include "ptoc/tune/Bank.h"
#include "ptoc/tune/BankLookup.h"
#include "ptoc/tune/CandidateCompiler.h"
#include "ptoc/tune/TuneResult.h"
#include "ptoc/tune/TuneSpace.h"

namespace ptoc::session {

using tune::applyConfig;
using tune::CompiledCandidate;
using tune::applyConfigValues;
using tune::checkSpaceApplies;
using tune::parseFunc;
using tune::ParsedFunc;
using tune::PruneTable;
using tune::writtenConfig;

namespace {

/// Batches per host thread for the strategies whose path does not depend on the batch
/// size (grid, random, ga): a batch of several distinct compiles keeps every thread
/// busy while the configs that share a compile (they differ only in the scheduler
/// mode) simulate its one program.
constexpr std::size_t kOrderFreeBatchPerThread = 8;

/// The name compile errors of candidates carry (the text is the rewritten function,
/// whose ops keep the user's locations when it was given with them).
constexpr const char *kCandidateFileName = "<tune candidate>";

/// What every candidate is instantiated with (TuneOptions::argShapes, argData,
/// stitchMaxNum): the sizes of a kernel's dynamic axes, the data a kernel whose loops
/// read its inputs needs (one pointer per argument, laid out as argShapes says; empty
/// when the caller gave none) and the stitch size of its loops.
struct CandidateInputs {
  std::vector<std::vector<int64_t>> argShapes;
  std::vector<const void *> argData;
  int64_t stitchMaxNum = runtime::kDefaultStitchMaxNum;
};

/// `compiled` instantiated with `inputs` and `parallelism`, prepared for simulation.
absl::StatusOr<runtime::PreparedProgram> prepareCandidate(const Session &session,
                                                          const absl::StatusOr<Kernel> &compiled,
                                                          const CandidateInputs &inputs,
                                                          int parallelism) {
  if (!compiled.ok()) return compiled.status();
  const Kernel *kernel = &*compiled;
  // A kernel whose loops read values of its inputs is instantiated with the call's
  // data; one with dynamic axes for the sizes being tuned.
  const std::vector<std::vector<int64_t>> &argShapes = inputs.argShapes;
  bool readsTensors = kernel->loops && kernel->loops->readsTensors;
  if (readsTensors && (inputs.argData.size() != kernel->args.size() ||
                       argShapes.size() != kernel->args.size()))
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel '", kernel->funcName, "' has loops that read values of its inputs (t[i, j] "
        "in a bound or an offset), so its iterations depend on them: give the tuner its ",
        kernel->args.size(), " arguments with their data (TuneOptions::argShapes and argData; "
        "ptoc.tune passes the call's), the inputs to tune for"));
  std::vector<runtime::ConstTensorRef> args;
  if (readsTensors || (kernel->loops && kernel->loops->dynamicShapes)) {
    if (argShapes.size() != kernel->args.size())
      return absl::InvalidArgumentError(absl::StrCat(
          "kernel '", kernel->funcName, "' has dynamic axes: give the tuner the shapes of its ",
          kernel->args.size(), " arguments (TuneOptions::argShapes; ptoc.tune passes the "
          "call's), the sizes to tune for"));
    for (size_t i = 0; i < argShapes.size(); ++i)
      args.emplace_back(kernel->args[i].dtype, argShapes[i],
                        readsTensors ? inputs.argData[i] : nullptr);
  }
  absl::StatusOr<std::shared_ptr<const codegen::Program>> program = kernel->runnable(
      static_cast<int>(inputs.stitchMaxNum), parallelism, args);
  if (!program.ok()) return program.status();
  return runtime::PreparedProgram::prepare(**program, session.device());
}

/// The tuner's compile of a candidate on `session` (tune::CandidateCompiler's
/// callback): no IR text, no statistics, no per-pass verification (candidates are only
/// simulated); each preparation instantiates the kernel with `inputs`.
tune::CompileCandidate compileCandidates(const Session &session, CandidateInputs inputs) {
  auto shared = std::make_shared<const CandidateInputs>(std::move(inputs));
  return [&session, shared](const TunedConfig &config) -> tune::PrepareCandidate {
    CompileOptions compile;
    compile.knobs = config.knobs;
    // Codegen still verifies the partitioned function it is given.
    compile.verifyEach = false;
    compile.keepIr = false;
    compile.collectStats = false;
    auto kernel = std::make_shared<const absl::StatusOr<Kernel>>(
        session.compileText(config.moduleText, kCandidateFileName, compile));
    return [&session, shared, kernel](int parallelism) {
      return prepareCandidate(session, *kernel, *shared, parallelism);
    };
  };
}

/// Simulates `program` (prepared for the session's device, with the config's
/// device_sched_parallelism) with the config's scheduler mode; the error when it did not compile or does not simulate (a tile
/// that does not fit, a merge the device cannot hold).
absl::StatusOr<runtime::RunRecord> simulateConfig(
    const TunedConfig &config, const absl::StatusOr<runtime::PreparedProgram> &program) {
  if (!program.ok()) return program.status();
  runtime::SimOptions sim;
  sim.schedMode = config.schedMode;
  return runtime::simulate(*program, sim);
}

tune::Outcome outcomeOf(const absl::StatusOr<runtime::RunRecord> &record) {
  if (!record.ok()) return tune::Outcome::invalid(std::string(record.status().message()));
  return tune::Outcome(record->simulatedUs());
}

/// The run spent more core time on the cube cores than on the vector cores.
bool cubeDominated(const runtime::RunRecord &record) {
  double cube = 0, vector = 0;
  for (size_t core = 0; core < record.coreBusyCycles.size(); ++core)
    (int(core) < record.aicCores ? cube : vector) += record.coreBusyCycles[core];
  return cube > vector;
}

/// The groups of two or more subgraphs of the function as written, partitioned with
/// `baseKnobs` and every merge pass off: the keys `vec_nbuffer_setting` and
/// `cube_nbuffer_setting` use. A module with several root functions (loop bodies,
/// segments) gets a group per root function (`func<F>_<order>` keys, so each body's
/// group is tuned on its own); with one, the plain hash order. (The cube merge runs
/// after the vector merge, which keeps the order of the groups it merges; a chunk
/// left over at a group's end can add a group after them.)
absl::StatusOr<std::vector<tune::MergeGroup>> mergeGroups(const Session &session,
                                                          llvm::StringRef moduleText,
                                                          llvm::StringRef funcName,
                                                          const PassKnobs &baseKnobs) {
  CompileOptions compile;
  compile.knobs = baseKnobs;
  compile.funcName = funcName.str();
  compile.stopAt = Stage::Partitioned;
  compile.verifyEach = false;
  compile.keepIr = false;
  for (const char *mode : {"vec_nbuffer_mode", "cube_nbuffer_mode", "cube_l1_reuse_mode"})
    if (absl::Status s = compile.knobs.set(mode, int64_t(0)); !s.ok()) return s;
  absl::StatusOr<Kernel> kernel = session.compileText(moduleText, "<tune>", compile);
  if (!kernel.ok()) return kernel.status();
  bool perFunction = kernel->stats.rootFunctions > 1;
  std::vector<tune::MergeGroup> groups;
  for (const GroupStats &g : kernel->stats.groups) {
    if (g.size < 2 || (g.core != target::CoreKind::AIV && g.core != target::CoreKind::AIC))
      continue;
    int64_t func = perFunction ? int64_t(g.funcIndex) : passes::GroupKey::kEveryFunc;
    groups.push_back({func, g.hashOrder, g.core, g.size});
  }
  return groups;
}

} // namespace

absl::StatusOr<tune::SearchSpace> deriveSearchSpace(const Session &session,
                                                    llvm::StringRef moduleText,
                                                    llvm::StringRef funcName,
                                                    const PassKnobs &baseKnobs,
                                                    int schedParallelism) {
  // Parse errors come first (a compile would report them with less context).
  absl::StatusOr<ParsedFunc> parsed = parseFunc(moduleText, funcName);
  if (!parsed.ok()) return parsed.status();
  absl::StatusOr<std::vector<tune::MergeGroup>> groups =
      mergeGroups(session, moduleText, funcName, baseKnobs);
  if (!groups.ok()) return groups.status();
  return tune::deriveSearchSpace(moduleText, funcName, session.device(), *groups,
                                 schedParallelism, baseKnobs);
}

absl::StatusOr<std::optional<BankAnswer>> lookupTuned(const Session &session,
                                                      llvm::StringRef moduleText,
                                                      llvm::StringRef bankPath,
                                                      const PassKnobs &baseKnobs,
                                                      std::vector<std::string> &warnings) {
  absl::StatusOr<tune::BankKey> key = tune::bankKeyOf(moduleText, session.device(), version());
  if (!key.ok()) return key.status();
  absl::StatusOr<tune::Bank> bank = tune::Bank::open(bankPath);
  if (!bank.ok()) return bank.status();
  return tune::answerFromBank(*bank, *key, moduleText, baseKnobs, warnings);
}

absl::StatusOr<TuneReport> tuneModule(const Session &session, llvm::StringRef moduleText,
                                      const TuneOptions &options,
                                      const tune::SearchSpace *space) {
  if (options.threads > runtime::kMaxHostThreads)
    return absl::InvalidArgumentError(absl::StrCat("tuning threads must be between 0 (all cores) and ",
                                                   runtime::kMaxHostThreads, ", got ",
                                                   options.threads));
  if (absl::Status s = runtime::checkSchedParallelism(options.schedParallelism); !s.ok()) return s;
  absl::StatusOr<tune::BankKey> key = tune::bankKeyOf(moduleText, session.device(), version());
  if (!key.ok()) return key.status();

  TuneReport report;
  // The function as written, for comparison (not an evaluation of the search).
  // (Printed the way candidates are, so a written best and a bank hit compare equal.)
  absl::StatusOr<TunedConfig> printed = applyConfigValues({}, moduleText, options.baseKnobs);
  if (!printed.ok()) return printed.status();
  TunedConfig written = *std::move(printed);
  written.configJson = "{}";
  written.schedMode = options.schedMode;
  written.schedParallelism = options.schedParallelism;
  unsigned threads = options.threads ? options.threads : std::thread::hardware_concurrency();
  threads = std::max(threads, 1u);
  llvm::ThreadPool pool(llvm::hardware_concurrency(threads));
  // The written function's compile is shared with the search's first seed (the same
  // function, the same knobs).
  tune::CandidateCompiler compiler(
      compileCandidates(session, {options.argShapes, options.argData, options.stitchMaxNum}),
      options.programCacheBytes, options.schedParallelism);
  absl::StatusOr<runtime::RunRecord> baseline =
      simulateConfig(written, *compiler.compileBatch({&written}, pool)[0]);
  if (!baseline.ok()) {
    // Report the real compile error: the search cannot start from a broken function.
    CompileOptions compile;
    compile.knobs = options.baseKnobs;
    absl::StatusOr<Kernel> kernel = session.compileText(moduleText, "<tune>", compile);
    if (!kernel.ok()) return kernel.status();
    // A limitation of the tuner, or what the caller gave (the shapes of a kernel with
    // dynamic axes), is reported as itself; anything else is a bug, with its reason.
    if (absl::IsUnimplemented(baseline.status()) || absl::IsInvalidArgument(baseline.status()))
      return baseline.status();
    return absl::InternalError(absl::StrCat(
        "the function as written compiles but does not simulate: ", baseline.status().message()));
  }
  report.baselineUs = baseline->simulatedUs();
  report.cubeDominated = cubeDominated(*baseline);

  if (space) {
    if (absl::Status s = checkSpaceApplies(*space, moduleText); !s.ok()) return s;
    report.space = *space;
  } else {
    absl::StatusOr<tune::SearchSpace> derived =
        deriveSearchSpace(session, moduleText, "", options.baseKnobs, options.schedParallelism);
    if (!derived.ok()) return derived.status();
    report.space = *std::move(derived);
  }

  std::optional<tune::Bank> bank;
  if (options.useBank) {
    absl::StatusOr<tune::Bank> opened = tune::Bank::open(options.bankPath);
    if (!opened.ok()) return opened.status();
    bank = *std::move(opened);
  }
  // A space of the caller's own is searched, not answered from the bank (whose best
  // may lie outside it); its results are still recorded.
  if (bank && !space) {
    std::vector<std::string> warnings;
    absl::StatusOr<std::optional<BankAnswer>> answer =
        tune::answerFromBank(*bank, *key, moduleText, options.baseKnobs, warnings);
    for (const std::string &w : warnings) llvm::errs() << "ptoc tune: warning: " << w << "\n";
    if (!answer.ok()) return answer.status();
    if (*answer) {
      report.best = std::move((*answer)->config);
      // A record without device_sched_parallelism (before it was a knob, or of a
      // function without parallel loops) keeps the kernel's own.
      if (!report.best->schedParallelism) report.best->schedParallelism = options.schedParallelism;
      report.bestUs = (*answer)->simulatedUs;
      report.bankHit = true;
      report.result.strategy = (*answer)->strategy;
      report.compiles = compiler.compiles();
      return report;
    }
  }

  tune::SearchOptions search = options.search;
  search.cubeDominated = report.cubeDominated;
  // The search starts from the function as written (when the space holds it).
  std::optional<tune::Config> asWritten =
      writtenConfig(report.space, moduleText, options.baseKnobs, options.schedMode,
                    options.schedParallelism);
  if (asWritten && search.seeds.empty()) search.seeds.push_back(*asWritten);
  if (asWritten) report.writtenConfigJson = report.space.configToString(*asWritten);
  if (search.parallelism <= 1) {
    tune::Strategy strategy =
        tune::resolveStrategy(search.strategy, report.space, search.cubeDominated);
    search.parallelism = strategy == tune::Strategy::Bandit
                             ? threads
                             : std::size_t(threads) * kOrderFreeBatchPerThread;
  }

  const tune::SearchSpace &theSpace = report.space;
  // A config applied; one without a scheduler mode or device_sched_parallelism keeps
  // the kernel's own.
  bool spaceHasSched = theSpace.findDimension(tune::kSchedDim) >= 0;
  auto apply = [&](const tune::Config &config) -> absl::StatusOr<TunedConfig> {
    absl::StatusOr<TunedConfig> applied =
        applyConfig(theSpace, config, moduleText, options.baseKnobs);
    if (applied.ok() && !spaceHasSched) applied->schedMode = options.schedMode;
    if (applied.ok() && !applied->schedParallelism)
      applied->schedParallelism = options.schedParallelism;
    return applied;
  };
  // A batch: configs applied (in parallel), each distinct function and knobs compiled
  // once (in parallel), then every config simulated (in parallel).
  tune::Evaluate evaluate = [&](const std::vector<tune::Config> &batch) {
    std::vector<tune::Outcome> outcomes(batch.size());
    std::vector<std::optional<TunedConfig>> applied(batch.size());
    for (size_t i = 0; i < batch.size(); ++i)
      pool.async([&, i] {
        absl::StatusOr<TunedConfig> config = apply(batch[i]);
        if (config.ok()) applied[i] = *std::move(config);
        else outcomes[i] = tune::Outcome::invalid(std::string(config.status().message()));
      });
    pool.wait();
    std::vector<const TunedConfig *> toCompile(batch.size());
    for (size_t i = 0; i < batch.size(); ++i)
      if (applied[i]) toCompile[i] = &*applied[i];
    std::vector<CompiledCandidate> programs = compiler.compileBatch(toCompile, pool);
    for (size_t i = 0; i < batch.size(); ++i)
      if (programs[i])
        pool.async(
            [&, i] { outcomes[i] = outcomeOf(simulateConfig(*applied[i], *programs[i])); });
    pool.wait();
    return outcomes;
  };
  // Tile values that fail the verifier's checks are pruned before any compile.
  absl::StatusOr<PruneTable> pruneTable = PruneTable::build(theSpace, moduleText, session.device());
  if (!pruneTable.ok()) return pruneTable.status();
  tune::Prune prune = [&](const tune::Config &config) { return pruneTable->reason(config); };
  absl::StatusOr<tune::SearchResult> result =
      tune::runSearch(theSpace, evaluate, search, prune, options.progress);
  if (!result.ok()) return result.status();
  report.result = *std::move(result);
  report.compiles = compiler.compiles();

  if (const tune::Evaluation *best = report.result.bestEvaluation()) {
    absl::StatusOr<TunedConfig> applied =
        apply(best->config);
    if (!applied.ok()) return applied.status();
    report.best = *std::move(applied);
    report.bestUs = *best->micros;
  }
  // The function as written is a measured config too: a small budget may find
  // nothing faster, and then the written config is the best known (and the bank
  // should say so).
  if (!report.best || report.baselineUs < report.bestUs) {
    written.configJson = asWritten ? theSpace.configToString(*asWritten) : "{}";
    report.best = written;
    report.bestUs = report.baselineUs;
    report.bestIsWritten = true;
  }

  std::string folder = options.resultDir.empty() ? profile::outputBase("") : options.resultDir;
  absl::StatusOr<std::string> path = tune::writeTuneResult(theSpace, report.result, folder);
  if (!path.ok()) return path.status();
  report.resultPath = *path;

  if (bank) {
    if (asWritten) {
      tune::BankRecord record{*key, theSpace.configToString(*asWritten), report.baselineUs,
                              report.result.strategy, ""};
      if (absl::Status s = bank->record(record); !s.ok()) return s;
    }
    for (const tune::Evaluation &e : report.result.evaluations) {
      if (!e.micros) continue;
      tune::BankRecord record{*key, theSpace.configToString(e.config), *e.micros,
                              report.result.strategy, ""};
      if (absl::Status s = bank->record(record); !s.ok()) return s;
    }
  }
  return report;
}

} // namespace ptoc::session
