// Unit tests for modules with loops through the Session (docs/ir.md "Loops",
// docs/runtime.md "Loops"): the iterations runtime::expandLoops instantiates, the
// order between them from the memory they share, numerics of an accumulator, a loop
// updating an argument (a copy: the caller's buffer is untouched), run-time window
// errors, stitches and their ready times from the device's control costs, and each
// body compiled once whatever the iteration count.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "ptoc/runtime/ExpandLoops.h"
#include "ptoc/session/Session.h"

using Catch::Matchers::Contains;
using namespace ptoc;
using codegen::Call;
using codegen::Program;
using session::Kernel;
using session::RunOptions;
using session::RunReport;
using session::Session;

namespace {

/// The kernel's iterations instantiated with the default stitch size (kept in the
/// kernel's cache, so the reference stays valid while the kernel lives).
const ptoc::codegen::Program &expanded(const ptoc::session::Kernel &k) {
  auto p = k.runnable();
  if (!p.ok()) FAIL(std::string(p.status().message()));
  return **p;
}

Session makeSession() {
  absl::StatusOr<Session> s = Session::create("tiny");
  REQUIRE(s.ok());
  return *std::move(s);
}

Kernel compile(const Session &s, const std::string &text) {
  absl::StatusOr<Kernel> k = s.compileText(text, "loops.pto");
  INFO(k.status().message());
  REQUIRE(k.ok());
  return *std::move(k);
}

RunReport run(const Session &s, const Kernel &k, const std::vector<runtime::HostTensor> &args,
              std::vector<runtime::HostTensor> &results, RunOptions opts = {}) {
  absl::StatusOr<RunReport> r = s.run(k, args, results, opts);
  INFO(r.status().message());
  REQUIRE(r.ok());
  return *std::move(r);
}

/// Rows: iteration b reads row b of %x and writes row b of %y (disjoint windows).
std::string rowsModule(int rows) {
  return absl::StrReplaceAll(R"(
func @rows(%x: tensor<Nx4x64xf32>, %y: tensor<Nx4x64xf32>) -> tensor<Nx4x64xf32> {
  %y1 = loop %x, %y {body = "rows_b", name = "b", stop = N, ins = [{of = 0, offsets = ["b", 0, 0], sizes = [1, 4, 64]}], outs = [{of = 1, offsets = ["b", 0, 0], sizes = [1, 4, 64]}]} : tensor<Nx4x64xf32>
  return %y1
}
func @rows_b(%xb: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %e = exp %xb {vec_tile = [4, 64]} : tensor<4x64xf32>
  return %e
}
)",
                             {{"N", std::to_string(rows)}});
}

/// An accumulator: iteration i adds row i of %x into row 0 of %acc (read, then
/// written: the same window in every iteration). Row 1 of %acc is never written.
const char *kAccumulate = R"(
func @acc(%x: tensor<6x64xf32>, %acc: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %a1 = loop %x, %acc {body = "acc_b", name = "i", stop = 6, ins = [{of = 0, offsets = ["i", 0], sizes = [1, 64]}, {of = 1, offsets = [0, 0], sizes = [1, 64]}], outs = [{of = 1, offsets = [0, 0], sizes = [1, 64]}]} : tensor<2x64xf32>
  return %a1
}
func @acc_b(%xi: tensor<64xf32>, %ai: tensor<64xf32>) -> tensor<64xf32> {
  %s = add %ai, %xi {vec_tile = [64]} : tensor<64xf32>
  return %s
}
)";

/// The calls of iteration `instance`.
std::vector<int> callsOf(const Program &p, int instance) {
  std::vector<int> out;
  for (size_t c = 0; c < p.calls.size(); ++c)
    if (p.calls[c].instance == instance) out.push_back(int(c));
  return out;
}

} // namespace

TEST_CASE("iterations writing disjoint windows do not wait for each other", "[loops][expand]") {
  Session s = makeSession();
  Kernel k = compile(s, rowsModule(8));
  const Program &p = expanded(k);
  REQUIRE(p.instances.size() == 8);
  REQUIRE(p.calls.size() >= 8);
  for (size_t i = 0; i < p.instances.size(); ++i) {
    CHECK(p.instances[i].loop == "b");
    CHECK(p.instances[i].iteration == int64_t(i));
  }
  for (const Call &c : p.calls) {
    REQUIRE(c.instance >= 0);
    for (int pred : c.preds) CHECK(p.calls[pred].instance == c.instance);
  }
}

TEST_CASE("an accumulator's read-modify-write chains the iterations, and its sums are exact",
          "[loops][expand]") {
  Session s = makeSession();
  Kernel k = compile(s, kAccumulate);
  const Program &p = expanded(k);
  REQUIRE(p.instances.size() == 6);
  // Every call of iteration i > 0 that touches the accumulator waits for the previous
  // iteration's writes, and as a write order (the write replaces the earlier value).
  for (int i = 1; i < 6; ++i) {
    INFO("iteration " << i);
    std::vector<int> prev = callsOf(p, i - 1), cur = callsOf(p, i);
    REQUIRE_FALSE(cur.empty());
    bool waits = false, writeOrder = false;
    for (int c : cur) {
      for (int pred : p.calls[c].preds)
        waits |= std::find(prev.begin(), prev.end(), pred) != prev.end();
      for (int pred : p.calls[c].writeOrderPreds) {
        writeOrder |= std::find(prev.begin(), prev.end(), pred) != prev.end();
        // writeOrderPreds is a subset of preds.
        CHECK(std::binary_search(p.calls[c].preds.begin(), p.calls[c].preds.end(), pred));
      }
      for (int pred : p.calls[c].preds) CHECK(pred < c);
    }
    CHECK(waits);
    CHECK(writeOrder);
  }

  // Small integers and halves: every f32 sum is exact, in any order.
  std::vector<runtime::HostTensor> args{runtime::HostTensor(ir::DType::F32, {6, 64}),
                                        runtime::HostTensor(ir::DType::F32, {2, 64})};
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 64; ++j) args[0].set(i * 64 + j, (i + 1) * 0.5 + j);
  for (int j = 0; j < 128; ++j) args[1].set(j, 1000 - j);
  const runtime::HostTensor accBefore = args[1];
  std::vector<runtime::HostTensor> results;
  for (int mode = 0; mode <= 3; ++mode) {
    INFO("sched mode " << mode);
    RunOptions o;
    o.schedMode = mode;
    run(s, k, args, results, o);
    REQUIRE(results.size() == 1);
    for (int j = 0; j < 64; ++j) {
      // 1000 - j + sum_i ((i + 1) / 2 + j) = 1000 - j + 10.5 + 6j
      CHECK(results[0].get(j) == 1000 - j + 10.5 + 6 * j);
      // Row 1 is not written: the updated copy keeps the input's values.
      CHECK(results[0].get(64 + j) == accBefore.get(64 + j));
    }
  }
  // The caller's accumulator is not updated in place.
  for (int j = 0; j < 128; ++j) CHECK(args[1].get(j) == accBefore.get(j));
}

TEST_CASE("a loop writing an argument runs on a copy of it", "[loops][expand]") {
  Session s = makeSession();
  Kernel k = compile(s, kAccumulate);
  const Program &p = expanded(k);
  // The written argument is replaced by an intermediate that starts as its copy; the
  // result is that intermediate, never the argument itself.
  REQUIRE(p.arguments.size() == 2);
  REQUIRE(p.results.size() == 1);
  const codegen::GmTensor &result = p.tensors[p.results[0]];
  CHECK(result.kind == codegen::GmTensor::Kind::Intermediate);
  CHECK(result.initFrom == p.arguments[1]);
  CHECK(p.results[0] != p.arguments[1]);
  // The read-only argument is read in place.
  for (const codegen::GmTensor &t : p.tensors) CHECK(t.initFrom != p.arguments[0]);

  // Caller-owned buffers: the input stays as it was.
  std::vector<float> x(6 * 64, 1.0f), acc(2 * 64, 2.0f), out(2 * 64, -7.0f);
  std::vector<int64_t> xs{6, 64}, as{2, 64};
  runtime::ConstTensorRef in[] = {runtime::ConstTensorRef(ir::DType::F32, xs, x.data()),
                                  runtime::ConstTensorRef(ir::DType::F32, as, acc.data())};
  runtime::TensorRef res(ir::DType::F32, as, out.data());
  absl::StatusOr<RunReport> r = s.run(k, in, llvm::ArrayRef(res));
  INFO(r.status().message());
  REQUIRE(r.ok());
  for (int j = 0; j < 64; ++j) {
    CHECK(out[j] == 8.0f);
    CHECK(out[64 + j] == 2.0f);
  }
  CHECK(std::all_of(acc.begin(), acc.end(), [](float v) { return v == 2.0f; }));
  // Regression: a result written into a caller's buffer started as zeros, not as the
  // argument the loop updates (out[j] was 6, out[64 + j] was 0).

  // In place: the result buffer is the accumulator's own.
  runtime::TensorRef inPlace(ir::DType::F32, as, acc.data());
  r = s.run(k, in, llvm::ArrayRef(inPlace));
  INFO(r.status().message());
  REQUIRE(r.ok());
  for (int j = 0; j < 64; ++j) {
    CHECK(acc[j] == 8.0f);
    CHECK(acc[64 + j] == 2.0f);
  }
}

TEST_CASE("a window out of range at run time names the loop, the iteration and the window",
          "[loops][expand]") {
  Session s = makeSession();
  // b % 6 + 3 is not bounded exactly by the verifier; it reaches row 8 at b = 5.
  const char *text = R"(
func @oob(%x: tensor<8x64xf32>, %y: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y1 = loop %x, %y {body = "row", name = "b", stop = 8, ins = [{of = 0, offsets = ["b % 6 + 3", 0], sizes = [1, 64]}], outs = [{of = 1, offsets = ["b", 0], sizes = [1, 64]}]} : tensor<8x64xf32>
  return %y1
}
func @row(%r: tensor<64xf32>) -> tensor<64xf32> {
  %e = exp %r {vec_tile = [64]} : tensor<64xf32>
  return %e
}
)";
  // The control thread instantiates iterations when the kernel runs: the compile
  // succeeds, the first run (or anything that instantiates it) fails.
  absl::StatusOr<Kernel> k = s.compileText(text, "oob.pto");
  REQUIRE(k.ok());
  auto program = k->runnable();
  REQUIRE_FALSE(program.ok());
  std::string msg(program.status().message());
  CHECK_THAT(msg, Contains("oob.pto:3:3: error: loop 'b' iteration b = 5: "));
  CHECK_THAT(msg, Contains("ins window 0 [b % 6 + 3 +1, 0 +64] of %x (8x64)"));
  CHECK_THAT(msg, Contains("starts at 8 in dimension 0 and so reaches [8, 9), outside [0, 8)"));
}

TEST_CASE("a window out of range in nested loops names every index and the window's statement",
          "[loops][expand]") {
  Session s = makeSession();
  // Outer b over 4, inner r over b..7 reading row r + b of its window: at b = 1,
  // r = 7 it reaches row 8. The inner loop's windows carry the user's locations
  // (`locs`: ins then outs), as Python's tracer records them.
  const char *text = R"(
func @tri(%x: tensor<4x8x64xf32>, %y: tensor<4x8x64xf32>) -> tensor<4x8x64xf32> {
  %y1 = loop %x, %y {body = "tri_b", name = "outer", index = "b", stop = 4, ins = [{of = 0, offsets = ["b", 0, 0], sizes = [1, 8, 64]}, {of = 1, offsets = ["b", 0, 0], sizes = [1, 8, 64]}], outs = [{of = 1, offsets = ["b", 0, 0], sizes = [1, 8, 64]}]} : tensor<4x8x64xf32>
  return %y1
}
func @tri_b(%x: tensor<8x64xf32>, %y: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y1 = loop %x, %y {body = "tri_r", name = "inner", index = "r", start = "b", stop = 8, ins = [{of = 0, offsets = ["r + b", 0], sizes = [1, 64]}], outs = [{of = 1, offsets = ["r", 0], sizes = [1, 64]}], locs = ["model.py:12:17", "model.py:12:9"]} : tensor<8x64xf32>
  return %y1
}
func @tri_r(%r: tensor<64xf32>) -> tensor<64xf32> {
  %d = add %r, %r {vec_tile = [64]} : tensor<64xf32>
  return %d
}
)";
  absl::StatusOr<Kernel> k = s.compileText(text, "tri.pto");
  REQUIRE(k.ok());
  auto program = k->runnable();
  REQUIRE_FALSE(program.ok());
  std::string msg(program.status().message());
  CHECK_THAT(msg, Contains("model.py:12:17: error: loop 'inner' iteration b = 1, r = 7: ins "
                           "window 0 [r + b +1, 0 +64] of %x (8x64) starts at 8 in dimension 0"));

  // Without locations the error is at the inner loop's op, with both indices.
  std::string plain = absl::StrReplaceAll(
      text, {{", locs = [\"model.py:12:17\", \"model.py:12:9\"]", ""}});
  REQUIRE(plain != text);
  absl::StatusOr<Kernel> k2 = s.compileText(plain, "tri.pto");
  REQUIRE(k2.ok());
  auto program2 = k2->runnable();
  REQUIRE_FALSE(program2.ok());
  CHECK_THAT(std::string(program2.status().message()),
             Contains("tri.pto:7:3: error: loop 'inner' iteration b = 1, r = 7: ins window 0"));
}

TEST_CASE("a body reshapes a strided window only where one stride spans it",
          "[loops][expand]") {
  Session s = makeSession();
  // Iteration b reads heads x rows [2, 4, 64] of %x and sees them as 8 rows. With %x
  // [2, 4, 128] (the window is columns 64b..64b+63 of every row) the heads follow each
  // other at one row stride: a strided view, exact.
  const char *evenly = R"(
func @stack(%x: tensor<2x4x128xf32>, %y: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %y1 = loop %x, %y {body = "stack_b", name = "b", stop = 2, ins = [{of = 0, offsets = [0, 0, "b * 64"], sizes = [2, 4, 64]}], outs = [{of = 1, offsets = [0, "b * 64"], sizes = [8, 64]}]} : tensor<8x128xf32>
  return %y1
}
func @stack_b(%w: tensor<2x4x64xf32>) -> tensor<8x64xf32> {
  %r = reshape %w : tensor<8x64xf32>
  %d = add %r, %r {vec_tile = [8, 64]} : tensor<8x64xf32>
  return %d
}
)";
  Kernel k = compile(s, evenly);
  std::vector<runtime::HostTensor> args{runtime::HostTensor(ir::DType::F32, {2, 4, 128}),
                                        runtime::HostTensor(ir::DType::F32, {8, 128})};
  for (int i = 0; i < 2 * 4 * 128; ++i) args[0].set(i, i);
  std::vector<runtime::HostTensor> results;
  run(s, k, args, results);
  REQUIRE(results.size() == 1);
  for (int h = 0; h < 2; ++h)
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 128; ++c)
        CHECK(results[0].get((h * 4 + r) * 128 + c) == 2.0 * ((h * 4 + r) * 128 + c));

  // Regression: with %x [2, 8, 64] (the window is rows 4b..4b+3 of both heads) the
  // second head is 8 rows after the first, not 4: no one stride spans the 8 rows. The
  // expansion read rows 4b..4b+7 of head 0 as the 8 rows (wrong values, no error).
  const char *gapped = R"(
func @stack(%x: tensor<2x8x64xf32>, %y: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %y1 = loop %x, %y {body = "stack_b", name = "b", stop = 2, ins = [{of = 0, offsets = [0, "b * 4", 0], sizes = [2, 4, 64]}], outs = [{of = 1, offsets = ["b * 8", 0], sizes = [8, 64]}]} : tensor<16x64xf32>
  return %y1
}
func @stack_b(%w: tensor<2x4x64xf32>) -> tensor<8x64xf32> {
  %r = reshape %w : tensor<8x64xf32>
  %d = add %r, %r {vec_tile = [8, 64]} : tensor<8x64xf32>
  return %d
}
)";
  absl::StatusOr<Kernel> bad = s.compileText(gapped, "gapped.pto");
  REQUIRE(bad.ok());
  auto program = bad->runnable();
  REQUIRE_FALSE(program.ok());
  std::string msg(program.status().message());
  CHECK_THAT(msg, Contains("gapped.pto:3:3: error: loop 'b' iteration b = 0"));
  CHECK_THAT(msg, Contains("body @stack_b reshapes %r, a window that is not contiguous in its "
                           "tensor"));
}

TEST_CASE("a task reading back what its own iteration wrote comes after that write",
          "[loops][expand]") {
  Session s = makeSession();
  // Iteration i: %n = %m + x[i] is written to %m (a result) and read back by the exp
  // tasks, whose other tile sends %n through GM, into y[i]. Regression: the read-back
  // counted as a read of %m from before the iteration, so the add (writing %m) had to
  // wait for the exps that wait for it: "a task of body @acc_i both writes a window
  // and reads an overlapping window after another task wrote it".
  const char *text = R"(
func @acc(%x: tensor<4x8x64xf32>, %m: tensor<8x64xf32>, %y: tensor<4x8x64xf32>) -> (tensor<8x64xf32>, tensor<4x8x64xf32>) {
  %m1, %y1 = loop %m, %x, %y {body = "acc_i", name = "i", stop = 4, ins = [{of = 0, offsets = [0, 0], sizes = [8, 64]}, {of = 1, offsets = ["i", 0, 0], sizes = [1, 8, 64]}], outs = [{of = 0, offsets = [0, 0], sizes = [8, 64]}, {of = 2, offsets = ["i", 0, 0], sizes = [1, 8, 64]}]} : tensor<8x64xf32>, tensor<4x8x64xf32>
  return %m1, %y1
}
func @acc_i(%mi: tensor<8x64xf32>, %xi: tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>) {
  %n = add %mi, %xi {vec_tile = [8, 64]} : tensor<8x64xf32>
  %e = exp %n {vec_tile = [4, 64]} : tensor<8x64xf32>
  return %n, %e
}
)";
  session::CompileOptions separate; // no merging: the add and the exps stay apart
  separate.pipeline = "expand-tiles,partition{pg-lower-bound=0}";
  absl::StatusOr<Kernel> k = s.compileText(text, "readback.pto", separate);
  INFO(k.status().message());
  REQUIRE(k.ok());
  const Program &p = expanded(*k);
  REQUIRE(p.instances.size() == 4);
  // Every task of iteration 0 comes before some task of iteration 1: the add writing %m
  // by the read-after-write, the exps reading it back by the write-after-read.
  std::vector<int> first = callsOf(p, 0), second = callsOf(p, 1);
  REQUIRE(first.size() >= 2);
  for (int c : first) {
    bool before = false;
    for (int d : second)
      before |= std::find(p.calls[d].preds.begin(), p.calls[d].preds.end(), c) !=
                p.calls[d].preds.end();
    CHECK(before);
  }

  std::vector<runtime::HostTensor> args{runtime::HostTensor(ir::DType::F32, {4, 8, 64}),
                                        runtime::HostTensor(ir::DType::F32, {8, 64}),
                                        runtime::HostTensor(ir::DType::F32, {4, 8, 64})};
  for (int i = 0; i < 4 * 8 * 64; ++i) args[0].set(i, 0.25);
  for (int i = 0; i < 8 * 64; ++i) args[1].set(i, 0.5);
  std::vector<runtime::HostTensor> results;
  for (int mode = 0; mode <= 3; ++mode) {
    INFO("sched mode " << mode);
    RunOptions o;
    o.schedMode = mode;
    run(s, *k, args, results, o);
    REQUIRE(results.size() == 2);
    CHECK(results[0].get(0) == 1.5); // 0.5 + 4 x 0.25, exact
    for (int i = 0; i < 4; ++i)
      CHECK(results[1].get(i * 8 * 64 + 7) == Approx(std::exp(0.5 + 0.25 * (i + 1))));
  }
}

TEST_CASE("stitches group iterations and their ready times follow the control costs",
          "[loops][expand][stitch]") {
  Session s = makeSession();
  Kernel k = compile(s, rowsModule(6));
  const target::SchedulerSpec &sched = k.device.scheduler;
  REQUIRE(expanded(k).instances.size() == 6);
  REQUIRE(expanded(k).stitchReadyCycles.size() == 1);

  Program two = expanded(k);
  REQUIRE(runtime::assignStitches(two, k.device, 2).ok());
  REQUIRE(two.stitchReadyCycles.size() == 3);
  // Stitch k holds iterations 2k and 2k + 1; it is ready when the control thread has
  // built every iteration up to it (per iteration and per task) and submitted every
  // stitch up to it.
  std::vector<int64_t> tasks(6, 0);
  for (const Call &c : two.calls) {
    ++tasks[c.instance];
    CHECK(c.stitch == c.instance / 2);
  }
  double clock = 0;
  for (int st = 0; st < 3; ++st) {
    for (int i = 2 * st; i < 2 * st + 2; ++i)
      clock += sched.controlIterationCycles + double(tasks[i]) * sched.controlTaskCycles;
    clock += sched.controlStitchCycles;
    INFO("stitch " << st);
    CHECK(two.stitchReadyCycles[st] == Approx(clock));
  }
  // One stitch of everything: the same work plus one submission.
  CHECK(expanded(k).stitchReadyCycles[0] ==
        Approx(clock - 2 * sched.controlStitchCycles));
  // Out of range.
  Program bad = expanded(k);
  CHECK_THAT(std::string(runtime::assignStitches(bad, k.device, 0).message()),
             Contains("stitch_function_max_num must be between 1 and 1024"));

  // A run restitches by RunOptions::stitchMaxNum: the stitches and the control
  // thread's busy time are the restitched program's. (Fewer, larger stitches are not
  // always faster: the cores wait until the control thread has built a whole stitch,
  // so here, with cheap tasks, three stitches overlap building with running and win.)
  std::vector<runtime::HostTensor> args{runtime::HostTensor(ir::DType::F32, {6, 4, 64}),
                                        runtime::HostTensor(ir::DType::F32, {6, 4, 64})};
  std::vector<runtime::HostTensor> results;
  RunOptions o;
  o.numerics = false;
  o.stitchMaxNum = 2;
  RunReport small = run(s, k, args, results, o);
  CHECK(small.record.stitches.size() == 3);
  o.stitchMaxNum = 6;
  RunReport whole = run(s, k, args, results, o);
  CHECK(whole.record.stitches.size() == 1);
  CHECK(small.record.controlBusyCycles == two.stitchReadyCycles.back());
  CHECK(whole.record.controlBusyCycles == expanded(k).stitchReadyCycles[0]);
  CHECK(whole.simulatedUs != small.simulatedUs);
  // Each stitch opens when built (ready) and after the one before: with one stitch
  // no task starts before all six iterations are built.
  const double head = whole.record.stitches[0].readyCycle - expanded(k).stitchReadyCycles[0];
  for (const runtime::TaskRecord &t : whole.record.tasks)
    CHECK(t.startCycle >= head + expanded(k).stitchReadyCycles[0]);
  CHECK(small.record.stitches[0].openCycle < whole.record.stitches[0].openCycle);
  o.stitchMaxNum = 0;
  absl::StatusOr<RunReport> r = s.run(k, args, results, o);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(std::string(r.status().message()), Contains("got 0"));
}

TEST_CASE("a body is compiled once whatever the iteration count", "[loops][expand]") {
  Session s = makeSession();
  Kernel one = compile(s, rowsModule(1)), many = compile(s, rowsModule(16));
  REQUIRE(one.loops);
  REQUIRE(many.loops);
  REQUIRE(one.loops->programs.size() == 1);
  CHECK(many.loops->programs.size() == one.loops->programs.size());
  CHECK(many.loops->programs[0].calls.size() == one.loops->programs[0].calls.size());
  CHECK(many.loops->programs[0].leaves.size() == one.loops->programs[0].leaves.size());
  // The iterations are instantiated, not compiled: 16 times the calls, the same leaves.
  CHECK(expanded(many).calls.size() == 16 * expanded(one).calls.size());
  CHECK(expanded(many).leaves.size() == expanded(one).leaves.size());
  CHECK(expanded(many).instances.size() == 16);
}
