// The measured kernel families as .pto text (see KernelTemplates.h).
#include "ptoc/calibrate/KernelTemplates.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ptoc::calibrate {
namespace {

std::string tensor(const std::vector<int64_t> &shape, const std::string &dtype) {
  return absl::StrCat("tensor<", absl::StrJoin(shape, "x"), "x", dtype, ">");
}

std::string pair(const std::array<int64_t, 2> &p) { return absl::StrCat("[", p[0], ", ", p[1], "]"); }

} // namespace

std::string matmulText(const MatmulKernel &k, std::string *why) {
  std::string tile = absl::StrCat("{cube_tile = {m = ", pair(k.cubeTile[0]), ", k = ",
                                  pair(k.cubeTile[1]), ", n = ", pair(k.cubeTile[2]), "}}");
  if (k.coreGrid[0] <= 0 || k.coreGrid[1] <= 0) {
    std::string a = tensor({k.m, k.k}, k.dtype), b = tensor({k.k, k.n}, k.dtype),
                c = tensor({k.m, k.n}, k.outDtype);
    return absl::StrCat("func @matmul(%a: ", a, ", %b: ", b, ") -> ", c, " {\n",
                        "  %c = matmul %a, %b ", tile, " : ", c, "\n  return %c\n}\n");
  }
  // Batch dimensions (tile row in block, tile column in block, block row, block column):
  // the tasks come out block row and column innermost, so consecutive tasks belong to
  // consecutive blocks and the plain kernel's round-robin gives each core its block. A
  // is held as its 128-row bands and B as its column bands, each contiguous: the same
  // bytes per copy as the row-major matrices, laid out so a band is one slice.
  const int64_t gm = k.coreGrid[0], gn = k.coreGrid[1];
  const int64_t tm = k.cubeTile[0][1], tn = k.cubeTile[2][1];
  auto fail = [&](const std::string &msg) {
    if (why) *why = msg;
    return std::string();
  };
  if (k.m % (gm * tm) != 0)
    return fail(absl::StrCat("m = ", k.m, " is not a whole number of ", gm, " blocks of mL1 = ",
                             tm, " rows"));
  if (k.n % (gn * tn) != 0)
    return fail(absl::StrCat("n = ", k.n, " is not a whole number of ", gn,
                             " blocks of nL1 = ", tn, " columns"));
  const int64_t mt = k.m / (gm * tm), nt = k.n / (gn * tn);
  std::string a = tensor({mt, 1, gm, 1, tm, k.k}, k.dtype),
              b = tensor({1, nt, 1, gn, k.k, tn}, k.dtype),
              c = tensor({mt, nt, gm, gn, tm, tn}, k.outDtype);
  return absl::StrCat("func @matmul(%a: ", a, ", %b: ", b, ") -> ", c, " {\n",
                      "  %c = matmul %a, %b ", tile, " : ", c, "\n  return %c\n}\n");
}

std::string rmsNormText(const RmsNormKernel &k) {
  std::vector<int64_t> rowShape = k.shape;
  rowShape.back() = 1;
  const size_t last = k.shape.size() - 1;
  std::string x = tensor(k.shape, k.dtype), row = tensor(rowShape, k.dtype),
              w = tensor({k.shape.back()}, k.dtype);
  std::string tile = absl::StrCat("vec_tile = [", absl::StrJoin(k.vecTile, ", "), "]");
  char eps[32];
  std::snprintf(eps, sizeof eps, "%.9g", k.eps);
  std::string body;
  auto op = [&](const std::string &line) { absl::StrAppend(&body, "  ", line, "\n"); };
  op(absl::StrCat("%sq = mul %x, %x {", tile, "} : ", x));
  op(absl::StrCat("%ms = mean %sq {axes = [", last, "], keepdim = true, ", tile, "} : ", row));
  op(absl::StrCat("%eps = full {value = ", eps, ", ", tile, "} : ", row));
  op(absl::StrCat("%var = add %ms, %eps {", tile, "} : ", row));
  op(absl::StrCat("%inv = rsqrt %var {", tile, "} : ", row));
  op(absl::StrCat("%norm = mul %x, %inv {", tile, "} : ", x));
  op(absl::StrCat("%y = mul %norm, %w {", tile, "} : ", x));
  op("return %y");
  return absl::StrCat("func @rmsnorm(%x: ", x, ", %w: ", w, ") -> ", x, " {\n", body, "}\n");
}

} // namespace ptoc::calibrate
