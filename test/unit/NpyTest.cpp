// Unit tests for .npy reading and writing: round trips of every dtype, bf16 through
// '<f4', numpy's exact header layout, and every rejection (Fortran order, truncation,
// bad magic, unsupported dtypes, shape and dtype mismatches) without crashing.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "ptoc/runtime/Npy.h"
#include "ptoc/runtime/Reference.h"
#include "ptoc/support/ErrorCategory.h"

using namespace ptoc;
using ir::DType;
using runtime::HostTensor;

namespace {

bool sameBits(const HostTensor &a, const HostTensor &b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         a.sizeInBytes() == b.sizeInBytes() &&
         std::memcmp(a.data(), b.data(), a.sizeInBytes()) == 0;
}

/// A v1.0 file with the given header dictionary (padded like numpy) and data bytes.
std::string npyFile(const std::string &dict, const std::string &data, int major = 1) {
  size_t lenBytes = major == 1 ? 2 : 4;
  std::string header = dict;
  size_t total = 8 + lenBytes + header.size() + 1;
  header += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::string out = std::string("\x93NUMPY", 6) + char(major) + '\0';
  for (size_t i = 0; i < lenBytes; ++i) out.push_back(char((header.size() >> (8 * i)) & 0xFF));
  return out + header + data;
}

std::string floats(std::initializer_list<float> v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), v.begin(), s.size());
  return s;
}

std::string errorOf(const absl::StatusOr<HostTensor> &r) {
  REQUIRE_FALSE(r.ok());
  return std::string(r.status().message());
}

/// A fresh temporary folder, removed with its files at scope exit.
struct TempDir {
  llvm::SmallString<128> path;
  TempDir() { REQUIRE_FALSE(llvm::sys::fs::createUniqueDirectory("ptoc-npy-test", path)); }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string file(const char *name) const {
    llvm::SmallString<128> p(path);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(path, ec), end; it != end && !ec; it.increment(ec))
      out.push_back(std::string(llvm::sys::path::filename(it->path())));
    return out;
  }
};

} // namespace

TEST_CASE("npy: the header is numpy's, padded to 64 bytes", "[npy]") {
  HostTensor t(DType::F32, {2, 3});
  std::string bytes = runtime::serializeNpy(t);
  // What numpy.save writes for a (2, 3) float32 array.
  std::string want = npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                             std::string(24, '\0'));
  CHECK(bytes == want);
  CHECK(bytes.size() == 128 + 24);
  CHECK(uint8_t(bytes[8]) == 118); // header length, little-endian
  // 1-d shapes have a trailing comma, rank 0 is ().
  CHECK(runtime::serializeNpy(HostTensor(DType::I8, {5})).find("'shape': (5,), }") !=
        std::string::npos);
  CHECK(runtime::serializeNpy(HostTensor(DType::I32, {})).find("'shape': (), }") !=
        std::string::npos);
  CHECK(runtime::serializeNpy(HostTensor(DType::I8, {5})).find("'descr': '|i1'") !=
        std::string::npos);
}

TEST_CASE("npy: every dtype round-trips bit-exactly", "[npy]") {
  for (DType t : ir::kAllDTypes) {
    if (t == DType::BF16) continue; // stored as '<f4': the next test
    for (std::vector<int64_t> shape : {std::vector<int64_t>{3, 5, 2}, {7}, {}, {1, 1}}) {
      HostTensor x = runtime::randomTensor(t, shape, 7);
      auto back = runtime::parseNpy(runtime::serializeNpy(x), "x.npy");
      REQUIRE(back.ok());
      CHECK(sameBits(*back, x));
      auto as = runtime::parseNpyAs(runtime::serializeNpy(x), "x.npy", t, shape);
      REQUIRE(as.ok());
      CHECK(sameBits(*as, x));
    }
  }
}

TEST_CASE("npy: 64-bit integers and bool keep every bit", "[npy]") {
  // The extremes of i64 and u64 (beyond 2^53: not doubles) and bool, byte by byte.
  struct Case {
    DType t;
    const char *descr;
    std::string bytes;
  };
  std::string i64(16, '\0'), u64(16, '\0');
  int64_t lo = INT64_MIN, hi = INT64_MAX - 2;
  uint64_t umax = UINT64_MAX, uodd = (uint64_t(1) << 63) + 5;
  std::memcpy(i64.data(), &lo, 8);
  std::memcpy(i64.data() + 8, &hi, 8);
  std::memcpy(u64.data(), &umax, 8);
  std::memcpy(u64.data() + 8, &uodd, 8);
  for (const Case &c : {Case{DType::I64, "<i8", i64}, Case{DType::U64, "<u8", u64},
                        Case{DType::Bool, "|b1", std::string("\x01\x00", 2)}}) {
    INFO(c.descr);
    int64_t n = int64_t(c.bytes.size() / ir::elementSize(c.t));
    std::string file = npyFile(std::string("{'descr': '") + c.descr +
                                   "', 'fortran_order': False, 'shape': (" +
                                   std::to_string(n) + ",), }",
                               c.bytes);
    auto x = runtime::parseNpy(file, "x.npy");
    REQUIRE(x.ok());
    CHECK(x->dtype() == c.t);
    REQUIRE(x->sizeInBytes() == c.bytes.size());
    CHECK(std::memcmp(x->data(), c.bytes.data(), c.bytes.size()) == 0);
    CHECK(runtime::npyDescr(c.t) == c.descr);
    auto back = runtime::parseNpy(runtime::serializeNpy(*x), "y.npy");
    REQUIRE(back.ok());
    CHECK(sameBits(*back, *x));
  }
}

TEST_CASE("npy: bf16 is stored as '<f4' and read back by rounding", "[npy]") {
  HostTensor x = runtime::randomTensor(DType::BF16, {4, 8}, 3);
  std::string bytes = runtime::serializeNpy(x);
  CHECK(bytes.find("'descr': '<f4'") != std::string::npos);
  CHECK(bytes.size() == 128 + 4 * 32);
  // Read without a dtype: the widened f32 values, exactly.
  auto wide = runtime::parseNpy(bytes, "x.npy");
  REQUIRE(wide.ok());
  CHECK(wide->dtype() == DType::F32);
  for (int64_t i = 0; i < x.numElements(); ++i) CHECK(wide->get(i) == x.get(i));
  // Read as bf16: the same bits as the original.
  auto back = runtime::parseNpyAs(bytes, "x.npy", DType::BF16, {4, 8});
  REQUIRE(back.ok());
  CHECK(sameBits(*back, x));
  auto anyShape = runtime::parseNpy(bytes, "x.npy", DType::BF16);
  REQUIRE(anyShape.ok());
  CHECK(sameBits(*anyShape, x));
  // f32 values that are not bf16 values round to nearest-even.
  std::string f = npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
                          floats({1.00390625f /* 1 + 2^-8: a tie */, 1.01171875f}));
  auto r = runtime::parseNpyAs(f, "r.npy", DType::BF16, {2});
  REQUIRE(r.ok());
  CHECK(r->get(0) == 1.0);
  CHECK(r->get(1) == 1.015625);
  // bf16 cannot come from '<f2'.
  std::string e = errorOf(runtime::parseNpyAs(runtime::serializeNpy(HostTensor(DType::F16, {2})),
                                              "h.npy", DType::BF16, {2}));
  CHECK(e == "h.npy: holds '<f2' data but a bf16 tensor was expected, stored as '<f4' (bf16 "
             "has no numpy dtype)");
}

TEST_CASE("npy: reads the forms numpy and other writers produce", "[npy]") {
  // Version 2.0, double quotes, keys in another order, no trailing comma, '<i1'.
  std::string v2 = npyFile("{\"shape\": (2, 2), \"fortran_order\": False, \"descr\": \"<f4\"}",
                           floats({1.5f, 2, 3, 4}), 2);
  auto t = runtime::parseNpy(v2, "v2.npy");
  REQUIRE(t.ok());
  CHECK(t->shape() == llvm::ArrayRef<int64_t>{2, 2});
  CHECK(t->get(0) == 1.5);
  CHECK(t->get(3) == 4);
  auto i8 = runtime::parseNpy(npyFile("{'descr': '<i1', 'fortran_order': False, 'shape': (3,), }",
                                      std::string("\x01\xff\x7f", 3)),
                              "i.npy");
  REQUIRE(i8.ok());
  CHECK(i8->dtype() == DType::I8);
  CHECK(i8->get(1) == -1);
  CHECK(i8->get(2) == 127);
  // Version 3.0 has the 2.0 layout.
  CHECK(runtime::parseNpy(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }",
                                  floats({1}), 3),
                          "v3.npy")
            .ok());
}

TEST_CASE("npy: rejections name the file and the fix", "[npy]") {
  std::string good = runtime::serializeNpy(HostTensor(DType::F32, {2, 3}));
  CHECK(errorOf(runtime::parseNpy(npyFile("{'descr': '<f4', 'fortran_order': True, 'shape': "
                                          "(2, 3), }",
                                          std::string(24, '\0')),
                                  "f.npy")) ==
        "f.npy: the array is in Fortran (column-major) order, which is not supported; save a "
        "C-order copy (numpy.ascontiguousarray(a))");
  CHECK(errorOf(runtime::parseNpy("PK\x03\x04 zip", "a.npz")) ==
        "a.npz: not a .npy file (it does not start with the magic string \"\\x93NUMPY\")");
  CHECK(errorOf(runtime::parseNpy(good.substr(0, good.size() - 5), "t.npy")) ==
        "t.npy: truncated .npy file: shape (2, 3) of '<f4' needs 24 bytes of data but only 19 "
        "follow the header");
  CHECK(errorOf(runtime::parseNpy(good + "xx", "g.npy")) ==
        "g.npy: corrupt .npy file: shape (2, 3) of '<f4' needs 24 bytes of data but 26 follow "
        "the header");
  CHECK(errorOf(runtime::parseNpy(good.substr(0, 60), "h.npy")) ==
        "h.npy: truncated .npy file: the header is 118 bytes but only 50 follow the header "
        "length");
  std::string v9 = good;
  v9[6] = 9;
  CHECK(errorOf(runtime::parseNpy(v9, "v.npy")) ==
        "v.npy: .npy format version 9.0 is not supported (1.0, 2.0 and 3.0 are)");
  std::string e = errorOf(runtime::parseNpy(
      npyFile("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", floats({1})), "b.npy"));
  CHECK(e.find("b.npy: big-endian data ('>f4') is not supported") == 0);
  e = errorOf(runtime::parseNpy(
      npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", std::string(8, '\0')),
      "d.npy"));
  CHECK(e.find("d.npy: float64 data ('<f8') is not supported; convert it with "
               "a.astype(numpy.float32)") == 0);
  e = errorOf(runtime::parseNpy(
      npyFile("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", std::string(8, '\0')),
      "o.npy"));
  CHECK(e == "o.npy: dtype '|O' is not supported; ptoc reads '<f4', '<f2', '|i1', '<i2', "
             "'<i4', '<i8', '|u1', '<u2', '<u4', '<u8' or '|b1' (bf16 tensors are stored as "
             "'<f4')");
  e = errorOf(runtime::parseNpy(npyFile("{'descr': '<f4', 'shape': (1,), }", floats({1})),
                                "k.npy"));
  CHECK(e == "k.npy: corrupt .npy header: the header lacks 'fortran_order'");
  e = errorOf(runtime::parseNpy(
      npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", floats({1})),
      "x.npy"));
  CHECK(e.find("x.npy: corrupt .npy header: unexpected key 'x'") == 0);
  e = errorOf(runtime::parseNpy(
      npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", floats({1})),
      "n.npy"));
  CHECK(e == "n.npy: corrupt .npy header: 'shape' must hold non-negative integers");
  // A shape whose size overflows any arithmetic is truncation, not a crash.
  e = errorOf(runtime::parseNpy(
      npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (999999999999999999, "
              "999999999999999999), }",
              floats({1})),
      "big.npy"));
  CHECK(e.find("big.npy: truncated .npy file") == 0);
}

TEST_CASE("npy: dtype and shape expectations", "[npy]") {
  std::string bytes = runtime::serializeNpy(HostTensor(DType::F32, {2, 3}));
  CHECK(errorOf(runtime::parseNpyAs(bytes, "x.npy", DType::F32, {3, 2})) ==
        "x.npy: has shape (2, 3) but shape (3, 2) was expected");
  CHECK(errorOf(runtime::parseNpyAs(bytes, "x.npy", DType::F32, {6})) ==
        "x.npy: has shape (2, 3) but shape (6,) was expected");
  CHECK(errorOf(runtime::parseNpyAs(bytes, "x.npy", DType::I32, {2, 3})) ==
        "x.npy: holds '<f4' data but a i32 tensor was expected, stored as '<i4'");
}

TEST_CASE("npy: no prefix or corruption of a valid file crashes", "[npy]") {
  std::string good = runtime::serializeNpy(runtime::randomTensor(DType::F16, {3, 4}, 1));
  for (size_t n = 0; n < good.size(); ++n) {
    absl::StatusOr<HostTensor> r = runtime::parseNpy(good.substr(0, n), "p.npy");
    CHECK_FALSE(r.ok());
    CHECK(std::string(r.status().message()).rfind("p.npy: ", 0) == 0);
  }
  // Every single-byte change in the header either parses to some valid array or is
  // an error; none crashes.
  size_t headerEnd = 128;
  int errors = 0;
  for (size_t i = 0; i < headerEnd; ++i)
    for (int v : {0, 0x20, 0x7f, 0xff, int('('), int(')'), int('\''), int(',')}) {
      std::string bad = good;
      bad[i] = char(v);
      errors += !runtime::parseNpy(bad, "c.npy").ok();
    }
  CHECK(errors > 100);
}

TEST_CASE("npy: files are written atomically and read back", "[npy]") {
  TempDir dir;
  std::string path = dir.file("x.npy");
  HostTensor x = runtime::randomTensor(DType::I32, {4, 4}, 9);
  REQUIRE(runtime::writeNpy(path, x).ok());
  // Overwriting replaces the file; no temporary is left behind.
  HostTensor y = runtime::randomTensor(DType::BF16, {3}, 9);
  REQUIRE(runtime::writeNpy(path, y).ok());
  CHECK(dir.entries() == std::vector<std::string>{"x.npy"});
  auto back = runtime::readNpyAs(path, DType::BF16, {3});
  REQUIRE(back.ok());
  CHECK(sameBits(*back, y));
  auto plain = runtime::readNpy(path);
  REQUIRE(plain.ok());
  CHECK(plain->dtype() == DType::F32);

  absl::Status st = runtime::writeNpy(dir.file("missing/y.npy"), x);
  CHECK_FALSE(st.ok());
  CHECK(std::string(st.message()).find("cannot write '" + dir.file("missing/y.npy") + "'") == 0);
  auto missing = runtime::readNpy(dir.file("nope.npy"));
  REQUIRE_FALSE(missing.ok());
  CHECK(std::string(missing.status().message()).find("cannot read '" + dir.file("nope.npy") +
                                                     "': ") == 0);
  // Read through support::readFile: an io error, NotFound for a missing file.
  CHECK(ptoc::support::categoryOf(missing.status()) == ptoc::support::DiagCategory::IO);
  CHECK(absl::IsNotFound(missing.status()));
}
