// The knowledge bank on disk: record lines, per-device files, locked atomic writes,
// lookups, merge and the `ptoc tune show` table (format: include/ptoc/tune/Bank.h).
#include "ptoc/tune/Bank.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <iterator>
#include <map>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "ptoc/support/AtomicWrite.h"
#include "ptoc/support/BoundedJson.h"
#include "ptoc/support/ErrorCategory.h"
#include "ptoc/support/ReadFile.h"

namespace ptoc::tune {
namespace {

/// Hex digits of a hash in file names and lines.
constexpr int kHashDigits = 16;
/// The suffix of a device file's lock file.
constexpr const char *kLockSuffix = ".lock";

std::string hex(uint64_t h) { return absl::StrFormat("%016x", h); }

std::optional<uint64_t> parseHex(llvm::StringRef s) {
  if (s.empty() || s.size() > kHashDigits) return std::nullopt;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string nowUtc() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string errnoText() { return std::strerror(errno); }

/// The device hash a bank file's name carries (`<name>-<16 hex>.jsonl`), if any.
std::optional<uint64_t> fileDeviceHash(llvm::StringRef path) {
  llvm::StringRef name = llvm::sys::path::filename(path);
  if (!name.consume_back(kBankFileExtension) || name.size() < kHashDigits + 1) return std::nullopt;
  llvm::StringRef digits = name.take_back(kHashDigits);
  if (name.drop_back(kHashDigits).back() != '-') return std::nullopt;
  return parseHex(digits);
}

/// A bank file as read: its records and the lines of a newer format, kept verbatim.
struct FileContents {
  std::vector<BankRecord> records;
  std::vector<std::string> foreignLines;
};

/// Parses one line; an error says why it is not a record. `foreign` is set for a
/// well-formed line of a newer format.
absl::StatusOr<BankRecord> parseLine(llvm::StringRef line, bool &foreign) {
  foreign = false;
  // No source: the caller's warning names the file and line.
  absl::StatusOr<llvm::json::Value> parsed = support::parseJson(line, "");
  if (!parsed.ok()) return parsed.status();
  const llvm::json::Object *o = parsed->getAsObject();
  if (!o) return absl::InvalidArgumentError("not a JSON object");
  std::optional<int64_t> format = support::jsonInteger(*o, "format");
  if (!format) return absl::InvalidArgumentError("no integer 'format'");
  if (*format > kBankFormat) {
    foreign = true;
    return absl::InvalidArgumentError(absl::StrCat("bank format ", *format,
                                                   " is newer than this ptoc's (", kBankFormat,
                                                   "); kept as it is"));
  }
  BankRecord r;
  auto str = [&](llvm::StringRef field, std::string &out) -> absl::Status {
    auto s = o->getString(field);
    if (!s) return absl::InvalidArgumentError(absl::StrCat("no string '", field.str(), "'"));
    out = s->str();
    return absl::OkStatus();
  };
  auto hash = [&](llvm::StringRef field, uint64_t &out) -> absl::Status {
    std::string text;
    if (absl::Status s = str(field, text); !s.ok()) return s;
    std::optional<uint64_t> h = parseHex(text);
    if (!h)
      return absl::InvalidArgumentError(
          absl::StrCat("'", field.str(), "' is not a hex hash: '", text, "'"));
    out = *h;
    return absl::OkStatus();
  };
  for (absl::Status s : {str("ptoc", r.key.ptocVersion), str("device", r.key.deviceName),
                         hash("device_hash", r.key.deviceHash),
                         hash("graph_hash", r.key.graphHash), str("signature", r.key.signature),
                         str("strategy", r.strategy), str("timestamp", r.timestamp)})
    if (!s.ok()) return s;
  const llvm::json::Object *config = o->getObject("config");
  if (!config) return absl::InvalidArgumentError("no object 'config'");
  std::string text;
  llvm::raw_string_ostream(text) << llvm::json::Value(llvm::json::Object(*config));
  r.config = std::move(text);
  auto time = o->getNumber("time_us");
  if (!time || !(*time >= 0) || !std::isfinite(*time))
    return absl::InvalidArgumentError("no non-negative number 'time_us'");
  r.simulatedUs = *time;
  return r;
}

absl::StatusOr<FileContents> readFile(llvm::StringRef path, std::vector<std::string> &warnings,
                                      std::optional<uint64_t> expectedDeviceHash) {
  FileContents contents;
  // A bank grows with every tuning run: no limit but the file's size. A bank file not
  // written yet holds nothing.
  absl::StatusOr<std::string> text = support::readFile(path, support::kNoLimit, "bank file");
  if (absl::IsNotFound(text.status())) return contents;
  if (!text.ok()) return text.status();
  llvm::StringRef rest = *text;
  for (size_t lineNo = 1; !rest.empty(); ++lineNo) {
    auto [line, tail] = rest.split('\n');
    rest = tail;
    line = line.trim();
    if (line.empty()) continue;
    bool foreign = false;
    absl::StatusOr<BankRecord> r = parseLine(line, foreign);
    if (r.ok() && expectedDeviceHash && r->key.deviceHash != *expectedDeviceHash)
      r = absl::InvalidArgumentError(absl::StrCat("its device hash ", hex(r->key.deviceHash),
                                                  " is not this file's (",
                                                  hex(*expectedDeviceHash), ")"));
    if (r.ok()) {
      contents.records.push_back(*std::move(r));
      continue;
    }
    if (foreign) contents.foreignLines.push_back(line.str());
    warnings.push_back(absl::StrCat(path.str(), ":", lineNo, ": skipped bank line: ",
                                    std::string(r.status().message()),
                                    foreign ? "" : " (dropped at the next write of this file)"));
  }
  return contents;
}

/// An exclusive flock on a lock file, released on destruction. The lock is on a
/// sibling file because the data file is replaced by rename: a lock on its old inode
/// would not exclude a writer that opened the new one.
class FileLock {
public:
  static absl::StatusOr<FileLock> acquire(const std::string &lockPath) {
    int fd = ::open(lockPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
      return support::ioError(
          absl::StrCat("cannot open bank lock '", lockPath, "': ", errnoText()));
    while (::flock(fd, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      std::string why = errnoText();
      ::close(fd);
      return support::ioError(absl::StrCat("cannot lock bank lock '", lockPath, "': ", why));
    }
    return FileLock(fd);
  }
  FileLock(FileLock &&o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  FileLock &operator=(FileLock &&) = delete;
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_); // closing releases the flock
  }

private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_;
};

absl::Status ensureDir(llvm::StringRef dir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return support::ioError(
        absl::StrCat("cannot create bank folder '", dir.str(), "': ", ec.message()));
  return absl::OkStatus();
}

/// Rewrites a device file under its lock with `update` applied to what it holds.
absl::Status updateFile(const std::string &path, std::vector<std::string> &warnings,
                        std::optional<uint64_t> deviceHash,
                        const std::function<void(std::vector<BankRecord> &)> &update) {
  absl::StatusOr<FileLock> lock = FileLock::acquire(path + kLockSuffix);
  if (!lock.ok()) return lock.status();
  absl::StatusOr<FileContents> contents = readFile(path, warnings, deviceHash);
  if (!contents.ok()) return contents.status();
  update(contents->records);
  std::string text;
  for (const BankRecord &r : dedupeRecords(std::move(contents->records)))
    absl::StrAppend(&text, recordToLine(r), "\n");
  for (const std::string &line : contents->foreignLines) absl::StrAppend(&text, line, "\n");
  // Synced before the rename: the bank must survive a crash of the machine.
  return support::writeFileAtomically(path, text, support::Durability::Sync);
}

/// The bank files (`*.jsonl`) directly in `dir`, sorted; none when it does not exist.
absl::StatusOr<std::vector<std::string>> bankFiles(llvm::StringRef dir) {
  std::vector<std::string> files;
  if (!llvm::sys::fs::exists(dir)) return files;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    if (llvm::StringRef(it->path()).endswith(kBankFileExtension)) files.push_back(it->path());
  if (ec)
    return absl::InvalidArgumentError(
        absl::StrCat("cannot list bank folder '", dir.str(), "': ", ec.message()));
  std::sort(files.begin(), files.end());
  return files;
}

/// The file of `deviceHash` in `dir`: an existing one whatever its name part, else
/// the one bankFileName names.
absl::StatusOr<std::string> deviceFile(llvm::StringRef dir, llvm::StringRef deviceName,
                                       uint64_t deviceHash) {
  absl::StatusOr<std::vector<std::string>> files = bankFiles(dir);
  if (!files.ok()) return files.status();
  for (const std::string &f : *files)
    if (fileDeviceHash(f) == deviceHash) return f;
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, bankFileName(deviceName, deviceHash));
  return std::string(path);
}

auto sortKey(const BankRecord &r) {
  return std::tie(r.key.deviceName, r.key.deviceHash, r.key.graphHash, r.key.signature,
                  r.key.ptocVersion, r.simulatedUs, r.config);
}

} // namespace

std::string bankFileName(llvm::StringRef deviceName, uint64_t deviceHash) {
  std::string name = deviceName.empty() ? "device" : deviceName.str();
  for (char &c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
      c = '_';
  return absl::StrCat(name, "-", hex(deviceHash), kBankFileExtension);
}

absl::StatusOr<std::string> canonicalConfig(llvm::StringRef config) {
  absl::StatusOr<llvm::json::Value> parsed = support::parseJson(config, "");
  if (!parsed.ok())
    return absl::InvalidArgumentError(absl::StrCat("config '", config.str(), "' is not JSON: ",
                                                   parsed.status().message()));
  if (!parsed->getAsObject())
    return absl::InvalidArgumentError(absl::StrCat(
        "config '", config.str(), "' is not a JSON object (write it as {\"knob\": value, ...})"));
  std::string text;
  llvm::raw_string_ostream(text) << *parsed; // llvm::json prints object keys sorted
  return text;
}

std::string recordToLine(const BankRecord &r) {
  llvm::json::Object o{{"format", kBankFormat},
                       {"ptoc", r.key.ptocVersion},
                       {"device", r.key.deviceName},
                       {"device_hash", hex(r.key.deviceHash)},
                       {"graph_hash", hex(r.key.graphHash)},
                       {"signature", r.key.signature},
                       {"time_us", r.simulatedUs},
                       {"strategy", r.strategy},
                       {"timestamp", r.timestamp}};
  absl::StatusOr<llvm::json::Value> config = support::parseJson(r.config, "");
  if (config.ok()) o["config"] = *std::move(config);
  else o["config"] = llvm::json::Object{}; // record() rejects these; never written
  std::string line;
  llvm::raw_string_ostream(line) << llvm::json::Value(std::move(o));
  return line;
}

absl::StatusOr<std::vector<BankRecord>> readBankFile(llvm::StringRef path,
                                                     std::vector<std::string> &warnings,
                                                     std::optional<uint64_t> expectedDeviceHash) {
  absl::StatusOr<FileContents> contents = readFile(path, warnings, expectedDeviceHash);
  if (!contents.ok()) return contents.status();
  return std::move(contents->records);
}

std::vector<BankRecord> dedupeRecords(std::vector<BankRecord> records) {
  // Stable, so among equal times the earlier record (file order) wins.
  std::stable_sort(records.begin(), records.end(),
                   [](const BankRecord &a, const BankRecord &b) {
                     return std::tie(a.key.deviceHash, a.key.graphHash, a.key.signature,
                                     a.key.ptocVersion, a.config, a.simulatedUs) <
                            std::tie(b.key.deviceHash, b.key.graphHash, b.key.signature,
                                     b.key.ptocVersion, b.config, b.simulatedUs);
                   });
  std::vector<BankRecord> kept;
  for (BankRecord &r : records)
    if (kept.empty() || !kept.back().key.matches(r.key) || kept.back().config != r.config)
      kept.push_back(std::move(r));
  std::stable_sort(kept.begin(), kept.end(),
                   [](const BankRecord &a, const BankRecord &b) { return sortKey(a) < sortKey(b); });
  return kept;
}

// ---------------------------------------------------------------- Bank

absl::StatusOr<std::string> Bank::defaultPath() {
  if (const char *env = std::getenv(kBankPathEnv); env && *env) return std::string(env);
  const char *home = std::getenv("HOME");
  if (!home || !*home)
    return absl::InvalidArgumentError(absl::StrCat(
        "no tuning bank folder: neither $", kBankPathEnv,
        " nor $HOME is set (set one, or pass the folder explicitly, e.g. --bank DIR)"));
  llvm::SmallString<256> path(home);
  llvm::sys::path::append(path, ".cache", "ptoc", "bank");
  return std::string(path);
}

absl::StatusOr<Bank> Bank::open(llvm::StringRef dir) {
  if (!dir.empty()) {
    if (llvm::sys::fs::exists(dir) && !llvm::sys::fs::is_directory(dir))
      return absl::InvalidArgumentError(
          absl::StrCat("tuning bank '", dir.str(), "' is not a folder (a bank is a folder of ",
                       "<device>-<hash>.jsonl files)"));
    return Bank(dir.str());
  }
  absl::StatusOr<std::string> path = defaultPath();
  if (!path.ok()) return path.status();
  return open(*path);
}

std::string Bank::filePath(llvm::StringRef deviceName, uint64_t deviceHash) const {
  absl::StatusOr<std::string> f = deviceFile(dir_, deviceName, deviceHash);
  if (f.ok()) return *f;
  llvm::SmallString<256> path(dir_);
  llvm::sys::path::append(path, bankFileName(deviceName, deviceHash));
  return std::string(path);
}

absl::StatusOr<std::optional<BankRecord>> Bank::lookupBest(const BankKey &key) {
  absl::StatusOr<std::string> path = deviceFile(dir_, key.deviceName, key.deviceHash);
  if (!path.ok()) return path.status();
  absl::StatusOr<std::vector<BankRecord>> records =
      readBankFile(*path, warnings_, key.deviceHash);
  if (!records.ok()) return records.status();
  std::optional<BankRecord> best;
  for (BankRecord &r : *records)
    if (r.key.matches(key) && (!best || r.simulatedUs < best->simulatedUs)) best = std::move(r);
  return best;
}

absl::Status Bank::record(const BankRecord &record) {
  absl::StatusOr<std::string> config = canonicalConfig(record.config);
  if (!config.ok()) return config.status();
  if (!(record.simulatedUs >= 0) || !std::isfinite(record.simulatedUs))
    return absl::InvalidArgumentError(absl::StrCat(
        "bank record time ", record.simulatedUs, " us is not a non-negative finite number"));
  BankRecord r = record;
  r.config = *config;
  if (r.timestamp.empty()) r.timestamp = nowUtc();
  if (r.strategy.empty()) r.strategy = "manual";
  if (absl::Status s = ensureDir(dir_); !s.ok()) return s;
  absl::StatusOr<std::string> path = deviceFile(dir_, r.key.deviceName, r.key.deviceHash);
  if (!path.ok()) return path.status();
  return updateFile(*path, warnings_, r.key.deviceHash,
                    [&](std::vector<BankRecord> &records) { records.push_back(std::move(r)); });
}

absl::StatusOr<std::vector<BankRecord>> Bank::all() {
  absl::StatusOr<std::vector<std::string>> files = bankFiles(dir_);
  if (!files.ok()) return files.status();
  std::vector<BankRecord> records;
  for (const std::string &f : *files) {
    absl::StatusOr<std::vector<BankRecord>> some = readBankFile(f, warnings_, fileDeviceHash(f));
    if (!some.ok()) return some.status();
    std::move(some->begin(), some->end(), std::back_inserter(records));
  }
  return dedupeRecords(std::move(records));
}

// ---------------------------------------------------------------- merge

namespace {

/// One input of a merge: its device files by device hash.
absl::StatusOr<std::map<uint64_t, std::string>> mergeInput(llvm::StringRef path,
                                                           std::vector<std::string> &warnings) {
  std::map<uint64_t, std::string> byDevice;
  if (llvm::sys::fs::is_directory(path)) {
    absl::StatusOr<std::vector<std::string>> files = bankFiles(path);
    if (!files.ok()) return files.status();
    for (const std::string &f : *files) {
      std::optional<uint64_t> h = fileDeviceHash(f);
      if (!h) {
        warnings.push_back(absl::StrCat(f, ": skipped: not named <device>-<16 hex digits>",
                                        kBankFileExtension));
        continue;
      }
      byDevice[*h] = f;
    }
    return byDevice;
  }
  if (!llvm::sys::fs::exists(path))
    return absl::InvalidArgumentError(
        absl::StrCat("bank '", path.str(), "' does not exist (give a bank folder or a ",
                     "<device>-<hash>.jsonl file)"));
  // A single file: its device from its name, else from its first record.
  std::optional<uint64_t> h = fileDeviceHash(path);
  if (!h) {
    std::vector<std::string> ignored;
    absl::StatusOr<std::vector<BankRecord>> records = readBankFile(path, ignored);
    if (!records.ok()) return records.status();
    if (records->empty())
      return absl::InvalidArgumentError(absl::StrCat(
          "bank file '", path.str(), "' has no records, so its device is unknown"));
    h = records->front().key.deviceHash;
  }
  byDevice[*h] = path.str();
  return byDevice;
}

/// "a2 (hash 0123...)" for an error naming a bank file's device.
std::string describeDevice(const std::string &file, uint64_t hash) {
  std::vector<std::string> ignored;
  absl::StatusOr<std::vector<BankRecord>> records = readBankFile(file, ignored);
  std::string name = records.ok() && !records->empty() ? records->front().key.deviceName : "?";
  return absl::StrCat("'", name, "' (hash ", hex(hash), ") in '", file, "'");
}

} // namespace

absl::StatusOr<MergeStats> mergeBanks(llvm::StringRef a, llvm::StringRef b, llvm::StringRef out,
                                      std::vector<std::string> &warnings) {
  absl::StatusOr<std::map<uint64_t, std::string>> inA = mergeInput(a, warnings);
  if (!inA.ok()) return inA.status();
  absl::StatusOr<std::map<uint64_t, std::string>> inB = mergeInput(b, warnings);
  if (!inB.ok()) return inB.status();
  bool filesOnly = !llvm::sys::fs::is_directory(a) && !llvm::sys::fs::is_directory(b);
  if (filesOnly && inA->begin()->first != inB->begin()->first)
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot merge banks of different devices: ",
        describeDevice(inA->begin()->second, inA->begin()->first), " and ",
        describeDevice(inB->begin()->second, inB->begin()->first),
        " (a bank record only holds on the device it was measured on)"));
  bool outIsFile = filesOnly && llvm::StringRef(out).endswith(kBankFileExtension) &&
                   !llvm::sys::fs::is_directory(out);
  if (outIsFile) {
    llvm::StringRef parent = llvm::sys::path::parent_path(out);
    if (!parent.empty())
      if (absl::Status s = ensureDir(parent); !s.ok()) return s;
  } else if (absl::Status s = ensureDir(out); !s.ok()) {
    return s;
  }

  std::map<uint64_t, std::pair<std::string, std::string>> devices; // hash -> (A file, B file)
  for (auto &[h, f] : *inA) devices[h].first = f;
  for (auto &[h, f] : *inB) devices[h].second = f;
  MergeStats stats;
  for (auto &[hash, files] : devices) {
    std::string name;
    std::vector<BankRecord> incoming;
    for (auto [file, count] : {std::pair{&files.first, &stats.fromA},
                               std::pair{&files.second, &stats.fromB}}) {
      if (file->empty()) continue;
      absl::StatusOr<std::vector<BankRecord>> records = readBankFile(*file, warnings, hash);
      if (!records.ok()) return records.status();
      *count += records->size();
      if (name.empty() && !records->empty()) name = records->front().key.deviceName;
      std::move(records->begin(), records->end(), std::back_inserter(incoming));
    }
    std::string target;
    if (outIsFile) {
      target = out.str();
    } else {
      absl::StatusOr<std::string> f = deviceFile(out, name, hash);
      if (!f.ok()) return f.status();
      target = *f;
    }
    // Records already in `out` stay: a merge never loses a record, so merging into
    // one of the inputs works too.
    size_t written = 0;
    absl::Status s = updateFile(target, warnings, hash, [&](std::vector<BankRecord> &records) {
      std::move(incoming.begin(), incoming.end(), std::back_inserter(records));
      written = dedupeRecords(records).size();
    });
    if (!s.ok()) return s;
    stats.written += written;
  }
  return stats;
}

// ---------------------------------------------------------------- table

std::string formatBankTable(const std::vector<BankRecord> &records) {
  std::vector<BankRecord> sorted = records;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const BankRecord &x, const BankRecord &y) { return sortKey(x) < sortKey(y); });
  std::vector<std::vector<std::string>> rows = {
      {"", "device", "device hash", "graph hash", "signature", "ptoc", "time us", "strategy",
       "config"}};
  for (size_t i = 0; i < sorted.size(); ++i) {
    const BankRecord &r = sorted[i];
    // Sorted by key then time, so the first of each key is its best.
    bool best = i == 0 || !sorted[i - 1].key.matches(r.key);
    rows.push_back({best ? "*" : "", r.key.deviceName, hex(r.key.deviceHash), hex(r.key.graphHash),
                    r.key.signature, r.key.ptocVersion, absl::StrFormat("%.3f", r.simulatedUs),
                    r.strategy, r.config});
  }
  std::vector<size_t> width(rows.front().size(), 0);
  for (const auto &row : rows)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::string text;
  for (const auto &row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      bool last = c + 1 == row.size();
      line += row[c];
      if (!last) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    absl::StrAppend(&text, line, "\n");
  }
  absl::StrAppend(&text, sorted.size(), sorted.size() == 1 ? " record" : " records",
                  " (* the best of its key)\n");
  return text;
}

} // namespace ptoc::tune
