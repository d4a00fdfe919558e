// Diagnostic categories: each error is filed under what it is about, the status a
// collection of diagnostics becomes carries that category (an Internal one makes an
// Internal status), and the category survives as a status payload, so callers never
// classify errors by their text.
#include <catch2/catch.hpp>

#include "ptoc/ir/Context.h"
#include "ptoc/ir/Diagnostics.h"
#include "ptoc/ir/GraphBuilder.h"
#include "ptoc/ir/Module.h"
#include "ptoc/target/DeviceSpec.h"

using namespace ptoc::ir;

TEST_CASE("a collection's status carries its first error's category", "[ir][diagnostics]") {
  Context ctx;
  {
    DiagnosticCollector diags(ctx.diag());
    ctx.emitError(Location(), DiagCategory::Tile) << "too big";
    ctx.emitError(Location(), DiagCategory::Shape) << "and misshapen";
    absl::Status s = diags.toStatus();
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK(categoryOf(s) == DiagCategory::Tile);
  }
  {
    DiagnosticCollector diags(ctx.diag());
    ctx.emitError(Location(), DiagCategory::Shape) << "user";
    ctx.emitError(Location(), DiagCategory::Internal) << "a bug";
    absl::Status s = diags.toStatus(); // any bug makes the whole an internal error
    CHECK(s.code() == absl::StatusCode::kInternal);
    CHECK(categoryOf(s) == DiagCategory::Internal);
  }
  {
    // The host's memory: a ResourceExhausted status, whatever else was wrong.
    DiagnosticCollector diags(ctx.diag());
    ctx.emitError(Location(), DiagCategory::Resource) << "past the tile ops the host holds";
    ctx.emitError(Location(), DiagCategory::Tile) << "and more";
    absl::Status s = diags.toStatus();
    CHECK(s.code() == absl::StatusCode::kResourceExhausted);
    CHECK(categoryOf(s) == DiagCategory::Resource);
  }
  CHECK(categoryOf(absl::ResourceExhaustedError("out of memory")) == DiagCategory::Resource);
  CHECK(diagCategoryName(DiagCategory::Resource) == "resource");
  CHECK(categoryOf(absl::InvalidArgumentError("plain")) == DiagCategory::General);
  CHECK(categoryOf(internalError("x")) == DiagCategory::Internal);
  CHECK(categoryOf(ioError("cannot write 'x'")) == DiagCategory::IO);
  CHECK(categoryOf(withCategory(absl::InvalidArgumentError("o"), DiagCategory::Option)) ==
        DiagCategory::Option);
  CHECK(withCategory(absl::OkStatus(), DiagCategory::Tile).ok());
  CHECK(diagCategoryName(DiagCategory::DType) == "dtype");
}

TEST_CASE("the builder files type-rule errors as shape or dtype, tile checks as tile",
          "[ir][diagnostics]") {
  Context ctx;
  Module m(ctx);
  auto device = ptoc::target::DeviceSpec::preset("tiny");
  REQUIRE(device.ok());
  GraphBuilder b(m, &*device);
  Type f32 = ctx.tensorType(DType::F32, {4, 64}), f16 = ctx.tensorType(DType::F16, {4, 64});
  Type other = ctx.tensorType(DType::F32, {3, 64});
  REQUIRE(b.beginFunc("f", {f32, f16, other}).ok());
  b.setVecTile({4, 64});
  absl::StatusOr<Value *> mixed = b.binary(OpCode::Add, b.arg(0), b.arg(1));
  REQUIRE_FALSE(mixed.ok());
  CHECK(categoryOf(mixed.status()) == DiagCategory::DType);
  absl::StatusOr<Value *> misshapen = b.binary(OpCode::Add, b.arg(0), b.arg(2));
  REQUIRE_FALSE(misshapen.ok());
  CHECK(categoryOf(misshapen.status()) == DiagCategory::Shape);
  b.setVecTile({4, 60}); // 60 x 4 bytes is not a multiple of 32: a copy refuses it
  absl::StatusOr<Value *> misaligned = b.concat({b.arg(0), b.arg(0)}, 0);
  REQUIRE_FALSE(misaligned.ok());
  CHECK(categoryOf(misaligned.status()) == DiagCategory::Tile);
  // A compute op pads its short rows instead.
  CHECK(b.unary(OpCode::Exp, b.arg(0)).ok());
}
