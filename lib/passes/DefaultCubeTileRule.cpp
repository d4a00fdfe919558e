// The cube-tile rule of default-tiles (see DefaultCubeTileRule.h): the matmul's
// candidate tiles (balanced 16-aligned output splits, the deepest K steps that fit
// L1 and L0A / L0B), each scored by an estimate of its K steps, FIXPIPE write and
// waves of AIC tasks, and the choice among the near-ties.
#include "DefaultCubeTileRule.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

#include "ptoc/analysis/CostModel.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Func.h"
#include "ptoc/ir/OpDef.h"
#include "ptoc/passes/MergeRules.h"
#include "ptoc/target/DeviceSpec.h"

#include "DefaultTileSupport.h"

namespace ptoc::passes::default_tiles {
namespace {

using ir::OpCode;
using ir::Operation;
using ir::Type;

/// Cube sizes are multiples of one 16-element fractal edge (ir::checkCubeTile).
constexpr int64_t kCubeAlign = 16;
/// The largest mL1 / nL1 tried: 256 x 128 fp32 accumulators fill a2's L0C (128 KiB), so
/// a bigger edge only pays on a device with a bigger L0C, and leaves fewer tiles to
/// spread over the cores.
constexpr int64_t kMaxCubeL1 = 256;
/// kL1 sizes tried, largest first: a deep K step amortises the copies' fixed cost.
constexpr int64_t kCubeKL1[] = {256, 128, 64, 32, 16};
/// kL0 sizes tried, largest first.
constexpr int64_t kCubeKL0[] = {128, 64, 32, 16};
/// Fractal-friendly cube sizes: multiples of this many elements win near-ties.
constexpr int64_t kCubePreferredAlign = 128;

class CubeRule {
public:
  CubeRule(ir::Context &ctx, const target::DeviceSpec &device, const ir::MatmulView &mm,
           int64_t batch, bool successors, bool loopBody, llvm::raw_ostream *log)
      : ctx_(ctx), device_(device), cost_(device), mm_(mm), batch_(batch),
        successors_(successors), loopBody_(loopBody), log_(log) {}

  std::optional<CubeCandidate> decide() {
    std::vector<CubeCandidate> all;
    // Two copies of each L0A / L0B / L1 tile (double buffering), or when no tile leaves
    // room for two, one (the capacity rules' minimum; the leaf runs single-buffered).
    for (int64_t copies : {2, 1}) {
      if (!all.empty()) break;
      for (int64_t mL1 : splits(mm_.m))
        for (int64_t nL1 : splits(mm_.n))
          if (std::optional<ir::CubeTile> t = fit(mL1, nL1, copies)) {
            all.push_back(evaluate(*t));
            all.back().singleBuffered = copies == 1;
            if (log_)
              *log_ << kPassName << ":   candidate " << t->toAttr(ctx_).str() << ": "
                    << all.back().tiles << " tiles, " << all.back().merge << " per task, "
                    << all.back().waves << " waves, tile " << int64_t(all.back().tileCycles)
                    << ", score " << int64_t(all.back().score) << "\n";
          }
    }
    if (all.empty()) return std::nullopt;
    double best = all.front().score;
    for (const CubeCandidate &c : all) best = std::min(best, c.score);
    // Near-ties: fractal-friendly sizes, then whole waves (the fewest idle core slots
    // in the last wave), then the better score, then taller tiles.
    auto idle = [&](const CubeCandidate &c) { return c.waves * device_.aicCores - c.tasks; };
    auto better = [&](const CubeCandidate &c, const CubeCandidate &p) {
      if (c.aligned != p.aligned) return c.aligned;
      if (idle(c) != idle(p)) return idle(c) < idle(p);
      if (c.score != p.score) return c.score < p.score;
      return c.tile.m[1] > p.tile.m[1];
    };
    const CubeCandidate *pick = nullptr;
    for (const CubeCandidate &c : all)
      if (c.score <= best * kTieTolerance && (!pick || better(c, *pick))) pick = &c;
    return *pick;
  }

  std::string rule(const CubeCandidate &c) const {
    return tilesOnCores(absl::StrCat(c.tiles, c.tiles == 1 ? " tile" : " tiles"), c.tiles,
                        device_.aicCores, "AIC", c.merge > 1 || loopBody_);
  }

  std::string detail(const CubeCandidate &c) const {
    const ir::CubeTile &t = c.tile;
    int64_t e = ir::elementSize(mm_.in);
    int64_t steps = ceilDiv(mm_.k, t.k[1]);
    return absl::StrCat(mm_.m, "x", mm_.n, " output in tiles of ", t.m[1], "x", t.n[1], ", K ",
                        mm_.k, " in ", steps, steps == 1 ? " step" : " steps", " of ", t.k[1],
                        "; L0A ", bytesText(t.m[0] * t.k[0] * e), ", L0B ",
                        bytesText(t.k[0] * t.n[0] * e), ", L0C ", bytesText(t.m[1] * t.n[1] * 4),
                        ", L1 ", bytesText((t.m[1] + t.n[1]) * t.k[1] * e), " per copy",
                        c.singleBuffered ? " (no tile leaves room for two: single-buffered)"
                                         : "");
  }

private:
  /// mL1 (nL1) candidates: the balanced 16-aligned splits of `extent`, at most kMaxCubeL1.
  static std::vector<int64_t> splits(int64_t extent) {
    std::vector<int64_t> out;
    int64_t units = ceilDiv(std::max<int64_t>(extent, 1), kCubeAlign);
    for (int64_t p = 1; p <= units; ++p) {
      int64_t size = ceilDiv(units, p) * kCubeAlign;
      if (size > kMaxCubeL1 || (!out.empty() && out.back() == size)) continue;
      out.push_back(size);
    }
    return out;
  }

  /// The tile of mL1 x nL1 output elements whose L0A, L0B and L1 tiles fit their
  /// buffers `copies` times (the accumulator once), or nullopt.
  std::optional<ir::CubeTile> fit(int64_t mL1, int64_t nL1, int64_t copies) const {
    const target::BufferSpec &b = device_.buffers;
    int64_t e = ir::elementSize(mm_.in);
    if (mL1 * nL1 * 4 > b.l0c) return std::nullopt; // the whole fp32 / int32 accumulator
    int64_t kWhole = roundUp(std::max<int64_t>(mm_.k, 1), kCubeAlign);
    std::vector<int64_t> kOptions;
    if (kWhole < kCubeKL1[0]) kOptions.push_back(kWhole);
    for (int64_t k : kCubeKL1)
      if (k < kWhole || (k == kWhole && kOptions.empty())) kOptions.push_back(k);
    int64_t kL1 = 0;
    for (int64_t k : kOptions)
      if (copies * (mL1 + nL1) * k * e <= b.l1) {
        kL1 = k;
        break;
      }
    if (!kL1) return std::nullopt;
    int64_t mL0 = mL1, nL0 = nL1;
    for (;;) {
      for (int64_t k : kCubeKL0)
        if (kL1 % k == 0 && copies * mL0 * k * e <= b.l0a && copies * k * nL0 * e <= b.l0b) {
          ir::CubeTile t;
          t.m = {mL0, mL1};
          t.k = {k, kL1};
          t.n = {nL0, nL1};
          if (!ir::checkCubeTile(t, mm_.in, &device_).empty()) return std::nullopt;
          return t;
        }
      int64_t &bigger = mL0 >= nL0 ? mL0 : nL0;
      if ((bigger / 2) % kCubeAlign != 0) return std::nullopt;
      bigger /= 2;
    }
  }

  /// One K step over `k` on an mL1 x nL1 tile: the loads of its two L1 tiles at the
  /// ND->NZ path rate (first) and the cube's work (CostModel of the tile matmul).
  std::pair<double, double> stepCycles(const ir::CubeTile &t, int64_t k) const {
    int64_t m = t.m[1], n = t.n[1], e = ir::elementSize(mm_.in);
    Type a = ctx_.tileType(mm_.in, {m, k}, ir::MemSpace::L1);
    Type b = ctx_.tileType(mm_.in, {k, n}, ir::MemSpace::L1);
    ir::Func f(ctx_, "default-tiles.cube-model", {a, b}, {}, ir::Location());
    ir::NamedAttr attrs[] = {{ctx_.id("cube_tile"), t.toAttr(ctx_)}};
    Operation *mm = f.createOp(ctx_.opDef(OpCode::Matmul), {f.arg(0), f.arg(1)},
                               {ctx_.tileType(mm_.acc, {m, n}, ir::MemSpace::L0C)},
                               ctx_.dictAttr(attrs, true), f.loc());
    const target::PipeSpec &p = device_.pipes;
    double load = 2 * p.nd2nzFixedCycles + double((m + n) * k * e) / p.nd2nzBytesPerCycle;
    return {load, double(cost_.opCycles(*mm))};
  }

  double fixpipeCycles(const ir::CubeTile &t) const {
    Type acc = ctx_.tileType(mm_.acc, {t.m[1], t.n[1]}, ir::MemSpace::L0C);
    Type gm = ctx_.tensorType(mm_.out, {t.m[1], t.n[1]});
    ir::Func f(ctx_, "default-tiles.cube-model", {acc, gm}, {}, ir::Location());
    Operation *out = f.createOp(ctx_.opDef(OpCode::CopyOut), {f.arg(0), f.arg(1)},
                                {ctx_.tileType(mm_.out, {t.m[1], t.n[1]}, ir::MemSpace::GM)},
                                ctx_.emptyDict(), f.loc());
    return double(cost_.opCycles(*out));
  }

  CubeCandidate evaluate(const ir::CubeTile &t) const {
    CubeCandidate c;
    c.tile = t;
    c.tiles = batch_ * ceilDiv(mm_.m, t.m[1]) * ceilDiv(mm_.n, t.n[1]);
    int64_t cores = device_.aicCores;
    c.merge = l1ReuseAutomaticCount(c.tiles, cores);
    c.tasks = ceilDiv(c.tiles, c.merge);
    c.waves = ceilDiv(c.tasks, cores);
    // The K steps pipeline (the next step loads while the cube works on this one); a
    // last, shorter step covers a K tail.
    int64_t full = mm_.k / t.k[1], tailK = mm_.k % t.k[1];
    auto [load, cube] = stepCycles(t, t.k[1]);
    c.tileCycles = pipelinedCycles(full, load + cube, std::max(load, cube));
    if (tailK) {
      auto [tailLoad, tailCube] = stepCycles(t, roundUp(tailK, kCubeAlign));
      c.tileCycles += full ? std::max(tailLoad, tailCube) : tailLoad + tailCube;
    }
    c.tileCycles += fixpipeCycles(t);
    double loads = double(c.tiles) * double((t.m[1] + t.n[1]) * mm_.k * ir::elementSize(mm_.in));
    c.score = std::max(spanCycles(c.tasks, double(c.merge) * c.tileCycles, cores, successors_,
                                  device_),
                       loads / device_.l2BytesPerCycle());
    auto alignedTo = [](int64_t size, int64_t extent) {
      return size % kCubePreferredAlign == 0 || size >= roundUp(extent, kCubeAlign);
    };
    c.aligned = alignedTo(t.m[1], mm_.m) && alignedTo(t.n[1], mm_.n);
    return c;
  }

  ir::Context &ctx_;
  const target::DeviceSpec &device_;
  analysis::CostModel cost_;
  ir::MatmulView mm_;
  int64_t batch_;
  bool successors_;
  bool loopBody_; ///< the function is a loop body (its merges also serve the control thread)
  llvm::raw_ostream *log_;
};

} // namespace

CubeDecision decideCubeTile(ir::Context &ctx, const target::DeviceSpec &device,
                            const ir::MatmulView &mm, int64_t batch, bool successors,
                            bool loopBody, llvm::raw_ostream *log) {
  CubeRule rule(ctx, device, mm, batch, successors, loopBody, log);
  CubeDecision d;
  d.chosen = rule.decide();
  if (d.chosen) {
    d.rule = rule.rule(*d.chosen);
    d.detail = rule.detail(*d.chosen);
  }
  return d;
}

} // namespace ptoc::passes::default_tiles
