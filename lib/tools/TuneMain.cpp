// `ptoc tune FILE.pto` (a search, lib/session/Tuner.cpp) and `ptoc tune
// show|merge|add|lookup` (the knowledge bank, lib/tune/Bank.cpp) from the command line.
// Arguments are parsed by hand (no process-wide option registry).
#include "ptoc/tools/TuneMain.h"

#include <charconv>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/ir/Printer.h"
#include "ptoc/runtime/Executor.h"
#include "ptoc/session/Session.h"
#include "ptoc/session/TuneProgress.h"
#include "ptoc/session/Tuner.h"
#include "ptoc/session/Version.h"
#include "ptoc/support/BoundedJson.h"
#include "ptoc/support/ReadFile.h"
#include "ptoc/target/DeviceSpec.h"
#include "ptoc/tune/Bank.h"

namespace ptoc::tools {

using session::Session;
using session::TuneOptions;
using session::TuneProgress;
using session::TuneReport;
using session::tuneModule;
using session::version;
namespace {

constexpr int kExitOk = 0;
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

constexpr const char *kTuneUsage = R"(usage: ptoc tune show [--bank DIR] [--device NAME|FILE.json]
       ptoc tune FILE.pto [--device D] [--strategy auto|grid|random|ga|rl]
                     [--budget N] [--seed S] [--threads N] [--bank DIR | --no-bank]
                     [--result-dir DIR] [--pass-option NAME=VALUE ...]
                     [--space SPACE.json]
       ptoc tune merge A B -o C
       ptoc tune add [--bank DIR] --device NAME|FILE.json --graph-hash HEX
                     --signature SIG --config JSON --time US [--strategy NAME]
       ptoc tune lookup [--bank DIR] --device NAME|FILE.json --graph-hash HEX
                     --signature SIG

Tuning on the simulator and the knowledge bank (docs/tuning.md): measured configs per
device, operator structure and shapes. DIR defaults to $PTOC_TUNE_BANK_PATH, else
~/.cache/ptoc/bank.

  FILE.pto searches the tile shapes (each distinct vec_tile / cube_tile), the merge
           count of each group of isomorphic subgraphs and the scheduler mode of the
           file's function on --device [a2]: a bank hit applies the best known config
           without searching; else --strategy [auto] evaluates up to --budget [64]
           configs on --threads [all cores] host threads (a progress bar on stderr;
           configs that differ only in the scheduler mode share one compile), writes
           tune_result_<time>_pid<n>.json into --result-dir [$PTOC_OUTPUT_DIR, else
           ./output] and records every valid config in the bank (--no-bank: neither
           read nor written). --seed [0] seeds the search; --pass-option sets a
           knob every candidate starts from. --space searches a space of your own
           instead of the derived one: a JSON object {"knob": [values...]} (knob
           names: docs/tuning.md). auto is ga when the function as written keeps
           the cube cores busier than the vector cores, else rl.

  show     print the bank's records as a table (the best of each key marked *);
           --device keeps one device's records
  merge    merge banks A and B (folders, or <device>-<hash>.jsonl files of one
           device) into C, keeping the fastest record per (key, config); records
           already in C are kept
  add      record one measured config (a low-level command for scripts and tests;
           the ptoc version is this build's): SIG as `ptoc tune` and @ptoc.jit
           write it, e.g. 'f32[256,4096]->f32[256,4096]'; JSON one config object
  lookup   print the best config recorded for the key, exit 1 when there is none
)";

/// Options of a subcommand: values by option name, and positionals.
struct ParsedArgs {
  std::map<std::string, std::string> values;
  std::vector<std::string> positionals;
};

/// Parses `--name VALUE` / `--name=VALUE` options from `valueOptions` (and `-o`).
/// Prints a usage error and returns nullopt on an unknown or incomplete option.
std::optional<ParsedArgs> parseArgs(llvm::StringRef command, const std::vector<std::string> &args,
                                    const std::set<std::string> &valueOptions) {
  ParsedArgs out;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg.size() < 2 || arg[0] != '-') {
      out.positionals.push_back(arg);
      continue;
    }
    std::string name = arg, value;
    bool hasValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      hasValue = true;
    }
    if (!valueOptions.count(name)) {
      llvm::errs() << "ptoc tune " << command << ": unknown option '" << name
                   << "'; see 'ptoc tune --help'\n";
      return std::nullopt;
    }
    if (!hasValue) {
      if (i + 1 >= args.size()) {
        llvm::errs() << "ptoc tune " << command << ": " << name << " needs a value\n";
        return std::nullopt;
      }
      value = args[++i];
    }
    out.values[name] = value;
  }
  return out;
}

void printWarnings(const std::vector<std::string> &warnings) {
  for (const std::string &w : warnings) llvm::errs() << "ptoc tune: warning: " << w << "\n";
}

int fail(llvm::StringRef command, const absl::Status &s) {
  llvm::errs() << "ptoc tune " << command << ": " << std::string(s.message()) << "\n";
  return kExitError;
}

std::string valueOr(const ParsedArgs &p, const std::string &name, std::string fallback = "") {
  auto it = p.values.find(name);
  return it == p.values.end() ? fallback : it->second;
}

/// The key options of add/lookup; prints a usage error and returns nullopt when one
/// is missing or malformed.
std::optional<tune::BankKey> keyFromArgs(llvm::StringRef command, const ParsedArgs &p,
                                         int &status) {
  status = kExitUsage;
  for (const char *required : {"--device", "--graph-hash", "--signature"})
    if (!p.values.count(required)) {
      llvm::errs() << "ptoc tune " << command << ": " << required
                   << " is required; see 'ptoc tune --help'\n";
      return std::nullopt;
    }
  absl::StatusOr<target::DeviceSpec> device = target::DeviceSpec::load(p.values.at("--device"));
  if (!device.ok()) {
    status = fail(command, device.status());
    return std::nullopt;
  }
  tune::BankKey key;
  key.ptocVersion = version().str();
  key.deviceName = device->name;
  key.deviceHash = device->contentHash();
  std::string hash = p.values.at("--graph-hash");
  llvm::StringRef digits(hash);
  digits.consume_front("0x");
  auto [end, ec] = std::from_chars(digits.begin(), digits.end(), key.graphHash, 16);
  if (digits.empty() || ec != std::errc() || end != digits.end()) {
    llvm::errs() << "ptoc tune " << command << ": --graph-hash '" << hash
                 << "' is not a hex number (e.g. 0123456789abcdef)\n";
    return std::nullopt;
  }
  key.signature = p.values.at("--signature");
  return key;
}

absl::StatusOr<tune::Bank> openBank(const ParsedArgs &p) {
  return tune::Bank::open(valueOr(p, "--bank"));
}

int showCommand(const std::vector<std::string> &args) {
  std::optional<ParsedArgs> p = parseArgs("show", args, {"--bank", "--device"});
  if (!p) return kExitUsage;
  if (!p->positionals.empty()) {
    llvm::errs() << "ptoc tune show: unexpected argument '" << p->positionals.front()
                 << "' (the bank folder goes in --bank DIR)\n";
    return kExitUsage;
  }
  absl::StatusOr<tune::Bank> bank = openBank(*p);
  if (!bank.ok()) return fail("show", bank.status());
  absl::StatusOr<std::vector<tune::BankRecord>> records = bank->all();
  printWarnings(bank->warnings());
  if (!records.ok()) return fail("show", records.status());
  if (std::string device = valueOr(*p, "--device"); !device.empty()) {
    // A loadable device filters by its hash (the description, not just the name).
    absl::StatusOr<target::DeviceSpec> spec = target::DeviceSpec::load(device);
    std::erase_if(*records, [&](const tune::BankRecord &r) {
      return spec.ok() ? r.key.deviceHash != spec->contentHash() : r.key.deviceName != device;
    });
  }
  llvm::outs() << "bank: " << bank->dir() << "\n" << tune::formatBankTable(*records);
  return kExitOk;
}

int mergeCommand(const std::vector<std::string> &args) {
  std::optional<ParsedArgs> p = parseArgs("merge", args, {"-o", "--output"});
  if (!p) return kExitUsage;
  std::string out = valueOr(*p, "-o", valueOr(*p, "--output"));
  if (p->positionals.size() != 2 || out.empty()) {
    llvm::errs() << "ptoc tune merge: expected two banks and an output: ptoc tune merge A B -o C\n";
    return kExitUsage;
  }
  std::vector<std::string> warnings;
  absl::StatusOr<tune::MergeStats> stats =
      tune::mergeBanks(p->positionals[0], p->positionals[1], out, warnings);
  printWarnings(warnings);
  if (!stats.ok()) return fail("merge", stats.status());
  llvm::outs() << "merged " << stats->fromA << " + " << stats->fromB << " records into " << out
               << ": " << stats->written << " records\n";
  return kExitOk;
}

int addCommand(const std::vector<std::string> &args) {
  std::optional<ParsedArgs> p =
      parseArgs("add", args,
                {"--bank", "--device", "--graph-hash", "--signature", "--config", "--time",
                 "--strategy"});
  if (!p) return kExitUsage;
  if (!p->positionals.empty()) {
    llvm::errs() << "ptoc tune add: unexpected argument '" << p->positionals.front() << "'\n";
    return kExitUsage;
  }
  int status = kExitUsage;
  std::optional<tune::BankKey> key = keyFromArgs("add", *p, status);
  if (!key) return status;
  tune::BankRecord record;
  record.key = *key;
  for (const char *required : {"--config", "--time"})
    if (!p->values.count(required)) {
      llvm::errs() << "ptoc tune add: " << required << " is required; see 'ptoc tune --help'\n";
      return kExitUsage;
    }
  record.config = p->values.at("--config");
  if (!absl::SimpleAtod(p->values.at("--time"), &record.simulatedUs)) {
    llvm::errs() << "ptoc tune add: --time '" << p->values.at("--time")
                 << "' is not a number of microseconds\n";
    return kExitUsage;
  }
  record.strategy = valueOr(*p, "--strategy", "manual");
  absl::StatusOr<tune::Bank> bank = openBank(*p);
  if (!bank.ok()) return fail("add", bank.status());
  absl::Status s = bank->record(record);
  printWarnings(bank->warnings());
  if (!s.ok()) return fail("add", s);
  return kExitOk;
}

int lookupCommand(const std::vector<std::string> &args) {
  std::optional<ParsedArgs> p =
      parseArgs("lookup", args, {"--bank", "--device", "--graph-hash", "--signature"});
  if (!p) return kExitUsage;
  int status = kExitUsage;
  std::optional<tune::BankKey> key = keyFromArgs("lookup", *p, status);
  if (!key) return status;
  absl::StatusOr<tune::Bank> bank = openBank(*p);
  if (!bank.ok()) return fail("lookup", bank.status());
  absl::StatusOr<std::optional<tune::BankRecord>> best = bank->lookupBest(*key);
  printWarnings(bank->warnings());
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


/// Parsed `ptoc tune FILE.pto` arguments.
struct SearchArgs {
  std::string file;
  std::string device = "a2";
  std::string strategy = "auto";
  uint64_t budget = 64;
  uint64_t seed = 0;
  unsigned threads = 0;
  std::string bank;
  bool useBank = true;
  std::string resultDir;
  std::string spaceFile;
  std::vector<std::pair<std::string, std::string>> passOptions;
};

/// Parses the search command's arguments; prints a usage error and returns nullopt
/// on a bad one.
std::optional<SearchArgs> parseSearchArgs(const std::vector<std::string> &args) {
  SearchArgs out;
  const std::set<std::string> valueOptions = {"--device", "--strategy",   "--budget",
                                              "--seed",   "--threads",    "--bank",
                                              "--result-dir", "--pass-option", "--space"};
  auto usage = [](const std::string &msg) {
    llvm::errs() << "ptoc tune: " << msg << "; see 'ptoc tune --help'\n";
    return std::nullopt;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg.size() < 2 || arg[0] != '-') {
      if (!out.file.empty()) return usage("one file to tune at a time, got '" + arg + "' too");
      out.file = arg;
      continue;
    }
    if (arg == "--no-bank") {
      out.useBank = false;
      continue;
    }
    std::string name = arg, value;
    bool hasValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      hasValue = true;
    }
    if (!valueOptions.count(name)) return usage("unknown option '" + name + "'");
    if (!hasValue) {
      if (i + 1 >= args.size()) return usage(name + " needs a value");
      value = args[++i];
    }
    auto number = [&](uint64_t &into) {
      if (absl::SimpleAtoi(value, &into)) return true;
      llvm::errs() << "ptoc tune: " << name << " '" << value
                   << "' is not a non-negative integer\n";
      return false;
    };
    uint64_t n = 0;
    if (name == "--device") out.device = value;
    else if (name == "--strategy") out.strategy = value;
    else if (name == "--budget") {
      if (!number(out.budget)) return std::nullopt;
    } else if (name == "--seed") {
      if (!number(out.seed)) return std::nullopt;
    } else if (name == "--threads") {
      if (!number(n)) return std::nullopt;
      if (n > runtime::kMaxHostThreads) {
        llvm::errs() << "ptoc tune: --threads " << n << " is more than "
                     << runtime::kMaxHostThreads << " host threads\n";
        return std::nullopt;
      }
      out.threads = static_cast<unsigned>(n);
    } else if (name == "--bank") out.bank = value;
    else if (name == "--result-dir") out.resultDir = value;
    else if (name == "--space") out.spaceFile = value;
    else if (name == "--pass-option") {
      size_t eq = value.find('=');
      if (eq == std::string::npos || eq == 0)
        return usage("--pass-option takes NAME=VALUE (e.g. vec_nbuffer_mode=1), got '" + value +
                     "'");
      out.passOptions.emplace_back(value.substr(0, eq), value.substr(eq + 1));
    }
  }
  if (out.file.empty()) return usage("no file to tune");
  if (out.useBank == false && !out.bank.empty())
    return usage("--bank and --no-bank contradict each other; give one");
  return out;
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

int searchCommand(const std::vector<std::string> &args) {
  std::optional<SearchArgs> a = parseSearchArgs(args);
  if (!a) return kExitUsage;
  absl::StatusOr<tune::Strategy> strategy = tune::parseStrategy(a->strategy);
  if (!strategy.ok()) {
    llvm::errs() << "ptoc tune: --strategy: " << std::string(strategy.status().message()) << "\n";
    return kExitUsage;
  }
  if (a->budget == 0) {
    llvm::errs() << "ptoc tune: --budget must be at least 1\n";
    return kExitUsage;
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer = llvm::MemoryBuffer::getFile(a->file);
  if (!buffer) {
    llvm::errs() << "ptoc tune: cannot read '" << a->file << "': " << buffer.getError().message()
                 << " (give a .pto file to tune, or a subcommand: show, merge, add, lookup)\n";
    return kExitError;
  }
  absl::StatusOr<Session> session = Session::create(a->device);
  if (!session.ok()) {
    llvm::errs() << "ptoc tune: --device: " << std::string(session.status().message()) << "\n";
    return kExitError;
  }

  TuneOptions options;
  options.search.strategy = *strategy;
  options.search.budget = a->budget;
  options.search.seed = a->seed;
  options.threads = a->threads;
  options.bankPath = a->bank;
  options.useBank = a->useBank;
  options.resultDir = a->resultDir;
  for (const auto &[name, value] : a->passOptions)
    if (absl::Status s = options.baseKnobs.setText(name, value); !s.ok()) {
      llvm::errs() << "ptoc tune: --pass-option " << name << "=" << value << ": "
                   << std::string(s.message()) << "\n";
      return kExitUsage;
    }
  TuneProgress progress(llvm::errs(), llvm::errs().is_displayed());
  options.progress = [&](const tune::SearchProgress &p) { progress.report(p); };

  std::optional<tune::SearchSpace> space;
  if (!a->spaceFile.empty()) {
    absl::StatusOr<std::string> text =
        support::readFileBounded(a->spaceFile, support::kMaxJsonBytes);
    if (!text.ok()) {
      llvm::errs() << "ptoc tune: --space: cannot read '" << a->spaceFile
                   << "': " << std::string(text.status().message()) << "\n";
      return kExitError;
    }
    absl::StatusOr<tune::SearchSpace> parsed = tune::parseSearchSpace(*text);
    if (!parsed.ok()) {
      llvm::errs() << a->spaceFile << ": " << std::string(parsed.status().message()) << "\n";
      return kExitError;
    }
    space = *std::move(parsed);
  }
  // The file's text with loc(...) on every op, so messages name the file's lines.
  std::string located;
  {
    ir::Context ctx;
    absl::StatusOr<std::unique_ptr<ir::Module>> module =
        ir::parseModuleOrError((*buffer)->getBuffer(), a->file, ctx);
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
    llvm::errs() << a->file << ": " << std::string(report.status().message()) << "\n";
    return kExitError;
  }
  llvm::raw_ostream &os = llvm::outs();
  os << "tuned " << a->file << " on " << session->device().name << "\n";
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
  if (!a->useBank)
    os << "bank: not used\n";
  else
    os << "bank: " << (report->bankHit ? "hit" : "miss") << "\n";
  if (!report->resultPath.empty()) os << "tune result: " << report->resultPath << "\n";
  return kExitOk;
}

} // namespace

int tuneMain(const std::vector<std::string> &args) {
  if (args.empty()) {
    llvm::errs() << kTuneUsage;
    return kExitUsage;
  }
  const std::string &command = args[0];
  if (command == "--help" || command == "-h" || command == "help") {
    llvm::outs() << kTuneUsage;
    return kExitOk;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  for (const std::string &a : rest)
    if (a == "--help" || a == "-h") {
      llvm::outs() << kTuneUsage;
      return kExitOk;
    }
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
