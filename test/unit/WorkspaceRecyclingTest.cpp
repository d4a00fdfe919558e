// Unit tests for workspace recycling (docs/runtime.md "Workspace recycling"): where
// runtime::recycleWorkspaces places the iterations' own intermediates (a pool per
// parallel slot, stitch_function_max_num iterations' worth, taken again from its start
// by each stitch and when full), the dependencies reuse adds and their removal when
// the stitches are assigned anew, and the effect on the simulated L2 (the bytes an
// iteration reuses are still resident, so they are not written back to HBM).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "RandomProgram.h"
#include "ptoc/runtime/ExpandLoops.h"
#include "ptoc/runtime/WorkspaceRecycling.h"
#include "ptoc/session/Session.h"

using ptoc::codegen::Instance;
using ptoc::codegen::Program;
using ptoc::runtime::HostTensor;
using namespace ptoc::testprog;

namespace {

/// Two independent groups (a parallel loop), each a sequential loop of 8 iterations
/// whose body multiplies a 64 x 64 block by itself on the cube and takes exp on the
/// vector cores: the product is the iteration's own intermediate (16 KiB of f32).
constexpr const char *kModule = R"(
func @ws(%x: tensor<2x8x64x64xf32>, %y: tensor<2x8x64x64xf32>) -> tensor<2x8x64x64xf32> {
  %y1 = loop %x, %y {body = "ws_g", name = "g", stop = 2, parallel = true, ins = [{of = 0, offsets = ["g", 0, 0, 0], sizes = [1, 8, 64, 64]}, {of = 1, offsets = ["g", 0, 0, 0], sizes = [1, 8, 64, 64]}], outs = [{of = 1, offsets = ["g", 0, 0, 0], sizes = [1, 8, 64, 64]}]} : tensor<2x8x64x64xf32>
  return %y1
}
func @ws_g(%xg: tensor<8x64x64xf32>, %yg: tensor<8x64x64xf32>) -> tensor<8x64x64xf32> {
  %y2 = loop %xg, %yg {body = "ws_i", name = "i", stop = 8, ins = [{of = 0, offsets = ["i", 0, 0], sizes = [1, 64, 64]}], outs = [{of = 1, offsets = ["i", 0, 0], sizes = [1, 64, 64]}]} : tensor<8x64x64xf32>
  return %y2
}
func @ws_i(%xi: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %s = matmul %xi, %xi {cube_tile = {m = [64, 64], k = [64, 64], n = [64, 64]}} : tensor<64x64xf32>
  %e = exp %s {vec_tile = [64, 64]} : tensor<64x64xf32>
  return %e
}
)";
constexpr int64_t kProductBytes = 64 * 64 * 4;

/// The calls of instance `i`, and those without a predecessor / successor among them.
struct Ends {
  std::vector<int> sources, sinks;
};
Ends endsOf(const Program &p, int i) {
  Ends e;
  std::vector<int> calls;
  for (size_t c = 0; c < p.calls.size(); ++c)
    if (p.calls[c].instance == i) calls.push_back(static_cast<int>(c));
  for (int c : calls) {
    bool source = true, sink = true;
    for (int q : p.calls[c].preds) source &= p.calls[q].instance != i;
    for (int d : calls)
      if (std::count(p.calls[d].preds.begin(), p.calls[d].preds.end(), c)) sink = false;
    if (source) e.sources.push_back(c);
    if (sink) e.sinks.push_back(c);
  }
  return e;
}

/// Whether every sink of instance `earlier` precedes every source of `later`.
bool waitsFor(const Program &p, int later, int earlier) {
  Ends a = endsOf(p, earlier), b = endsOf(p, later);
  if (a.sinks.empty() || b.sources.empty()) return false;
  for (int s : b.sources)
    for (int k : a.sinks)
      if (!std::binary_search(p.calls[s].preds.begin(), p.calls[s].preds.end(), k)) return false;
  return true;
}

const ptoc::codegen::GmTensor &product(const Program &p, int i) {
  REQUIRE(p.instances[i].workspace.size() == 1);
  return p.tensors[p.instances[i].workspace.front()];
}

} // namespace

TEST_CASE("an iteration's own intermediates take its stitch's pool in order",
          "[loops][workspace]") {
  auto s = ptoc::session::Session::create("tiny");
  REQUIRE(s.ok());
  auto k = s->compileText(kModule, "ws.pto");
  INFO(k.status().message());
  REQUIRE(k.ok());

  SECTION("a pool big enough for a stitch: offsets one after another, no reuse") {
    auto p = k->runnable(ptoc::runtime::kDefaultStitchMaxNum, 1);
    REQUIRE(p.ok());
    const Program &prog = **p;
    REQUIRE(prog.instances.size() == 16);
    CHECK(prog.workspacePools == 1);
    CHECK(prog.workspacePoolBytes == ptoc::runtime::kDefaultStitchMaxNum * kProductBytes);
    CHECK(prog.workspaceWraps == 0);
    CHECK(prog.workspaceReuseEdges.empty());
    for (int i = 0; i < 16; ++i) {
      INFO("instance " << i);
      CHECK(product(prog, i).pool == 0);
      // Each parallel iteration is a stitch, which takes the pool from its start.
      CHECK(product(prog, i).poolOffset == (i % 8) * kProductBytes);
    }
  }

  SECTION("a pool of two iterations: the third starts over and waits for the first") {
    auto p = k->runnable(2, 1);
    REQUIRE(p.ok());
    const Program &prog = **p;
    CHECK(prog.workspacePoolBytes == 2 * kProductBytes);
    CHECK(prog.workspaceWraps == 2 * 3); // per stitch, iterations 2, 4 and 6
    for (int i = 0; i < 16; ++i) {
      INFO("instance " << i);
      CHECK(product(prog, i).poolOffset == (i % 2) * kProductBytes);
      const int j = i % 8; // the iteration inside its stitch
      CHECK(waitsFor(prog, i, i - 2) == (j >= 2));
      if (j >= 1) CHECK_FALSE(waitsFor(prog, i, i - 1));
    }
    CHECK_FALSE(prog.workspaceReuseEdges.empty());
    for (auto [call, pred] : prog.workspaceReuseEdges) {
      CHECK(pred < call);
      CHECK(prog.calls[call].instance == prog.calls[pred].instance + 2);
    }
  }

  SECTION("two iterations in flight: a pool per parallel slot") {
    auto p = k->runnable(ptoc::runtime::kDefaultStitchMaxNum, 2);
    REQUIRE(p.ok());
    const Program &prog = **p;
    CHECK(prog.workspacePools == 2);
    for (int i = 0; i < 16; ++i) CHECK(product(prog, i).pool == i / 8);
  }
}

TEST_CASE("assigning stitches anew takes out the reuse of the placement before",
          "[loops][workspace]") {
  auto s = ptoc::session::Session::create("tiny");
  REQUIRE(s.ok());
  auto fresh = s->compileText(kModule, "ws.pto");
  auto reused = s->compileText(kModule, "ws.pto");
  REQUIRE(fresh.ok());
  REQUIRE(reused.ok());
  // The kernel keeps its first expansion (here with reuse dependencies) and assigns
  // stitches to a copy of it for other options.
  REQUIRE(reused->runnable(2, 1).ok());
  auto again = reused->runnable(ptoc::runtime::kDefaultStitchMaxNum, 1);
  auto want = fresh->runnable(ptoc::runtime::kDefaultStitchMaxNum, 1);
  REQUIRE(again.ok());
  REQUIRE(want.ok());
  CHECK((*again)->workspaceReuseEdges.empty());
  REQUIRE((*again)->calls.size() == (*want)->calls.size());
  for (size_t c = 0; c < (*want)->calls.size(); ++c) {
    INFO("call " << c);
    CHECK((*again)->calls[c].preds == (*want)->calls[c].preds);
  }
  for (size_t t = 0; t < (*want)->tensors.size(); ++t) {
    CHECK((*again)->tensors[t].pool == (*want)->tensors[t].pool);
    CHECK((*again)->tensors[t].poolOffset == (*want)->tensors[t].poolOffset);
  }
}

TEST_CASE("a workspace reused while resident in L2 is not written back",
          "[loops][workspace][sim]") {
  // An L2 of six products: a stitch's eight products, with the blocks read and
  // written around them, overflow it unless the pool holds only two of them.
  ptoc::target::DeviceSpec device = preset("tiny");
  device.memory.l2Bytes = 6 * kProductBytes;
  ptoc::session::Session s(device);
  auto k = s.compileText(kModule, "ws.pto");
  INFO(k.status().message());
  REQUIRE(k.ok());
  std::vector<HostTensor> args{HostTensor(ptoc::ir::DType::F32, {2, 8, 64, 64}),
                               HostTensor(ptoc::ir::DType::F32, {2, 8, 64, 64})};
  for (int64_t i = 0; i < args[0].numElements(); ++i) args[0].set(i, double(i % 13) / 64.0);
  auto runWith = [&](int stitchMaxNum, std::vector<HostTensor> &out) {
    ptoc::session::RunOptions o;
    o.stitchMaxNum = stitchMaxNum;
    o.schedParallelism = 1;
    auto r = s.run(*k, args, out, o);
    INFO(r.status().message());
    REQUIRE(r.ok());
    return *std::move(r);
  };
  std::vector<HostTensor> big, small;
  auto rBig = runWith(ptoc::runtime::kDefaultStitchMaxNum, big);
  auto rSmall = runWith(2, small);
  // The results go to HBM either way (16 blocks of the product's size). With a pool
  // for the whole stitch most products are written back as they leave L2; reusing two
  // places, every product is overwritten while it is still resident.
  const int64_t resultBytes = 16 * kProductBytes;
  CHECK(rBig.record.hbmWriteBytes >= resultBytes + 8 * kProductBytes);
  CHECK(rSmall.record.hbmWriteBytes == resultBytes);
  // Numerics keep their own buffers: the same results.
  REQUIRE(big.size() == 1);
  REQUIRE(small.size() == 1);
  for (int64_t i = 0; i < big[0].numElements(); ++i) REQUIRE(big[0].get(i) == small[0].get(i));
  CHECK(big[0].get(7) != 0);
}
