// Unit tests for codegen: the local-buffer allocator (tight and ping-pong placement,
// write-after-read bookkeeping, in-place accumulation, capacity failures) and
// buildProgram over hand-written partitioned functions (leaf sharing, signatures,
// regions, execute-graph order, pipe programs, aliases and every error).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "llvm/Support/raw_ostream.h"

#include "ptoc/codegen/BufferAllocator.h"
#include "ptoc/codegen/Codegen.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Diagnostics.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/ir/Verifier.h"
#include "ptoc/passes/PassManager.h"
#include "ptoc/passes/Passes.h"
#include "ptoc/target/DeviceSpec.h"

using namespace ptoc;
using namespace ptoc::codegen;

namespace {

constexpr uint8_t kMte2 = 1u << static_cast<unsigned>(Pipe::Mte2);
constexpr uint8_t kVec = 1u << static_cast<unsigned>(Pipe::Vec);
constexpr uint8_t kMte3 = 1u << static_cast<unsigned>(Pipe::Mte3);

BufferValue value(int64_t bytes, int def, int lastUse, uint8_t writer, uint8_t readers,
                  int inPlaceOf = -1) {
  BufferValue v;
  v.bytes = bytes;
  v.def = def;
  v.lastUse = lastUse;
  v.writerPipes = writer;
  v.readerPipes = readers;
  v.inPlaceOf = inPlaceOf;
  return v;
}

/// Three tiles, each copied in (MTE2) and read once by a vector op: tile i is written
/// at point 2i and read at 2i+1.
std::vector<BufferValue> threeLoads() {
  return {value(1024, 0, 1, kMte2, kVec), value(1024, 2, 3, kMte2, kVec),
          value(1024, 4, 5, kMte2, kVec)};
}

} // namespace

TEST_CASE("tight placement reuses the most recently freed space", "[codegen][allocator]") {
  BufferAllocation a = allocateBuffer(threeLoads(), 8192, 32, AllocPolicy::Tight);
  REQUIRE(a.ok);
  CHECK(a.offsets == std::vector<int64_t>{0, 0, 0});
  CHECK(a.peakBytes == 1024);
  CHECK(a.overwrites[0].empty());
  CHECK(std::vector<int>(a.overwrites[1].begin(), a.overwrites[1].end()) == std::vector<int>{0});
  CHECK(std::vector<int>(a.overwrites[2].begin(), a.overwrites[2].end()) == std::vector<int>{1});
}

TEST_CASE("ping-pong placement alternates two slots, first in first out",
          "[codegen][allocator]") {
  BufferAllocation a =
      allocateBuffer(threeLoads(), 8192, 32, AllocPolicy::PingPong, /*budget=*/2048);
  REQUIRE(a.ok);
  // Tile 1 takes never-used space (no wait for tile 0's reader); tile 2 reuses tile
  // 0's slot, freed longest ago.
  CHECK(a.offsets == std::vector<int64_t>{0, 1024, 0});
  CHECK(a.peakBytes == 2048);
  CHECK(a.overwrites[1].empty());
  CHECK(std::vector<int>(a.overwrites[2].begin(), a.overwrites[2].end()) == std::vector<int>{0});
}

TEST_CASE("ping-pong reuses the least recently freed slot when out of budget",
          "[codegen][allocator]") {
  // Four loads within a 3-slot budget: the 4th goes where the 1st was.
  std::vector<BufferValue> v = threeLoads();
  v.push_back(value(1024, 6, 7, kMte2, kVec));
  BufferAllocation a = allocateBuffer(v, 8192, 32, AllocPolicy::PingPong, 3072);
  REQUIRE(a.ok);
  CHECK(a.offsets == std::vector<int64_t>{0, 1024, 2048, 0});
}

TEST_CASE("ping-pong grows past its budget only when nothing freed fits",
          "[codegen][allocator]") {
  // Three tiles live at once: the budget (2 slots) cannot hold them, so the third
  // grows the footprint instead of failing.
  std::vector<BufferValue> v = {value(1024, 0, 5, kMte2, kVec), value(1024, 1, 5, kMte2, kVec),
                                value(1024, 2, 5, kMte2, kVec)};
  BufferAllocation a = allocateBuffer(v, 8192, 32, AllocPolicy::PingPong, 2048);
  REQUIRE(a.ok);
  CHECK(a.offsets == std::vector<int64_t>{0, 1024, 2048});
  CHECK(a.peakBytes == 3072);
}

TEST_CASE("ping-pong prefers space last read on the writer's own pipe",
          "[codegen][allocator]") {
  // A vector result freed at point 2 (read by VEC) and a loaded tile freed at point 3
  // (read by VEC): a new VEC result reuses either without a cross-pipe wait, and takes
  // the best fit rather than growing.
  std::vector<BufferValue> v = {value(1024, 0, 2, kVec, kVec), value(2048, 1, 2, kVec, kMte3),
                                value(1024, 3, 4, kVec, kVec)};
  BufferAllocation a = allocateBuffer(v, 8192, 32, AllocPolicy::PingPong, 8192);
  REQUIRE(a.ok);
  // Value 1's space was read by MTE3 (another pipe); value 0's by VEC: reuse value 0.
  CHECK(a.offsets[2] == 0);
  CHECK(std::vector<int>(a.overwrites[2].begin(), a.overwrites[2].end()) == std::vector<int>{0});
}

TEST_CASE("an accumulating value takes over its acc's slot in place", "[codegen][allocator]") {
  // acc (point 0..2) is last read at point 2, where the new value is written.
  std::vector<BufferValue> v = {value(4096, 0, 2, kVec, kVec), value(4096, 2, 3, kVec, kMte3, 0)};
  for (AllocPolicy p : {AllocPolicy::Tight, AllocPolicy::PingPong}) {
    BufferAllocation a = allocateBuffer(v, 8192, 32, p, 8192);
    REQUIRE(a.ok);
    CHECK(a.offsets[1] == a.offsets[0]);
    // It overwrites the acc: its writer waits for the acc's other readers.
    CHECK(std::vector<int>(a.overwrites[1].begin(), a.overwrites[1].end()) == std::vector<int>{0});
    CHECK(a.peakBytes == 4096);
  }
  // Without the in-place link both must be live at point 2: disjoint.
  v[1].inPlaceOf = -1;
  BufferAllocation b = allocateBuffer(v, 8192, 32, AllocPolicy::Tight);
  REQUIRE(b.ok);
  CHECK(b.offsets[1] == 4096);
}

TEST_CASE("a value is never placed where a live value is", "[codegen][allocator]") {
  // Random-ish overlapping lifetimes: no two values that are live together overlap.
  std::vector<BufferValue> v;
  for (int i = 0; i < 40; ++i)
    v.push_back(value(32 * (1 + (i * 7) % 5), i, i + 1 + (i * 13) % 6, kMte2, kVec));
  for (AllocPolicy p : {AllocPolicy::Tight, AllocPolicy::PingPong}) {
    BufferAllocation a = allocateBuffer(v, 1 << 20, 32, p, 2048);
    REQUIRE(a.ok);
    for (size_t i = 0; i < v.size(); ++i) {
      CHECK(a.offsets[i] % 32 == 0);
      for (size_t j = i + 1; j < v.size(); ++j) {
        bool together = v[j].def <= v[i].lastUse; // j is written while i is live
        bool disjoint = a.offsets[i] + v[i].bytes <= a.offsets[j] ||
                        a.offsets[j] + v[j].bytes <= a.offsets[i];
        if (together) CHECK(disjoint);
      }
    }
  }
}

TEST_CASE("allocation fails when the live values exceed the capacity",
          "[codegen][allocator]") {
  std::vector<BufferValue> v = {value(4096, 0, 3, kMte2, kVec), value(4096, 1, 3, kMte2, kVec),
                                value(4096, 2, 3, kMte2, kVec)};
  BufferAllocation a = allocateBuffer(v, 10000, 32, AllocPolicy::Tight);
  CHECK_FALSE(a.ok);
  CHECK(a.failedValue == 2);
  CHECK(a.neededBytes == 12288);
}

TEST_CASE("sizes are rounded up to the alignment", "[codegen][allocator]") {
  std::vector<BufferValue> v = {value(4, 0, 2, kVec, kVec), value(4, 1, 2, kVec, kVec)};
  BufferAllocation a = allocateBuffer(v, 1024, 32, AllocPolicy::Tight);
  REQUIRE(a.ok);
  CHECK(a.offsets == std::vector<int64_t>{0, 32});
  CHECK(a.peakBytes == 64);
}

// ------------------------------------------------------------------ buildProgram

namespace {

struct Compiled {
  ir::Context ctx;
  std::unique_ptr<ir::Module> module;
  target::DeviceSpec device;
  absl::StatusOr<Program> program = absl::UnknownError("not built");

  explicit Compiled(const std::string &text, CodegenOptions options = {},
                    target::DeviceSpec dev = {}) {
    device = dev;
    module = ir::parseModule(text, "codegen.pto", ctx);
    REQUIRE(module);
    program = buildProgram(module->func(0), device, options);
  }
  const Program &get() {
    if (!program.ok()) FAIL(program.status().ToString());
    return *program;
  }
  std::string error() {
    REQUIRE_FALSE(program.ok());
    return std::string(program.status().message());
  }
  std::string text() {
    std::string s;
    llvm::raw_string_ostream os(s);
    printProgram(get(), os);
    return os.str();
  }
};

// Rows 0 and 1: 1x64 exp; row 2: 2x64 exp; row 3: 2x64 neg, but the table claims the
// same hash as row 2 (a hash collision codegen must not trust).
constexpr const char *kRows = R"(
func @rows(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  subgraph {copy_in_bytes = 256, core = "aiv", cycles = 10, group_size = 2, hash = "aaaa", hash_order = 0, id = 0}
  subgraph {copy_in_bytes = 256, core = "aiv", cycles = 10, group_size = 2, hash = "aaaa", hash_order = 0, id = 1}
  subgraph {copy_in_bytes = 512, core = "aiv", cycles = 10, group_size = 2, hash = "bbbb", hash_order = 1, id = 2}
  subgraph {copy_in_bytes = 512, core = "aiv", cycles = 10, group_size = 2, hash = "bbbb", hash_order = 1, id = 3}
  %y = gm_tensor : tensor<8x64xf32>
  %a0 = copy_in %x {offsets = [0, 0], sg = 0} : tile<1x64xf32, ub>
  %b0 = exp %a0 {sg = 0} : tile<1x64xf32, ub>
  %c0 = copy_out %b0, %y {offsets = [0, 0], sg = 0} : tile<1x64xf32, gm>
  %a1 = copy_in %x {offsets = [1, 0], sg = 1} : tile<1x64xf32, ub>
  %b1 = exp %a1 {sg = 1} : tile<1x64xf32, ub>
  %c1 = copy_out %b1, %y {offsets = [1, 0], sg = 1} : tile<1x64xf32, gm>
  %a2 = copy_in %x {offsets = [2, 0], sg = 2} : tile<2x64xf32, ub>
  %b2 = exp %a2 {sg = 2} : tile<2x64xf32, ub>
  %c2 = copy_out %b2, %y {offsets = [2, 0], sg = 2} : tile<2x64xf32, gm>
  %a3 = copy_in %x {offsets = [4, 0], sg = 3} : tile<2x64xf32, ub>
  %b3 = neg %a3 {sg = 3} : tile<2x64xf32, ub>
  %c3 = copy_out %b3, %y {offsets = [4, 0], sg = 3} : tile<2x64xf32, gm>
  return %y
}
)";

} // namespace

TEST_CASE("isomorphic subgraphs share a leaf, equal hashes do not suffice",
          "[codegen][program]") {
  Compiled c(kRows);
  const Program &p = c.get();
  REQUIRE(p.calls.size() == 4);
  REQUIRE(p.leaves.size() == 3);
  CHECK(p.calls[0].leaf == 0);
  CHECK(p.calls[1].leaf == 0);
  CHECK(p.calls[2].leaf == 1);
  CHECK(p.calls[3].leaf == 2); // same table hash as sg 2, different op
  CHECK(p.leaves[2].ops[1].code == ir::OpCode::Neg);
  CHECK(p.leaves[2].hash == "bbbb");
  CHECK(p.leaves[0].groupSize == 2);
  // Regions: the copy_in's source and the copy_out's destination at the tile offsets.
  REQUIRE(p.calls[3].regions.size() == 2);
  CHECK(p.calls[3].regions[0].tensor == 0);
  CHECK(p.calls[3].regions[0].offsets == llvm::SmallVector<int64_t, 4>{4, 0});
  CHECK(p.calls[3].regions[1].tensor == 1);
  // Tensors: the argument, then the workspace.
  REQUIRE(p.tensors.size() == 2);
  CHECK(p.tensors[0].name == "x");
  CHECK(p.tensors[0].kind == GmTensor::Kind::Argument);
  CHECK(p.tensors[1].name == "y");
  CHECK(p.results == std::vector<int>{1});
}

TEST_CASE("a vector leaf's pipe program and statistics", "[codegen][program]") {
  Compiled c(kRows);
  const Leaf &leaf = c.get().leaves[1]; // 2x64 f32: copy_in, exp, copy_out
  REQUIRE(leaf.instrs.size() == 3);
  CHECK(leaf.instrs[0].pipe == Pipe::Mte2);
  CHECK(leaf.instrs[0].bytes == 512);
  CHECK(leaf.instrs[0].region == 0);
  CHECK(leaf.instrs[1].pipe == Pipe::Vec);
  CHECK(leaf.instrs[1].cycles == leaf.ops[1].cycles);
  CHECK(leaf.instrs[1].cycles > 0);
  CHECK(leaf.instrs[1].deps == llvm::SmallVector<int, 4>{0});
  CHECK(leaf.instrs[2].pipe == Pipe::Mte3);
  CHECK(leaf.instrs[2].region == 1);
  CHECK(leaf.instrs[2].deps == llvm::SmallVector<int, 4>{1});
  CHECK(leaf.copyInBytes == 512);
  CHECK(leaf.copyOutBytes == 512);
  CHECK(leaf.vectorBytes == 512);
  CHECK(leaf.cycles == leaf.ops[0].cycles + leaf.ops[1].cycles + leaf.ops[2].cycles);
  CHECK(leaf.slots[0].space == ir::MemSpace::UB);
  CHECK(leaf.slots[2].space == ir::MemSpace::GM);
  // exp is the last reader of the copied-in tile and has its shape: computed in place.
  CHECK(leaf.slots[1].offset == leaf.slots[0].offset);
  CHECK(leaf.peakBytes[static_cast<unsigned>(ir::MemSpace::UB)] == 512);
}

TEST_CASE("calls are ordered topologically, ties by subgraph id", "[codegen][program]") {
  // sg 0 reads what sg 2 writes; sg 1 is independent.
  Compiled c(R"(
func @order(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  subgraph {copy_in_bytes = 256, core = "aiv", cycles = 10, group_size = 3, hash = "a", hash_order = 0, id = 0}
  subgraph {copy_in_bytes = 256, core = "aiv", cycles = 10, group_size = 3, hash = "a", hash_order = 0, id = 1}
  subgraph {copy_in_bytes = 256, core = "aiv", cycles = 10, group_size = 3, hash = "a", hash_order = 0, id = 2}
  %t = gm_tensor : tensor<4x64xf32>
  %y = gm_tensor : tensor<4x64xf32>
  %a2 = copy_in %x {offsets = [0, 0], sg = 2} : tile<1x64xf32, ub>
  %b2 = exp %a2 {sg = 2} : tile<1x64xf32, ub>
  %c2 = copy_out %b2, %t {offsets = [0, 0], sg = 2} : tile<1x64xf32, gm>
  %a0 = copy_in %t, %c2 {offsets = [0, 0], sg = 0} : tile<1x64xf32, ub>
  %b0 = exp %a0 {sg = 0} : tile<1x64xf32, ub>
  %c0 = copy_out %b0, %y {offsets = [0, 0], sg = 0} : tile<1x64xf32, gm>
  %a1 = copy_in %x {offsets = [1, 0], sg = 1} : tile<1x64xf32, ub>
  %b1 = exp %a1 {sg = 1} : tile<1x64xf32, ub>
  %c1 = copy_out %b1, %y {offsets = [1, 0], sg = 1} : tile<1x64xf32, gm>
  return %y
}
)");
  const Program &p = c.get();
  REQUIRE(p.calls.size() == 3);
  CHECK(p.calls[0].subgraph == 1);
  CHECK(p.calls[1].subgraph == 2);
  CHECK(p.calls[2].subgraph == 0);
  CHECK(p.calls[2].preds == std::vector<int>{1});
  CHECK(p.calls[0].preds.empty());
  // One leaf for all three (the cross-subgraph token is ordering, not code).
  CHECK(p.leaves.size() == 1);
  CHECK(p.successors()[1] == std::vector<int>{2});
}

TEST_CASE("a cycle between subgraphs is an internal error naming them", "[codegen][program]") {
  Compiled c(R"(
func @cycle(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  subgraph {copy_in_bytes = 256, core = "aiv", cycles = 10, group_size = 1, hash = "a", hash_order = 0, id = 0}
  subgraph {copy_in_bytes = 256, core = "aiv", cycles = 10, group_size = 1, hash = "b", hash_order = 1, id = 1}
  %t = gm_tensor : tensor<4x64xf32>
  %u = gm_tensor : tensor<4x64xf32>
  %a0 = copy_in %x {offsets = [0, 0], sg = 0} : tile<1x64xf32, ub>
  %c0 = copy_out %a0, %t {offsets = [0, 0], sg = 0} : tile<1x64xf32, gm>
  %a1 = copy_in %t, %c0 {offsets = [0, 0], sg = 1} : tile<1x64xf32, ub>
  %c1 = copy_out %a1, %t {offsets = [1, 0], sg = 1} : tile<1x64xf32, gm>
  %a2 = copy_in %t, %c1 {offsets = [1, 0], sg = 0} : tile<1x64xf32, ub>
  %c2 = copy_out %a2, %u {offsets = [2, 0], sg = 0} : tile<1x64xf32, gm>
  return %t
}
)");
  std::string e = c.error();
  CHECK(c.program.status().code() == absl::StatusCode::kInternal);
  // Producer first: sg 1 writes what sg 0 reads, and sg 0 what sg 1 reads.
  CHECK_THAT(e, Catch::Contains("(sg 1 -> sg 0 -> sg 1)"));
}

TEST_CASE("aliases resolve to windows of their base tensor", "[codegen][program]") {
  Compiled c(R"(
func @alias(%x: tensor<8x64xf32>) -> tensor<4x32xf32> {
  subgraph {copy_in_bytes = 512, core = "aiv", cycles = 10, group_size = 1, hash = "a", hash_order = 0, id = 0}
  %n = gm_tensor : tensor<4x32xf32>
  %v = view %x {offsets = [3, 32]} : tensor<4x32xf32>
  %w = view %v {offsets = [1, 8]} : tensor<2x16xf32>
  %r = reshape %x : tensor<16x32xf32>
  %r2 = view %r {offsets = [2, 0]} : tensor<4x32xf32>
  %0 = copy_in %r2 {offsets = [0, 0], sg = 0} : tile<4x32xf32, ub>
  %1 = copy_out %0, %n {offsets = [0, 0], sg = 0} : tile<4x32xf32, gm>
  return %n
}
)");
  const Program &p = c.get();
  REQUIRE(p.tensors.size() == 6);
  const GmTensor &v = p.tensors[2], &w = p.tensors[3], &r = p.tensors[4], &r2 = p.tensors[5];
  CHECK(v.name == "v");
  CHECK(v.kind == GmTensor::Kind::Alias);
  CHECK(v.base == 0);
  CHECK(v.baseOffset == 3 * 64 + 32);
  CHECK(v.strides == llvm::SmallVector<int64_t, 4>{64, 1});
  CHECK(w.base == 0);
  CHECK(w.baseOffset == 4 * 64 + 40);
  CHECK(r.base == 0);
  CHECK(r.baseOffset == 0);
  CHECK(r.strides == llvm::SmallVector<int64_t, 4>{32, 1});
  CHECK(r2.baseOffset == 64);
  CHECK(p.calls[0].regions[0].tensor == 5);
}

TEST_CASE("a function with nothing to run compiles to no calls", "[codegen][program]") {
  Compiled c(R"(
func @nested(%x: tensor<8x64xf32>) -> tensor<2x16xf32> {
  %v = view %x {offsets = [1, 32]} : tensor<4x32xf32>
  %w = view %v {offsets = [1, 8]} : tensor<2x16xf32>
  return %w
}
)");
  const Program &p = c.get();
  CHECK(p.calls.empty());
  CHECK(p.leaves.empty());
  REQUIRE(p.tensors.size() == 3);
  CHECK(p.results == std::vector<int>{2});
  CHECK(p.tensors[2].base == 0);
  CHECK(p.tensors[2].baseOffset == 2 * 64 + 40);
  CHECK_THAT(c.text(), Catch::Contains(
                           "tensor %w : tensor<2x16xf32> alias of %x offset 168 strides [64, 1]\n"
                           "arguments [%x]\nresults [%w]\nexecute 0 calls\n"));
}

TEST_CASE("reshaping a non-contiguous view is an error", "[codegen][program]") {
  Compiled c(R"(
func @bad(%x: tensor<8x64xf32>) -> tensor<128xf32> {
  %v = view %x {offsets = [0, 32]} : tensor<4x32xf32>
  %r = reshape %v : tensor<128xf32>
  return %r
}
)");
  std::string e = c.error();
  CHECK_THAT(e, Catch::Contains("non-contiguous"));
  CHECK_THAT(e, Catch::Contains("strides [64, 1]"));
}

TEST_CASE("a function that is not partitioned is refused with the fix",
          "[codegen][program]") {
  Compiled c(R"(
func @f(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = exp %x {vec_tile = [1, 64]} : tensor<8x64xf32>
  return %y
}
)");
  std::string e = c.error();
  CHECK_THAT(e, Catch::Contains("tensor level"));
  CHECK_THAT(e, Catch::Contains("--pipeline=default"));
}

namespace {

// One cube subgraph: C[128x256] = A[128x512] B[512x256] in two K steps of 256; L0
// blocks m 128, k 64, n 128: 1 x 4 x 2 = 8 blocks per step.
constexpr const char *kMatmul = R"(
func @mm(%a: tensor<128x512xf16>, %b: tensor<512x256xf16>) -> tensor<128x256xf32> {
  subgraph {copy_in_bytes = 1, core = "aic", cycles = 10, group_size = 1, hash = "m", hash_order = 0, id = 0}
  %c = gm_tensor : tensor<128x256xf32>
  %0 = copy_in %a {offsets = [0, 0], sg = 0} : tile<128x256xf16, l1>
  %1 = copy_in %b {offsets = [0, 0], sg = 0} : tile<256x256xf16, l1>
  %2 = matmul %0, %1 {cube_tile = {m = [128, 128], k = [64, 256], n = [128, 256]}, sg = 0} : tile<128x256xf32, l0c>
  %3 = copy_in %a {offsets = [0, 256], sg = 0} : tile<128x256xf16, l1>
  %4 = copy_in %b {offsets = [256, 0], sg = 0} : tile<256x256xf16, l1>
  %5 = matmul %3, %4, %2 {cube_tile = {m = [128, 128], k = [64, 256], n = [128, 256]}, sg = 0} : tile<128x256xf32, l0c>
  %6 = copy_out %5, %c {offsets = [0, 0], sg = 0} : tile<128x256xf32, gm>
  return %c
}
)";

int countPipe(const Leaf &leaf, Pipe p) {
  int n = 0;
  for (const PipeInstr &in : leaf.instrs) n += in.pipe == p;
  return n;
}

} // namespace

TEST_CASE("a cube leaf: L0 blocks, MTE1 and CUBE, in-place accumulation",
          "[codegen][program]") {
  Compiled c(kMatmul);
  const Leaf &leaf = c.get().leaves.at(0);
  CHECK(leaf.core == target::CoreKind::AIC);
  CHECK(countPipe(leaf, Pipe::Mte2) == 4);
  CHECK(countPipe(leaf, Pipe::Mte1) == 2 * 2 * 8); // A and B per block, 8 blocks, 2 steps
  CHECK(countPipe(leaf, Pipe::Cube) == 2 * 8);
  CHECK(countPipe(leaf, Pipe::Fixpipe) == 1);
  CHECK(leaf.flops == 2LL * 128 * 256 * 512);
  // The CUBE instrs of one matmul add up to the op's cost-model cycles.
  int64_t cube = 0;
  for (const PipeInstr &in : leaf.instrs)
    if (in.pipe == Pipe::Cube && in.op == 2) cube += in.cycles;
  CHECK(cube == leaf.ops[2].cycles);
  // MTE1 moves every A and B element of the step once per block that needs it.
  int64_t mte1 = 0;
  for (const PipeInstr &in : leaf.instrs)
    if (in.pipe == Pipe::Mte1 && in.op == 2) mte1 += in.bytes;
  CHECK(mte1 == 2 * (128 * 256 * 2) + 256 * 256 * 2);
  // Each CUBE waits for its own two MTE1 loads.
  for (size_t i = 0; i < leaf.instrs.size(); ++i)
    if (leaf.instrs[i].pipe == Pipe::Cube) {
      CHECK(std::count(leaf.instrs[i].deps.begin(), leaf.instrs[i].deps.end(), int(i) - 1) == 1);
      CHECK(std::count(leaf.instrs[i].deps.begin(), leaf.instrs[i].deps.end(), int(i) - 2) == 1);
    }
  // The second step accumulates in place into the first one's L0C slot.
  CHECK(leaf.slots[5].space == ir::MemSpace::L0C);
  CHECK(leaf.slots[5].offset == leaf.slots[2].offset);
  CHECK(leaf.peakBytes[static_cast<unsigned>(ir::MemSpace::L0C)] == 128 * 256 * 4);
  // Two ping-pong block slots in L0A (128x64 f16) and L0B (64x128 f16).
  CHECK(leaf.peakBytes[static_cast<unsigned>(ir::MemSpace::L0A)] == 2 * 128 * 64 * 2);
  CHECK(leaf.peakBytes[static_cast<unsigned>(ir::MemSpace::L0B)] == 2 * 64 * 128 * 2);
  CHECK(leaf.doubleBuffered);
  // FIXPIPE waits for the last CUBE.
  const PipeInstr &fix = leaf.instrs.back();
  CHECK(fix.pipe == Pipe::Fixpipe);
  CHECK(fix.bytes == 128 * 256 * 4);
  CHECK(leaf.instrs[fix.deps.back()].pipe == Pipe::Cube);
}

TEST_CASE("without double buffering L0 blocks share one slot and serialise",
          "[codegen][program]") {
  CodegenOptions single;
  single.doubleBuffer = false;
  Compiled c(kMatmul, single);
  const Leaf &leaf = c.get().leaves.at(0);
  CHECK_FALSE(leaf.doubleBuffered);
  CHECK(leaf.peakBytes[static_cast<unsigned>(ir::MemSpace::L0A)] == 128 * 64 * 2);
  // Every MTE1 load after the first waits for the CUBE that read the slot before.
  int lastCube = -1;
  for (size_t i = 0; i < leaf.instrs.size(); ++i) {
    const PipeInstr &in = leaf.instrs[i];
    if (in.pipe == Pipe::Cube) lastCube = static_cast<int>(i);
    if (in.pipe == Pipe::Mte1 && lastCube >= 0)
      CHECK(std::count(in.deps.begin(), in.deps.end(), lastCube) == 1);
  }
}

TEST_CASE("local tiles that do not fit the buffer name the subgraph and the fix",
          "[codegen][program]") {
  target::DeviceSpec small;
  small.buffers.ub = 384; // the 1x64 f32 rows need 256 bytes; a 2x64 tile needs 512
  Compiled c(kRows, {}, small);
  std::string e = c.error();
  CHECK_THAT(e, Catch::Contains("subgraph 2 (hash order 1)"));
  CHECK_THAT(e, Catch::Contains("512 bytes of ub"));
  CHECK_THAT(e, Catch::Contains("the device has 384"));
  CHECK_THAT(e, Catch::Contains("vec_nbuffer_setting for group func0_1"));
}

TEST_CASE("a local tile used across subgraphs is an error", "[codegen][program]") {
  Compiled c(R"(
func @cross(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  subgraph {copy_in_bytes = 256, core = "aiv", cycles = 10, group_size = 1, hash = "a", hash_order = 0, id = 0}
  subgraph {copy_in_bytes = 0, core = "aiv", cycles = 10, group_size = 1, hash = "b", hash_order = 1, id = 1}
  %y = gm_tensor : tensor<4x64xf32>
  %a = copy_in %x {offsets = [0, 0], sg = 0} : tile<1x64xf32, ub>
  %b = exp %a {sg = 1} : tile<1x64xf32, ub>
  %c = copy_out %b, %y {offsets = [0, 0], sg = 1} : tile<1x64xf32, gm>
  return %y
}
)");
  std::string e = c.error();
  CHECK_THAT(e, Catch::Contains("'exp' op at codegen.pto:"));
  CHECK_THAT(e, Catch::Contains("in subgraph 1: operand 0 is a local tile of subgraph 0"));
}

TEST_CASE("the text form lists tensors, leaves, instructions and calls",
          "[codegen][program]") {
  Compiled c(kRows);
  std::string t = c.text();
  CHECK_THAT(t, Catch::StartsWith("program @rows\ntensor %x : tensor<8x64xf32> argument 0\n"));
  CHECK_THAT(t, Catch::Contains("leaf 0: core aiv, hash aaaa, hash_order 0, group_size 2"));
  CHECK_THAT(t, Catch::Contains("  #1 = exp #0 : tile<1x64xf32, ub> @ub["));
  CHECK_THAT(t, Catch::Contains("  i0 MTE2 #0 bytes 256 r0 -> @ub[0, 256) deps []\n"));
  CHECK_THAT(t, Catch::Contains("call 3 = leaf 2 sg 3 regions [%x[4, 0], %y[4, 0]] preds []\n"));
  // Deterministic.
  CHECK(t == Compiled(kRows).text());
}

// ------------------------------------------------------------------ leaf order

TEST_CASE("a merged subgraph runs member by member, interleavings share a leaf",
          "[codegen][program][schedule]") {
  // sg 0 lists its two rows loop by loop (as expand-tiles emits them), sg 1 row by
  // row: the same leaf order, so one leaf; the regions follow that order.
  Compiled c(R"(
func @two(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  subgraph {copy_in_bytes = 512, core = "aiv", cycles = 10, group_size = 2, hash = "a", hash_order = 0, id = 0}
  subgraph {copy_in_bytes = 512, core = "aiv", cycles = 10, group_size = 2, hash = "a", hash_order = 0, id = 1}
  %y = gm_tensor : tensor<4x64xf32>
  %a0 = copy_in %x {offsets = [0, 0], sg = 0} : tile<1x64xf32, ub>
  %a1 = copy_in %x {offsets = [1, 0], sg = 0} : tile<1x64xf32, ub>
  %e0 = exp %a0 {sg = 0} : tile<1x64xf32, ub>
  %e1 = exp %a1 {sg = 0} : tile<1x64xf32, ub>
  %w0 = copy_out %e0, %y {offsets = [0, 0], sg = 0} : tile<1x64xf32, gm>
  %w1 = copy_out %e1, %y {offsets = [1, 0], sg = 0} : tile<1x64xf32, gm>
  %a2 = copy_in %x {offsets = [2, 0], sg = 1} : tile<1x64xf32, ub>
  %e2 = exp %a2 {sg = 1} : tile<1x64xf32, ub>
  %w2 = copy_out %e2, %y {offsets = [2, 0], sg = 1} : tile<1x64xf32, gm>
  %a3 = copy_in %x {offsets = [3, 0], sg = 1} : tile<1x64xf32, ub>
  %e3 = exp %a3 {sg = 1} : tile<1x64xf32, ub>
  %w3 = copy_out %e3, %y {offsets = [3, 0], sg = 1} : tile<1x64xf32, gm>
  return %y
}
)");
  const Program &p = c.get();
  REQUIRE(p.leaves.size() == 1);
  const Leaf &leaf = p.leaves[0];
  std::vector<ir::OpCode> codes;
  for (const LeafOp &op : leaf.ops) codes.push_back(op.code);
  using ir::OpCode;
  CHECK(codes == std::vector<OpCode>{OpCode::CopyIn, OpCode::Exp, OpCode::CopyOut,
                                     OpCode::CopyIn, OpCode::Exp, OpCode::CopyOut});
  CHECK(leaf.ops[1].operands == llvm::SmallVector<int, 3>{0});
  CHECK(leaf.ops[2].region == 1);
  CHECK(leaf.ops[3].region == 2);
  REQUIRE(p.calls.size() == 2);
  for (int call = 0; call < 2; ++call) {
    const std::vector<Region> &r = p.calls[call].regions;
    REQUIRE(r.size() == 4);
    for (int row = 0; row < 2; ++row) {
      int64_t want = 2 * call + row;
      CHECK(r[2 * row].tensor == 0); // x, then y, per row
      CHECK(r[2 * row].offsets[0] == want);
      CHECK(r[2 * row + 1].tensor == 1);
      CHECK(r[2 * row + 1].offsets[0] == want);
    }
  }
}

namespace {

/// Runs `pipeline` over a tensor-level function on `device` and compiles it.
struct Piped {
  ir::Context ctx;
  std::unique_ptr<ir::Module> module;
  absl::StatusOr<Program> program = absl::UnknownError("not built");
  Piped(const std::string &text, const target::DeviceSpec &device, const std::string &pipeline,
        CodegenOptions options = {}) {
    module = ir::parseModule(text, "codegen.pto", ctx);
    REQUIRE(module);
    REQUIRE(succeeded(ir::verify(*module, ir::VerifyOptions{&device})));
    passes::PassRegistry registry;
    passes::registerAllPasses(registry);
    passes::PassManager pm(device);
    REQUIRE(pm.addPipeline(pipeline, registry).ok());
    REQUIRE(succeeded(pm.run(*module)));
    program = buildProgram(module->func(0), device, options);
  }
};

std::string softmaxText(const std::string &shape, const std::string &rowShape,
                        const std::string &dtype, const std::string &tile) {
  std::string t = "tensor<" + shape + "x" + dtype + ">", r = "tensor<" + rowShape + "x" + dtype + ">";
  std::string vt = "vec_tile = " + tile;
  return "func @softmax(%x: " + t + ") -> " + t + " {\n" +
         "  %m = amax %x {axes = [1], keepdim = true, " + vt + "} : " + r + "\n" +
         "  %d = sub %x, %m {" + vt + "} : " + t + "\n" +
         "  %e = exp %d {" + vt + "} : " + t + "\n" +
         "  %s = sum %e {axes = [1], keepdim = true, " + vt + "} : " + r + "\n" +
         "  %y = div %e, %s {" + vt + "} : " + t + "\n  return %y\n}\n";
}

} // namespace

TEST_CASE("double buffering a merged leaf: copy_ins wait only for copy_outs",
          "[codegen][program][schedule]") {
  // 64 rows of 1x1024 f32 on tiny (4 AIV cores): the default pipeline merges 16
  // rows into each subgraph. One row needs 4 KiB + its 32-byte row max or sum.
  target::DeviceSpec tiny = *target::DeviceSpec::preset("tiny");
  std::string text = softmaxText("64x1024", "64x1", "f32", "[1, 1024]");
  Piped db(text, tiny, passes::defaultPipelineText().str());
  REQUIRE(db.program.ok());
  const Leaf &leaf = db.program->leaves[0];
  CHECK(leaf.ops.size() == 16 * 7);
  CHECK(leaf.doubleBuffered);
  CHECK(leaf.peakBytes[static_cast<unsigned>(ir::MemSpace::UB)] == 2 * 4096 + 32);
  // The next row's copy_in overlaps this row's compute: no copy_in waits for a VEC
  // instruction (only for the copy_out of the row whose slot it takes).
  int copyIns = 0;
  for (const PipeInstr &in : leaf.instrs) {
    if (in.pipe != Pipe::Mte2) continue;
    ++copyIns;
    for (int d : in.deps) CHECK(leaf.instrs[d].pipe == Pipe::Mte3);
  }
  CHECK(copyIns == 16);

  CodegenOptions single;
  single.doubleBuffer = false;
  Piped one(text, tiny, passes::defaultPipelineText().str(), single);
  REQUIRE(one.program.ok());
  CHECK(one.program->leaves[0].peakBytes[static_cast<unsigned>(ir::MemSpace::UB)] == 4096 + 32);
}

TEST_CASE("a one-member leaf fits whenever every op fits the verifier's per-op rule",
          "[codegen][program][schedule]") {
  // Functions whose tiles are the largest the verifier accepts (the next size up is
  // refused), compiled without nbuffer merges: each subgraph is one chain, whose
  // in-place placement needs no more than its largest op's operands and result.
  struct Limit {
    const char *name;
    const char *device;
    std::string text, tooBig; ///< at the limit; one size up
  };
  auto binary = [](const std::string &tile) {
    return "func @products(%x: tensor<64x4096xf32>, %y: tensor<64x4096xf32>) -> "
           "tensor<64x4096xf32> {\n"
           "  %t = add %x, %y {vec_tile = " + tile + "} : tensor<64x4096xf32>\n"
           "  %u = mul %t, %y {vec_tile = " + tile + "} : tensor<64x4096xf32>\n"
           "  %v = sub %u, %x {vec_tile = " + tile + "} : tensor<64x4096xf32>\n"
           "  return %v\n}\n";
  };
  auto unary = [](const std::string &tile) {
    return "func @chain(%x: tensor<64x1024xf32>) -> tensor<64x1024xf32> {\n"
           "  %a = exp %x {vec_tile = " + tile + "} : tensor<64x1024xf32>\n"
           "  %b = neg %a {vec_tile = " + tile + "} : tensor<64x1024xf32>\n"
           "  %c = abs %b {vec_tile = " + tile + "} : tensor<64x1024xf32>\n"
           "  return %c\n}\n";
  };
  std::vector<Limit> limits = {
      // sub/div: x (64 KiB), the row max (counted as a full tile), result = 192 KiB.
      {"softmax 4x4096 f32", "a2", softmaxText("64x4096", "64x1", "f32", "[4, 4096]"),
       softmaxText("64x4096", "64x1", "f32", "[8, 4096]")},
      {"softmax 8x4096 f16", "a2", softmaxText("64x4096", "64x1", "f16", "[8, 4096]"),
       softmaxText("64x4096", "64x1", "f16", "[16, 4096]")},
      // Three 64 KiB tiles per binary op; x and y stay live across ops.
      {"binary chain 4x4096 f32", "a2", binary("[4, 4096]"), binary("[8, 4096]")},
      // Two 16 KiB tiles per unary op = tiny's 32 KiB.
      {"unary chain 4x1024 f32", "tiny", unary("[4, 1024]"), unary("[8, 1024]")},
  };
  const std::string noMerge = "canonicalize,cse,dce,expand-tiles,partition";
  for (const Limit &l : limits) {
    INFO(l.name << " on " << l.device);
    target::DeviceSpec dev = *target::DeviceSpec::preset(l.device);
    {
      ir::Context ctx;
      std::unique_ptr<ir::Module> m = ir::parseModule(l.tooBig, "big.pto", ctx);
      REQUIRE(m);
      ir::DiagnosticCollector quiet(ctx.diag());
      CHECK(failed(ir::verify(*m, ir::VerifyOptions{&dev})));
    }
    for (bool doubleBuffer : {true, false}) {
      CodegenOptions options;
      options.doubleBuffer = doubleBuffer;
      Piped p(l.text, dev, noMerge, options);
      INFO("doubleBuffer " << doubleBuffer << ": " << p.program.status().message());
      REQUIRE(p.program.ok());
      for (const Leaf &leaf : p.program->leaves)
        CHECK(leaf.peakBytes[static_cast<unsigned>(ir::MemSpace::UB)] <= dev.buffers.ub);
    }
  }
}
