// Session: compile a tensor-level function and run it end to end (simulated timing,
// real numerics, outputs written), through the public API only.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/profile/TraceCheck.h"
#include "ptoc/runtime/Reference.h"
#include "ptoc/session/Session.h"

using namespace ptoc;
using session::CompileOptions;
using session::Kernel;
using session::RunOptions;
using session::RunReport;
using session::Session;

namespace {

Session makeSession(const char *device) {
  absl::StatusOr<Session> s = Session::create(device);
  REQUIRE(s.ok());
  return *std::move(s);
}

Kernel compile(const Session &s, const std::string &text, CompileOptions opts = {}) {
  absl::StatusOr<Kernel> k = s.compileText(text, "test.pto", opts);
  INFO(k.status().message());
  REQUIRE(k.ok());
  return *std::move(k);
}

std::vector<runtime::HostTensor> randomArgs(const Kernel &k, uint64_t seed = 7) {
  std::vector<runtime::HostTensor> args;
  for (size_t i = 0; i < k.args.size(); ++i)
    args.push_back(runtime::randomTensor(k.args[i].dtype, k.args[i].shape, seed + i));
  return args;
}

RunReport run(const Session &s, const Kernel &k, const std::vector<runtime::HostTensor> &args,
              std::vector<runtime::HostTensor> &results, RunOptions opts = {}) {
  absl::StatusOr<RunReport> r = s.run(k, args, results, opts);
  INFO(r.status().message());
  REQUIRE(r.ok());
  return *std::move(r);
}

std::string readFile(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  REQUIRE(buf);
  return (*buf)->getBuffer().str();
}

std::string tempDir() {
  llvm::SmallString<128> dir;
  REQUIRE(!llvm::sys::fs::createUniqueDirectory("ptoc-session", dir));
  return std::string(dir);
}

std::string exampleText(const std::string &name) {
  return readFile(std::string(PTOC_SOURCE_DIR) + "/examples/" + name + ".pto");
}

// A row softmax small enough for the tiny device.
const char *kSoftmax = R"(
func @softmax(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %m = amax %x {axes = [1], keepdim = true, vec_tile = [8, 256]} : tensor<64x1xf32>
  %d = sub %x, %m {vec_tile = [8, 256]} : tensor<64x256xf32>
  %e = exp %d {vec_tile = [8, 256]} : tensor<64x256xf32>
  %s = sum %e {axes = [1], keepdim = true, vec_tile = [8, 256]} : tensor<64x1xf32>
  %y = div %e, %s {vec_tile = [8, 256]} : tensor<64x256xf32>
  return %y
}
)";

} // namespace

TEST_CASE("a compiled softmax runs: outputs match the reference, report is consistent",
          "[session]") {
  Session s = makeSession("tiny");
  Kernel k = compile(s, kSoftmax);
  CHECK(k.funcName == "softmax");
  REQUIRE(k.args.size() == 1);
  CHECK(k.args[0].name == "x");
  CHECK(k.args[0].shape == std::vector<int64_t>{64, 256});
  CHECK_FALSE(k.program.calls.empty());

  std::vector<runtime::HostTensor> args = randomArgs(k), results;
  RunReport r = run(s, k, args, results);
  REQUIRE(results.size() == 1);

  ir::Context ctx;
  auto module = ir::parseModuleOrError(kSoftmax, "ref.pto", ctx);
  REQUIRE(module.ok());
  std::vector<runtime::HostTensor> want;
  REQUIRE(runtime::evaluateReference((*module)->func(0), args, want).ok());
  runtime::Tolerance tol = runtime::tolerance(ir::DType::F32);
  auto bad = runtime::compareTensors(results[0], want[0], tol.rtol, tol.atol);
  INFO((bad ? bad->describe() : std::string()));
  CHECK_FALSE(bad.has_value());

  CHECK(r.simulatedUs > 0);
  CHECK(r.simulatedUs >= r.boundUs);
  CHECK(r.boundRatio > 0);
  CHECK(r.boundRatio <= 1.0);
  CHECK(r.aivUtilization > 0);
  CHECK(r.aivUtilization <= 1.0);
  CHECK(r.aicUtilization == 0); // no cube work
  CHECK(r.record.tasks.size() == k.program.calls.size());
  CHECK_THAT(r.summary, Catch::StartsWith("simulated "));
  CHECK(r.outputFolder.empty()); // debug mode 0 writes nothing
}

TEST_CASE("a function without tile shapes compiles with derived tiles the summary lists",
          "[session][default-tiles]") {
  // kSoftmax without its vec_tiles: default-tiles derives one for the chain.
  std::string untiled = kSoftmax;
  for (size_t at; (at = untiled.find(", vec_tile = [8, 256]")) != std::string::npos;)
    untiled.erase(at, std::string(", vec_tile = [8, 256]").size());
  for (size_t at; (at = untiled.find(" {vec_tile = [8, 256]}")) != std::string::npos;)
    untiled.erase(at, std::string(" {vec_tile = [8, 256]}").size());
  REQUIRE(untiled.find("vec_tile") == std::string::npos);
  Session s = makeSession("tiny");
  Kernel k = compile(s, untiled);
  REQUIRE(k.derivedTiles.size() == 1);
  const passes::DerivedTile &d = k.derivedTiles.front();
  CHECK(d.kind == passes::DerivedTile::Kind::Vec);
  CHECK(d.ops == 5);
  CHECK(d.func == "softmax");
  CHECK(d.firstOp.rfind("'amax' at test.pto:", 0) == 0);
  CHECK(d.rule.find("whole reduction axis 1") != std::string::npos);
  // The remark at the chain's first op says the same.
  REQUIRE(k.remarks.size() == 1);
  CHECK(k.remarks[0].find(d.tile + " over 64x256 (" + d.rule) != std::string::npos);

  std::vector<runtime::HostTensor> args = randomArgs(k), results, tiledResults;
  RunReport r = run(s, k, args, results);
  CHECK(r.summary.find("\ntiles: derived vec_tile " + d.tile + " for 5 ops (" + d.rule + ")\n") !=
        std::string::npos);
  // Whole rows either way: the same bits as the hand-tiled kernel.
  Kernel tiled = compile(s, kSoftmax);
  CHECK(tiled.derivedTiles.empty());
  RunReport rt = run(s, tiled, args, tiledResults);
  CHECK(rt.summary.find("\ntiles:") == std::string::npos);
  REQUIRE(results.size() == 1);
  CHECK(std::memcmp(results[0].data(), tiledResults[0].data(), results[0].sizeInBytes()) == 0);
}

TEST_CASE("every scheduler mode gives identical outputs", "[session]") {
  Session s = makeSession("a2");
  Kernel k = compile(s, exampleText("attention"));
  std::vector<runtime::HostTensor> args = randomArgs(k), first;
  for (int mode = 0; mode <= 3; ++mode) {
    std::vector<runtime::HostTensor> results;
    RunOptions opts;
    opts.schedMode = mode;
    RunReport r = run(s, k, args, results, opts);
    CHECK(r.record.schedMode == mode);
    if (mode == 0) {
      first = std::move(results);
      continue;
    }
    REQUIRE(results.size() == first.size());
    for (size_t i = 0; i < results.size(); ++i) {
      REQUIRE(results[i].sizeInBytes() == first[i].sizeInBytes());
      CHECK(std::memcmp(results[i].data(), first[i].data(), first[i].sizeInBytes()) == 0);
    }
  }
}

TEST_CASE("debug modes write a valid swimlane and summaries into a run folder", "[session]") {
  Session s = makeSession("a2");
  std::string base = tempDir();
  for (const char *name : {"softmax", "layernorm", "matmul", "attention", "mlp"}) {
    Kernel k = compile(s, exampleText(name));
    std::vector<runtime::HostTensor> args = randomArgs(k), results;
    for (int mode = 0; mode <= 3; ++mode) {
      for (int debug = 1; debug <= 2; ++debug) {
        RunOptions opts;
        opts.schedMode = mode;
        opts.debugMode = debug;
        opts.outputDir = base;
        opts.numerics = false;
        RunReport r = run(s, k, args, results, opts);
        INFO(name << " mode " << mode << " debug " << debug);
        REQUIRE_FALSE(r.outputFolder.empty());
        CHECK(llvm::StringRef(r.outputFolder).startswith(base + "/output_"));
        std::string trace = readFile(r.swimlanePath);
        absl::Status st = profile::checkTraceMatches(trace, k.program);
        INFO(st.message());
        CHECK(st.ok());
        // Pipe lanes only in mode 2.
        CHECK((trace.find("MTE2") != std::string::npos) == (debug == 2));
        CHECK(llvm::sys::fs::exists(r.outputFolder + "/summary.txt"));
        CHECK(llvm::sys::fs::exists(r.outputFolder + "/summary.json"));
        CHECK(readFile(r.outputFolder + "/summary.txt") == r.summary);
      }
    }
  }
  llvm::sys::fs::remove_directories(base);
}

TEST_CASE("the output base folder comes from PTOC_OUTPUT_DIR when no option is given",
          "[session]") {
  Session s = makeSession("tiny");
  Kernel k = compile(s, kSoftmax);
  std::string base = tempDir();
  const char *old = std::getenv("PTOC_OUTPUT_DIR");
  std::string saved = old ? old : "";
  setenv("PTOC_OUTPUT_DIR", base.c_str(), 1);
  std::vector<runtime::HostTensor> args = randomArgs(k), results;
  RunOptions opts;
  opts.debugMode = 1;
  absl::StatusOr<RunReport> r = s.run(k, args, results, opts);
  if (old) setenv("PTOC_OUTPUT_DIR", saved.c_str(), 1);
  else unsetenv("PTOC_OUTPUT_DIR");
  REQUIRE(r.ok());
  CHECK(llvm::StringRef(r->outputFolder).startswith(base + "/output_"));
  CHECK(llvm::sys::fs::exists(r->swimlanePath));
  llvm::sys::fs::remove_directories(base);
}

TEST_CASE("double buffering overlaps transfers with compute in merged subgraphs",
          "[session]") {
  // Four row bands per vector task (nbuffer merge), each band copied in, computed and
  // copied out: with ping-pong buffers band i+1's copy-in runs during band i's math.
  const char *text = R"(
func @f(%x: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %e = exp %x {vec_tile = [16, 1024]} : tensor<1024x1024xf32>
  %y = sqrt %e {vec_tile = [16, 1024]} : tensor<1024x1024xf32>
  return %y
}
)";
  Session s = makeSession("a2");
  CompileOptions on, off;
  on.pipeline = off.pipeline =
      "canonicalize,cse,dce,expand-tiles,partition,"
      "nbuffer-merge{vec-nbuffer-mode=2 vec-nbuffer-setting={-1:4}}";
  off.codegen.doubleBuffer = false;
  Kernel kOn = compile(s, text, on), kOff = compile(s, text, off);
  REQUIRE(kOn.program.calls.size() == kOff.program.calls.size());
  std::vector<runtime::HostTensor> args = randomArgs(kOn), rOn, rOff;
  RunReport a = run(s, kOn, args, rOn), b = run(s, kOff, args, rOff);
  INFO("double-buffered " << a.simulatedUs << " us, single " << b.simulatedUs << " us");
  CHECK(a.simulatedUs < b.simulatedUs);
  CHECK(std::memcmp(rOn[0].data(), rOff[0].data(), rOn[0].sizeInBytes()) == 0);
}

TEST_CASE("HBM bandwidth matters to a memory-bound operator, not a compute-bound one",
          "[session]") {
  auto timeOn = [](const char *device, const std::string &text) {
    absl::StatusOr<target::DeviceSpec> d = target::DeviceSpec::fromJson(device, "dev.json");
    REQUIRE(d.ok());
    Session s(*d);
    Kernel k = compile(s, text);
    std::vector<runtime::HostTensor> args = randomArgs(k), results;
    RunOptions opts;
    opts.numerics = false;
    return run(s, k, args, results, opts).simulatedUs;
  };
  // From 0.8 to 1.6 TB/s: above that the per-core DMA caps (48 AIV x 32 B/cycle)
  // limit an elementwise kernel before HBM does.
  const char *slow = R"({"name": "a2-slow-hbm", "memory": {"hbm_bytes_per_second": 0.8e12}})";
  const char *fast = R"({"name": "a2"})";
  std::string elementwise = R"(
func @f(%x: tensor<4096x4096xf16>, %y: tensor<4096x4096xf16>) -> tensor<4096x4096xf16> {
  %z = add %x, %y {vec_tile = [32, 1024]} : tensor<4096x4096xf16>
  return %z
}
)";
  // Vector compute-bound: six composite transcendentals per element (tens of vector
  // instructions per tile) on 4 MiB. (The example matmul is not compute-bound on a2:
  // its cores read A and B from HBM at their own per-core rate.)
  std::string compute = R"(
func @f(%x: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %a = gelu %x {vec_tile = [8, 1024]} : tensor<1024x1024xf32>
  %b = tanh %a {vec_tile = [8, 1024]} : tensor<1024x1024xf32>
  %c = gelu %b {vec_tile = [8, 1024]} : tensor<1024x1024xf32>
  %d = tanh %c {vec_tile = [8, 1024]} : tensor<1024x1024xf32>
  %e = gelu %d {vec_tile = [8, 1024]} : tensor<1024x1024xf32>
  %f = tanh %e {vec_tile = [8, 1024]} : tensor<1024x1024xf32>
  return %f
}
)";
  double memSlow = timeOn(slow, elementwise), memFast = timeOn(fast, elementwise);
  double cSlow = timeOn(slow, compute), cFast = timeOn(fast, compute);
  INFO("add: " << memSlow << " -> " << memFast << " us; vector chain: " << cSlow << " -> "
               << cFast);
  CHECK(memFast < 0.8 * memSlow);
  CHECK(cFast > 0.95 * cSlow);
}

TEST_CASE("compile stages stop early and a partial kernel cannot run", "[session]") {
  Session s = makeSession("tiny");
  CompileOptions opts;
  opts.stopAt = session::Stage::Tile;
  Kernel k = compile(s, kSoftmax, opts);
  CHECK(k.stage == session::Stage::Tile);
  CHECK_THAT(k.ir, Catch::Contains("copy_in"));
  CHECK_THAT(k.ir, !Catch::Contains("subgraph {"));
  std::vector<runtime::HostTensor> args = randomArgs(k), results;
  absl::StatusOr<RunReport> r = s.run(k, args, results);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(std::string(r.status().message()),
             Catch::Contains("compiled only to the tile stage"));

  opts.stopAt = session::Stage::Partitioned;
  CHECK_THAT(compile(s, kSoftmax, opts).ir, Catch::Contains("subgraph {"));
  CHECK(session::parseStage("codegen").value() == session::Stage::Codegen);
  CHECK_THAT(std::string(session::parseStage("tilez").status().message()),
             Catch::Contains("valid: tensor, tile, partitioned, codegen"));
}

TEST_CASE("run errors name what is wrong", "[session]") {
  Session s = makeSession("tiny");
  Kernel k = compile(s, kSoftmax);
  std::vector<runtime::HostTensor> results;
  auto message = [&](std::vector<runtime::HostTensor> args, RunOptions opts = {}) {
    absl::StatusOr<RunReport> r = s.run(k, args, results, opts);
    REQUIRE_FALSE(r.ok());
    return std::string(r.status().message());
  };
  CHECK_THAT(message({}), Catch::Contains("has 1 arguments, got 0 argument buffers"));
  CHECK_THAT(message({runtime::HostTensor(ir::DType::F16, {64, 256})}),
             Catch::Contains("argument 0 ('x')") &&
                 Catch::Contains("must be tensor<64x256xf32>, got tensor<64x256xf16>"));
  RunOptions bad;
  bad.schedMode = 7;
  CHECK_THAT(message(randomArgs(k), bad), Catch::Contains("7"));
  RunOptions badDebug;
  badDebug.debugMode = 3;
  CHECK_THAT(message(randomArgs(k), badDebug), Catch::Contains("runtime_debug_mode"));

  absl::StatusOr<Kernel> broken = s.compileText("func @f(%x: tensor<8xf32>) -> tensor<8xf32> {\n"
                                                "  %y = exp %x {vec_tile = [0]} : tensor<8xf32>\n"
                                                "  return %y\n}\n",
                                                "broken.pto");
  REQUIRE_FALSE(broken.ok());
  CHECK_THAT(std::string(broken.status().message()), Catch::Contains("broken.pto:2:"));
}

TEST_CASE("simulated time is never below the roofline bound, over random tilings",
          "[session]") {
  // Random vector tiles for a softmax and random cube tiles for a matmul feeding a
  // vector op, on the tiny device, in every scheduler mode.
  Session s = makeSession("tiny");
  std::mt19937 rng(1234);
  auto pick = [&](std::initializer_list<int> v) {
    std::vector<int> options(v);
    return options[std::uniform_int_distribution<size_t>(0, options.size() - 1)(rng)];
  };
  int runs = 0;
  for (int trial = 0; trial < 24; ++trial) {
    std::ostringstream text;
    if (trial % 2 == 0) {
      int rows = pick({1, 2, 4, 8, 16}), cols = pick({64, 128, 256});
      int m = pick({16, 40, 64}), n = pick({128, 256, 320});
      text << "func @f(%x: tensor<" << m << "x" << n << "xf32>) -> tensor<" << m << "x" << n
           << "xf32> {\n"
           << "  %e = exp %x {vec_tile = [" << rows << ", " << cols << "]} : tensor<" << m
           << "x" << n << "xf32>\n"
           << "  %s = sum %e {axes = [1], keepdim = true, vec_tile = [" << rows << ", " << cols
           << "]} : tensor<" << m << "x1xf32>\n"
           << "  %y = div %e, %s {vec_tile = [" << rows << ", " << cols << "]} : tensor<" << m
           << "x" << n << "xf32>\n  return %y\n}\n";
    } else {
      int mt = pick({16, 32}), kt = pick({16, 32, 64}), nt = pick({16, 32});
      int M = pick({32, 48, 64}), K = pick({64, 96, 128}), N = pick({32, 64});
      text << "func @f(%a: tensor<" << M << "x" << K << "xf16>, %b: tensor<" << K << "x" << N
           << "xf16>) -> tensor<" << M << "x" << N << "xf32> {\n"
           << "  %c = matmul %a, %b {cube_tile = {m = [" << mt << ", " << mt << "], k = [" << kt
           << ", " << kt << "], n = [" << nt << ", " << nt << "]}} : tensor<" << M << "x" << N
           << "xf32>\n"
           << "  %r = relu %c {vec_tile = [16, " << N << "]} : tensor<" << M << "x" << N
           << "xf32>\n  return %r\n}\n";
    }
    absl::StatusOr<Kernel> k = s.compileText(text.str(), "random.pto");
    if (!k.ok()) continue; // a tiling the device rejects is not this test's subject
    std::vector<runtime::HostTensor> args = randomArgs(*k), results;
    for (int mode = 0; mode <= 3; ++mode) {
      RunOptions opts;
      opts.schedMode = mode;
      opts.numerics = false;
      RunReport r = run(s, *k, args, results, opts);
      INFO(text.str() << "mode " << mode);
      CHECK(r.record.makespanCycles >= r.record.bound.totalCycles());
      ++runs;
    }
  }
  CHECK(runs >= 40); // most random tilings compile
}

TEST_CASE("pass knobs configure the default pipeline, a pipeline and knobs conflict",
          "[session]") {
  Session s = makeSession("a2");
  std::string softmax = exampleText("softmax");
  Kernel automatic = compile(s, softmax);
  CompileOptions off;
  REQUIRE(off.knobs.set("vec_nbuffer_mode", int64_t(0)).ok());
  Kernel unmerged = compile(s, softmax, off);
  CHECK(automatic.stats.statistic("nbuffer-merge", "merged") > 0);
  CHECK(unmerged.stats.statistic("nbuffer-merge", "merged") == 0);
  CHECK(unmerged.stats.subgraphs > automatic.stats.subgraphs);
  CHECK_THAT(unmerged.pipeline, Catch::Contains("vec-nbuffer-mode=0"));

  CompileOptions both = off;
  both.pipeline = "default";
  absl::StatusOr<Kernel> k = s.compileText(softmax, "softmax.pto", both);
  REQUIRE_FALSE(k.ok());
  CHECK_THAT(std::string(k.status().message()), Catch::Contains("both a pass pipeline and pass knobs"));
}

TEST_CASE("a kernel keeps the text of every stage it reached and its statistics",
          "[session]") {
  Session s = makeSession("a2");
  Kernel k = compile(s, exampleText("softmax"));
  for (session::Stage stage : {session::Stage::Tensor, session::Stage::Tile,
                               session::Stage::Partitioned, session::Stage::Codegen})
    CHECK(k.irAt(stage).ok());
  CHECK_THAT(*k.irAt(session::Stage::Tensor), Catch::Contains("amax %x"));
  CHECK_THAT(*k.irAt(session::Stage::Tile), Catch::Contains("copy_in"));
  CHECK_THAT(*k.irAt(session::Stage::Tile), !Catch::Contains("subgraph"));
  CHECK_THAT(*k.irAt(session::Stage::Partitioned), Catch::Contains("subgraph"));
  CHECK(*k.irAt(session::Stage::Partitioned) == k.ir);

  // Groups add up to the subgraphs, which are the program's calls.
  int64_t members = 0;
  for (const session::GroupStats &g : k.stats.groups) {
    members += g.size;
    CHECK(g.core == target::CoreKind::AIV);
    CHECK_THAT(g.key, Catch::StartsWith("func0_"));
  }
  CHECK(members == k.stats.subgraphs);
  CHECK(k.stats.aivSubgraphs == k.stats.subgraphs);
  CHECK(size_t(k.stats.subgraphs) == k.program.calls.size());
  CHECK(k.stats.tileOps > 0);

  CompileOptions tileOnly;
  tileOnly.stopAt = session::Stage::Tile;
  Kernel t = compile(s, exampleText("softmax"), tileOnly);
  absl::StatusOr<std::string> missing = t.irAt(session::Stage::Partitioned);
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(std::string(missing.status().message()), Catch::Contains("compiled to the tile stage"));
  CHECK(t.stats.subgraphs == 0);

  // keepIr = false: the same program and statistics, no text.
  CompileOptions lean;
  lean.keepIr = false;
  absl::StatusOr<Kernel> quiet = s.compileText(exampleText("softmax"), "softmax.pto", lean);
  REQUIRE(quiet.ok());
  CHECK(quiet->irByStage.empty());
  CHECK(quiet->ir.empty());
  CHECK(quiet->program.calls.size() == k.program.calls.size());
  CHECK(quiet->stats.subgraphs == k.stats.subgraphs);
  CHECK_THAT(std::string(quiet->irAt(session::Stage::Tensor).status().message()),
             Catch::Contains("keepIr = false"));

  // collectStats = false: the same program, no subgraph statistics (pass statistics
  // are still kept).
  CompileOptions noStats;
  noStats.collectStats = false;
  absl::StatusOr<Kernel> bare = s.compileText(exampleText("softmax"), "softmax.pto", noStats);
  REQUIRE(bare.ok());
  CHECK(bare->program.calls.size() == k.program.calls.size());
  CHECK(bare->stats.subgraphs == 0);
  CHECK(bare->stats.groups.empty());
  CHECK(bare->stats.tileOps == k.stats.tileOps);
}

TEST_CASE("a kernel runs on caller-owned buffers, also in place", "[session]") {
  Session s = makeSession("tiny");
  Kernel k = compile(s, kSoftmax);
  std::vector<runtime::HostTensor> args = randomArgs(k), expected;
  run(s, k, args, expected);

  // Into a separate caller buffer.
  std::vector<float> out(64 * 256, -1.0f);
  std::vector<runtime::ConstTensorRef> in(args.begin(), args.end());
  runtime::TensorRef result(ir::DType::F32, k.results[0].shape, out.data());
  absl::StatusOr<RunReport> r = s.run(k, in, llvm::ArrayRef(result));
  REQUIRE(r.ok());
  CHECK(std::memcmp(out.data(), expected[0].data(), out.size() * 4) == 0);

  // In place: the result buffer is the argument the kernel reads.
  runtime::HostTensor inPlace = args[0];
  runtime::ConstTensorRef inRef(inPlace);
  runtime::TensorRef outRef(inPlace);
  r = s.run(k, llvm::ArrayRef(inRef), llvm::ArrayRef(outRef));
  REQUIRE(r.ok());
  CHECK(std::memcmp(inPlace.data(), expected[0].data(), out.size() * 4) == 0);

  // A wrong result buffer is named.
  std::vector<int64_t> badShape = {64, 128};
  runtime::TensorRef bad(ir::DType::F32, badShape, out.data());
  r = s.run(k, in, llvm::ArrayRef(bad));
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(std::string(r.status().message()), Catch::Contains("result 0"));
}

TEST_CASE("a function that only returns its argument compiles and runs", "[session]") {
  Session s = makeSession("tiny");
  Kernel k = compile(s, "func @id(%x: tensor<16x32xf32>) -> tensor<16x32xf32> {\n  return %x\n}\n");
  CHECK(k.program.calls.empty());
  std::vector<runtime::HostTensor> args = randomArgs(k), results;
  run(s, k, args, results);
  REQUIRE(results.size() == 1);
  CHECK(std::memcmp(results[0].data(), args[0].data(), args[0].sizeInBytes()) == 0);
}
