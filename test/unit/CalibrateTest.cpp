// Unit tests for lib/calibrate: reading measurement files (every error names the file
// and the field), and the device fit — it recovers known device fields from
// measurements the simulator generated itself, and never returns a device that
// fails the device checks.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "ptoc/calibrate/Calibrator.h"
#include "ptoc/calibrate/KernelTemplates.h"
#include "ptoc/calibrate/Measurements.h"
#include "ptoc/session/MeasurementSimulator.h"
#include "ptoc/target/DeviceSpec.h"

using Catch::Matchers::Contains;
using namespace ptoc;

namespace {

std::string errorOf(const std::string &json) {
  absl::StatusOr<calibrate::MeasurementSet> s = calibrate::parseMeasurements(json, "m.json");
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(s.status().message());
}

calibrate::KernelSimulator simulatorOf(calibrate::MeasurementSimulator &sim) {
  return [&sim](const calibrate::MeasurementSet &set, const calibrate::MeasuredKernel &k,
                const target::DeviceSpec &d) { return sim.simulate(set, k, d); };
}

calibrate::MeasuredKernel matmul(int64_t m, int64_t n, int64_t k,
                                 std::array<std::array<int64_t, 2>, 3> tile) {
  calibrate::MatmulKernel mk;
  mk.m = m;
  mk.n = n;
  mk.k = k;
  mk.cubeTile = tile;
  calibrate::MeasuredKernel out;
  out.label = "matmul " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  out.ptoText = calibrate::matmulText(mk);
  out.funcName = "matmul";
  return out;
}

calibrate::MeasuredKernel rmsnorm(int64_t rows, int64_t hidden, int64_t rowsPerTile) {
  calibrate::RmsNormKernel rk;
  rk.shape = {rows, hidden};
  rk.vecTile = {rowsPerTile, hidden};
  calibrate::MeasuredKernel out;
  out.label = "rmsnorm " + std::to_string(rows) + "x" + std::to_string(hidden);
  out.ptoText = calibrate::rmsNormText(rk);
  out.funcName = "rmsnorm";
  return out;
}

} // namespace

TEST_CASE("the shipped measurement files read and component data is refused by name",
          "[calibrate]") {
  const std::string dir = std::string(PTOC_SOURCE_DIR) + "/benchmarks/data/npu-measurements/";
  absl::StatusOr<calibrate::MeasurementSet> ranking =
      calibrate::readMeasurements(dir + "matmul_ranking_256x512x1024.json");
  REQUIRE(ranking.ok());
  CHECK(ranking->name == "matmul_ranking_256x512x1024");
  CHECK(ranking->device == "b3");
  CHECK(ranking->alternatives);
  CHECK(ranking->plainKernel);
  REQUIRE(ranking->points.size() == 12);
  CHECK(ranking->points[4].label == "No.4");
  CHECK(ranking->points[4].measuredUs == 14.982);
  CHECK_THAT(ranking->points[4].ptoText,
             Contains("cube_tile = {m = [64, 64], k = [128, 256], n = [128, 128]}"));
  CHECK_THAT(ranking->points[4].ptoText, Contains("tensor<256x512xf16>")); // f16 out

  absl::StatusOr<calibrate::MeasurementSet> rms =
      calibrate::readMeasurements(dir + "rmsnorm_910b4.json");
  REQUIRE(rms.ok());
  CHECK(rms->device == "b4"); // "b4 (910B4: ...)": the note after the name is dropped
  CHECK_FALSE(rms->alternatives);
  REQUIRE(rms->points.size() == 9);
  CHECK(rms->points[8].passOptions ==
        std::vector<std::pair<std::string, std::string>>{{"vec_nbuffer_mode", "2"},
                                                        {"vec_nbuffer_setting", "{-1: 26}"}});

  absl::StatusOr<calibrate::MeasurementSet> gemm =
      calibrate::readMeasurements(dir + "gemm_scaling_a3.json");
  REQUIRE(gemm.ok());
  CHECK(gemm->points[2].measuredBusy.at("cube") == 0.867);
  // The core grid lays the 6144^3 GEMM out as 12 x 4 tiles in each of 4 x 6 blocks.
  CHECK_THAT(gemm->points[2].ptoText, Contains("tensor<12x4x4x6x128x256xf32>"));

  CHECK_FALSE(calibrate::holdsMeasuredKernels(dir + "fixed_overheads.json"));
  absl::StatusOr<calibrate::MeasurementSet> overheads =
      calibrate::readMeasurements(dir + "fixed_overheads.json");
  REQUIRE_FALSE(overheads.ok());
  CHECK_THAT(std::string(overheads.status().message()),
             Contains("fixed_overheads.json: no \"points\" or \"configs\": not a file of "
                      "measured kernels"));
  CHECK_THAT(std::string(calibrate::readMeasurements(dir + "nope.json").status().message()),
             Contains("cannot read measurement file '" + dir + "nope.json'"));
}

TEST_CASE("malformed measurement files: the file, the field and what fits", "[calibrate]") {
  struct Case {
    const char *json, *message;
  };
  const Case cases[] = {
      {R"([1])", "m.json: expected a JSON object, got [1]"},
      {R"({"device": "b3"})", "m.json: no \"points\" or \"configs\""},
      {R"({"device": "b3", "points": []})",
       "m.json: field 'points': expected a non-empty array of measured kernels"},
      {R"({"points": [{"us": 1}]})", "m.json: field 'device': missing: name the device"},
      {R"({"device": 3, "points": [{"us": 1}]})", "m.json: field 'device': expected a string"},
      {R"({"device": "b3", "points": [{"us": 1}]})",
       "m.json: field 'kernel': missing: name the kernel family (matmul, rmsnorm, or pto"},
      {R"({"device": "b3", "kernel": "conv", "points": [{"us": 1}]})",
       "m.json: field 'kernel': unknown kernel 'conv' (known: matmul, rmsnorm, pto)"},
      {R"({"device": "b3", "kernel_kind": "gpu", "points": [{"us": 1}]})",
       "m.json: field 'kernel_kind': unknown kernel kind 'gpu' (known: plain, aicpu)"},
      {R"({"device": "b3", "kernel": "matmul", "points": [{"mkn": 64}]})",
       "m.json: field 'points[0].us': missing: the measured kernel time in microseconds"},
      {R"({"device": "b3", "kernel": "matmul", "points": [{"mkn": 64, "us": -2}]})",
       "m.json: field 'points[0].us': expected a positive number, got -2"},
      {R"({"device": "b3", "kernel": "matmul", "points": [{"mkn": 64, "us": 1}]})",
       "m.json: field 'points[0].cube_tile': missing: a matmul point needs its cube tile"},
      {R"({"device": "b3", "kernel": "matmul", "points": [{"us": 1, "m": 64, "n": 64}]})",
       "m.json: field 'points[0].k': missing: a matmul point needs its size"},
      {R"({"device": "b3", "kernel": "matmul", "cube_tile": [[16,16],[16,16]],
           "points": [{"mkn": 64, "us": 1}]})",
       "m.json: field 'cube_tile': expected [[mL0, mL1], [kL0, kL1], [nL0, nL1]]"},
      {R"({"device": "b3", "kernel": "matmul", "cube_tile": [[16,16],[16,16],[16,0]],
           "points": [{"mkn": 64, "us": 1}]})",
       "m.json: field 'cube_tile[2][1]': expected a positive integer"},
      {R"({"device": "b3", "configs": [{"us": 1, "cube_tile": [[16,16],[16,16],[16,16]]}],
           "shape": {"m": 64, "n": 64, "k": 64, "dtype": "f64"}})",
       "m.json: field 'shape.dtype': unknown dtype 'f64' (known: f16, bf16, f32, i8)"},
      {R"({"device": "b3", "kernel": "matmul", "cube_tile": [[16,16],[16,16],[16,16]],
           "core_grid": [3, 2], "points": [{"mkn": 64, "us": 1}]})",
       "m.json: field 'core_grid': the core grid does not cut C into whole tiles: m = 64 is "
       "not a whole number of 3 blocks of mL1 = 16 rows"},
      {R"({"device": "b4", "kernel": "rmsnorm", "points": [{"us": 1, "shape": [2, 64]}]})",
       "m.json: field 'points[0].vec_tile': missing: an rmsnorm point needs its vector tile"},
      {R"({"device": "b4", "kernel": "rmsnorm", "points": [{"us": 1, "shape": [2, 64],
           "vec_tile": [1, 32]}]})",
       "m.json: field 'points[0].vec_tile': the vector tile must cover the whole normalised "
       "dimension (64), got 32"},
      {R"({"device": "b4", "kernel": "rmsnorm", "points": [{"us": 1, "shape": [2, 64],
           "vec_tile": [1, 64], "busy": {"vec": 1.5}}]})",
       "m.json: field 'points[0].busy.vec': expected a share between 0 and 1, got 1.5"},
      {R"({"device": "b4", "kernel": "rmsnorm", "pass_options": {"vec_nbuffer_mode": [2]},
           "points": [{"us": 1, "shape": [2, 64], "vec_tile": [1, 64]}]})",
       "m.json: field 'pass_options.vec_nbuffer_mode': expected an integer, a boolean or text"},
      {R"({"device": "b3", "kernel": "pto", "points": [{"us": 1}]})",
       "m.json: field 'points[0].pto': missing: a \"pto\" kernel names its .pto file"},
      {R"({"device": "b3", "kernel": "pto", "points": [{"us": 1, "pto": "no-such.pto"}]})",
       "m.json: field 'points[0].pto': cannot read 'no-such.pto'"},
      {"{\"device\": ", "m.json: invalid JSON"},
      // Busy shares name the pipes ptoc measures.
      {R"({"device": "b4", "kernel": "rmsnorm", "points": [{"us": 1, "shape": [2, 64],
           "vec_tile": [1, 64], "busy": {"vector": 0.5}}]})",
       "m.json: field 'points[0].busy.vector': unknown pipe 'vector' (known: cube, l1_to_l0, "
       "gm_to_l1, l0c_to_gm, vec, gm_to_ub, ub_to_gm)"},
      // A point holds only what its kernel family reads: a misspelt parameter is not
      // silently replaced by the file's default.
      {R"({"device": "b3", "kernel": "matmul", "cube_tile": [[16,16],[16,16],[16,16]],
           "points": [{"mkn": 64, "us": 1, "cube_tiles": [[32,32],[16,16],[16,16]]}]})",
       "m.json: field 'points[0].cube_tiles': unknown key for a point of kernel 'matmul' "
       "(known: us, busy, label, no, pass_options, mkn, m, n, k, cube_tile, core_grid, dtype, "
       "out_dtype)"},
      {R"({"device": "b4", "kernel": "rmsnorm", "points": [{"us": 1, "shape": [2, 64],
           "vec_tile": [1, 64], "epsilon": 1e-6}]})",
       "m.json: field 'points[0].epsilon': unknown key for a point of kernel 'rmsnorm' "
       "(known: us, busy, label, no, pass_options, shape, vec_tile, dtype, eps)"},
      {R"({"device": "b3", "kernel": "pto", "points": [{"us": 1, "file": "k.pto"}]})",
       "m.json: field 'points[0].file': unknown key for a point of kernel 'pto' (known: us, "
       "busy, label, no, pass_options, pto, func)"},
      {R"({"device": "b3", "configs": [{"us": 1, "no": "four",
           "cube_tile": [[16,16],[16,16],[16,16]]}], "shape": {"m": 64, "n": 64, "k": 64}})",
       "m.json: field 'configs[0].no': expected the config's number, got \"four\""},
      {R"({"device": "b3", "kernel": "matmul", "cube_tile": [[16,16],[16,16],[16,16]],
           "points": [{"mkn": 64, "us": 1, "label": 7}]})",
       "m.json: field 'points[0].label': expected a string, got 7"},
  };
  for (const Case &c : cases) {
    INFO(c.json);
    CHECK_THAT(errorOf(c.json), Contains(c.message));
  }
  // A point's parameters override the file's; pass options merge, the point's winning.
  absl::StatusOr<calibrate::MeasurementSet> s = calibrate::parseMeasurements(
      R"({"device": "tiny", "kernel": "matmul", "cube_tile": [[16,16],[16,16],[16,16]],
          "pass_options": {"pg_lower_bound": 10, "cube_l1_reuse_mode": 0},
          "points": [{"mkn": 32, "us": 1, "label": "small"},
                     {"m": 16, "n": 32, "k": 64, "us": 2, "out_dtype": "f16",
                      "pass_options": {"pg_lower_bound": 20}}]})",
      "ok.json");
  REQUIRE(s.ok());
  CHECK(s->points[0].label == "small");
  CHECK_THAT(s->points[0].ptoText, Contains("tensor<32x32xf32>"));
  CHECK(s->points[1].label == "16x32x64");
  CHECK_THAT(s->points[1].ptoText, Contains("tensor<16x32xf16>"));
  CHECK(s->points[1].passOptions == std::vector<std::pair<std::string, std::string>>{
                                        {"cube_l1_reuse_mode", "0"}, {"pg_lower_bound", "20"}});
}

TEST_CASE("calibrate recovers known device fields from measurements the simulator made",
          "[calibrate]") {
  // The "real part": b3 with three fields changed. Its measurements are the simulator's
  // own times on it; calibrating b3 to them must find the changed values again.
  target::DeviceSpec truth = *target::DeviceSpec::preset("b3");
  truth.memory.coreHbmBytesPerCycle = 44;
  const target::DeviceSpec b3 = *target::DeviceSpec::preset("b3");
  truth.memory.hbmBytesPerSecond = 1.2e12;
  truth.plainBlockCycles = 1400;
  // As `ptoc calibrate` does: the kernels keep the structure the start device gives
  // them; only their simulation follows the fitted fields.
  calibrate::MeasurementSimulator sim = session::measurementSimulator();
  sim.fixTransferCostsForCompile(b3);

  calibrate::MeasurementSet cube, vector;
  cube.name = "cube";
  cube.device = vector.device = "b3";
  vector.name = "vector";
  cube.points = {matmul(256, 512, 1024, {{{64, 64}, {128, 256}, {128, 128}}}),
                 matmul(512, 512, 512, {{{128, 128}, {64, 256}, {128, 128}}}),
                 matmul(1024, 1024, 256, {{{128, 128}, {64, 128}, {256, 256}}}),
                 matmul(128, 1280, 2048, {{{64, 64}, {128, 256}, {64, 64}}})};
  // Small kernels (the per-block prologue shows), cold matmuls (the per-core HBM
  // rate) and large streaming ones (the HBM bandwidth): each field has its own
  // signature. Two of each kind, so that both cross-validation folds (points dealt
  // alternately) see every signature.
  vector.points = {rmsnorm(64, 1024, 8), rmsnorm(320, 2048, 2), rmsnorm(16384, 1024, 4),
                   rmsnorm(8192, 2048, 2)};
  for (calibrate::MeasurementSet *set : {&cube, &vector})
    for (calibrate::MeasuredKernel &k : set->points) {
      absl::StatusOr<calibrate::SimulatedKernel> s = sim.simulate(*set, k, truth);
      REQUIRE(s.ok());
      k.measuredUs = s->kernelUs;
    }

  calibrate::CalibrationOptions options;
  options.fields = {"memory.core_hbm_bytes_per_cycle", "memory.hbm_bytes_per_second",
                    "plain_block_cycles"};
  options.folds = 2;
  options.maxEvaluations = 300;
  absl::StatusOr<calibrate::CalibrationResult> r =
      calibrate::calibrate({cube, vector}, b3, simulatorOf(sim), options);
  REQUIRE(r.ok());
  INFO("before " << r->mapeBefore << ", after " << r->mapeAfter << ", cross-validated "
                 << r->crossValidatedMape << ", " << r->evaluations << " evaluations");
  CHECK(r->mapeBefore > 0.03); // the start is measurably off
  CHECK(r->mapeAfter < 0.005);
  CHECK(r->crossValidatedMape < 0.02);
  CHECK(r->folds == 2);
  REQUIRE(r->fields.size() == 3);
  for (const calibrate::FieldChange &f : r->fields) {
    double want = *truth.numericField(f.path);
    INFO(f.path << ": " << f.before << " -> " << f.after << ", truth " << want);
    CHECK(std::abs(f.after / want - 1) < 0.05);
    CHECK_FALSE(f.atBound);
    CHECK(*r->device.numericField(f.path) == f.after);
  }
  // Fields not fitted keep their values.
  CHECK(r->device.memory.gmLatencyCycles == truth.memory.gmLatencyCycles);
  REQUIRE(r->sets.size() == 2);
  CHECK(r->sets[0].name == "cube");
  CHECK(r->sets[0].mapeAfter < r->sets[0].mapeBefore);
  CHECK(r->device.validate().ok());
}

TEST_CASE("calibrate never returns a device that fails the checks", "[calibrate]") {
  // l2_latency_cycles may not exceed gm_latency_cycles. Fitting the GM latency with an
  // L2 latency of 400 must stay at or above 400, even when lower would fit better.
  target::DeviceSpec start = *target::DeviceSpec::preset("tiny");
  start.memory.l2LatencyCycles = 400;
  start.memory.gmLatencyCycles = 500;
  REQUIRE(start.validate().ok());
  target::DeviceSpec truth = start;
  truth.memory.l2LatencyCycles = 0;
  truth.memory.gmLatencyCycles = 130;
  calibrate::MeasurementSimulator sim = session::measurementSimulator();
  calibrate::MeasurementSet set;
  set.name = "rows";
  set.device = "tiny";
  set.points = {rmsnorm(16, 256, 2), rmsnorm(64, 512, 4)};
  for (calibrate::MeasuredKernel &k : set.points)
    k.measuredUs = sim.simulate(set, k, truth)->kernelUs;
  calibrate::CalibrationOptions options;
  options.fields = {"memory.gm_latency_cycles"};
  options.folds = 0;
  absl::StatusOr<calibrate::CalibrationResult> r =
      calibrate::calibrate({set}, start, simulatorOf(sim), options);
  REQUIRE(r.ok());
  CHECK(r->device.validate().ok());
  CHECK(r->device.memory.gmLatencyCycles >= 400);
  CHECK(r->device.memory.gmLatencyCycles < 500); // it moved as far as the checks allow
  CHECK(r->crossValidatedMape == -1);
}

TEST_CASE("calibrate errors name the field, the set and the point", "[calibrate]") {
  calibrate::MeasurementSimulator sim = session::measurementSimulator();
  calibrate::MeasurementSet set;
  set.name = "one";
  set.path = "one.json";
  set.device = "tiny";
  set.points = {rmsnorm(16, 256, 2)};
  set.points[0].measuredUs = 5;
  target::DeviceSpec tiny = *target::DeviceSpec::preset("tiny");
  auto error = [&](calibrate::CalibrationOptions o,
                   std::vector<calibrate::MeasurementSet> sets) -> std::string {
    o.folds = 0;
    absl::StatusOr<calibrate::CalibrationResult> r =
        calibrate::calibrate(sets, tiny, simulatorOf(sim), o);
    REQUIRE_FALSE(r.ok());
    return std::string(r.status().message());
  };
  calibrate::CalibrationOptions o;
  o.fields = {"memory.hbm"};
  CHECK_THAT(error(o, {set}), Contains("unknown device field 'memory.hbm' (known: aic_cores"));
  o.fields = {"aic_cores"};
  CHECK_THAT(error(o, {set}), Contains("'aic_cores' is a count or a size; calibrate fits rates, "
                                       "latencies and fixed costs"));
  o.fields = {"plain_block_cycles", "plain_block_cycles"};
  CHECK_THAT(error(o, {set}), Contains("'plain_block_cycles' is named twice"));
  o.fields = {};
  o.maxFactor = 1;
  CHECK_THAT(error(o, {set}), Contains("the bound factor must be above 1"));
  o.maxFactor = 4;
  CHECK_THAT(error(o, {}), Contains("calibrate: no measured kernels to fit"));
  calibrate::MeasurementSet broken = set;
  broken.points[0].ptoText = "func @rmsnorm(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %y\n}\n";
  broken.points[0].label = "the broken one";
  CHECK_THAT(error(o, {broken}), Contains("one.json: the broken one: "));
  target::DeviceSpec bad = tiny;
  bad.aivCores = 3;
  absl::StatusOr<calibrate::CalibrationResult> r =
      calibrate::calibrate({set}, bad, simulatorOf(sim), o);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(std::string(r.status().message()), Contains("aiv_cores (3) must be a multiple"));
}

TEST_CASE("the device a measurement file names: a preset, or a file beside it",
          "[calibrate]") {
  calibrate::MeasurementSet set;
  set.path = "some/dir/m.json";
  set.device = "b4";
  absl::StatusOr<target::DeviceSpec> b4 = calibrate::loadMeasuredDevice(set);
  REQUIRE(b4.ok());
  CHECK(b4->name == "b4");
  // An unknown device: the file and its field, then what exists.
  set.device = "910b9";
  absl::StatusOr<target::DeviceSpec> unknown = calibrate::loadMeasuredDevice(set);
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(std::string(unknown.status().message()),
             Contains("some/dir/m.json: field 'device': unknown device '910b9': not a preset "
                      "(a2, a3, b3, b4, tiny) and no such file"));
  // A device file is found beside the measurement file, whatever the working directory.
  const std::string inputs = std::string(PTOC_SOURCE_DIR) + "/test/ptoc-run/Inputs";
  set.path = inputs + "/m.json";
  set.device = "device-slowest.json";
  absl::StatusOr<target::DeviceSpec> file = calibrate::loadMeasuredDevice(set);
  REQUIRE(file.ok());
  CHECK(file->pipes.syncCycles == 1e6);
  set.device = "no-such-device.json";
  absl::StatusOr<target::DeviceSpec> missing = calibrate::loadMeasuredDevice(set);
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(std::string(missing.status().message()),
             Contains(inputs + "/m.json: field 'device': cannot read device file '" + inputs +
                      "/no-such-device.json'"));
}

TEST_CASE("calibrate fits a user's own .pto kernels (kernel \"pto\")", "[calibrate]") {
  const std::string path =
      std::string(PTOC_SOURCE_DIR) + "/test/ptoc-run/Inputs/calibrate-pto.json";
  absl::StatusOr<calibrate::MeasurementSet> read = calibrate::readMeasurements(path);
  REQUIRE(read.ok());
  calibrate::MeasurementSet set = *read;
  REQUIRE(set.points.size() == 3);
  CHECK(set.device == "tiny");
  CHECK(set.points[0].label == "rows");
  CHECK(set.points[0].funcName == "rows");
  CHECK(set.points[1].funcName == "scaled");
  CHECK_THAT(set.points[1].ptoText, Contains("func @scaled(")); // the file, from beside the json
  CHECK(set.points[2].passOptions ==
        std::vector<std::pair<std::string, std::string>>{{"vec_nbuffer_mode", "0"}});

  // Measured on a part whose per-block prologue is three times tiny's: the fit finds it.
  absl::StatusOr<target::DeviceSpec> tiny = calibrate::loadMeasuredDevice(set);
  REQUIRE(tiny.ok());
  target::DeviceSpec truth = *tiny;
  truth.plainBlockCycles = 3 * tiny->plainBlockCycles;
  calibrate::MeasurementSimulator sim = session::measurementSimulator();
  for (calibrate::MeasuredKernel &k : set.points) {
    absl::StatusOr<calibrate::SimulatedKernel> s = sim.simulate(set, k, truth);
    REQUIRE(s.ok());
    k.measuredUs = s->kernelUs;
  }
  calibrate::CalibrationOptions options;
  options.fields = {"plain_block_cycles"};
  options.folds = 0;
  absl::StatusOr<calibrate::CalibrationResult> r =
      calibrate::calibrate({set}, *tiny, simulatorOf(sim), options);
  REQUIRE(r.ok());
  INFO("before " << r->mapeBefore << ", after " << r->mapeAfter);
  CHECK(r->mapeBefore > 0.01);
  CHECK(r->mapeAfter < 0.001);
  REQUIRE(r->fields.size() == 1);
  CHECK(std::abs(r->fields[0].after / truth.plainBlockCycles - 1) < 0.02);
  CHECK(r->device.validate().ok());
}
