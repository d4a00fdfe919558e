// The tuning knowledge bank: measured configs of operators, kept on disk per device,
// so a later compilation of the same operator at the same shapes on the same device
// applies the best known config without tuning.
//
// Layout. A bank is a folder (Bank::defaultPath(): $PTOC_TUNE_BANK_PATH, else
// ~/.cache/ptoc/bank) holding one JSON-lines file per device,
// `<device name>-<device hash, 16 hex digits>.jsonl`; each line is one record:
//
//   {"format":1,"ptoc":"0.1.0","device":"a2","device_hash":"0123456789abcdef",
//    "graph_hash":"fedcba9876543210","signature":"f32[256,4096]->f32[256,4096]",
//    "config":{"vec_tile":[[8,4096]]},"time_us":41.25,"strategy":"ga",
//    "timestamp":"2024-05-01T12:00:00Z"}
//
// Keys. A record answers a lookup only when the ptoc version, the device hash (a
// hash of every field of the device description, so an edited device file misses),
// the graph hash (the tensor-level function's structure, tile shapes left out, since
// tuning changes them: graphHash()) and the signature (dtypes and concrete shapes of
// arguments and results: signatureOf()) are all equal. A record holds one config (not
// a list) and its simulated time; the bank keeps at most one record per (key, config),
// the fastest, and lookupBest() returns the fastest config of a key.
//
// Concurrency. Bank::record() takes an exclusive flock on a sibling `<file>.lock`
// (not on the data file, whose inode the rename replaces), reads the current file,
// adds the record, writes a temp file in the same folder, fsyncs it and renames it
// over the data file. So writers in several processes (or threads, with their own
// Bank objects) serialise and lose nothing, and readers, which take no lock, always
// see a whole old or a whole new file, never half a line.
//
// Corruption. A line that is not a valid record (bad JSON, a missing field, a device
// hash that is not the file's) is skipped with a warning naming the file, the line and
// why; every other line still counts. The next write of that file drops the bad line.
// A line of a newer bank format is skipped with a warning and kept verbatim on writes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

namespace ptoc::ir {
class Func;
}

namespace ptoc::tune {

/// The bank line format this build writes (the `format` field).
inline constexpr int kBankFormat = 1;
/// The environment variable naming the default bank folder.
inline constexpr const char *kBankPathEnv = "PTOC_TUNE_BANK_PATH";
/// The extension of a device's bank file.
inline constexpr const char *kBankFileExtension = ".jsonl";

/// What a record is about; a lookup matches all of it except the device name.
struct BankKey {
  /// The ptoc version that measured it (session::version()).
  std::string ptocVersion;
  /// target::DeviceSpec::contentHash() of the device.
  uint64_t deviceHash = 0;
  /// The device's name, for file names and tables (not matched: the hash decides).
  std::string deviceName;
  /// graphHash() of the tensor-level function.
  uint64_t graphHash = 0;
  /// signatureOf() of the function: dtypes and concrete shapes.
  std::string signature;

  /// Whether a lookup for `other` may use a record of this key (device name ignored).
  bool matches(const BankKey &other) const {
    return ptocVersion == other.ptocVersion && deviceHash == other.deviceHash &&
           graphHash == other.graphHash && signature == other.signature;
  }
};

/// One measured config.
struct BankRecord {
  BankKey key;
  /// One config as compact JSON object text, e.g. `{"vec_tile":[[8,4096]]}`; stored
  /// canonically (keys sorted), so equal configs compare equal as text.
  std::string config;
  /// Simulated end-to-end time in microseconds.
  double simulatedUs = 0;
  /// The search that found it (`ga`, `rl`, `grid`, `random`, `manual`, ...).
  std::string strategy;
  /// When it was measured (ISO 8601 UTC); record() fills it in when empty.
  std::string timestamp;
};

/// The structural hash of a tensor-level function, stable across processes: op kinds,
/// attributes except the tile shapes (`vec_tile`, `cube_tile`), result types, how
/// ops use each other's results and the function's arguments, and its result types.
/// Two functions that differ only in tile shapes hash equally; a changed op, attribute
/// (other than a tile shape), dtype or shape changes the hash.
uint64_t graphHash(const ir::Func &f);

/// The concrete dtypes and shapes of a function's arguments and results, e.g.
/// `f32[256,4096],f16[64]->f32[256,4096]`.
std::string signatureOf(const ir::Func &f);

/// The file name of a device's records: `<name>-<hash as 16 hex digits>.jsonl`, the
/// name with characters other than letters, digits, `_`, `-` and `.` replaced by `_`.
std::string bankFileName(llvm::StringRef deviceName, uint64_t deviceHash);

/// `config` (JSON object text) in canonical compact form, or an error saying why it
/// is not a JSON object.
absl::StatusOr<std::string> canonicalConfig(llvm::StringRef config);

/// One record as a bank line (no newline).
std::string recordToLine(const BankRecord &record);

/// Reads one bank file. A missing file has no records. Bad lines are skipped with a
/// warning appended to `warnings`; `expectedDeviceHash`, when given, also rejects
/// lines of another device. Fails only when the file exists but cannot be read.
absl::StatusOr<std::vector<BankRecord>>
readBankFile(llvm::StringRef path, std::vector<std::string> &warnings,
             std::optional<uint64_t> expectedDeviceHash = std::nullopt);

/// Keeps one record per (key, config): the fastest (on a tie, the earlier one).
/// Order: by device, graph hash, signature, version, then time.
std::vector<BankRecord> dedupeRecords(std::vector<BankRecord> records);

/// A bank folder.
class Bank {
public:
  /// $PTOC_TUNE_BANK_PATH when set and non-empty, else $HOME/.cache/ptoc/bank; an
  /// error when neither is available.
  static absl::StatusOr<std::string> defaultPath();

  /// The bank in `dir`, or in defaultPath() when `dir` is empty (an explicit folder
  /// wins over the environment). The folder is created by the first record().
  static absl::StatusOr<Bank> open(llvm::StringRef dir = "");

  /// The bank's folder.
  const std::string &dir() const { return dir_; }
  /// The path of the file holding the records of a device.
  std::string filePath(llvm::StringRef deviceName, uint64_t deviceHash) const;

  /// The fastest record whose key matches `key` exactly (BankKey::matches), or
  /// nullopt: a different version, device, graph or signature never answers.
  absl::StatusOr<std::optional<BankRecord>> lookupBest(const BankKey &key);

  /// Adds a record under the device's file lock and rewrites the file atomically
  /// (see the file comment). A record with the same key and config replaces the
  /// stored one only when faster. Fails on an invalid config or an I/O error.
  absl::Status record(const BankRecord &record);

  /// Every record of every device file, deduplicated (dedupeRecords order).
  absl::StatusOr<std::vector<BankRecord>> all();

  /// Warnings collected by reads so far (skipped lines: file, line number, why).
  const std::vector<std::string> &warnings() const { return warnings_; }

private:
  explicit Bank(std::string dir) : dir_(std::move(dir)) {}

  std::string dir_;
  std::vector<std::string> warnings_;
};

/// How many records went into a merge and came out.
struct MergeStats {
  size_t fromA = 0, fromB = 0, written = 0;
};

/// Merges banks `a` and `b` into `out` (the best record per (key, config) kept). Each
/// of `a`, `b` is a bank file or a bank folder. Two files must hold the same device
/// (an error names both otherwise); with folders, each device's file merges with the
/// same device's file of the other bank and a device present in one bank only is
/// copied. `out` is a file when both inputs are files and `out` ends in `.jsonl`,
/// else a folder. Records never move between devices. Skipped lines of the inputs
/// go to `warnings`.
absl::StatusOr<MergeStats> mergeBanks(llvm::StringRef a, llvm::StringRef b, llvm::StringRef out,
                                      std::vector<std::string> &warnings);

/// A table of records for `ptoc tune show`: one line per record, the best of each
/// key marked with `*`.
std::string formatBankTable(const std::vector<BankRecord> &records);

} // namespace ptoc::tune
