// Unit tests for DeviceSpec: presets, JSON reading/writing, errors and hashing.
#include <catch2/catch.hpp>

#include <cmath>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "ptoc/target/DeviceSpec.h"

using Catch::Matchers::Contains;
using ptoc::target::DeviceSpec;

namespace {

/// The error message of a failed parse (fails the test if it parsed).
std::string errorOf(const absl::StatusOr<DeviceSpec> &r) {
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(r.status().message());
}

std::string parseError(const std::string &json) {
  return errorOf(DeviceSpec::fromJson(json, "device.json"));
}

/// A fresh temporary directory, removed at the end of the test.
struct TempDir {
  llvm::SmallString<128> path;
  TempDir() { REQUIRE_FALSE(llvm::sys::fs::createUniqueDirectory("ptoc-device", path)); }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string file(llvm::StringRef name, const std::string &contents) const {
    llvm::SmallString<128> p = path;
    llvm::sys::path::append(p, name);
    std::ofstream(std::string(p)) << contents;
    return std::string(p);
  }
};

} // namespace

TEST_CASE("every preset loads, validates and round-trips", "[target]") {
  REQUIRE(DeviceSpec::presetNames() == std::vector<std::string>{"a2", "a3", "b3", "b4", "tiny"});
  for (const std::string &name : DeviceSpec::presetNames()) {
    INFO("preset " << name);
    absl::StatusOr<DeviceSpec> d = DeviceSpec::preset(name);
    REQUIRE(d.ok());
    CHECK(d->name == name);
    CHECK(d->validate().ok());

    std::string json = d->toJson();
    absl::StatusOr<DeviceSpec> back = DeviceSpec::fromJson(json, "roundtrip.json");
    REQUIRE(back.ok());
    CHECK(back->toJson() == json);
    CHECK(back->contentHash() == d->contentHash());

    absl::StatusOr<DeviceSpec> loaded = DeviceSpec::load(name);
    REQUIRE(loaded.ok());
    CHECK(loaded->toJson() == json);
  }
}

TEST_CASE("preset values", "[target]") {
  // a2 is the struct's defaults.
  DeviceSpec defaults;
  absl::StatusOr<DeviceSpec> a2 = DeviceSpec::preset("a2");
  REQUIRE(a2.ok());
  CHECK(a2->toJson() == defaults.toJson());

  absl::StatusOr<DeviceSpec> b3 = DeviceSpec::preset("b3");
  REQUIRE(b3.ok());
  CHECK(b3->aicCores == 20);
  CHECK(b3->aivCores == 40);
  CHECK(b3->clockMHz == 1800);
  CHECK(b3->scheduler.threads == 3);

  absl::StatusOr<DeviceSpec> a3 = DeviceSpec::preset("a3");
  REQUIRE(a3.ok());
  CHECK(a3->aicCores == 24);
  CHECK(a3->aivCores == 48);
  CHECK(a3->clockMHz == 1850);

  absl::StatusOr<DeviceSpec> tiny = DeviceSpec::preset("tiny");
  REQUIRE(tiny.ok());
  CHECK(tiny->aicCores == 2);
  CHECK(tiny->aivCores == 4);
  CHECK(tiny->buffers.l1 == 64 * 1024);
  CHECK(tiny->buffers.l0a == 16 * 1024);
  CHECK(tiny->buffers.l0b == 16 * 1024);
  CHECK(tiny->buffers.l0c == 32 * 1024);
  CHECK(tiny->buffers.ub == 32 * 1024);
  CHECK(tiny->scheduler.threads == 1);
  CHECK(tiny->launchOverheadUs == 1);

  // 910B4: 20 AIC / 40 AIV at 1.5 GHz with half the L2 of the other parts.
  absl::StatusOr<DeviceSpec> b4 = DeviceSpec::preset("b4");
  REQUIRE(b4.ok());
  CHECK(b4->aicCores == 20);
  CHECK(b4->aivCores == 40);
  CHECK(b4->clockMHz == 1500);
  CHECK(b4->memory.l2Bytes == int64_t(96) << 20);
  CHECK(b4->memory.hbmBytesPerSecond < b3->memory.hbmBytesPerSecond);
}

TEST_CASE("numeric fields by path: read, set, range", "[target]") {
  std::vector<std::string> paths = DeviceSpec::numericFieldPaths();
  REQUIRE(paths.front() == "aic_cores");
  CHECK(std::find(paths.begin(), paths.end(), "memory.core_hbm_bytes_per_cycle") != paths.end());
  CHECK(std::find(paths.begin(), paths.end(), "plain_kernel_start_us") != paths.end());
  DeviceSpec d;
  for (const std::string &path : paths) {
    INFO(path);
    absl::StatusOr<double> v = d.numericField(path);
    REQUIRE(v.ok());
    absl::StatusOr<DeviceSpec::FieldInfo> info = DeviceSpec::fieldInfo(path);
    REQUIRE(info.ok());
    CHECK(*v >= info->min);
    CHECK(*v <= info->max);
    // Setting a field to its own value changes nothing.
    REQUIRE(d.setNumericField(path, *v).ok());
  }
  CHECK(d.toJson() == DeviceSpec().toJson());

  REQUIRE(d.setNumericField("memory.core_hbm_bytes_per_cycle", 40).ok());
  CHECK(d.memory.coreHbmBytesPerCycle == 40);
  CHECK(*d.numericField("memory.core_hbm_bytes_per_cycle") == 40);
  REQUIRE(d.setNumericField("aic_cores", 19.6).ok()); // integers are rounded
  CHECK(d.aicCores == 20);
  CHECK(DeviceSpec::fieldInfo("aic_cores")->integral);
  CHECK_FALSE(DeviceSpec::fieldInfo("clock_mhz")->integral);
  CHECK_THAT(std::string(d.setNumericField("aic_cores", 1e12).message()),
             Contains("aic_cores: 1e+12 is out of range"));
  CHECK_THAT(std::string(d.setNumericField("clock_mhz", std::nan("")).message()),
             Contains("is not a number"));
  CHECK_THAT(std::string(d.numericField("memory.hbm").status().message()),
             Contains("unknown device field 'memory.hbm' (known: aic_cores, aiv_cores"));
  CHECK_THAT(std::string(DeviceSpec::fieldInfo("x").status().message()),
             Contains("unknown device field 'x'"));
}

TEST_CASE("toJson writes every field in a fixed layout", "[target]") {
  std::string json = DeviceSpec().toJson();
  for (const char *key : {"\"name\": \"a2\"",
                          "\"aic_cores\": 24",
                          "\"aiv_cores\": 48",
                          "\"clock_mhz\": 1800",
                          "\"l1\": 524288",
                          "\"l0a\": 65536",
                          "\"l0b\": 65536",
                          "\"l0c\": 131072",
                          "\"ub\": 196608",
                          "\"block_bytes\": 32",
                          "\"cube_flops_per_cycle_fp16\": 8192",
                          "\"cube_int8_factor\": 2",
                          "\"cube_fp32_factor\": 0.5",
                          "\"vector_bytes_per_cycle\": 256",
                          "\"hbm_bytes_per_second\": 1.6e+12",
                          "\"l2_bytes\": 201326592",
                          "\"l2_bytes_per_second\": 4.752e+12",
                          "\"core_hbm_bytes_per_cycle\": 32",
                          "\"gm_latency_cycles\": 500",
                          "\"gm_to_l1_fixed_cycles\": 175",
                          "\"nd2nz_bytes_per_cycle\": 122",
                          "\"mte1_l0b_bytes_per_cycle\": 132",
                          "\"vector_binary_rate\": 0.5",
                          "\"plain_kernel_start_us\": 1",
                          "\"plain_cube_kernel_start_us\": 6",
                          "\"plain_block_cycles\": 2000",
                          "\"threads\": 3",
                          "\"dispatch_cycles\": 200",
                          "\"completion_cycles\": 240",
                          "\"dependency_resolve_cycles\": 390",
                          "\"launch_overhead_us\": 20"})
    CHECK_THAT(json, Contains(key));
  // Sections in struct order, pretty printed.
  CHECK(json.find("\"buffers\": {") < json.find("\"compute\": {"));
  CHECK(json.find("\"compute\": {") < json.find("\"memory\": {"));
  CHECK(json.find("\"memory\": {") < json.find("\"scheduler\": {"));
  CHECK(json.find("\"scheduler\": {") < json.find("\"launch_overhead_us\""));
  CHECK(json.find("\"launch_overhead_us\"") < json.find("\"plain_kernel_start_us\""));
}

TEST_CASE("doubles round-trip exactly", "[target]") {
  DeviceSpec d;
  d.name = "odd";
  d.clockMHz = 1234.5678901234567;
  d.compute.cubeFp32Factor = 0.1;
  d.memory.hbmBytesPerSecond = 1.0 / 3.0 * 1e12;
  d.memory.gmLatencyCycles = 0; // latencies may be zero (an L2 hit then costs none either)
  d.memory.l2LatencyCycles = 0;
  d.scheduler.dispatchCycles = 1e-300;
  d.launchOverheadUs = 12345.678901234567;
  REQUIRE(d.validate().ok());
  absl::StatusOr<DeviceSpec> back = DeviceSpec::fromJson(d.toJson(), "odd.json");
  REQUIRE(back.ok());
  CHECK(back->clockMHz == d.clockMHz);
  CHECK(back->compute.cubeFp32Factor == d.compute.cubeFp32Factor);
  CHECK(back->memory.hbmBytesPerSecond == d.memory.hbmBytesPerSecond);
  CHECK(back->memory.gmLatencyCycles == 0);
  CHECK(back->scheduler.dispatchCycles == d.scheduler.dispatchCycles);
  CHECK(back->launchOverheadUs == d.launchOverheadUs);
  CHECK(back->toJson() == d.toJson());
}

TEST_CASE("a negative zero reads as 0: the same device, hash and text", "[target]") {
  absl::StatusOr<DeviceSpec> minus =
      DeviceSpec::fromJson(R"({"compute": {"vector_latency_cycles": -0.0}})", "minus.json");
  absl::StatusOr<DeviceSpec> plus =
      DeviceSpec::fromJson(R"({"compute": {"vector_latency_cycles": 0}})", "plus.json");
  REQUIRE(minus.ok());
  REQUIRE(plus.ok());
  CHECK(!std::signbit(minus->compute.vectorLatencyCycles));
  CHECK(minus->contentHash() == plus->contentHash());
  absl::StatusOr<DeviceSpec> back = DeviceSpec::fromJson(minus->toJson(), "back.json");
  REQUIRE(back.ok());
  CHECK(back->toJson() == minus->toJson());
}

TEST_CASE("a partial description inherits from its base", "[target]") {
  SECTION("explicit base") {
    absl::StatusOr<DeviceSpec> d = DeviceSpec::fromJson(
        R"({"name": "small", "base": "tiny", "aic_cores": 1, "aiv_cores": 2,
            "buffers": {"ub": 16384}})",
        "small.json");
    REQUIRE(d.ok());
    absl::StatusOr<DeviceSpec> tiny = DeviceSpec::preset("tiny");
    REQUIRE(tiny.ok());
    CHECK(d->name == "small");
    CHECK(d->aicCores == 1);
    CHECK(d->aivCores == 2);
    CHECK(d->buffers.ub == 16384);
    CHECK(d->buffers.l1 == tiny->buffers.l1);
    CHECK(d->buffers.l0c == tiny->buffers.l0c);
    CHECK(d->launchOverheadUs == tiny->launchOverheadUs);
    CHECK(d->scheduler.threads == 1);
  }
  SECTION("default base is a2") {
    absl::StatusOr<DeviceSpec> d =
        DeviceSpec::fromJson(R"({"name": "fast", "clock_mhz": 2000})", "fast.json");
    REQUIRE(d.ok());
    DeviceSpec expected;
    expected.name = "fast";
    expected.clockMHz = 2000;
    CHECK(d->toJson() == expected.toJson());
  }
  SECTION("an empty object is a2") {
    absl::StatusOr<DeviceSpec> d = DeviceSpec::fromJson("{}", "empty.json");
    REQUIRE(d.ok());
    CHECK(d->toJson() == DeviceSpec().toJson());
  }
  SECTION("unknown base") {
    std::string msg = parseError(R"({"base": "a9"})");
    CHECK_THAT(msg, Contains("device.json: field 'base': unknown preset 'a9'"));
    CHECK_THAT(msg, Contains("a2, a3, b3, b4, tiny"));
  }
}

TEST_CASE("malformed JSON names the position", "[target]") {
  std::string msg = parseError("{\n  \"aic_cores\": 24,\n  \"aiv_cores\" 48\n}");
  CHECK_THAT(
      msg, Contains("device.json: invalid JSON at line 3 column 15: Expected : after object key"));
  CHECK_THAT(parseError("[1, 2]"),
             Contains("device.json: expected a JSON object at the top level, got [1,2]"));
}

TEST_CASE("unknown fields are rejected with the known ones", "[target]") {
  CHECK(parseError(R"({"buffers": {"ubb": 1}})") ==
        "device.json: unknown field 'buffers.ubb' (known: l1, l0a, l0b, l0c, ub, block_bytes)");
  std::string msg = parseError(R"({"aic_core": 24})");
  CHECK_THAT(msg, Contains("device.json: unknown field 'aic_core' (known: name, base, "
                           "aic_cores, aiv_cores, clock_mhz, buffers, compute, pipes, memory, "
                           "scheduler, launch_overhead_us, plain_kernel_start_us, "
                           "plain_cube_kernel_start_us, plain_block_cycles)"));
  CHECK_THAT(parseError(R"({"scheduler": {"thread": 2}})"),
             Contains("unknown field 'scheduler.thread'"));
}

TEST_CASE("mistyped and out-of-range fields name the field", "[target]") {
  CHECK(parseError(R"({"buffers": {"ub": -5}})") ==
        "device.json: field 'buffers.ub': expected a positive integer, got -5");
  CHECK(parseError(R"({"aic_cores": "24"})") ==
        "device.json: field 'aic_cores': expected a positive integer, got \"24\"");
  CHECK(parseError(R"({"aic_cores": 1.5})") ==
        "device.json: field 'aic_cores': expected a positive integer, got 1.5");
  CHECK(parseError(R"({"aic_cores": 0})") ==
        "device.json: field 'aic_cores': expected a positive integer, got 0");
  CHECK(parseError(R"({"aic_cores": 4294967296})") ==
        "device.json: field 'aic_cores': 4294967296 is out of range: it must be between 1 and "
        "1024 (real dies have 20-32 cube cores; the simulator keeps state per core)");
  CHECK(parseError(R"({"memory": {"hbm_bytes_per_second": 0}})") ==
        "device.json: field 'memory.hbm_bytes_per_second': expected a positive number, got 0");
  CHECK(parseError(R"({"scheduler": {"dispatch_cycles": -1}})") ==
        "device.json: field 'scheduler.dispatch_cycles': expected a non-negative number, "
        "got -1");
  CHECK(parseError(R"({"compute": 5})") ==
        "device.json: field 'compute': expected an object, got 5");
  CHECK_THAT(parseError(R"({"name": 3})"), Contains("field 'name': expected a non-empty string"));
  CHECK_THAT(parseError(R"({"name": ""})"), Contains("field 'name'"));
  // An integral double is an integer.
  absl::StatusOr<DeviceSpec> d = DeviceSpec::fromJson(R"({"buffers": {"ub": 1.31072e5}})", "x");
  REQUIRE(d.ok());
  CHECK(d->buffers.ub == 131072);
}

TEST_CASE("inconsistent values are rejected", "[target]") {
  CHECK(parseError(R"({"aiv_cores": 50})") ==
        "device.json: aiv_cores (50) must be a multiple of aic_cores (24)");
  CHECK(parseError(R"({"buffers": {"block_bytes": 48}})") ==
        "device.json: buffers.block_bytes (48) must be a power of two");
  CHECK_THAT(parseError(R"({"base": "tiny", "scheduler": {"threads": 3}})"),
             Contains("device.json: scheduler.threads (3) must be between 1 and aic_cores (2)"));

  DeviceSpec d;
  CHECK(d.validate().ok());
  d.buffers.ub = -5;
  CHECK(d.validate().message() == "device 'a2': buffers.ub must be a positive integer, got -5");
  d = DeviceSpec();
  d.aivCores = 50;
  CHECK_THAT(std::string(d.validate().message()),
             Contains("aiv_cores (50) must be a multiple of aic_cores (24)"));
  d = DeviceSpec();
  d.scheduler.threads = 0;
  CHECK_THAT(std::string(d.validate().message()), Contains("scheduler.threads"));
  d = DeviceSpec();
  d.compute.cubeInt8Factor = std::numeric_limits<double>::infinity();
  CHECK_THAT(std::string(d.validate().message()), Contains("compute.cube_int8_factor"));
  d = DeviceSpec();
  d.name = "";
  CHECK_FALSE(d.validate().ok());
}

TEST_CASE("load takes a preset name or a file", "[target]") {
  TempDir dir;
  SECTION("file") {
    std::string path = dir.file("mine.json", R"({"name": "mine", "base": "b3", "aic_cores": 10,
                                                  "aiv_cores": 20})");
    absl::StatusOr<DeviceSpec> d = DeviceSpec::load(path);
    REQUIRE(d.ok());
    CHECK(d->name == "mine");
    CHECK(d->aicCores == 10);
    CHECK(d->clockMHz == 1800);
  }
  SECTION("errors in a file name the file") {
    std::string path = dir.file("bad.json", R"({"buffers": {"ub": -5}})");
    CHECK(errorOf(DeviceSpec::load(path)) ==
          path + ": field 'buffers.ub': expected a positive integer, got -5");
  }
  SECTION("a file without .json is still a file") {
    std::string path = dir.file("device.cfg", R"({"name": "cfg"})");
    absl::StatusOr<DeviceSpec> d = DeviceSpec::load(path);
    REQUIRE(d.ok());
    CHECK(d->name == "cfg");
  }
  SECTION("missing file") {
    llvm::SmallString<128> missing = dir.path;
    llvm::sys::path::append(missing, "nope.json");
    std::string msg = errorOf(DeviceSpec::load(missing));
    CHECK_THAT(msg, Contains("cannot read device file '" + std::string(missing) + "'"));
  }
  SECTION("unknown preset") {
    CHECK(errorOf(DeviceSpec::load("a9")) ==
          "unknown device 'a9': not a preset (a2, a3, b3, b4, tiny) and no such file");
    CHECK_THAT(errorOf(DeviceSpec::preset("a9")), Contains("unknown device preset 'a9'"));
  }
}

TEST_CASE("contentHash identifies the description", "[target]") {
  std::vector<uint64_t> hashes;
  for (const std::string &name : DeviceSpec::presetNames()) {
    absl::StatusOr<DeviceSpec> d = DeviceSpec::preset(name);
    REQUIRE(d.ok());
    hashes.push_back(d->contentHash());
  }
  std::sort(hashes.begin(), hashes.end());
  CHECK(std::adjacent_find(hashes.begin(), hashes.end()) == hashes.end());

  DeviceSpec a, b;
  CHECK(a.contentHash() == b.contentHash());
  b.memory.gmLatencyCycles += 1;
  CHECK(a.contentHash() != b.contentHash());
  b = a;
  b.name = "other";
  CHECK(a.contentHash() != b.contentHash());
  // Fixed algorithm over fixed text: the same in every process. Catches accidental
  // changes of the canonical form (which would invalidate every cache key).
  absl::StatusOr<DeviceSpec> parsed = DeviceSpec::fromJson(a.toJson(), "x");
  REQUIRE(parsed.ok());
  CHECK(parsed->contentHash() == a.contentHash());
}

TEST_CASE("the examples in docs/device-model.md parse", "[target]") {
  absl::StatusOr<DeviceSpec> mine = DeviceSpec::fromJson(R"({
    "name": "my-910b4",
    "base": "b4",
    "pipes": { "gm_to_ub_fixed_cycles": 193, "gm_to_ub_bytes_per_cycle": 126 }
  })",
                                                         "my-910b4.json");
  REQUIRE(mine.ok());
  CHECK(mine->aicCores == 20);
  CHECK(mine->aivCores == 40);
  CHECK(mine->clockMHz == 1500);
  CHECK(mine->memory.l2Bytes == int64_t(96) << 20);
  CHECK(mine->pipes.gmToUbBytesPerCycle == 126);

  // The full a2 file the guide shows is the preset, every field of it: a field left
  // out would still parse (from the a2 base), so the text itself is compared.
  std::ifstream doc(std::string(PTOC_SOURCE_DIR) + "/docs/device-model.md");
  std::string text((std::istreambuf_iterator<char>(doc)), std::istreambuf_iterator<char>());
  size_t begin = text.find("```json\n{\n  \"name\": \"a2\"");
  REQUIRE(begin != std::string::npos);
  begin += 8;
  size_t end = text.find("```", begin);
  std::string shownText = text.substr(begin, end - begin);
  absl::StatusOr<DeviceSpec> shown = DeviceSpec::fromJson(shownText, "doc");
  REQUIRE(shown.ok());
  std::string a2 = DeviceSpec::preset("a2")->toJson();
  CHECK(shown->toJson() == a2);
  while (!shownText.empty() && shownText.back() == '\n') shownText.pop_back();
  while (!a2.empty() && a2.back() == '\n') a2.pop_back();
  CHECK(shownText == a2);

  absl::StatusOr<DeviceSpec> fast = DeviceSpec::fromJson(
      R"({ "name": "a2-fast-hbm", "memory": { "hbm_bytes_per_second": 3.2e12 } })", "x.json");
  REQUIRE(fast.ok());
  CHECK(fast->memory.hbmBytesPerSecond == 3.2e12);
  CHECK(fast->aicCores == 24);
}

TEST_CASE("simulator fields are read, and inconsistent ones rejected by name", "[target]") {
  absl::StatusOr<DeviceSpec> d = DeviceSpec::fromJson(
      R"({"pipes": {"mte3_bytes_per_cycle": 32}, "compute": {"vector_div_rate": 0.25}})",
      "mine.json");
  REQUIRE(d.ok());
  CHECK(d->pipes.mte3BytesPerCycle == 32);
  CHECK(d->compute.vectorDivRate == 0.25);
  CHECK(d->pipes.fixpipeBytesPerCycle == 123); // from the a2 base

  auto error = [](const char *json) {
    absl::StatusOr<DeviceSpec> r = DeviceSpec::fromJson(json, "bad.json");
    REQUIRE_FALSE(r.ok());
    return std::string(r.status().message());
  };
  CHECK_THAT(error(R"({"compute": {"vector_div_rate": 2}})"),
             Catch::Contains("field 'compute.vector_div_rate': 2 is out of range: it must be "
                             "between 0.0009765625 and 1 (a fraction of vector_bytes_per_cycle"));
  CHECK_THAT(error(R"({"memory": {"l2_latency_cycles": 5000}})"),
             Catch::Contains("memory.l2_latency_cycles (5000) must not exceed"));
  CHECK_THAT(error(R"({"pipes": {"mte1_l0a_bytes_per_cycle": 0}})"),
             Catch::Contains("field 'pipes.mte1_l0a_bytes_per_cycle': expected a positive number"));
  CHECK_THAT(error(R"({"pipes": {"mte4": 1}})"),
             Catch::Contains("unknown field 'pipes.mte4'"));
}

// Issue 14, item 3: physical sanity bounds. Each of these ran before: 1e9 cores
// overflowed an int and aborted, 1e8 cores took 71 s and 17 GB for one task,
// vector_bytes_per_cycle 1e-300 cast a huge double to int64 (undefined behaviour), and
// tiny or huge rates ended in "a bug in the simulator" or a 90-digit simulated time.
TEST_CASE("every numeric field has physical bounds, named with the value and why",
          "[target]") {
  struct Case {
    const char *json;
    const char *message;
  };
  const Case cases[] = {
      {R"({"aic_cores": 1e9, "aiv_cores": 2e9})",
       "field 'aic_cores': 1000000000 is out of range: it must be between 1 and 1024 (real "
       "dies have 20-32 cube cores"},
      {R"({"aic_cores": 100000000, "aiv_cores": 100000000})",
       "field 'aic_cores': 100000000 is out of range: it must be between 1 and 1024"},
      {R"({"aiv_cores": 8192})", "field 'aiv_cores': 8192 is out of range: it must be between 1 "
                                 "and 4096"},
      {R"({"compute": {"vector_bytes_per_cycle": 1e-300}})",
       "field 'compute.vector_bytes_per_cycle': 1e-300 is out of range: it must be between 1 "
       "and 65536 (256 bytes per cycle per vector core on real parts)"},
      {R"({"memory": {"hbm_bytes_per_second": 1e-300}})",
       "field 'memory.hbm_bytes_per_second': 1e-300 is out of range: it must be between 1e+09 "
       "and 1e+15"},
      {R"({"memory": {"hbm_bytes_per_second": 1e300}})",
       "field 'memory.hbm_bytes_per_second': 1e+300 is out of range"},
      {R"({"memory": {"core_hbm_bytes_per_cycle": 1e-300}})",
       "field 'memory.core_hbm_bytes_per_cycle': 1e-300 is out of range: it must be between 1 "
       "and 65536"},
      {R"({"clock_mhz": 1e-300})",
       "field 'clock_mhz': 1e-300 is out of range: it must be between 10 and 10000 (NPU clocks "
       "are 1-2 GHz"},
      {R"({"clock_mhz": 1e300})", "field 'clock_mhz': 1e+300 is out of range"},
      {R"({"pipes": {"mte3_bytes_per_cycle": 1e-300}})",
       "field 'pipes.mte3_bytes_per_cycle': 1e-300 is out of range"},
      {R"({"memory": {"gm_latency_cycles": 1e300}})",
       "field 'memory.gm_latency_cycles': 1e+300 is out of range: it must be between 0 and "
       "1e+06 (a fixed cost of tens to a few thousand cycles on real parts"},
      {R"({"scheduler": {"dispatch_cycles": 1e300}})",
       "field 'scheduler.dispatch_cycles': 1e+300 is out of range"},
      {R"({"launch_overhead_us": 1e300})",
       "field 'launch_overhead_us': 1e+300 is out of range: it must be between 0 and 1e+06"},
      {R"({"buffers": {"ub": 9000000000000000000}})",
       "field 'buffers.ub': 9000000000000000000 is out of range: it must be between 1 and "
       "1073741824 (on-chip buffers are KiB to a few MiB)"},
      {R"({"memory": {"l2_bytes": 9000000000000000000}})",
       "field 'memory.l2_bytes': 9000000000000000000 is out of range: it must be between 1 and "
       "1099511627776"},
      {R"({"compute": {"cube_fp32_factor": 1e-9}})",
       "field 'compute.cube_fp32_factor': 1e-09 is out of range: it must be between "
       "0.0009765625 and 1024"},
      {R"({"scheduler": {"threads": 300}, "aic_cores": 512, "aiv_cores": 1024})",
       "field 'scheduler.threads': 300 is out of range: it must be between 1 and 256"},
      {R"({"buffers": {"ub": 16}})",
       "buffers.ub (16) must hold at least one block (buffers.block_bytes = 32)"},
      // Item 5b: an integral rate >= 2^63 was clamped to 2^63 - 1 by the JSON parser;
      // it is now read as the number written (and this one is out of range).
      {R"({"memory": {"hbm_bytes_per_second": 10000000000000000000}})",
       "field 'memory.hbm_bytes_per_second': 1e+19 is out of range"},
      {R"({"memory": {"l2_bytes": 9223372036854775808}})",
       "field 'memory.l2_bytes': expected a positive integer, got 9.2233720368547758e+18"},
  };
  for (const Case &c : cases) {
    INFO(c.json);
    CHECK_THAT(parseError(c.json), Contains(std::string("device.json: ") + c.message));
  }
}

TEST_CASE("the bounds admit every preset and the extremes of their ranges", "[target]") {
  for (const std::string &name : DeviceSpec::presetNames()) {
    INFO(name);
    absl::StatusOr<DeviceSpec> p = DeviceSpec::preset(name);
    REQUIRE(p.ok());
    CHECK(p->validate().ok());
  }
  absl::StatusOr<DeviceSpec> big = DeviceSpec::fromJson(
      R"({"name": "big", "aic_cores": 1024, "aiv_cores": 4096, "clock_mhz": 10000,
          "buffers": {"l1": 1073741824, "ub": 1073741824, "block_bytes": 4096},
          "memory": {"hbm_bytes_per_second": 1e15, "l2_bytes_per_second": 1e16,
                     "l2_bytes": 1099511627776},
          "scheduler": {"threads": 256}, "launch_overhead_us": 1e6})",
      "big.json");
  REQUIRE(big.ok());
  CHECK(big->aivCores == 4096);
  absl::StatusOr<DeviceSpec> small = DeviceSpec::fromJson(
      R"({"name": "small", "aic_cores": 1, "aiv_cores": 1, "clock_mhz": 10,
          "buffers": {"l1": 1, "l0a": 1, "l0b": 1, "l0c": 1, "ub": 1, "block_bytes": 1},
          "compute": {"vector_bytes_per_cycle": 1, "vector_div_rate": 0.0009765625},
          "memory": {"hbm_bytes_per_second": 1e9, "core_hbm_bytes_per_cycle": 1},
          "pipes": {"gm_to_l1_bytes_per_cycle": 1, "nd2nz_bytes_per_cycle": 1,
                    "gm_to_ub_bytes_per_cycle": 1},
          "scheduler": {"threads": 1}, "launch_overhead_us": 0})",
      "small.json");
  REQUIRE(small.ok());
  CHECK(small->clockMHz == 10);
  // Integral rates round-trip exactly, however they are written.
  absl::StatusOr<DeviceSpec> exact = DeviceSpec::fromJson(
      R"({"memory": {"hbm_bytes_per_second": 1000000000000000, "l2_bytes_per_second": 9007199254740993}})",
      "exact.json");
  REQUIRE(exact.ok());
  CHECK(exact->memory.hbmBytesPerSecond == 1e15);
  absl::StatusOr<DeviceSpec> back = DeviceSpec::fromJson(exact->toJson(), "back.json");
  REQUIRE(back.ok());
  CHECK(back->memory.l2BytesPerSecond == exact->memory.l2BytesPerSecond);
  CHECK(back->toJson() == exact->toJson());
}

TEST_CASE("a description built in code is checked against the same bounds", "[target]") {
  DeviceSpec d;
  d.aicCores = 100000000;
  d.aivCores = 100000000;
  CHECK(d.validate().message() ==
        "device 'a2': aic_cores: 100000000 is out of range: it must be between 1 and 1024 "
        "(real dies have 20-32 cube cores; the simulator keeps state per core)");
  DeviceSpec v;
  v.compute.vectorBytesPerCycle = 1e-300;
  CHECK_THAT(std::string(v.validate().message()),
             Contains("compute.vector_bytes_per_cycle: 1e-300 is out of range"));
}
