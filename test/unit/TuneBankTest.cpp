// The tuning knowledge bank: keys (graph hash, signature, device, version), best
// selection, merge, corrupted lines, concurrent writers within a process (the
// two-process test is test/ptoc-run/tune-bank-concurrent.pto).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Module.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/target/DeviceSpec.h"
#include "ptoc/tune/Bank.h"

using namespace ptoc;
using tune::Bank;
using tune::BankKey;
using tune::BankRecord;

namespace {

struct BankDir {
  llvm::SmallString<128> path;
  BankDir() { REQUIRE_FALSE(llvm::sys::fs::createUniqueDirectory("ptoc-bank", path)); }
  ~BankDir() { llvm::sys::fs::remove_directories(path); }
  std::string sub(llvm::StringRef name) const {
    llvm::SmallString<128> p(path);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
};

BankKey keyFor(llvm::StringRef device, uint64_t graph = 0x1234, std::string signature =
                                                                    "f32[256,4096]->f32[256,4096]") {
  absl::StatusOr<target::DeviceSpec> spec = target::DeviceSpec::preset(device);
  REQUIRE(spec.ok());
  BankKey k;
  k.ptocVersion = "9.9.9";
  k.deviceName = spec->name;
  k.deviceHash = spec->contentHash();
  k.graphHash = graph;
  k.signature = std::move(signature);
  return k;
}

BankRecord rec(const BankKey &key, std::string config, double us, std::string strategy = "ga") {
  BankRecord r;
  r.key = key;
  r.config = std::move(config);
  r.simulatedUs = us;
  r.strategy = std::move(strategy);
  return r;
}

Bank openBank(const std::string &dir) {
  absl::StatusOr<Bank> bank = Bank::open(dir);
  REQUIRE(bank.ok());
  return *std::move(bank);
}

std::optional<BankRecord> best(Bank &bank, const BankKey &key) {
  auto r = bank.lookupBest(key);
  REQUIRE(r.ok());
  return *r;
}

std::string readText(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

constexpr const char *kSoftmax = R"(
func @softmax(%x: tensor<256x4096xf32>) -> tensor<256x4096xf32> {
  %m = amax %x {axes = [1], keepdim = true, vec_tile = [1, 4096]} : tensor<256x1xf32>
  %e = sub %x, %m {vec_tile = [1, 4096]} : tensor<256x4096xf32>
  return %e
}
)";

uint64_t hashOf(const std::string &text, std::string *signature = nullptr) {
  ir::Context ctx;
  auto module = ir::parseModuleOrError(text, "t.pto", ctx);
  REQUIRE(module.ok());
  if (signature) *signature = tune::signatureOf((*module)->func(0));
  return tune::graphHash((*module)->func(0));
}

std::string replaceAll(std::string s, const std::string &from, const std::string &to) {
  for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size())
    s.replace(pos, from.size(), to);
  return s;
}

} // namespace

TEST_CASE("graph hash ignores tile shapes, not shapes or ops", "[tunebank]") {
  std::string sig;
  uint64_t base = hashOf(kSoftmax, &sig);
  CHECK(sig == "f32[256,4096]->f32[256,4096]");
  CHECK(hashOf(kSoftmax) == base); // stable
  // Another tile shape: the same operator, so the same bank entry.
  CHECK(hashOf(replaceAll(kSoftmax, "vec_tile = [1, 4096]", "vec_tile = [2, 4096]")) == base);
  // Another shape, dtype or op: another key.
  std::string otherShape = replaceAll(replaceAll(kSoftmax, "256x4096", "128x4096"), "256x1", "128x1");
  std::string shapeSig;
  CHECK(hashOf(otherShape, &shapeSig) != base);
  CHECK(shapeSig == "f32[128,4096]->f32[128,4096]");
  CHECK(hashOf(replaceAll(kSoftmax, "xf32", "xf16")) != base);
  CHECK(hashOf(replaceAll(kSoftmax, "amax", "amin")) != base);
  CHECK(hashOf(replaceAll(kSoftmax, "sub %x, %m", "add %x, %m")) != base);
}

TEST_CASE("bank lookups hit the same key only", "[tunebank]") {
  BankDir dir;
  Bank bank = openBank(dir.path.str().str());
  BankKey key = keyFor("a2");
  CHECK_FALSE(best(bank, key).has_value()); // empty bank
  REQUIRE(bank.record(rec(key, R"({"vec_tile": [[8, 4096]]})", 50)).ok());
  REQUIRE(bank.record(rec(key, R"({"vec_tile": [[2, 4096]]})", 40)).ok());
  REQUIRE(bank.record(rec(key, R"({"vec_tile": [[1, 4096]]})", 45)).ok());

  std::optional<BankRecord> hit = best(bank, key);
  REQUIRE(hit.has_value());
  CHECK(hit->config == R"({"vec_tile":[[2,4096]]})"); // canonical form
  CHECK(hit->simulatedUs == 40);
  CHECK(hit->strategy == "ga");
  CHECK_FALSE(hit->timestamp.empty());

  // A fresh Bank on the same folder (another process, later) sees the same.
  Bank again = openBank(dir.path.str().str());
  REQUIRE(best(again, key).has_value());
  CHECK(best(again, key)->simulatedUs == 40);

  BankKey otherShape = key;
  otherShape.signature = "f32[128,4096]->f32[128,4096]";
  CHECK_FALSE(best(bank, otherShape).has_value());
  BankKey otherGraph = key;
  otherGraph.graphHash = 0x1235;
  CHECK_FALSE(best(bank, otherGraph).has_value());
  BankKey otherVersion = key;
  otherVersion.ptocVersion = "9.9.10";
  CHECK_FALSE(best(bank, otherVersion).has_value());
  CHECK_FALSE(best(bank, keyFor("tiny")).has_value());
  BankKey renamed = key; // the name is a label: the device description decides
  renamed.deviceName = "my-a2";
  CHECK(best(bank, renamed).has_value());
  // A device description with one field changed is another device, even by name.
  BankKey edited = key;
  edited.deviceHash ^= 1;
  CHECK_FALSE(best(bank, edited).has_value());
  CHECK(bank.warnings().empty());
}

TEST_CASE("bank keeps one record per key and config, the fastest", "[tunebank]") {
  BankDir dir;
  Bank bank = openBank(dir.path.str().str());
  BankKey key = keyFor("a2");
  REQUIRE(bank.record(rec(key, R"({"a": 1, "b": 2})", 30)).ok());
  REQUIRE(bank.record(rec(key, R"({"b": 2, "a": 1})", 35)).ok()); // same config, slower
  auto all = bank.all();
  REQUIRE(all.ok());
  REQUIRE(all->size() == 1);
  CHECK((*all)[0].simulatedUs == 30);
  REQUIRE(bank.record(rec(key, R"({"a":1,"b":2})", 20, "rl")).ok()); // faster: replaces
  all = bank.all();
  REQUIRE(all->size() == 1);
  CHECK((*all)[0].simulatedUs == 20);
  CHECK((*all)[0].strategy == "rl");
  // One file per device, named after it.
  REQUIRE(bank.record(rec(keyFor("tiny"), R"({"a":1})", 5)).ok());
  CHECK(llvm::sys::fs::exists(dir.sub(tune::bankFileName("a2", key.deviceHash))));
  CHECK(llvm::sys::fs::exists(dir.sub(tune::bankFileName("tiny", keyFor("tiny").deviceHash))));
  CHECK(bank.all()->size() == 2);
}

TEST_CASE("bank rejects bad records and paths", "[tunebank]") {
  BankDir dir;
  Bank bank = openBank(dir.path.str().str());
  absl::Status s = bank.record(rec(keyFor("a2"), "[1, 2]", 10));
  CHECK_FALSE(s.ok());
  CHECK_THAT(std::string(s.message()), Catch::Contains("not a JSON object"));
  CHECK_FALSE(bank.record(rec(keyFor("a2"), "{oops", 10)).ok());
  CHECK_FALSE(bank.record(rec(keyFor("a2"), "{}", -1)).ok());
  CHECK(bank.all()->empty());
  // A bank is a folder; a file in its place is an error that says so.
  std::ofstream(dir.sub("file")) << "x";
  absl::StatusOr<Bank> notDir = Bank::open(dir.sub("file"));
  REQUIRE_FALSE(notDir.ok());
  CHECK_THAT(std::string(notDir.status().message()), Catch::Contains("not a folder"));
  // A bank folder that does not exist yet is empty, and the first record creates it.
  Bank fresh = openBank(dir.sub("new/nested"));
  CHECK(fresh.all()->empty());
  REQUIRE(fresh.record(rec(keyFor("a2"), "{}", 1)).ok());
  CHECK(fresh.all()->size() == 1);
}

TEST_CASE("bank default folder comes from the environment unless given", "[tunebank]") {
  BankDir dir;
  const char *old = std::getenv(tune::kBankPathEnv);
  std::string saved = old ? old : "";
  setenv(tune::kBankPathEnv, dir.path.c_str(), 1);
  auto fromEnv = Bank::open();
  REQUIRE(fromEnv.ok());
  CHECK(fromEnv->dir() == dir.path.str().str());
  auto explicitDir = Bank::open(dir.sub("mine"));
  REQUIRE(explicitDir.ok());
  CHECK(explicitDir->dir() == dir.sub("mine"));
  unsetenv(tune::kBankPathEnv);
  auto fallback = Bank::defaultPath();
  if (std::getenv("HOME")) {
    REQUIRE(fallback.ok());
    CHECK_THAT(*fallback, Catch::EndsWith(".cache/ptoc/bank"));
  }
  if (old) setenv(tune::kBankPathEnv, saved.c_str(), 1);
}

TEST_CASE("a corrupted bank line is skipped and nothing else is lost", "[tunebank]") {
  BankDir dir;
  Bank bank = openBank(dir.path.str().str());
  BankKey key = keyFor("a2");
  REQUIRE(bank.record(rec(key, R"({"n":1})", 10)).ok());
  REQUIRE(bank.record(rec(key, R"({"n":2})", 20)).ok());
  std::string file = dir.sub(tune::bankFileName("a2", key.deviceHash));
  std::string text = readText(file);
  size_t firstEnd = text.find('\n');
  REQUIRE(firstEnd != std::string::npos);
  // A torn line in the middle, a line of another device and a newer format's line.
  BankRecord foreignDevice = rec(keyFor("tiny"), R"({"n":3})", 1);
  foreignDevice.timestamp = "t";
  std::string corrupted = text.substr(0, firstEnd + 1) + "{\"format\":1,\"ptoc\":\"9.9\n" +
                          tune::recordToLine(foreignDevice) + "\n" +
                          R"({"format":99,"whatever":true})" + "\n" + text.substr(firstEnd + 1);
  std::ofstream(file, std::ios::trunc) << corrupted;

  Bank reader = openBank(dir.path.str().str());
  auto all = reader.all();
  REQUIRE(all.ok());
  CHECK(all->size() == 2);
  REQUIRE(reader.warnings().size() == 3);
  CHECK_THAT(reader.warnings()[0], Catch::Contains(file + ":2: skipped bank line"));
  CHECK_THAT(reader.warnings()[1], Catch::Contains(":3:") && Catch::Contains("device hash"));
  CHECK_THAT(reader.warnings()[2], Catch::Contains(":4:") && Catch::Contains("newer"));
  CHECK(best(reader, key)->simulatedUs == 10);

  // The next write drops the bad lines, keeps the newer format's line verbatim and
  // loses no record.
  REQUIRE(reader.record(rec(key, R"({"n":4})", 5)).ok());
  std::string rewritten = readText(file);
  CHECK(rewritten.find("\"ptoc\":\"9.9\n") == std::string::npos);
  CHECK(rewritten.find(R"({"format":99,"whatever":true})") != std::string::npos);
  Bank after = openBank(dir.path.str().str());
  CHECK(after.all()->size() == 3);
  CHECK(after.warnings().size() == 1); // only the newer format's line
  CHECK(best(after, key)->simulatedUs == 5);
}

TEST_CASE("bank merge keeps the best record per key and config", "[tunebank]") {
  BankDir dir;
  Bank a = openBank(dir.sub("a")), b = openBank(dir.sub("b"));
  BankKey key = keyFor("a2"), other = keyFor("a2", 0x999);
  REQUIRE(a.record(rec(key, R"({"n":1})", 10)).ok());
  REQUIRE(a.record(rec(key, R"({"n":2})", 30)).ok());
  REQUIRE(b.record(rec(key, R"({"n":2})", 25)).ok()); // better than a's
  REQUIRE(b.record(rec(key, R"({"n":1})", 12)).ok()); // worse than a's
  REQUIRE(b.record(rec(other, R"({"n":7})", 3)).ok());
  REQUIRE(b.record(rec(keyFor("tiny"), R"({"n":1})", 1)).ok()); // only in b

  std::vector<std::string> warnings;
  auto stats = tune::mergeBanks(dir.sub("a"), dir.sub("b"), dir.sub("c"), warnings);
  REQUIRE(stats.ok());
  CHECK(stats->fromA == 2);
  CHECK(stats->fromB == 4);
  CHECK(stats->written == 4);
  CHECK(warnings.empty());
  Bank c = openBank(dir.sub("c"));
  auto all = c.all();
  REQUIRE(all.ok());
  REQUIRE(all->size() == 4);
  for (const BankRecord &r : *all) {
    if (r.key.matches(key) && r.config == R"({"n":1})") CHECK(r.simulatedUs == 10);
    if (r.key.matches(key) && r.config == R"({"n":2})") CHECK(r.simulatedUs == 25);
  }
  CHECK(best(c, key)->simulatedUs == 10);
  CHECK(best(c, other)->simulatedUs == 3);
  CHECK(best(c, keyFor("tiny"))->simulatedUs == 1);
  // The inputs are untouched.
  CHECK(a.all()->size() == 2);

  // Merging into one of the inputs keeps what it had.
  REQUIRE(tune::mergeBanks(dir.sub("a"), dir.sub("b"), dir.sub("a"), warnings).ok());
  CHECK(openBank(dir.sub("a")).all()->size() == 4);

  // Two device files of different devices do not merge; the error names both.
  std::string fileA2 = dir.sub("b/" + tune::bankFileName("a2", key.deviceHash));
  std::string fileTiny = dir.sub("b/" + tune::bankFileName("tiny", keyFor("tiny").deviceHash));
  auto bad = tune::mergeBanks(fileA2, fileTiny, dir.sub("d.jsonl"), warnings);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(std::string(bad.status().message()),
             Catch::Contains("different devices") && Catch::Contains("'a2'") &&
                 Catch::Contains("'tiny'"));
  CHECK_FALSE(llvm::sys::fs::exists(dir.sub("d.jsonl")));

  // Two files of one device merge into a file.
  std::string fileA2a = dir.sub("a/" + tune::bankFileName("a2", key.deviceHash));
  auto files = tune::mergeBanks(fileA2, fileA2a, dir.sub("e.jsonl"), warnings);
  REQUIRE(files.ok());
  std::vector<std::string> w;
  auto merged = tune::readBankFile(dir.sub("e.jsonl"), w);
  REQUIRE(merged.ok());
  CHECK(merged->size() == 3);
}

TEST_CASE("bank writers on several threads lose nothing", "[tunebank]") {
  BankDir dir;
  constexpr int kThreads = 4, kPerThread = 25;
  BankKey key = keyFor("a2");
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      // Each writer has its own Bank, as separate processes would.
      absl::StatusOr<Bank> bank = Bank::open(dir.path.str());
      if (!bank.ok()) return void(++failures[t]);
      for (int i = 0; i < kPerThread; ++i)
        if (!bank->record(rec(key, "{\"t\":" + std::to_string(t) + ",\"i\":" + std::to_string(i) + "}",
                              t * 100 + i))
                 .ok())
          ++failures[t];
    });
  for (std::thread &t : threads) t.join();
  for (int f : failures) CHECK(f == 0);
  Bank bank = openBank(dir.path.str().str());
  auto all = bank.all();
  REQUIRE(all.ok());
  CHECK(all->size() == size_t(kThreads * kPerThread));
  CHECK(bank.warnings().empty());
  // No temp file is left behind.
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir.path, ec), end; it != end && !ec; it.increment(ec))
    CHECK(it->path().find(".tmp") == std::string::npos);
}

TEST_CASE("bank table marks the best of each key", "[tunebank]") {
  BankKey key = keyFor("a2");
  std::string table = tune::formatBankTable(
      {rec(key, R"({"n":2})", 20), rec(key, R"({"n":1})", 10), rec(keyFor("a2", 7), "{}", 30)});
  std::istringstream lines(table);
  std::string header, first, second, third;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  std::getline(lines, third);
  CHECK_THAT(header, Catch::Contains("graph hash") && Catch::Contains("config"));
  // Graph 7 sorts before 0x1234; then the 0x1234 key's best first.
  CHECK_THAT(first, Catch::StartsWith("*") && Catch::Contains("30.000"));
  CHECK_THAT(second, Catch::StartsWith("*") && Catch::Contains(R"({"n":1})"));
  CHECK_THAT(third, !Catch::StartsWith("*") && Catch::Contains(R"({"n":2})"));
  CHECK_THAT(table, Catch::EndsWith("3 records (* the best of its key)\n"));
}
