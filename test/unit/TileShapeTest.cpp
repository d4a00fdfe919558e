// Unit tests for tile shapes: the cube_tile attribute and the vec/cube tile rules.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "ptoc/ir/Context.h"
#include "ptoc/ir/TileShape.h"
#include "ptoc/target/DeviceSpec.h"

using namespace ptoc::ir;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using ptoc::target::DeviceSpec;

namespace {

DeviceSpec presetOrDie(const char *name) {
  absl::StatusOr<DeviceSpec> d = DeviceSpec::preset(name);
  REQUIRE(d.ok());
  return *d;
}

CubeTile cube(std::array<int64_t, 2> m, std::array<int64_t, 2> k, std::array<int64_t, 2> n) {
  CubeTile t;
  t.m = m;
  t.k = k;
  t.n = n;
  return t;
}

} // namespace

TEST_CASE("cube_tile attribute round-trips", "[tiles]") {
  Context ctx;
  CubeTile t = cube({128, 128}, {64, 256}, {256, 256});
  Attribute a = t.toAttr(ctx);
  REQUIRE(a.isDict());
  CHECK(a.str() == "{m = [128, 128], k = [64, 256], n = [256, 256]}");
  std::optional<CubeTile> back = CubeTile::fromAttr(a);
  REQUIRE(back);
  CHECK(*back == t);
  CHECK(t.toAttr(ctx) == a); // uniqued

  // Key order does not matter when reading.
  Attribute reordered = ctx.dictAttr({{ctx.id("n"), ctx.intArrayAttr({256, 256})},
                                      {ctx.id("k"), ctx.intArrayAttr({64, 256})},
                                      {ctx.id("m"), ctx.intArrayAttr({128, 128})}},
                                     /*sortByName=*/false);
  REQUIRE(CubeTile::fromAttr(reordered));
  CHECK(*CubeTile::fromAttr(reordered) == t);
}

TEST_CASE("malformed cube_tile attributes are rejected", "[tiles]") {
  Context ctx;
  Attribute pair = ctx.intArrayAttr({16, 16});
  CHECK_FALSE(CubeTile::fromAttr(Attribute()));
  CHECK_FALSE(CubeTile::fromAttr(pair));
  CHECK_FALSE(CubeTile::fromAttr(ctx.emptyDict()));
  // Missing n.
  CHECK_FALSE(CubeTile::fromAttr(ctx.dictAttr({{ctx.id("m"), pair}, {ctx.id("k"), pair}}, false)));
  // A size list of the wrong length.
  CHECK_FALSE(CubeTile::fromAttr(ctx.dictAttr(
      {{ctx.id("m"), pair}, {ctx.id("k"), ctx.intArrayAttr({16})}, {ctx.id("n"), pair}}, false)));
  // Not integers.
  CHECK_FALSE(CubeTile::fromAttr(ctx.dictAttr(
      {{ctx.id("m"), pair}, {ctx.id("k"), ctx.stringAttr("x")}, {ctx.id("n"), pair}}, false)));
  // An unknown key instead of n.
  CHECK_FALSE(CubeTile::fromAttr(
      ctx.dictAttr({{ctx.id("m"), pair}, {ctx.id("k"), pair}, {ctx.id("x"), pair}}, false)));
  // An extra key.
  CHECK_FALSE(CubeTile::fromAttr(ctx.dictAttr(
      {{ctx.id("m"), pair}, {ctx.id("k"), pair}, {ctx.id("n"), pair}, {ctx.id("x"), pair}},
      false)));
}

TEST_CASE("a vec_tile of another rank adapts to the op: its trailing sizes", "[tiles]") {
  using V = llvm::SmallVector<int64_t, 4>;
  CHECK(adaptVecTile({8, 64}, {4, 64}) == V{8, 64});
  CHECK(adaptVecTile({8, 64}, {1, 4, 64}) == V{1, 8, 64});
  CHECK(adaptVecTile({64}, {1, 1, 64}) == V{1, 1, 64});
  CHECK_FALSE(adaptVecTile({8, 64}, {2, 4, 64}));
  // A longer tile gives its trailing sizes: the row x[i] of a 2-D x.
  CHECK(adaptVecTile({8, 64}, {64}) == V{64});
  CHECK(adaptVecTile({8, 64}, {}) == V{});
  // The adapted tile is checked like any other: UB holds 2 x 8x64 f32.
  CHECK(checkVecTile({8, 64}, {1, 4, 64}, 4, 4, 2, nullptr) == "");
}

TEST_CASE("copies through UB hold one tile per step", "[tiles]") {
  CHECK(vecTileBuffers(OpCode::Concat, 257, 1) == 1);
  CHECK(vecTileBuffers(OpCode::Assemble, 2, 1) == 1);
  CHECK(vecTileBuffers(OpCode::Add, 2, 1) == 3);
  CHECK(vecTileBuffers(OpCode::Exp, 1, 1) == 2);
}

TEST_CASE("vec_tile rank and positivity", "[tiles]") {
  CHECK(checkVecTile({64}, {64, 512}, 4, 4, 2, nullptr) ==
        "vec_tile has rank 1 but the op iterates over a rank-2 shape 64x512 whose leading "
        "dimensions are not all 1 (a shorter vec_tile applies to the trailing dimensions only "
        "when the others are 1); give set_vec_tile_shapes one size per dimension");
  CHECK(checkVecTile({64, 0}, {64, 512}, 4, 4, 2, nullptr) ==
        "vec_tile 64x0 has size 0 in dimension 1; every size must be positive");
  CHECK_THAT(checkVecTile({-8, 64}, {64, 512}, 4, 4, 2, nullptr),
             Contains("has size -8 in dimension 0"));
  CHECK(checkVecTile({64, 512}, {64, 512}, 4, 4, 2, nullptr) == "");
}

TEST_CASE("vec_tile last dimension alignment (a copy's rule)", "[tiles]") {
  CHECK(checkVecTile({8, 100}, {64, 512}, 4, 4, 2, nullptr) ==
        "vec_tile last dimension 100 x 4 bytes = 400 bytes is not a multiple of 32 bytes (a "
        "copy through UB moves whole blocks); use 96 or 104");
  CHECK(checkVecTile({8, 104}, {64, 512}, 4, 4, 2, nullptr) == "");
  // Below one block only the size above is proposed.
  CHECK_THAT(checkVecTile({8, 3}, {64, 512}, 4, 4, 2, nullptr), EndsWith("; use 8"));
  // The smallest element size decides: 8 x 2 bytes is not a block though 8 x 4 is.
  CHECK_THAT(checkVecTile({8, 8}, {64, 512}, 2, 4, 2, nullptr),
             Contains("8 x 2 bytes = 16 bytes is not a multiple of 32 bytes"));
  CHECK(checkVecTile({8, 16}, {64, 512}, 2, 4, 2, nullptr) == "");
  // int8 needs 32 elements.
  CHECK_THAT(checkVecTile({1, 16}, {64, 512}, 1, 1, 2, nullptr), Contains("use 32"));
  CHECK(checkVecTile({1, 32}, {64, 512}, 1, 1, 2, nullptr) == "");
  // The device's block size is used when there is a device.
  DeviceSpec wide;
  wide.buffers.blockBytes = 64;
  CHECK_THAT(checkVecTile({8, 8}, {64, 512}, 4, 4, 2, &wide),
             Contains("8 x 4 bytes = 32 bytes is not a multiple of 64 bytes"));
  CHECK(checkVecTile({8, 16}, {64, 512}, 4, 4, 2, &wide) == "");
}

TEST_CASE("only copies through UB need aligned rows", "[tiles]") {
  // PyPTO checks the row rule for its copy ops only (assemble, register copies).
  CHECK(vecTileNeedsAlignedRows(OpCode::Assemble));
  CHECK(vecTileNeedsAlignedRows(OpCode::Concat));
  CHECK_FALSE(vecTileNeedsAlignedRows(OpCode::Cast));
  CHECK_FALSE(vecTileNeedsAlignedRows(OpCode::Exp));
  CHECK_FALSE(vecTileNeedsAlignedRows(OpCode::Transpose));
  // PyPTO's transform example: an fp32 -> fp16 cast of a 2-element tensor with
  // set_vec_tile_shapes(8): 8 fp16 elements are 16 bytes, half a block.
  CHECK(checkVecTile({8}, {2}, 2, 4, 2, nullptr, /*alignedRows=*/false) == "");
  CHECK_THAT(checkVecTile({8}, {2}, 2, 4, 2, nullptr, /*alignedRows=*/true),
             Contains("8 x 2 bytes = 16 bytes is not a multiple of 32 bytes (a copy through UB "
                      "moves whole blocks); use 16"));
  // Rank and positivity still apply.
  CHECK_THAT(checkVecTile({8, 0}, {2, 8}, 2, 4, 2, nullptr, false), Contains("every size"));
}

TEST_CASE("short rows are padded to whole blocks in the UB count", "[tiles]") {
  DeviceSpec tiny = presetOrDie("tiny"); // UB 32768 bytes, 32-byte blocks
  // 512 rows of 8 fp16 (16 bytes) take 512 blocks per buffer: 2 x 16384 bytes fits.
  CHECK(checkVecTile({512, 8}, {1024, 8}, 2, 2, 2, &tiny, false) == "");
  // 1024 such rows do not: unpadded they would be 2 x 16384 bytes.
  CHECK(checkVecTile({1024, 8}, {1024, 8}, 2, 2, 2, &tiny, false) ==
        "vec_tile 1024x8 needs 2 buffers x 32768 bytes = 65536 bytes of UB but the device "
        "has 32768; try 512x16");
  // A whole-shape tile of short rows is split like any other.
  VecTileFootprint f;
  f.minElemSize = f.maxElemSize = 2;
  f.buffers = 2;
  f.alignedRows = false;
  WholeTileSplit split = splitWholeVecTile({1024, 8}, {1024, 8}, {}, f, tiny);
  CHECK(split.kind == WholeTileSplit::Kind::Split);
  CHECK(split.tile == llvm::SmallVector<int64_t, 4>{512, 8});
  CHECK(split.bytes == 32768);
  CHECK(split.wholeBytes == 65536);
}

TEST_CASE("a transpose step holds its input, output and scratch tiles", "[tiles]") {
  // 8x64 bf16 input (8 rows of 128 bytes) -> 64x8 output (64 rows of 16 bytes, padded
  // to 32) and PyPTO's scratch for a last-dim move: align(8, 16) x align(64, 16) x 2.
  CHECK(transposeStepBytes({8, 64}, {1, 0}, 2, 32) == 1024 + 2048 + 2048);
  // PyPTO's attention example: k [1, 8, 32, 64] cut by (1, 16, 8, 64), clamped to
  // 1x8x8x64: the output tile 1x8x64x8 has 16-byte rows.
  CHECK(transposeStepBytes({1, 8, 8, 64}, {0, 1, 3, 2}, 2, 32) == 8192 + 16384 + 16384);
  // The last dim stays: no scratch.
  CHECK(transposeStepBytes({4, 8, 16}, {1, 0, 2}, 4, 32) == 2048 + 2048);
  // It moves (swapped with dim 1): the scratch pads dim 1 to 16 elements.
  CHECK(transposeStepBytes({4, 8, 16}, {0, 2, 1}, 4, 32) == 2048 + 2048 + 4 * 16 * 16 * 4);

  DeviceSpec tiny = presetOrDie("tiny"); // UB 32768 bytes
  VecTileFootprint f;
  f.minElemSize = f.maxElemSize = 4;
  f.alignedRows = false;
  f.transposePerm = {1, 0};
  CHECK(f.bytes({32, 64}, 32) == 8192 + 8192 + 8192);
  CHECK(checkVecTile({32, 64}, {128, 128}, f, &tiny) == "");
  CHECK(checkVecTile({64, 64}, {128, 128}, f, &tiny) ==
        "vec_tile 64x64 needs an input tile of 16384 bytes, an output tile of 16384 bytes and "
        "16384 bytes of scratch (the last dimension moves) = 49152 bytes of UB but the device "
        "has 32768; try 32x64");
  // Short input rows are fine: the output rows (and the scratch) are padded.
  CHECK(checkVecTile({64, 4}, {128, 128}, f, &tiny) == "");
  // A whole-shape transpose tile too big for UB is split by the same count.
  WholeTileSplit split = splitWholeVecTile({256, 256}, {256, 256}, {}, f, tiny);
  CHECK(split.kind == WholeTileSplit::Kind::Split);
  CHECK(split.tile == llvm::SmallVector<int64_t, 4>{8, 256});
  CHECK(split.bytes == 8192 + 8192 + 16384);
}

TEST_CASE("vec_tile UB capacity", "[tiles]") {
  DeviceSpec tiny = presetOrDie("tiny"); // UB 32768 bytes
  REQUIRE(tiny.buffers.ub == 32768);

  SECTION("exactly at capacity passes, one more row fails") {
    CHECK(checkVecTile({64, 64}, {128, 128}, 4, 4, 2, &tiny) == "");
    CHECK(checkVecTile({65, 64}, {128, 128}, 4, 4, 2, &tiny) ==
          "vec_tile 65x64 needs 2 buffers x 16640 bytes = 33280 bytes of UB but the device "
          "has 32768; try 32x64");
    CHECK_THAT(checkVecTile({64, 64}, {128, 128}, 4, 4, 3, &tiny),
               Contains("needs 3 buffers x 16384 bytes = 49152 bytes of UB"));
  }
  SECTION("one element over in the last dimension") {
    CHECK(checkVecTile({4096}, {8192}, 4, 4, 2, &tiny) == "");
    CHECK_THAT(checkVecTile({4104}, {8192}, 4, 4, 2, &tiny),
               Contains("needs 2 buffers x 16416 bytes = 32832 bytes of UB"));
    CHECK_THAT(checkVecTile({16384}, {16384}, 4, 4, 2, &tiny), EndsWith("; try 4096"));
  }
  SECTION("the largest element size counts") {
    CHECK(checkVecTile({64, 128}, {128, 128}, 2, 2, 2, &tiny) == "");
    CHECK_THAT(checkVecTile({64, 128}, {128, 128}, 2, 4, 2, &tiny),
               Contains("2 buffers x 32768 bytes = 65536 bytes"));
  }
  SECTION("tiles are clamped to the iteration shape") {
    CHECK(checkVecTile({128, 64}, {64, 64}, 4, 4, 2, &tiny) == "");
    CHECK_THAT(checkVecTile({256, 64}, {100, 64}, 4, 4, 2, &tiny),
               Contains("vec_tile 256x64 (100x64 within the iteration shape 100x64) needs 2 "
                        "buffers x 25600 bytes"));
  }
  SECTION("the last dimension is padded to whole blocks") {
    // 65 floats = 260 bytes take 288 bytes (9 blocks) per row.
    CHECK(checkVecTile({57, 64}, {57, 64}, 4, 4, 2, &tiny) == "");
    CHECK_THAT(checkVecTile({57, 72}, {57, 65}, 4, 4, 2, &tiny),
               Contains("needs 2 buffers x 16416 bytes"));
  }
  SECTION("no capacity check without a device") {
    CHECK(checkVecTile({1024, 4096}, {1024, 4096}, 4, 4, 3, nullptr) == "");
  }
  SECTION("the proposal keeps rows long and fits") {
    DeviceSpec a2 = presetOrDie("a2");
    std::string msg = checkVecTile({256, 4096}, {1024, 4096}, 4, 4, 3, &a2);
    CHECK(msg == "vec_tile 256x4096 needs 3 buffers x 4194304 bytes = 12582912 bytes of UB "
                 "but the device has 196608; try 4x4096");
    CHECK(checkVecTile({4, 4096}, {1024, 4096}, 4, 4, 3, &a2) == "");
  }
}

TEST_CASE("cube_tile positivity, alignment and L0 | L1", "[tiles]") {
  CHECK(checkCubeTile(cube({128, 128}, {64, 256}, {256, 256}), DType::F16, nullptr) == "");
  CHECK(checkCubeTile(cube({128, 128}, {128, 128}, {128, 128}), DType::F16, nullptr) == "");

  CHECK(checkCubeTile(cube({0, 128}, {64, 256}, {256, 256}), DType::F16, nullptr) ==
        "cube_tile m = [0, 128]: sizes must be positive");
  CHECK_THAT(checkCubeTile(cube({128, 128}, {64, 256}, {256, -16}), DType::F16, nullptr),
             Contains("cube_tile n = [256, -16]: sizes must be positive"));

  CHECK(checkCubeTile(cube({128, 128}, {40, 80}, {256, 256}), DType::F16, nullptr) ==
        "cube_tile kL0 = 40 is not a multiple of 16 elements; use 32 or 48");
  CHECK_THAT(checkCubeTile(cube({128, 136}, {64, 256}, {256, 256}), DType::F16, nullptr),
             Contains("cube_tile mL1 = 136 is not a multiple of 16 elements; use 128 or 144"));
  CHECK_THAT(checkCubeTile(cube({128, 128}, {8, 64}, {256, 256}), DType::F16, nullptr),
             Contains("kL0 = 8 is not a multiple of 16 elements; use 16"));

  CHECK(checkCubeTile(cube({128, 128}, {64, 256}, {96, 256}), DType::F16, nullptr) ==
        "cube_tile nL0 = 96 does not divide nL1 = 256; the L0 size must divide the L1 size, "
        "use nL0 = 64 or 128");
  CHECK_THAT(checkCubeTile(cube({128, 128}, {64, 256}, {256, 128}), DType::F16, nullptr),
             Contains("nL0 = 256 does not divide nL1 = 128; the L0 size must divide the L1 "
                      "size, use nL0 = 128"));
}

TEST_CASE("cube_tile L0 | L1 with an absurd L1 answers at once", "[tiles]") {
  // Found by fuzz/space_fuzzer: the nearest-divisor search used to step through every
  // multiple of 16 up to L1, so kL1 = 5214748364828128 took days (a hung ptoc-opt).
  auto start = std::chrono::steady_clock::now();
  CHECK(checkCubeTile(cube({128, 128}, {48, 5214748364828128}, {256, 256}), DType::F16, nullptr) ==
        "cube_tile kL0 = 48 does not divide kL1 = 5214748364828128; the L0 size must divide "
        "the L1 size, use kL0 = 32 or 112");
  // 16 x the prime 2^31 - 1: no divisor but 16 and L1 itself near L0.
  CHECK_THAT(checkCubeTile(cube({128, 128}, {48, 34359738352}, {256, 256}), DType::F16, nullptr),
             Contains("use kL0 = 16 or 34359738352"));
  // L0 above L1: L1 is the nearest divisor, whatever their sizes.
  CHECK_THAT(checkCubeTile(cube({128, 128}, {64, 256}, {9223372036854775792, 256}), DType::F16,
                           nullptr),
             Contains("nL0 = 9223372036854775792 does not divide nL1 = 256; the L0 size must "
                      "divide the L1 size, use nL0 = 256"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
}

TEST_CASE("cube_tile L0A and L0B capacity (one tile each, as PyPTO)", "[tiles]") {
  // a2 defaults: L0A = L0B = 64 KiB. A tile that fills L0A is accepted (PyPTO's rule);
  // codegen then has no room for a second buffer and runs it single-buffered.
  CHECK(checkCubeTile(cube({128, 128}, {256, 256}, {64, 64}), DType::F16, nullptr) == "");
  CHECK(checkCubeTile(cube({144, 144}, {256, 256}, {64, 64}), DType::F16, nullptr) ==
        "cube_tile needs mL0 x kL0 x 2 bytes = 144x256x2 = 73728 bytes of L0A, but the device "
        "has 65536; halve kL0 to 128");
  // The same tile in f32 needs twice the bytes.
  CHECK_THAT(checkCubeTile(cube({128, 128}, {256, 256}, {64, 64}), DType::F32, nullptr),
             Contains("= 131072 bytes of L0A, but the device has 65536"));

  // L0B: kL0 x nL0.
  CHECK(checkCubeTile(cube({16, 16}, {64, 64}, {512, 512}), DType::F16, nullptr) == "");
  CHECK(checkCubeTile(cube({16, 16}, {64, 64}, {1024, 1024}), DType::F16, nullptr) ==
        "cube_tile needs kL0 x nL0 x 2 bytes = 64x1024x2 = 131072 bytes of L0B, but the device "
        "has 65536; halve nL0 to 512");

  // A device's own capacities are used.
  DeviceSpec tiny = presetOrDie("tiny"); // L0A 16 KiB
  CHECK(checkCubeTile(cube({128, 128}, {64, 64}, {64, 64}), DType::F16, &tiny) == "");
  CHECK_THAT(checkCubeTile(cube({128, 128}, {128, 128}, {64, 64}), DType::F16, &tiny),
             Contains("= 32768 bytes of L0A, but the device has 16384"));
}

TEST_CASE("cube_tile L0C capacity (fp32 accumulator)", "[tiles]") {
  // int8 inputs keep L0A/L0B small so that L0C is the binding rule.
  CHECK(checkCubeTile(cube({128, 128}, {64, 64}, {256, 256}), DType::I8, nullptr) == "");
  CHECK(checkCubeTile(cube({128, 128}, {64, 64}, {272, 272}), DType::I8, nullptr) ==
        "cube_tile needs mL0 x nL0 x 4 bytes (fp32 accumulator) = 128x272x4 = 139264 bytes of "
        "L0C, but the device has 131072; halve mL0 to 64");
}

TEST_CASE("cube_tile L1 capacity (both tiles once, as PyPTO)", "[tiles]") {
  // Exactly 512 KiB: (256*512 + 512*256) * 2 bytes.
  CHECK(checkCubeTile(cube({128, 256}, {128, 512}, {128, 256}), DType::F16, nullptr) == "");
  CHECK(checkCubeTile(cube({16, 272}, {128, 512}, {128, 256}), DType::F16, nullptr) ==
        "cube_tile needs (mL1 x kL1 + kL1 x nL1) x 2 bytes = (272x512 + 512x256) x 2 = 540672 "
        "bytes of L1, but the device has 524288; halve kL1 to 256");

  // When an L1 size equals its L0, the fix takes the L0 down too.
  DeviceSpec tiny = presetOrDie("tiny"); // L1 64 KiB
  CHECK(checkCubeTile(cube({16, 240}, {128, 128}, {16, 16}), DType::F16, &tiny) == "");
  CHECK_THAT(checkCubeTile(cube({16, 272}, {128, 128}, {16, 16}), DType::F16, &tiny),
             EndsWith("73728 bytes of L1, but the device has 65536; halve kL0 to 64 and halve "
                      "kL1 to 64"));
}
