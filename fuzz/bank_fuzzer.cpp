// Fuzz target: the knowledge-bank reader behind `ptoc tune show/lookup`, `ptoc tune
// FILE` and every `@ptoc.jit` compile that consults the bank. The input is written as
// the a2 device's bank file in a scratch bank folder, then read as those do:
// Bank::all() (every line parsed; a bad line is a warning, never an error), the
// table of `ptoc tune show`, Bank::lookupBest() for the first record's key, and
// readBankFile of the records written back with recordToLine. Findings: crashes and
// sanitizer reports, an internal error, a read that fails on a readable file, a
// lookup that misses a record it holds, a written record that reads back different.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "FuzzCheck.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "ptoc/target/DeviceSpec.h"
#include "ptoc/tune/Bank.h"

using namespace ptoc;

namespace {

// A bank folder of this process, removed at exit.
struct Scratch {
  std::string dir;
  std::string bankFile;   // the a2 preset's file: seeds' lines carry its device hash
  std::string roundTrip;  // not a .jsonl, so Bank::all() does not read it
  Scratch() {
    llvm::SmallString<128> path;
    if (llvm::sys::fs::createUniqueDirectory("ptoc-fuzz-bank", path)) {
      std::fprintf(stderr, "bank_fuzzer: cannot create a scratch folder\n");
      std::exit(1);
    }
    dir = std::string(path);
    uint64_t a2 = target::DeviceSpec::preset("a2")->contentHash();
    bankFile = dir + "/" + tune::bankFileName("a2", a2);
    roundTrip = dir + "/roundtrip.txt";
  }
  ~Scratch() { llvm::sys::fs::remove_directories(dir); }
};

const Scratch &scratch() {
  static const Scratch s;
  return s;
}

void writeFile(const std::string &path, llvm::StringRef contents) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) fuzz::finding("cannot write the scratch file " + path + ": " + ec.message());
  os << contents;
}

bool sameRecord(const tune::BankRecord &a, const tune::BankRecord &b) {
  return a.key.matches(b.key) && a.key.deviceName == b.key.deviceName && a.config == b.config &&
         a.simulatedUs == b.simulatedUs && a.strategy == b.strategy && a.timestamp == b.timestamp;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const Scratch &s = scratch();
  writeFile(s.bankFile, llvm::StringRef(reinterpret_cast<const char *>(data), size));

  absl::StatusOr<tune::Bank> bank = tune::Bank::open(s.dir);
  if (!bank.ok()) fuzz::finding("Bank::open: " + std::string(bank.status().message()));
  absl::StatusOr<std::vector<tune::BankRecord>> all = bank->all();
  if (!all.ok()) fuzz::finding("Bank::all on a readable file: " + std::string(all.status().message()));
  std::string table = tune::formatBankTable(*all);
  if (!all->empty()) {
    const tune::BankRecord &first = all->front();
    absl::StatusOr<std::optional<tune::BankRecord>> best = bank->lookupBest(first.key);
    if (!best.ok()) fuzz::finding("lookupBest: " + std::string(best.status().message()));
    if (!*best || !(*best)->key.matches(first.key) ||
        (*best)->simulatedUs > first.simulatedUs)
      fuzz::finding("lookupBest misses a record the bank holds: " + tune::recordToLine(first));
  }

  // Every record read, written back as a line, reads back the same.
  std::vector<std::string> warnings;
  absl::StatusOr<std::vector<tune::BankRecord>> read = tune::readBankFile(s.bankFile, warnings);
  if (!read.ok()) fuzz::finding("readBankFile: " + std::string(read.status().message()));
  std::string lines;
  for (const tune::BankRecord &r : *read) lines += tune::recordToLine(r) + "\n";
  writeFile(s.roundTrip, lines);
  std::vector<std::string> roundTripWarnings;
  absl::StatusOr<std::vector<tune::BankRecord>> again =
      tune::readBankFile(s.roundTrip, roundTripWarnings);
  if (!again.ok()) fuzz::finding("readBankFile: " + std::string(again.status().message()));
  if (!roundTripWarnings.empty())
    fuzz::finding("a written record is skipped when read: " + roundTripWarnings.front());
  if (again->size() != read->size())
    fuzz::finding("written records read back as a different number of records");
  for (size_t i = 0; i < read->size(); ++i)
    if (!sameRecord((*read)[i], (*again)[i]))
      fuzz::finding("a record reads back different:\n" + tune::recordToLine((*read)[i]) + "\n" +
                    tune::recordToLine((*again)[i]));
  return 0;
}
