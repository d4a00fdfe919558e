// `ptoc tune FILE.pto` (a search, lib/session/Tuner.cpp) and `ptoc tune
// show|merge|add|lookup` (the knowledge bank, lib/tune/Bank.cpp) from the command line;
// each form's arguments are one table of the commands' parser (ArgParser.h).
#include "ptoc/tools/TuneMain.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <set>

#include "CommonOptions.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Diagnostics.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/ir/Printer.h"
#include "ptoc/runtime/Executor.h"
#include "ptoc/session/Session.h"
#include "ptoc/session/Tuner.h"
#include "ptoc/session/Version.h"
#include "ptoc/support/BoundedJson.h"
#include "ptoc/support/ReadFile.h"
#include "ptoc/target/DeviceSpec.h"
#include "ptoc/tools/ArgParser.h"
#include "ptoc/tune/Bank.h"
#include "ptoc/tune/TuneProgress.h"

namespace ptoc::tools {

using session::Session;
using session::TuneOptions;
using tune::TuneProgress;
using session::TuneReport;
using session::tuneModule;
using session::version;
namespace {

// What each form of `ptoc tune` does: its own help, and together `ptoc tune --help`.
constexpr const char *kAboutTune = R"(Tuning on the simulator and the knowledge bank (docs/tuning.md): measured configs per
device, operator structure and shapes, in the bank folder (--bank DIR, default
$PTOC_TUNE_BANK_PATH, else ~/.cache/ptoc/bank).
)";
constexpr const char *kAboutSearch = R"(Searches the tile shapes (each distinct vec_tile / cube_tile), the merge count of each
group of isomorphic subgraphs, the scheduler mode and, with a parallel loop,
device_sched_parallelism (1, 2, 4, 8 and --device-sched-parallelism, the value the
function as written runs with) of the file's function on
--device: a bank hit applies the best known config without searching; else --strategy
evaluates up to --budget configs on --threads host threads (a progress bar on stderr;
configs that differ only in runtime options share one compile), writes
tune_result_<time>_pid<n>.json into --result-dir and records every valid config in the
bank (--no-bank: neither read nor written). --seed seeds the search; --pass-option
sets a knob every candidate starts from. --space searches a space of your own instead
of the derived one: a JSON object {"knob": [values...]} (knob names: docs/tuning.md).
auto is ga when the function as written keeps the cube cores busier than the vector
cores, else rl.
)";
constexpr const char *kAboutShow = R"(Prints the bank's records as a table (the best of each key marked *); --device keeps
one device's records.
)";
constexpr const char *kAboutMerge = R"(Merges banks A and B (folders, or <device>-<hash>.jsonl files of one device) into C,
keeping the fastest record per (key, config); records already in C are kept.
)";
constexpr const char *kAboutAdd = R"(Records one measured config (a low-level command for scripts and tests; the ptoc
version is this build's): SIG as `ptoc tune` and @ptoc.jit write it, e.g.
'f32[256,4096]->f32[256,4096]'; JSON one config object.
)";
constexpr const char *kAboutLookup = R"(Prints the best config recorded for the key; exit status 1 when there is none.
)";

/// The bank folder option of show, add and lookup.
ArgOption bankOption(std::string *dir) {
  return {"bank", dir, "DIR", "the knowledge bank folder", {},
          "$PTOC_TUNE_BANK_PATH, else ~/.cache/ptoc/bank"};
}

/// The arguments of show, merge, add and lookup.
struct BankArgs {
  std::string bank;
  std::string device;
  std::vector<std::string> banks; ///< merge: A and B
  std::string output;             ///< merge: C
  uint64_t graphHash = 0;
  std::string signature;
  std::string config;
  double time = 0;
  std::string strategy = "manual";
};

CommandSpec showSpec(BankArgs &a) {
  return CommandSpec{"ptoc tune show", kAboutShow, std::nullopt,
                     {bankOption(&a.bank),
                      {"device", &a.device, "NAME|FILE.json", "only this device's records"}}};
}

CommandSpec mergeSpec(BankArgs &a) {
  return CommandSpec{
      "ptoc tune merge", kAboutMerge, ArgPositional{"A B", &a.banks, "banks", 2, 2},
      {{"output", &a.output, "C", "the merged bank (a folder or a .jsonl file)", {}, "", 'o',
        true}}};
}

/// The key options of add and lookup: device, graph hash and signature.
std::vector<ArgOption> keyOptions(BankArgs &a) {
  uint64_t *hash = &a.graphHash;
  CustomValue hex{[hash](llvm::StringRef flag, const std::string &text) {
                    llvm::StringRef digits(text);
                    digits.consume_front("0x");
                    auto [end, ec] = std::from_chars(digits.begin(), digits.end(), *hash, 16);
                    if (digits.empty() || ec != std::errc() || end != digits.end())
                      return absl::StrCat(flag.str(),
                                          " must be a hex number (e.g. 0123456789abcdef), got '",
                                          text, "'");
                    return std::string();
                  },
                  ""};
  return {bankOption(&a.bank),
          {"device", &a.device, "NAME|FILE.json", "the device the config was measured on", {},
           "", 0, true},
          {"graph-hash", hex, "HEX", "the operator's structure hash", {}, "", 0, true},
          {"signature", &a.signature, "SIG", "the argument and result types", {}, "", 0, true}};
}

CommandSpec addSpec(BankArgs &a) {
  std::vector<ArgOption> options = keyOptions(a);
  options.push_back({"config", &a.config, "JSON", "the config (one JSON object)", {}, "", 0, true});
  options.push_back({"time", &a.time, "US", "its simulated time in microseconds", {}, "", 0,
                     true});
  options.push_back({"strategy", &a.strategy, "NAME", "the strategy that found it"});
  return CommandSpec{"ptoc tune add", kAboutAdd, std::nullopt, std::move(options)};
}

CommandSpec lookupSpec(BankArgs &a) {
  return CommandSpec{"ptoc tune lookup", kAboutLookup, std::nullopt, keyOptions(a)};
}

/// `ptoc tune FILE.pto` arguments: the tuner's own options struct, so its defaults
/// are the tuner's.
struct SearchArgs {
  std::string file;
  std::string device = target::kDefaultPreset;
  TuneOptions tune;
  std::string spaceFile;
  PassOptionTexts passOptions;
};

CommandSpec searchSpec(SearchArgs &a) {
  tune::Strategy *strategy = &a.tune.search.strategy;
  CustomValue strategyValue{[strategy](llvm::StringRef flag, const std::string &text) {
                              absl::StatusOr<tune::Strategy> s = tune::parseStrategy(text);
                              if (!s.ok()) return absl::StrCat(flag.str(), ": ", s.status().message());
                              *strategy = *s;
                              return std::string();
                            },
                            tune::strategyName(*strategy).str()};
  return CommandSpec{
      "ptoc tune", kAboutSearch,
      ArgPositional{"FILE.pto", &a.file, "file to tune", 1, 1, "no file to tune"},
      {
          deviceOption(&a.device),
          {"strategy", strategyValue, "auto|grid|random|ga|rl", "the search strategy"},
          {"budget", &a.tune.search.budget, "N", "the most configs to evaluate",
           Bounds::atLeast(1)},
          {"seed", &a.tune.search.seed, "S", "seeds every random choice of the search"},
          {"threads", &a.tune.threads, "N", "host threads evaluating configs (0 = all cores)",
           Bounds::atMost(runtime::kMaxHostThreads)},
          bankOption(&a.tune.bankPath),
          {"no-bank", Negated{&a.tune.useBank}, "", "neither read nor write the bank"},
          {"result-dir", &a.tune.resultDir, "DIR", "where the tune_result JSON goes", {},
           "$PTOC_OUTPUT_DIR, else ./output"},
          passOptionOption(&a.passOptions),
          schedParallelismOption(&a.tune.schedParallelism),
          {"space", &a.spaceFile, "SPACE.json", "search this space instead of the derived one"},
      }};
}

/// `ptoc tune --help`: every form's usage line, what each does, and each one's options.
std::string tuneHelp() {
  SearchArgs search;
  BankArgs show, merge, add, lookup;
  ArgParser parsers[] = {ArgParser(showSpec(show)), ArgParser(searchSpec(search)),
                         ArgParser(mergeSpec(merge)), ArgParser(addSpec(add)),
                         ArgParser(lookupSpec(lookup))};
  const char *abouts[] = {kAboutShow, kAboutSearch, kAboutMerge, kAboutAdd, kAboutLookup};
  constexpr llvm::StringLiteral kUsage = "usage: ";
  std::string out;
  for (const ArgParser &p : parsers)
    out += (out.empty() ? p.usageLine()
                        : std::string(kUsage.size(), ' ') + p.usageLine().substr(kUsage.size())) +
           "\n";
  out += std::string("\n") + kAboutTune;
  for (size_t i = 0; i < std::size(parsers); ++i)
    out += absl::StrCat("\n", parsers[i].usageLine().substr(kUsage.size()), "\n", abouts[i],
                        "options:\n", parsers[i].optionsHelp());
  return out;
}

void printWarnings(const std::vector<std::string> &warnings) {
  for (const std::string &w : warnings) llvm::errs() << "ptoc tune: warning: " << w << "\n";
}

int fail(llvm::StringRef command, const absl::Status &s) {
  llvm::errs() << "ptoc tune " << command << ": " << std::string(s.message()) << "\n";
  return kExitError;
}

/// The bank key of add and lookup, and the bank they use.
struct KeyedBank {
  tune::BankKey key;
  tune::Bank bank;
};

/// The key and bank of add and lookup; nullopt (the error printed) when the device
/// does not load or the bank does not open.
std::optional<KeyedBank> keyedBank(llvm::StringRef command, const BankArgs &a) {
  absl::StatusOr<target::DeviceSpec> device = target::DeviceSpec::load(a.device);
  if (!device.ok()) {
    fail(command, device.status());
    return std::nullopt;
  }
  tune::BankKey key;
  key.ptocVersion = version().str();
  key.deviceName = device->name;
  key.deviceHash = device->contentHash();
  key.graphHash = a.graphHash;
  key.signature = a.signature;
  absl::StatusOr<tune::Bank> bank = tune::Bank::open(a.bank);
  if (!bank.ok()) {
    fail(command, bank.status());
    return std::nullopt;
  }
  return KeyedBank{std::move(key), *std::move(bank)};
}

int showCommand(const std::vector<std::string> &argv) {
  BankArgs a;
  if (std::optional<int> status = ArgParser(showSpec(a)).parse(argv)) return *status;
  absl::StatusOr<tune::Bank> bank = tune::Bank::open(a.bank);
  if (!bank.ok()) return fail("show", bank.status());
  absl::StatusOr<std::vector<tune::BankRecord>> records = bank->all();
  printWarnings(bank->warnings());
  if (!records.ok()) return fail("show", records.status());
  if (!a.device.empty()) {
    // A loadable device filters by its hash (the description, not just the name).
    absl::StatusOr<target::DeviceSpec> spec = target::DeviceSpec::load(a.device);
    std::erase_if(*records, [&](const tune::BankRecord &r) {
      return spec.ok() ? r.key.deviceHash != spec->contentHash() : r.key.deviceName != a.device;
    });
  }
  llvm::outs() << "bank: " << bank->dir() << "\n" << tune::formatBankTable(*records);
  return kExitOk;
}

int mergeCommand(const std::vector<std::string> &argv) {
  BankArgs a;
  if (std::optional<int> status = ArgParser(mergeSpec(a)).parse(argv)) return *status;
  std::vector<std::string> warnings;
  absl::StatusOr<tune::MergeStats> stats =
      tune::mergeBanks(a.banks[0], a.banks[1], a.output, warnings);
  printWarnings(warnings);
  if (!stats.ok()) return fail("merge", stats.status());
  llvm::outs() << "merged " << stats->fromA << " + " << stats->fromB << " records into "
               << a.output << ": " << stats->written << " records\n";
  return kExitOk;
}

int addCommand(const std::vector<std::string> &argv) {
  BankArgs a;
  if (std::optional<int> status = ArgParser(addSpec(a)).parse(argv)) return *status;
  std::optional<KeyedBank> kb = keyedBank("add", a);
  if (!kb) return kExitError;
  tune::BankRecord record;
  record.key = kb->key;
  record.config = a.config;
  record.simulatedUs = a.time;
  record.strategy = a.strategy;
  absl::Status s = kb->bank.record(record);
  printWarnings(kb->bank.warnings());
  if (!s.ok()) return fail("add", s);
  return kExitOk;
}

int lookupCommand(const std::vector<std::string> &argv) {
  BankArgs a;
  if (std::optional<int> status = ArgParser(lookupSpec(a)).parse(argv)) return *status;
  std::optional<KeyedBank> kb = keyedBank("lookup", a);
  if (!kb) return kExitError;
  absl::StatusOr<std::optional<tune::BankRecord>> best = kb->bank.lookupBest(kb->key);
  printWarnings(kb->bank.warnings());
  if (!best.ok()) return fail("lookup", best.status());
  if (!*best) {
    llvm::outs() << "miss\n";
    return kExitError;
  }
  llvm::outs() << "hit: " << (*best)->config << " "
               << absl::StrFormat("%.3f", (*best)->simulatedUs) << " us (" << (*best)->strategy
               << ")\n";
  return kExitOk;
}

/// What `best` sets differently from `written` (both config JSON objects), as
/// "knob written -> best, ..." in knob order ("" when nothing); nullopt when either is
/// not an object (the space cannot say the function as written).
std::optional<std::string> changedKnobs(llvm::StringRef written, llvm::StringRef best) {
  llvm::Expected<llvm::json::Value> w = llvm::json::parse(written);
  llvm::Expected<llvm::json::Value> b = llvm::json::parse(best);
  if (!w || !b) {
    llvm::consumeError(w.takeError());
    llvm::consumeError(b.takeError());
    return std::nullopt;
  }
  const llvm::json::Object *wo = w->getAsObject(), *bo = b->getAsObject();
  if (!wo || !bo) return std::nullopt;
  std::vector<std::string> names;
  for (const auto &entry : *bo) names.push_back(entry.first.str());
  std::sort(names.begin(), names.end());
  std::vector<std::string> changes;
  for (const std::string &name : names) {
    const llvm::json::Value *was = wo->get(name);
    const llvm::json::Value &now = *bo->get(name);
    if (was && *was == now) continue;
    changes.push_back(llvm::formatv("{0} {1} -> {2}", name,
                                    was ? llvm::formatv("{0}", *was).str() : "(unset)", now));
  }
  return absl::StrJoin(changes, ", ");
}

/// The most distinct reasons printed for invalid configs (the tune_result has all).
constexpr size_t kMaxInvalidReasons = 3;

/// "invalid: N (M pruned before compiling)" and the first distinct reasons.
void printInvalid(llvm::raw_ostream &os, const tune::SearchSpace &space,
                  const tune::SearchResult &result) {
  std::vector<std::pair<std::string, std::string>> invalid; // config, reason
  for (const tune::PrunedConfig &p : result.prunedConfigs)
    invalid.emplace_back(space.configToString(p.config), p.reason);
  for (const tune::Evaluation &e : result.evaluations)
    if (!e.micros) invalid.emplace_back(space.configToString(e.config), e.invalidReason);
  if (invalid.empty()) return;
  os << "invalid: " << invalid.size() << " (" << result.prunedCount()
     << " pruned before compiling)\n";
  std::set<std::string> shown;
  for (const auto &[config, reason] : invalid) {
    if (shown.size() == kMaxInvalidReasons) break;
    if (!shown.insert(reason).second) continue;
    os << "  " << config << ": " << reason << "\n";
  }
}

int searchCommand(const std::vector<std::string> &argv) {
  SearchArgs args;
  ArgParser parser(searchSpec(args));
  if (std::optional<int> status = parser.parse(argv)) return *status;
  if (parser.given("bank") && parser.given("no-bank"))
    return parser.usageError("--bank and --no-bank contradict each other; give one");
  absl::StatusOr<std::string> source = support::readFile(
      args.file, support::kMaxSourceBytes, "",
      "give a .pto file to tune, or a subcommand: show, merge, add, lookup");
  if (!source.ok()) {
    llvm::errs() << "ptoc tune: " << ir::messageOf(source.status()) << "\n";
    return kExitError;
  }
  absl::StatusOr<Session> session = Session::create(args.device);
  if (!session.ok()) {
    llvm::errs() << "ptoc tune: --device: " << std::string(session.status().message()) << "\n";
    return kExitError;
  }

  TuneOptions options = args.tune;
  if (absl::Status st = setPassOptions(args.passOptions, options.baseKnobs); !st.ok())
    return parser.usageError(std::string(st.message()));
  TuneProgress progress(llvm::errs(), llvm::errs().is_displayed());
  options.progress = [&](const tune::SearchProgress &p) { progress.report(p); };

  std::optional<tune::SearchSpace> space;
  if (!args.spaceFile.empty()) {
    absl::StatusOr<std::string> text = support::readFile(args.spaceFile, support::kMaxJsonBytes);
    if (!text.ok()) {
      llvm::errs() << "ptoc tune: --space: " << ir::messageOf(text.status()) << "\n";
      return kExitError;
    }
    absl::StatusOr<tune::SearchSpace> parsed = tune::parseSearchSpace(*text);
    if (!parsed.ok()) {
      llvm::errs() << args.spaceFile << ": " << std::string(parsed.status().message()) << "\n";
      return kExitError;
    }
    space = *std::move(parsed);
  }
  // The file's text with loc(...) on every op, so messages name the file's lines.
  std::string located;
  {
    ir::Context ctx;
    absl::StatusOr<std::unique_ptr<ir::Module>> module =
        ir::parseModuleOrError(*source, args.file, ctx);
    if (!module.ok()) {
      llvm::errs() << std::string(module.status().message()) << "\n";
      return kExitError;
    }
    ir::PrintOptions print;
    print.printLocations = true;
    located = ir::toString(**module, print);
  }
  absl::StatusOr<TuneReport> report =
      tuneModule(*session, located, options, space ? &*space : nullptr);
  progress.finish();
  if (!report.ok()) {
    llvm::errs() << args.file << ": " << std::string(report.status().message()) << "\n";
    return kExitError;
  }
  llvm::raw_ostream &os = llvm::outs();
  os << "tuned " << args.file << " on " << session->device().name << "\n";
  os << "space: " << report->space.size() << " configs ("
     << report->space.numDimensions() << " knobs)\n";
  os << absl::StrFormat("baseline: %.3f us (as written)\n", report->baselineUs);
  if (!report->best) {
    os << "no valid config found (" << report->result.evaluationsUsed() << " evaluated)\n";
    return kExitError;
  }
  os << absl::StrFormat("best: %.3f us (speed-up %.3fx)\n", report->bestUs,
                        report->bestUs > 0 ? report->baselineUs / report->bestUs : 0.0);
  os << "evaluations: " << report->result.evaluationsUsed() << " (strategy "
     << report->result.strategy << "; " << report->compiles
     << (report->compiles == 1 ? " compile)\n" : " compiles)\n");
  printInvalid(os, report->space, report->result);
  os << "best config: " << report->best->configJson
     << (report->bestIsWritten ? " (the function as written)" : "") << "\n";
  if (std::optional<std::string> changed =
          changedKnobs(report->writtenConfigJson, report->best->configJson))
    os << "changed: " << (changed->empty() ? "nothing (the function as written)" : *changed)
       << "\n";
  if (!options.useBank)
    os << "bank: not used\n";
  else
    os << "bank: " << (report->bankHit ? "hit" : "miss") << "\n";
  if (!report->resultPath.empty()) os << "tune result: " << report->resultPath << "\n";
  return kExitOk;
}

} // namespace

int tuneMain(const std::vector<std::string> &args) {
  if (args.empty()) {
    llvm::errs() << tuneHelp();
    return kExitUsage;
  }
  const std::string &command = args[0];
  if (command == "--help" || command == "-h" || command == "help") {
    llvm::outs() << tuneHelp();
    return kExitOk;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "show") return showCommand(rest);
  if (command == "merge") return mergeCommand(rest);
  if (command == "add") return addCommand(rest);
  if (command == "lookup") return lookupCommand(rest);
  // Anything else is the file to tune (with its options); a word that is neither a
  // file nor a .pto path is a mistyped subcommand.
  if (!llvm::StringRef(command).endswith(".pto") && !llvm::sys::fs::exists(command)) {
    llvm::errs() << "ptoc tune: unknown subcommand '" << command
                 << "' (subcommands: show, merge, add, lookup; or a FILE.pto to tune; see "
                    "'ptoc tune --help')\n";
    return kExitUsage;
  }
  return searchCommand(args);
}

} // namespace ptoc::tools
