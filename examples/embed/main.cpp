// Embedding ptoc in a C++ program: build a fused operator with GraphBuilder, compile
// it with a pass knob, run it on the program's own std::vector buffers, check every
// output against plain C++ and print the run report. docs/embedding.md walks through it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "ptoc/ptoc.h"

namespace {

using ptoc::ir::DType;
using ptoc::ir::OpCode;
using ptoc::ir::Value;

// The operator: per row of x, y = softmax(relu(x * w + b)), with w and b broadcast
// over the rows. It returns the activation h as well as y.
constexpr int64_t kRows = 64;
constexpr int64_t kCols = 256;
// One vector tile: 8 whole rows (8 KiB of f32), so the row reductions are not split
// and the 64 rows become 8 parallel tile tasks.
constexpr int64_t kTileRows = 8;
// f32 results against the float reference below: exp and the row sum may round
// differently, a few ulps.
constexpr float kRelTolerance = 1e-5f;
constexpr float kAbsTolerance = 1e-6f;

int fail(const char *what, const absl::Status &status) {
  std::cerr << "embed: " << what << " failed: " << status.ToString() << "\n";
  return 1;
}

/// Builds the function into `module`. Every builder call returns a status; the
/// location set before each step makes an error name this file and line.
absl::Status buildOperator(ptoc::ir::GraphBuilder &b) {
  ptoc::ir::Context &ctx = b.context();
  b.setLocation(ptoc::callerLocation(ctx));
  absl::StatusOr<ptoc::ir::Func *> f =
      b.beginFunc("bias_relu_softmax",
                  {ctx.tensorType(DType::F32, {kRows, kCols}),
                   ctx.tensorType(DType::F32, {kCols}), ctx.tensorType(DType::F32, {kCols})},
                  {"x", "w", "b"});
  if (!f.ok()) return f.status();
  Value *x = b.arg(0), *w = b.arg(1), *bias = b.arg(2);

  b.setVecTile({kTileRows, kCols});
  b.setLocation(ptoc::callerLocation(ctx));
  absl::StatusOr<Value *> xw = b.binary(OpCode::Mul, x, w);
  if (!xw.ok()) return xw.status();
  absl::StatusOr<Value *> pre = b.binary(OpCode::Add, *xw, bias);
  if (!pre.ok()) return pre.status();
  absl::StatusOr<Value *> h = b.unary(OpCode::Relu, *pre);
  if (!h.ok()) return h.status();

  b.setLocation(ptoc::callerLocation(ctx));
  absl::StatusOr<Value *> rowMax = b.reduce(OpCode::Amax, *h, {-1}, /*keepdim=*/true);
  if (!rowMax.ok()) return rowMax.status();
  absl::StatusOr<Value *> shifted = b.binary(OpCode::Sub, *h, *rowMax);
  if (!shifted.ok()) return shifted.status();
  absl::StatusOr<Value *> e = b.unary(OpCode::Exp, *shifted);
  if (!e.ok()) return e.status();
  absl::StatusOr<Value *> rowSum = b.reduce(OpCode::Sum, *e, {-1}, /*keepdim=*/true);
  if (!rowSum.ok()) return rowSum.status();
  absl::StatusOr<Value *> y = b.binary(OpCode::Div, *e, *rowSum);
  if (!y.ok()) return y.status();
  return b.endFunc({*h, *y});
}

/// The same operator in plain C++, in f32 like the kernel.
void reference(const std::vector<float> &x, const std::vector<float> &w,
               const std::vector<float> &b, std::vector<float> &h, std::vector<float> &y) {
  for (int64_t r = 0; r < kRows; ++r) {
    float rowMax = -INFINITY;
    for (int64_t c = 0; c < kCols; ++c) {
      float product = x[r * kCols + c] * w[c];
      float v = std::max(product + b[c], 0.0f);
      h[r * kCols + c] = v;
      rowMax = std::max(rowMax, v);
    }
    float rowSum = 0;
    for (int64_t c = 0; c < kCols; ++c) {
      float e = std::exp(h[r * kCols + c] - rowMax);
      y[r * kCols + c] = e;
      rowSum += e;
    }
    for (int64_t c = 0; c < kCols; ++c) y[r * kCols + c] /= rowSum;
  }
}

/// 0 when every element of `got` matches `want`; else prints the first bad index.
int compare(const char *name, const std::vector<float> &got, const std::vector<float> &want) {
  for (size_t i = 0; i < want.size(); ++i) {
    float tolerance = kAbsTolerance + kRelTolerance * std::fabs(want[i]);
    if (!(std::fabs(got[i] - want[i]) <= tolerance)) {
      std::cerr << "embed: result '" << name << "' differs at index " << i << " (row "
                << i / kCols << ", col " << i % kCols << "): got " << got[i] << ", expected "
                << want[i] << "\n";
      return 1;
    }
  }
  std::cout << "result '" << name << "': all " << want.size() << " elements match\n";
  return 0;
}

} // namespace

int main() {
  absl::StatusOr<ptoc::Session> session = ptoc::Session::create("a2");
  if (!session.ok()) return fail("Session::create", session.status());
  std::cout << "ptoc " << ptoc::version().str() << " on device " << session->device().name
            << "\n";

  // --- build ---
  ptoc::ir::Context ctx;
  ptoc::ir::Module module(ctx);
  ptoc::ir::GraphBuilder builder(module, &session->device());
  if (absl::Status s = buildOperator(builder); !s.ok()) return fail("building", s);

  // A mistake is a status naming the op, where it was built and the fix: a relu over
  // 512 x 256 f32 tiles holds two 512 KiB buffers, far more than UB.
  {
    ptoc::ir::Context badCtx;
    ptoc::ir::Module badModule(badCtx);
    ptoc::ir::GraphBuilder bad(badModule, &session->device());
    bad.setLocation(ptoc::callerLocation(badCtx));
    if (!bad.beginFunc("bad", {badCtx.tensorType(DType::F32, {1024, kCols})}).ok()) return 1;
    bad.setVecTile({512, kCols});
    bad.setLocation(ptoc::callerLocation(badCtx));
    absl::StatusOr<Value *> r = bad.unary(OpCode::Relu, bad.arg(0));
    if (r.ok() || std::string(r.status().message()).find("main.cpp:") == std::string::npos) {
      std::cerr << "embed: expected a tile error naming main.cpp, got "
                << r.status().ToString() << "\n";
      return 1;
    }
    std::cout << "a bad tile is reported as: " << r.status().message() << "\n";
  }

  // --- compile: the default pipeline with one knob changed ---
  ptoc::CompileOptions copts;
  if (absl::Status s = copts.knobs.set("pg_lower_bound", ptoc::passes::OptionValue(int64_t(1024)));
      !s.ok())
    return fail("setting pg_lower_bound", s);
  absl::StatusOr<ptoc::Kernel> kernel = session->compile(module, copts);
  if (!kernel.ok()) return fail("compile", kernel.status());
  const ptoc::CompileStats &stats = kernel->stats;
  std::cout << "compiled '" << kernel->funcName << "': " << stats.subgraphs << " subgraphs ("
            << stats.aivSubgraphs << " AIV, " << stats.aicSubgraphs << " AIC) in "
            << stats.groups.size() << " isomorphic groups\n";

  // --- run on the program's own buffers ---
  std::vector<float> x(kRows * kCols), w(kCols), b(kCols);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (float &v : x) v = uniform(rng);
  for (float &v : w) v = uniform(rng) * 2.0f;
  for (float &v : b) v = uniform(rng);
  std::vector<float> h(kRows * kCols), y(kRows * kCols);

  const int64_t matrixShape[] = {kRows, kCols};
  const int64_t vectorShape[] = {kCols};
  const ptoc::ConstTensorRef args[] = {{DType::F32, matrixShape, x.data()},
                                       {DType::F32, vectorShape, w.data()},
                                       {DType::F32, vectorShape, b.data()}};
  const ptoc::TensorRef results[] = {{DType::F32, matrixShape, h.data()},
                                     {DType::F32, matrixShape, y.data()}};
  ptoc::RunOptions ropts;
  ropts.schedMode = 1; // device_sched_mode 1: L2 affinity
  absl::StatusOr<ptoc::RunReport> report = session->run(*kernel, args, results, ropts);
  if (!report.ok()) return fail("run", report.status());

  // --- check against plain C++ ---
  std::vector<float> hWant(h.size()), yWant(y.size());
  reference(x, w, b, hWant, yWant);
  if (compare("h", h, hWant) || compare("y", y, yWant)) return 1;

  // --- the report ---
  std::printf("simulated %.2f us, bound %.2f us (%.0f%% of roofline), "
              "utilisation AIC %.0f%% AIV %.0f%%, %zu tasks\n",
              report->simulatedUs, report->boundUs, 100 * report->boundRatio,
              100 * report->aicUtilization, 100 * report->aivUtilization,
              report->record.tasks.size());
  std::cout << report->summary;
  return 0;
}
