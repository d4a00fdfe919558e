// `ptoc tune show|merge|add|lookup`: the tuning knowledge bank (lib/tune/Bank.cpp) from
// the command line. Arguments are parsed by hand (no process-wide option registry).
#include "ptoc/session/TuneMain.h"

#include <charconv>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "llvm/Support/raw_ostream.h"
#include "ptoc/session/Version.h"
#include "ptoc/target/DeviceSpec.h"
#include "ptoc/tune/Bank.h"

namespace ptoc::session {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

constexpr const char *kTuneUsage = R"(usage: ptoc tune show [--bank DIR] [--device NAME|FILE.json]
       ptoc tune merge A B -o C
       ptoc tune add [--bank DIR] --device NAME|FILE.json --graph-hash HEX
                     --signature SIG --config JSON --time US [--strategy NAME]
       ptoc tune lookup [--bank DIR] --device NAME|FILE.json --graph-hash HEX
                     --signature SIG

The tuning knowledge bank (docs/tuning.md): measured configs per device, operator
structure and shapes. DIR defaults to $PTOC_TUNE_BANK_PATH, else ~/.cache/ptoc/bank.

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
  llvm::errs() << "ptoc tune: unknown subcommand '" << command
               << "' (subcommands: show, merge, add, lookup; see 'ptoc tune --help')\n";
  return kExitUsage;
}

} // namespace ptoc::session
