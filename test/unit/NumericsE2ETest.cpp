// End-to-end numerics: tensor-level .pto functions go through the default pipeline,
// codegen and the numeric executor, and every result must match the whole-tensor
// reference within dtype tolerance — for every op kind, every dtype the op accepts,
// odd shapes (tail tiles), split reductions, matmul K loops, transposes and cube ->
// vector chains, on the `tiny` and `a2` devices. Each run is repeated in a random
// topological order with 2 host threads and in the simulated start order of every
// scheduler mode; all runs must agree bit for bit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

#include "ptoc/codegen/Codegen.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Diagnostics.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/ir/Printer.h"
#include "ptoc/ir/Verifier.h"
#include "ptoc/passes/PassManager.h"
#include "ptoc/passes/Passes.h"
#include "ptoc/runtime/Executor.h"
#include "ptoc/runtime/Reference.h"
#include "ptoc/runtime/Simulator.h"
#include "ptoc/target/DeviceSpec.h"

using namespace ptoc;
using ir::DType;
using runtime::HostTensor;

namespace {

/// How a case's arguments are drawn.
enum class Inputs {
  Random,   ///< randomTensor: floats in [-1, 1), integers in [-5, 5]
  Positive, ///< floats in [0.25, 1.25), integers in [1, 6] (log, sqrt, div, pow)
};

struct Case {
  Case(std::string name, std::string device, std::string text, Inputs inputs = Inputs::Random,
       double atolScale = 1, std::optional<DType> toleranceOf = std::nullopt)
      : name(std::move(name)), device(std::move(device)), text(std::move(text)), inputs(inputs),
        atolScale(atolScale), toleranceOf(toleranceOf) {}

  std::string name;
  std::string device; ///< "tiny" or "a2"
  std::string text;   ///< one tensor-level function
  Inputs inputs;
  /// Multiplies the dtype's atol: results that combine n terms (a matmul over K, a
  /// sum of n elements) carry the absolute error of their partials, about sqrt(n).
  double atolScale;
  /// Compare with this dtype's tolerance instead of the result's: a result computed
  /// from a narrower intermediate (an f16 cast before an f32 matmul) inherits its
  /// precision, since one-ulp rounding differences of the intermediate (from f32 vs
  /// double accumulation upstream) propagate.
  std::optional<DType> toleranceOf;
};

constexpr unsigned kNumSchedModes = 4;

const target::DeviceSpec &device(const std::string &name) {
  static const target::DeviceSpec a2 = *target::DeviceSpec::preset("a2");
  static const target::DeviceSpec tiny = *target::DeviceSpec::preset("tiny");
  return name == "tiny" ? tiny : a2;
}

std::string T(DType t) { return std::string(ir::dtypeName(t)); }

/// Elements per 64 bytes: a vec_tile last dim that is aligned for the dtype and
/// leaves tails on the odd shapes below.
int64_t lane(DType t) { return 64 / ir::elementSize(t); }

std::vector<HostTensor> makeInputs(const ir::Func &f, Inputs inputs, uint64_t seed) {
  std::vector<HostTensor> args;
  for (unsigned i = 0; i < f.numArgs(); ++i) {
    ir::Type t = f.arg(i)->type();
    HostTensor x = runtime::randomTensor(t.dtype(), t.shape(), seed * 1000 + i);
    if (inputs == Inputs::Positive)
      for (int64_t e = 0; e < x.numElements(); ++e)
        x.set(e, ir::isFloat(t.dtype()) ? std::fabs(x.get(e)) + 0.25 : std::fabs(x.get(e)) + 1);
    args.push_back(std::move(x));
  }
  return args;
}

bool sameBits(const HostTensor &a, const HostTensor &b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         a.sizeInBytes() == b.sizeInBytes() &&
         std::memcmp(a.data(), b.data(), a.sizeInBytes()) == 0;
}

/// A random topological order of the execute graph (Kahn's algorithm picking a
/// random ready call each step).
std::vector<int> randomTopologicalOrder(const codegen::Program &p, uint64_t seed) {
  std::vector<std::vector<int>> succ = p.successors();
  std::vector<int> indeg(p.calls.size());
  for (size_t c = 0; c < p.calls.size(); ++c) indeg[c] = int(p.calls[c].preds.size());
  std::vector<int> ready, order;
  for (size_t c = 0; c < p.calls.size(); ++c)
    if (!indeg[c]) ready.push_back(int(c));
  std::mt19937_64 rng(seed);
  while (!ready.empty()) {
    size_t k = rng() % ready.size();
    int c = ready[k];
    ready[k] = ready.back();
    ready.pop_back();
    order.push_back(c);
    for (int s : succ[c])
      if (--indeg[s] == 0) ready.push_back(s);
  }
  return order;
}

/// The calls in the order the simulated schedule started them.
std::vector<int> simulatedOrder(const runtime::RunRecord &rec) {
  std::vector<int> order(rec.tasks.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = int(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return rec.tasks[a].startCycle < rec.tasks[b].startCycle;
  });
  return order;
}

/// Compiles and runs one case; checks results against the reference and the
/// agreement of every execution order, thread count and scheduler mode.
void runCase(const Case &c, uint64_t seed = 1) {
  INFO("case " << c.name << " on " << c.device << ":\n" << c.text);
  const target::DeviceSpec &dev = device(c.device);
  ir::Context ctx;
  ir::DiagnosticCollector diags(ctx.diag());
  std::unique_ptr<ir::Module> module = ir::parseModule(c.text, c.name + ".pto", ctx);
  INFO(diags.errorText());
  REQUIRE(module);
  REQUIRE(succeeded(ir::verify(*module, ir::VerifyOptions{&dev})));
  ir::Func &f = module->func(0);

  std::vector<HostTensor> args = makeInputs(f, c.inputs, seed);
  std::vector<HostTensor> want;
  absl::Status ref = runtime::evaluateReference(f, args, want);
  INFO(ref.message());
  REQUIRE(ref.ok());

  passes::PassRegistry registry;
  passes::registerAllPasses(registry);
  passes::PassManager pm(dev);
  REQUIRE(pm.addPipeline(passes::defaultPipelineText(), registry).ok());
  REQUIRE(succeeded(pm.run(*module)));
  absl::StatusOr<codegen::Program> program = codegen::buildProgram(f, dev);
  INFO("buildProgram: " << program.status().message());
  REQUIRE(program.ok());

  std::vector<HostTensor> got;
  absl::Status st = runtime::execute(*program, args, got, {}, runtime::ExecOptions{1});
  INFO("execute: " << st.message());
  REQUIRE(st.ok());
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    runtime::Tolerance tol = runtime::tolerance(c.toleranceOf.value_or(want[i].dtype()));
    std::optional<runtime::Mismatch> mm =
        runtime::compareTensors(got[i], want[i], tol.rtol, tol.atol * c.atolScale);
    INFO("result " << i << ": " << (mm ? mm->describe() : std::string("matches")));
    CHECK_FALSE(mm);
  }

  // Any valid order and thread count gives the same bits.
  std::vector<HostTensor> again;
  st = runtime::execute(*program, args, again, randomTopologicalOrder(*program, seed),
                        runtime::ExecOptions{2});
  INFO("execute (random order, 2 threads): " << st.message());
  REQUIRE(st.ok());
  REQUIRE(again.size() == got.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("result " << i << " in a random order with 2 threads");
    CHECK(sameBits(again[i], got[i]));
  }

  // The simulated start order of every scheduler mode gives the same bits.
  for (unsigned mode = 0; mode < kNumSchedModes; ++mode) {
    INFO("device_sched_mode " << mode);
    runtime::SimOptions so;
    so.schedMode = int(mode);
    absl::StatusOr<runtime::RunRecord> rec = runtime::simulate(*program, dev, so);
    INFO("simulate: " << rec.status().message());
    REQUIRE(rec.ok());
    REQUIRE(rec->tasks.size() == program->calls.size());
    std::vector<HostTensor> sim;
    st = runtime::execute(*program, args, sim, simulatedOrder(*rec), runtime::ExecOptions{2});
    INFO("execute (simulated order): " << st.message());
    REQUIRE(st.ok());
    REQUIRE(sim.size() == got.size());
    for (size_t i = 0; i < got.size(); ++i) {
      INFO("result " << i);
      CHECK(sameBits(sim[i], got[i]));
    }
  }
}

void runAll(const std::vector<Case> &cases) {
  for (const Case &c : cases) runCase(c);
}

/// A one-result function `@name(args) -> result { body; return %r }`.
std::string func(const std::string &name, const std::string &args, const std::string &result,
                 const std::string &body, const std::string &ret = "%r") {
  return absl::StrCat("func @", name, "(", args, ") -> ", result, " {\n", body, "  return ",
                      ret, "\n}\n");
}

std::string tensor(llvm::ArrayRef<int64_t> shape, DType t) {
  std::string s = "tensor<";
  for (int64_t d : shape) absl::StrAppend(&s, d, "x");
  return absl::StrCat(s, T(t), ">");
}

constexpr DType kFloats[] = {DType::F32, DType::F16, DType::BF16};
constexpr DType kAll[] = {DType::F32, DType::F16, DType::BF16, DType::I8, DType::I32};

std::string readExample(const char *name) {
  // PTOC_SOURCE_DIR (test/CMakeLists.txt): __FILE__ may be relative to the build
  // directory (ccache's base_dir rewrites paths), which ctest does not run in.
  std::ifstream in(std::string(PTOC_SOURCE_DIR) + "/examples/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

// ------------------------------------------------------------------ elementwise

TEST_CASE("numerics: unary ops, every dtype, tail tiles", "[numerics]") {
  struct Op {
    const char *name;
    bool floatOnly;
    Inputs inputs;
  };
  const Op ops[] = {{"neg", false, Inputs::Random},         {"abs", false, Inputs::Random},
                    {"relu", false, Inputs::Random},        {"exp", true, Inputs::Random},
                    {"log", true, Inputs::Positive},        {"sqrt", true, Inputs::Positive},
                    {"rsqrt", true, Inputs::Positive},      {"sigmoid", true, Inputs::Random},
                    {"tanh", true, Inputs::Random},         {"gelu", true, Inputs::Random},
                    {"reciprocal", true, Inputs::Positive}, {"ceil", false, Inputs::Random},
                    {"floor", false, Inputs::Random},       {"trunc", false, Inputs::Random},
                    {"round", false, Inputs::Random},       {"exp2", true, Inputs::Random},
                    {"expm1", true, Inputs::Random},        {"erfc", true, Inputs::Random}};
  std::vector<Case> cases;
  for (DType t : kAll)
    for (const Op &op : ops) {
      if (op.floatOnly && !ir::isFloat(t)) continue;
      std::string ty = tensor({37, 100}, t);
      cases.push_back({absl::StrCat(op.name, "_", T(t)), "tiny",
                       func("u", "%x: " + ty, ty,
                            absl::StrFormat("  %%r = %s %%x {vec_tile = [8, %d]} : %s\n",
                                            op.name, lane(t), ty)),
                       op.inputs});
    }
  runAll(cases);
}

TEST_CASE("numerics: binary ops with broadcasting, every dtype", "[numerics]") {
  const char *ops[] = {"add", "sub", "mul", "div", "max", "min", "pow"};
  std::vector<Case> cases;
  for (DType t : kAll)
    for (const char *op : ops) {
      // Integer division needs non-zero divisors; pow needs non-negative bases.
      bool positive = std::string(op) == "pow" || (std::string(op) == "div" && !ir::isFloat(t));
      Inputs in = positive ? Inputs::Positive : Inputs::Random;
      std::string x = tensor({37, 100}, t);
      for (std::vector<int64_t> yShape : {std::vector<int64_t>{37, 100}, {1, 100}, {37, 1}, {100}}) {
        std::string y = tensor(yShape, t);
        cases.push_back({absl::StrCat(op, "_", T(t), "_y", yShape[0]), "tiny",
                         func("b", "%x: " + x + ", %y: " + y, x,
                              absl::StrFormat("  %%r = %s %%x, %%y {vec_tile = [8, %d]} : %s\n", op,
                                              lane(t), x)),
                         in});
      }
      // The broadcast operand on the left.
      std::string y = tensor({37, 1}, t);
      cases.push_back({absl::StrCat(op, "_", T(t), "_left"), "tiny",
                       func("b", "%y: " + y + ", %x: " + x, x,
                            absl::StrFormat("  %%r = %s %%y, %%x {vec_tile = [8, %d]} : %s\n", op,
                                            lane(t), x)),
                       in});
    }
  runAll(cases);
}

TEST_CASE("numerics: fused elementwise chains with constants", "[numerics]") {
  std::vector<Case> cases;
  for (DType t : kFloats) {
    std::string x = tensor({45, 70}, t), row = tensor({70}, t);
    cases.push_back(
        {absl::StrCat("chain_", T(t)), "tiny",
         func("chain", "%x: " + x + ", %b: " + row, x,
              absl::StrFormat("  %%h = full {value = 0.5} : %s\n"
                              "  %%a = mul %%x, %%h {vec_tile = [8, %d]} : %s\n"
                              "  %%s = add %%a, %%b {vec_tile = [8, %d]} : %s\n"
                              "  %%g = gelu %%s {vec_tile = [8, %d]} : %s\n"
                              "  %%e = exp %%g {vec_tile = [8, %d]} : %s\n"
                              "  %%r = sub %%e, %%x {vec_tile = [8, %d]} : %s\n",
                              x, lane(t), x, lane(t), x, lane(t), x, lane(t), x, lane(t), x))});
  }
  runAll(cases);
}

TEST_CASE("numerics: casts between every pair of dtypes", "[numerics]") {
  std::vector<Case> cases;
  for (DType from : kAll)
    for (DType to : kAll) {
      if (from == to) continue;
      std::string x = tensor({37, 100}, from), y = tensor({37, 100}, to);
      // Scale the inputs so float -> int casts truncate non-trivially and narrowing
      // casts saturate.
      std::string scale = from == DType::I8 ? "" : ir::isFloat(from) ? "200.0" : "40";
      std::string body;
      if (scale.empty()) {
        body = absl::StrFormat("  %%r = cast %%x {vec_tile = [8, 64]} : %s\n", y);
      } else {
        body = absl::StrFormat("  %%k = full {value = %s} : %s\n"
                               "  %%s = mul %%x, %%k {vec_tile = [8, 64]} : %s\n"
                               "  %%r = cast %%s {vec_tile = [8, 64]} : %s\n",
                               scale, x, x, y);
      }
      cases.push_back({absl::StrCat("cast_", T(from), "_", T(to)), "tiny", func("c", "%x: " + x, y, body)});
    }
  runAll(cases);
}

// ------------------------------------------------------------------ reductions

TEST_CASE("numerics: reductions, whole and split axes, every dtype", "[numerics]") {
  struct Shape {
    std::vector<int64_t> in;
    std::vector<int64_t> axes;
    bool keepdim;
    std::vector<int64_t> tile; ///< the last entry is replaced by lane(dtype) when 0
  };
  const Shape shapes[] = {
      {{37, 100}, {1}, true, {8, 0}},      // axis 1 split (except i8: 64-wide chunks)
      {{37, 100}, {1}, false, {4, 128}},   // whole rows
      {{37, 100}, {0}, false, {8, 0}},     // axis 0 split, 5 chunks with a tail
      {{37, 100}, {0, 1}, true, {8, 0}},   // both split
      {{6, 20, 24}, {0, 2}, false, {4, 4, 0}}, // 3-d, outer and inner axes split
      {{6, 20, 24}, {1}, true, {2, 32, 32}},   // 3-d, whole middle axis
  };
  const char *ops[] = {"sum", "amax", "amin", "mean"};
  std::vector<Case> cases;
  for (DType t : kAll)
    for (const char *op : ops)
      for (const Shape &s : shapes) {
        if (std::string(op) == "mean" && !ir::isFloat(t)) continue;
        int64_t reduced = 1;
        for (int64_t a : s.axes) reduced *= s.in[a];
        // An i8 sum of thousands of elements saturates, and saturation is not
        // associative: tile order would matter. Keep i8 sums short.
        if (t == DType::I8 && std::string(op) == "sum" && reduced > 100) continue;
        std::vector<int64_t> out, tile = s.tile;
        if (tile.back() == 0) tile.back() = lane(t);
        for (size_t d = 0; d < s.in.size(); ++d) {
          bool r = std::find(s.axes.begin(), s.axes.end(), int64_t(d)) != s.axes.end();
          if (!r)
            out.push_back(s.in[d]);
          else if (s.keepdim)
            out.push_back(1);
        }
        std::string in = tensor(s.in, t), res = tensor(out, t);
        cases.push_back(
            {absl::StrCat(op, "_", T(t), "_", absl::StrJoin(s.in, "x"), "_axes",
                          absl::StrJoin(s.axes, ""), s.keepdim ? "_keep" : ""),
             "tiny",
             func("red", "%x: " + in, res,
                  absl::StrFormat("  %%r = %s %%x {axes = [%s], keepdim = %s, vec_tile = [%s]} : %s\n",
                                  op, absl::StrJoin(s.axes, ", "), s.keepdim ? "true" : "false",
                                  absl::StrJoin(tile, ", "), res)),
             Inputs::Random, std::sqrt(double(reduced))});
      }
  runAll(cases);
}

// ------------------------------------------------------------------ matmul

TEST_CASE("numerics: matmul K loops, tails and transposes, every input dtype", "[numerics]") {
  struct Io {
    DType in, out;
  };
  const Io ios[] = {{DType::F16, DType::F32}, {DType::F16, DType::F16}, {DType::BF16, DType::F32},
                    {DType::BF16, DType::BF16}, {DType::F32, DType::F32}, {DType::I8, DType::I32}};
  const char *tile = "{m = [16, 32], k = [16, 32], n = [16, 32]}";
  std::vector<Case> cases;
  for (const Io &io : ios)
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb) {
        // M = 50, K = 70 (steps 32, 32, 6), N = 40: tails everywhere.
        std::string a = ta ? tensor({70, 50}, io.in) : tensor({50, 70}, io.in);
        std::string b = tb ? tensor({40, 70}, io.in) : tensor({70, 40}, io.in);
        std::string c = tensor({50, 40}, io.out);
        std::string flags;
        if (ta) flags += ", transpose_a = true";
        if (tb) flags += ", transpose_b = true";
        cases.push_back({absl::StrCat("matmul_", T(io.in), "_", T(io.out), ta ? "_ta" : "",
                                      tb ? "_tb" : ""),
                         "tiny",
                         func("mm", "%a: " + a + ", %b: " + b, c,
                              absl::StrFormat("  %%r = matmul %%a, %%b {cube_tile = %s%s} : %s\n",
                                              tile, flags, c)),
                         Inputs::Random, std::sqrt(70.0)});
      }
  // A long K loop on one output tile, and a K smaller than one step.
  cases.push_back({"matmul_longk", "tiny",
                   func("mm", "%a: tensor<32x600xf16>, %b: tensor<600x32xf16>",
                        "tensor<32x32xf32>",
                        absl::StrFormat("  %%r = matmul %%a, %%b {cube_tile = %s} : "
                                        "tensor<32x32xf32>\n",
                                        tile)),
                   Inputs::Random, std::sqrt(600.0)});
  cases.push_back({"matmul_smallk", "tiny",
                   func("mm", "%a: tensor<64x5xf32>, %b: tensor<5x48xf32>", "tensor<64x48xf32>",
                        absl::StrFormat("  %%r = matmul %%a, %%b {cube_tile = %s} : "
                                        "tensor<64x48xf32>\n",
                                        tile))});
  // Batched, with a broadcast batch operand.
  cases.push_back({"matmul_batch_bcast", "tiny",
                   func("mm", "%a: tensor<3x20x70xf16>, %b: tensor<70x40xf16>",
                        "tensor<3x20x40xf32>",
                        absl::StrFormat("  %%r = matmul %%a, %%b {cube_tile = %s} : "
                                        "tensor<3x20x40xf32>\n",
                                        tile)),
                   Inputs::Random, std::sqrt(70.0)});
  cases.push_back({"matmul_batch_tb", "tiny",
                   func("mm", "%a: tensor<2x1x20x48xbf16>, %b: tensor<3x40x48xbf16>",
                        "tensor<2x3x20x40xf32>",
                        absl::StrFormat("  %%r = matmul %%a, %%b {cube_tile = %s, transpose_b = "
                                        "true} : tensor<2x3x20x40xf32>\n",
                                        tile)),
                   Inputs::Random, std::sqrt(48.0)});
  // a2-sized tiles.
  cases.push_back({"matmul_a2", "a2",
                   func("mm", "%a: tensor<300x520xf16>, %b: tensor<520x270xf16>",
                        "tensor<300x270xf32>",
                        "  %r = matmul %a, %b {cube_tile = {m = [128, 128], k = [64, 256], n = "
                        "[256, 256]}} : tensor<300x270xf32>\n"),
                   Inputs::Random, std::sqrt(520.0)});
  // The FIXPIPE epilogue (ir/Fixpipe.h): i8 dequantisation to f16 / bf16 with ReLU,
  // and ReLU on a float matmul, against the reference's own application of it.
  for (const char *out : {"f16", "bf16"})
    cases.push_back({absl::StrCat("matmul_i8_dequant_relu_", out), "tiny",
                     func("mm", "%a: tensor<50x70xi8>, %b: tensor<70x40xi8>",
                          absl::StrCat("tensor<50x40x", out, ">"),
                          absl::StrFormat("  %%r = matmul %%a, %%b {cube_tile = %s, relu = true, "
                                          "scale = 0.2} : tensor<50x40x%s>\n",
                                          tile, out))});
  // A bias row initialising the accumulator (i32 exact, then the epilogue; f16 bias).
  cases.push_back({"matmul_i8_bias_dequant", "tiny",
                   func("mm", "%a: tensor<50x70xi8>, %b: tensor<70x40xi8>, %c: tensor<1x40xi32>",
                        "tensor<50x40xf16>",
                        absl::StrFormat("  %%r = matmul %%a, %%b, %%c {cube_tile = %s, relu = "
                                        "true, scale = 0.2} : tensor<50x40xf16>\n",
                                        tile))});
  cases.push_back({"matmul_f16_bias_batched", "tiny",
                   func("mm", "%a: tensor<3x20x70xf16>, %b: tensor<70x40xf16>, %c: tensor<1x40xf16>",
                        "tensor<3x20x40xf32>",
                        absl::StrFormat("  %%r = matmul %%a, %%b, %%c {cube_tile = %s} : "
                                        "tensor<3x20x40xf32>\n",
                                        tile)),
                   Inputs::Random, std::sqrt(70.0)});
  cases.push_back({"matmul_f16_relu", "tiny",
                   func("mm", "%a: tensor<50x70xf16>, %b: tensor<70x40xf16>", "tensor<50x40xf32>",
                        absl::StrFormat("  %%r = matmul %%a, %%b {cube_tile = %s, relu = true} : "
                                        "tensor<50x40xf32>\n",
                                        tile)),
                   Inputs::Random, std::sqrt(70.0)});
  runAll(cases);
}

// ------------------------------------------------------------------ layout

TEST_CASE("numerics: transpose, reshape, view, assemble, concat, full", "[numerics]") {
  std::vector<Case> cases;
  for (DType t : kAll) {
    std::string x = tensor({37, 100}, t);
    cases.push_back({absl::StrCat("transpose2d_", T(t)), "tiny",
                     func("t", "%x: " + x, tensor({100, 37}, t),
                          absl::StrFormat("  %%r = transpose %%x {perm = [1, 0], vec_tile = [32, "
                                          "32]} : %s\n",
                                          tensor({100, 37}, t)))});
    cases.push_back({absl::StrCat("transpose3d_", T(t)), "tiny",
                     func("t", "%x: " + tensor({6, 20, 40}, t), tensor({40, 6, 20}, t),
                          absl::StrFormat("  %%r = transpose %%x {perm = [2, 0, 1], vec_tile = "
                                          "[32, 4, 32]} : %s\n",
                                          tensor({40, 6, 20}, t)))});
    std::string r = tensor({100, 37}, t);
    cases.push_back({absl::StrCat("reshape_", T(t)), "tiny",
                     func("rs", "%x: " + x, "(" + r + ", " + r + ")",
                          absl::StrFormat("  %%v = reshape %%x {vec_tile = [10, 64]} : %s\n"
                                          "  %%n = relu %%v {vec_tile = [10, 64]} : %s\n",
                                          r, r),
                          "%v, %n")});
    std::string v = tensor({20, 64}, t);
    cases.push_back({absl::StrCat("view_", T(t)), "tiny",
                     func("vw", "%x: " + x, "(" + v + ", " + v + ")",
                          absl::StrFormat("  %%v = view %%x {offsets = [3, 10], vec_tile = [8, "
                                          "64]} : %s\n"
                                          "  %%n = neg %%v {vec_tile = [8, %d]} : %s\n",
                                          v, lane(t), v),
                          "%v, %n")});
    std::string y = tensor({10, 50}, t);
    cases.push_back({absl::StrCat("assemble_", T(t)), "tiny",
                     func("as", "%x: " + x + ", %y: " + y, x,
                          absl::StrFormat("  %%a = abs %%y {vec_tile = [8, %d]} : %s\n"
                                          "  %%r = assemble %%x, %%a {offsets = [5, 20], vec_tile "
                                          "= [8, 64]} : %s\n",
                                          lane(t), y, x))});
    std::string y0 = tensor({10, 100}, t), y1 = tensor({37, 28}, t);
    cases.push_back(
        {absl::StrCat("concat_", T(t)), "tiny",
         func("cc", "%x: " + x + ", %y: " + y0 + ", %z: " + y1,
              "(" + tensor({47, 100}, t) + ", " + tensor({37, 128}, t) + ")",
              absl::StrFormat("  %%a = concat %%x, %%y {axis = 0, vec_tile = [8, 64]} : %s\n"
                              "  %%b = concat %%x, %%z {axis = 1, vec_tile = [8, 64]} : %s\n",
                              tensor({47, 100}, t), tensor({37, 128}, t)),
              "%a, %b")});
    std::string value = ir::isFloat(t) ? "2.5" : "3";
    cases.push_back({absl::StrCat("full_", T(t)), "tiny",
                     func("fl", "%x: " + x, "(" + x + ", " + x + ")",
                          absl::StrFormat("  %%z = full {value = %s, vec_tile = [8, %d]} : %s\n"
                                          "  %%s = add %%x, %%z {vec_tile = [8, %d]} : %s\n",
                                          value, lane(t), x, lane(t), x),
                          "%s, %z")});
  }
  runAll(cases);
}

// ------------------------------------------------------------------ chains

TEST_CASE("numerics: cube -> vector chains", "[numerics]") {
  std::vector<Case> cases;
  const char *tile = "{m = [16, 32], k = [16, 32], n = [16, 32]}";
  // matmul -> softmax, with split rows ([8, 64] over 100 columns) and whole rows.
  for (const char *vt : {"[8, 64]", "[4, 128]"}) {
    cases.push_back(
        {absl::StrCat("matmul_softmax_", vt), "tiny",
         func("ms", "%a: tensor<64x48xf16>, %b: tensor<48x100xf16>", "tensor<64x100xf32>",
              absl::StrFormat("  %%s = matmul %%a, %%b {cube_tile = %s} : tensor<64x100xf32>\n"
                              "  %%m = amax %%s {axes = [1], keepdim = true, vec_tile = %s} : "
                              "tensor<64x1xf32>\n"
                              "  %%d = sub %%s, %%m {vec_tile = %s} : tensor<64x100xf32>\n"
                              "  %%e = exp %%d {vec_tile = %s} : tensor<64x100xf32>\n"
                              "  %%z = sum %%e {axes = [1], keepdim = true, vec_tile = %s} : "
                              "tensor<64x1xf32>\n"
                              "  %%r = div %%e, %%z {vec_tile = %s} : tensor<64x100xf32>\n",
                              tile, vt, vt, vt, vt, vt)),
         Inputs::Random, std::sqrt(48.0)});
  }
  // f16 softmax on an f16 matmul result, then a second matmul (attention-like).
  cases.push_back(
      {"matmul_softmax_matmul_f16", "tiny",
       func("att", "%q: tensor<48x32xf16>, %k: tensor<80x32xf16>, %v: tensor<80x32xf16>",
            "tensor<48x32xf32>",
            absl::StrFormat(
                "  %%s = matmul %%q, %%k {cube_tile = %s, transpose_b = true} : tensor<48x80xf16>\n"
                "  %%m = amax %%s {axes = [1], keepdim = true, vec_tile = [8, 32]} : "
                "tensor<48x1xf16>\n"
                "  %%d = sub %%s, %%m {vec_tile = [8, 32]} : tensor<48x80xf16>\n"
                "  %%e = exp %%d {vec_tile = [8, 32]} : tensor<48x80xf16>\n"
                "  %%z = sum %%e {axes = [1], keepdim = true, vec_tile = [8, 32]} : "
                "tensor<48x1xf16>\n"
                "  %%p = div %%e, %%z {vec_tile = [8, 32]} : tensor<48x80xf16>\n"
                "  %%r = matmul %%p, %%v {cube_tile = %s} : tensor<48x32xf32>\n",
                tile, tile)),
       Inputs::Random, std::sqrt(80.0), DType::F16});
  // vector -> cube -> vector: an MLP block with a bias and a cast between matmuls.
  cases.push_back(
      {"mlp_bf16", "tiny",
       func("mlp", "%x: tensor<40x64xbf16>, %w1: tensor<64x96xbf16>, %b1: tensor<96xf32>, %w2: "
                   "tensor<96x48xbf16>",
            "tensor<40x48xf32>",
            absl::StrFormat(
                "  %%h = matmul %%x, %%w1 {cube_tile = %s} : tensor<40x96xf32>\n"
                "  %%hb = add %%h, %%b1 {vec_tile = [8, 32]} : tensor<40x96xf32>\n"
                "  %%g = gelu %%hb {vec_tile = [8, 32]} : tensor<40x96xf32>\n"
                "  %%g16 = cast %%g {vec_tile = [8, 32]} : tensor<40x96xbf16>\n"
                "  %%r = matmul %%g16, %%w2 {cube_tile = %s} : tensor<40x48xf32>\n",
                tile, tile)),
       Inputs::Random, std::sqrt(96.0), DType::BF16});
  runAll(cases);
}

TEST_CASE("numerics: the examples on a2", "[numerics]") {
  struct Example {
    const char *file;
    double atolScale;
    std::optional<DType> toleranceOf;
  };
  // mlp and attention cast an intermediate to f16 before their second matmul.
  const Example examples[] = {{"softmax.pto", 1, std::nullopt},
                              {"layernorm.pto", 1, std::nullopt},
                              {"mlp.pto", std::sqrt(1024.0), DType::F16},
                              {"attention.pto", std::sqrt(512.0), DType::F16},
                              {"matmul.pto", std::sqrt(1024.0), std::nullopt}};
  for (const Example &e : examples) {
    std::string text = readExample(e.file);
    REQUIRE_FALSE(text.empty());
    runCase({e.file, "a2", text, Inputs::Random, e.atolScale, e.toleranceOf});
  }
}

// The default pipeline's automatic nbuffer-merge puts 16 row bands into one AIV
// subgraph. Codegen orders a merged subgraph member by member (a depth-first local
// schedule), so the leaf needs about one band's tiles (two with ping-pong), not 16.
TEST_CASE("numerics: many row bands merged into one vector subgraph", "[numerics]") {
  const char *vt = "[1, 1024]";
  runCase({"softmax_merged_bands", "tiny",
           func("softmax", "%x: tensor<64x1024xf32>", "tensor<64x1024xf32>",
                absl::StrFormat("  %%m = amax %%x {axes = [1], keepdim = true, vec_tile = %s} : "
                                "tensor<64x1xf32>\n"
                                "  %%d = sub %%x, %%m {vec_tile = %s} : tensor<64x1024xf32>\n"
                                "  %%e = exp %%d {vec_tile = %s} : tensor<64x1024xf32>\n"
                                "  %%s = sum %%e {axes = [1], keepdim = true, vec_tile = %s} : "
                                "tensor<64x1xf32>\n"
                                "  %%r = div %%e, %%s {vec_tile = %s} : tensor<64x1024xf32>\n",
                                vt, vt, vt, vt, vt))});
}

TEST_CASE("numerics: topk, gather, scatter, expand_clone, every dtype", "[numerics]") {
  // Integer inputs in [-5, 5] have many equal values: the executor and the reference
  // must pick the same indices among them. Gather and scatter read topk's indices,
  // which are in range by construction.
  std::vector<Case> cases;
  for (DType t : kAll) {
    int64_t w = lane(t);
    std::string x = tensor({37, 70}, t), v = tensor({37, 5}, t), i = tensor({37, 5}, DType::I32);
    cases.push_back({absl::StrCat("topk_", T(t)), "tiny",
                     func("k", "%x: " + x, "(" + v + ", " + i + ")",
                          absl::StrFormat("  %%v, %%i = topk %%x {dim = 1, k = 5, vec_tile = "
                                          "[8, %d]} : %s, %s\n",
                                          w, v, i),
                          "%v, %i")});
    std::string c = tensor({3, 70}, DType::I32);
    cases.push_back({absl::StrCat("topk_indices_dim0_smallest_", T(t)), "tiny",
                     func("k", "%x: " + x, c,
                          absl::StrFormat("  %%r = topk_indices %%x {dim = 0, k = 3, largest = "
                                          "false, vec_tile = [8, %d]} : %s\n",
                                          w, c))});
    cases.push_back({absl::StrCat("gather_scatter_", T(t)), "tiny",
                     func("gs", "%x: " + x + ", %y: " + x, "(" + v + ", " + x + ")",
                          absl::StrFormat(
                              "  %%v, %%i = topk %%x {dim = 1, k = 5, vec_tile = [8, %d]} : %s, %s\n"
                              "  %%g = gather %%y, %%i {dim = 1, vec_tile = [8, %d]} : %s\n"
                              "  %%s = scatter %%x, %%i, %%g {dim = 1, reduce = \"add\", "
                              "vec_tile = [8, %d]} : %s\n",
                              w, v, i, w, v, w, x),
                          "%g, %s")});
    std::string e = tensor({37, 70}, t);
    cases.push_back({absl::StrCat("expand_clone_", T(t)), "tiny",
                     func("e", "%x: " + tensor({37, 1}, t), e,
                          absl::StrFormat("  %%r = expand_clone %%x {vec_tile = [8, %d]} : %s\n",
                                          w, e))});
  }
  runAll(cases);
}
