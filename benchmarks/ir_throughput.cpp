// IR text throughput: parse, verify and print of tensor-level graphs of 10k, 100k and
// 1M ops, with the goal that parse+verify runs at >= 1M ops/s at 1M ops and grows
// linearly (1M/100k time ratio <= 12).
//
// Build and run:
//   ninja -C build bench_ir_throughput && build/benchmarks/bench_ir_throughput
//   build/benchmarks/bench_ir_throughput --sizes=10000,100000   (fewer sizes)
//   build/benchmarks/bench_ir_throughput --reps=5               (repetitions below 1M ops)
//
// Each module is built with the GraphBuilder (a repeated softmax / layernorm / matmul
// block per layer, with vec_tile and cube_tile set the way a frontend sets them),
// printed once, and that text is what gets parsed. Each parse goes into a fresh
// Context. Before timing, each size checks that the parsed module verifies, has the
// built op count, and reprints to the same text; the process exits with 1 if not.
// Times are the best of `--reps` repetitions (default 3; `--reps-large`, default 2, from 1M
// ops on).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include "ptoc/ir/Context.h"
#include "ptoc/ir/GraphBuilder.h"
#include "ptoc/ir/Module.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/ir/Printer.h"
#include "ptoc/ir/Verifier.h"

using namespace ptoc::ir;

namespace {

constexpr double kGoalMopsPerSec = 1.0;
constexpr double kGoalRatio = 12.0;

/// Rows and hidden size of the activations each layer works on.
constexpr int64_t kRows = 64;
constexpr int64_t kHidden = 512;
constexpr int64_t kHeads = 8;
/// An upper bound on the ops one layer adds (the padding covers the rest).
constexpr int64_t kMaxLayerOps = 32;

[[noreturn]] void die(const std::string &msg) {
  std::fprintf(stderr, "bench_ir_throughput: %s\n", msg.c_str());
  std::exit(1);
}

void mustOk(const absl::Status &s) {
  if (!s.ok()) die(std::string(s.message()));
}
template <typename T> T must(absl::StatusOr<T> v) {
  mustOk(v.status());
  return *v;
}

double peakRssMB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0; // kilobytes on Linux
}

/// Builds tensor-level functions layer by layer, counting the ops it creates.
class GraphGenerator {
public:
  explicit GraphGenerator(Module &m) : b_(m), ctx_(m.context()) {
    b_.setCubeTile(CubeTile{{64, 64}, {128, 256}, {128, 256}});
  }

  /// A function of exactly `numOps` ops (return included; at least 2).
  void buildFunc(llvm::StringRef name, int64_t numOps) {
    Type act = ctx_.tensorType(DType::F32, {kRows, kHidden});
    Type vec = ctx_.tensorType(DType::F32, {kHidden});
    Type weight = ctx_.tensorType(DType::F16, {kHidden, kHidden});
    must(b_.beginFunc(name, {act, weight, vec, vec}, {"x", "w", "gamma", "beta"}));
    Value *h = b_.arg(0);
    int64_t budget = numOps - 1; // the return
    int64_t before = ops_;
    for (int64_t layer = 0; budget - (ops_ - before) >= kMaxLayerOps; ++layer)
      h = buildLayer(h, layer);
    tile2d();
    while (ops_ - before < budget) h = op(b_.unary(OpCode::Relu, h));
    mustOk(b_.endFunc({h}));
    ++ops_;
  }

  int64_t numOps() const { return ops_; }

private:
  Value *op(absl::StatusOr<Value *> v) {
    ++ops_;
    return must(std::move(v));
  }
  void tile2d(int64_t cols = kHidden) { b_.setVecTile({16, cols}); }

  /// softmax, layernorm, a matmul with casts around it, gelu, a per-head reduction
  /// through a reshape, a residual add; every 4th layer splits and rejoins the
  /// columns with views and a concat, every 8th transposes there and back.
  Value *buildLayer(Value *h, int64_t layer) {
    Value *w = b_.arg(1), *gamma = b_.arg(2), *beta = b_.arg(3);
    tile2d();
    // softmax over the hidden dim
    Value *m = op(b_.reduce(OpCode::Amax, h, {-1}, true));
    Value *e = op(b_.unary(OpCode::Exp, op(b_.binary(OpCode::Sub, h, m))));
    Value *s = op(b_.reduce(OpCode::Sum, e, {-1}, true));
    Value *p = op(b_.binary(OpCode::Div, e, s));
    // layernorm
    Value *mu = op(b_.reduce(OpCode::Mean, p, {-1}, true));
    Value *c = op(b_.binary(OpCode::Sub, p, mu));
    Value *var = op(b_.reduce(OpCode::Mean, op(b_.binary(OpCode::Mul, c, c)), {1}, true));
    Value *eps = op(b_.full({kRows, 1}, 1e-5, DType::F32));
    Value *r = op(b_.unary(OpCode::Rsqrt, op(b_.binary(OpCode::Add, var, eps))));
    Value *n = op(b_.binary(OpCode::Mul, c, r));
    n = op(b_.binary(OpCode::Add, op(b_.binary(OpCode::Mul, n, gamma)), beta));
    // projection on the cube, in f16
    Value *y = op(b_.matmul(op(b_.cast(n, DType::F16)), w));
    y = op(b_.unary(OpCode::Gelu, op(b_.cast(y, DType::F32))));
    // per-head max subtraction
    b_.setVecTile({16, kHeads, kHidden / kHeads});
    Value *t = op(b_.reshape(y, {kRows, kHeads, kHidden / kHeads}));
    t = op(b_.binary(OpCode::Sub, t, op(b_.reduce(OpCode::Amax, t, {2}, true))));
    tile2d();
    Value *out = op(b_.binary(OpCode::Add, op(b_.reshape(t, {kRows, kHidden})), h));
    if (layer % 4 == 3) {
      tile2d(kHidden / 2);
      Value *lo = op(b_.view(out, {0, 0}, {kRows, kHidden / 2}));
      Value *hi = op(b_.view(out, {0, kHidden / 2}, {kRows, kHidden / 2}));
      tile2d();
      out = op(b_.concat({hi, lo}, 1));
    }
    if (layer % 8 == 7) {
      tile2d(kRows);
      out = op(b_.transpose(out, 0, 1));
      tile2d();
      out = op(b_.transpose(out, 0, 1));
    }
    // Frontends name some values (layer outputs); most stay numbered.
    out->setNameHint(ctx_.id("layer" + std::to_string(layer)));
    return out;
  }

  GraphBuilder b_;
  Context &ctx_;
  int64_t ops_ = 0;
};

/// A module of exactly `numOps` ops: two small helper functions and one big one.
std::unique_ptr<Module> buildModule(Context &ctx, int64_t numOps) {
  auto m = std::make_unique<Module>(ctx);
  GraphGenerator gen(*m);
  int64_t small = std::max<int64_t>(numOps / 100, 40);
  gen.buildFunc("prologue", small);
  gen.buildFunc("epilogue", small);
  gen.buildFunc("main", numOps - 2 * small);
  if (gen.numOps() != numOps || static_cast<int64_t>(m->numOps()) != numOps)
    die("generator built " + std::to_string(m->numOps()) + " ops, wanted " +
        std::to_string(numOps));
  return m;
}

using Clock = std::chrono::steady_clock;
double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

struct Row {
  int64_t ops = 0;
  double textMB = 0;
  double parse = 0, verify = 0, parseVerify = 0, print = 0; // best seconds
  double peakRssMB = 0;
};

/// Checks once, outside the timed region, that the measurement is honest.
void checkRoundTrip(const std::string &text, int64_t numOps) {
  Context ctx;
  std::unique_ptr<Module> m = parseModule(text, "bench.pto", ctx);
  if (!m) die("parse failed (diagnostic above)");
  if (static_cast<int64_t>(m->numOps()) != numOps)
    die("parsed " + std::to_string(m->numOps()) + " ops, expected " + std::to_string(numOps));
  if (failed(verify(*m))) die("verify failed (diagnostics above)");
  if (toString(*m) != text) die("print(parse(text)) differs from text");
}

Row measure(int64_t numOps, int reps) {
  Row row;
  row.ops = numOps;
  std::string text;
  {
    Context buildCtx;
    text = toString(*buildModule(buildCtx, numOps));
  }
  row.textMB = text.size() / 1e6;
  checkRoundTrip(text, numOps);

  row.parse = row.verify = row.parseVerify = row.print = std::numeric_limits<double>::max();
  for (int rep = 0; rep < reps; ++rep) {
    auto ctx = std::make_unique<Context>();
    Clock::time_point t0 = Clock::now();
    std::unique_ptr<Module> m = parseModule(text, "bench.pto", *ctx);
    Clock::time_point t1 = Clock::now();
    bool ok = m && succeeded(verify(*m));
    Clock::time_point t2 = Clock::now();
    if (!ok) die("parse or verify failed in repetition " + std::to_string(rep));
    std::string printed = toString(*m);
    Clock::time_point t3 = Clock::now();
    if (printed.size() != text.size()) die("print produced a different text size");
    row.parse = std::min(row.parse, seconds(t0, t1));
    row.verify = std::min(row.verify, seconds(t1, t2));
    row.parseVerify = std::min(row.parseVerify, seconds(t0, t2));
    row.print = std::min(row.print, seconds(t2, t3));
  }
  row.peakRssMB = peakRssMB();
  return row;
}

std::vector<int64_t> parseSizes(llvm::StringRef list) {
  std::vector<int64_t> sizes;
  llvm::SmallVector<llvm::StringRef, 4> parts;
  list.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef p : parts) {
    int64_t n;
    if (p.trim().getAsInteger(10, n) || n < 200) die("bad size '" + p.str() + "' (>= 200)");
    sizes.push_back(n);
  }
  if (sizes.empty()) die("--sizes needs at least one size");
  return sizes;
}

int parseReps(llvm::StringRef value) {
  int n;
  if (value.getAsInteger(10, n) || n < 1) die("bad repetition count '" + value.str() + "'");
  return n;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int64_t> sizes = {10000, 100000, 1000000};
  int reps = 3, repsLarge = 2;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg.consume_front("--sizes="))
      sizes = parseSizes(arg);
    else if (arg.consume_front("--reps="))
      reps = parseReps(arg);
    else if (arg.consume_front("--reps-large="))
      repsLarge = parseReps(arg);
    else
      die("unknown argument '" + arg.str() +
          "' (usage: bench_ir_throughput [--sizes=N,...] [--reps=N] [--reps-large=N])");
  }

  std::printf("%-10s %8s %13s %14s %20s %13s %12s\n", "ops", "text_MB", "parse_Mops/s",
              "verify_Mops/s", "parse+verify_Mops/s", "print_Mops/s", "peak_RSS_MB");
  std::vector<Row> rows;
  for (int64_t n : sizes) {
    Row r = measure(n, n >= 1000000 ? repsLarge : reps);
    auto mops = [&](double s) { return r.ops / s / 1e6; };
    std::printf("%-10lld %8.1f %13.2f %14.2f %20.2f %13.2f %12.0f\n",
                static_cast<long long>(r.ops), r.textMB, mops(r.parse), mops(r.verify),
                mops(r.parseVerify), mops(r.print), r.peakRssMB);
    std::fflush(stdout);
    rows.push_back(r);
  }

  auto find = [&](int64_t n) -> const Row * {
    for (const Row &r : rows)
      if (r.ops == n) return &r;
    return nullptr;
  };
  const Row *r100k = find(100000), *r1m = find(1000000);
  if (r100k && r1m)
    std::printf("parse+verify time ratio 1M/100k: %.1f (goal <= %.0f)\n",
                r1m->parseVerify / r100k->parseVerify, kGoalRatio);
  if (r1m)
    std::printf("parse+verify at 1M: %.2f Mops/s (goal >= %.1f)\n",
                r1m->ops / r1m->parseVerify / 1e6, kGoalMopsPerSec);
  return 0;
}
