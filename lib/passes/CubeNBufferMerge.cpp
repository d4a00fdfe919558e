// cube-nbuffer-merge: the AIC counterpart of nbuffer-merge. Folds isomorphic cube
// subgraphs together N at a time, so a cube core runs fewer, larger tasks.
//  - Per isomorphism group of AIC subgraphs (S members), N is chosen by
//    cube-nbuffer-mode: 0 off, 1 automatic, 2 from cube-nbuffer-setting
//    `{hash_order: N, -1: default}` (exact key, then -1, then automatic).
//  - Automatic N keeps at least C = the device's AIC core count subgraphs: no
//    merge if S <= C; else start at ceil(S/C) and decrease while ceil(S/N) < C.
//  - Members are merged in ascending id order, N consecutive members into the
//    first of each chunk; refused for an sg_scope, a cycle or spent merge-fuel.
// Shares nbufferMerge() (Subgraphs.cpp) with nbuffer-merge.
// `--debug-only=cube-nbuffer-merge` logs each group's N and every decision.
#include "ptoc/passes/Passes.h"

#include "ptoc/passes/Subgraphs.h"

namespace ptoc::passes {
namespace {

class CubeNBufferMergePass final : public Pass {
public:
  explicit CubeNBufferMergePass(const CubeNBufferMergeOptions &options) : options_(options) {}
  llvm::StringRef argument() const override { return "cube-nbuffer-merge"; }

  PassResult run(ir::Module &m, PassContext &ctx) override {
    MergeLog log(argument(), ctx.debugStream(argument()), options_.fuel);
    NBufferMergeRequest request{.core = target::CoreKind::AIC,
                                .mode = options_.mode,
                                .setting = options_.setting,
                                .cores = -1,
                                .copyInUpperBound = options_.copyInUpperBound};
    PassResult result = runNBufferMergePass(m, ctx.device, "cube-nbuffer-setting", request, log);
    merged_ += log.count(MergeVerdict::Merged);
    refusedScope_ += log.count(MergeVerdict::RefusedScope);
    refusedCycle_ += log.count(MergeVerdict::RefusedCycle);
    refusedFuel_ += log.count(MergeVerdict::RefusedFuel);
    refusedCopyIn_ += log.count(MergeVerdict::RefusedCopyInCap);
    return result;
  }

private:
  CubeNBufferMergeOptions options_;
  PassStatistic merged_{this, "merged", "AIC subgraphs merged into the first of their chunk"};
  PassStatistic refusedScope_{this, "refused-scope", "Merges refused: an sg_scope"};
  PassStatistic refusedCycle_{this, "refused-would-create-cycle",
                              "Merges refused: would create a dependency cycle"};
  PassStatistic refusedFuel_{this, "refused-fuel", "Merges refused: merge-fuel ran out"};
  PassStatistic refusedCopyIn_{this, "refused-copy-in-cap",
                               "Merges refused: copy-in bytes over mg-copyin-upper-bound"};
};

} // namespace

std::unique_ptr<Pass> createCubeNBufferMergePass(const CubeNBufferMergeOptions &options) {
  return std::make_unique<CubeNBufferMergePass>(options);
}

void registerCubeNBufferMergePass(PassRegistry &registry) {
  registry.add(
      {"cube-nbuffer-merge",
       "Merge isomorphic AIC subgraphs N at a time (fewer, larger cube tasks)",
       {{"cube-nbuffer-mode", OptionKind::Int, int64_t(0),
         "0 off, 1 automatic N per group (keeps the device's AIC core count of subgraphs), "
         "2 from cube-nbuffer-setting",
         0, 2},
        {"cube-nbuffer-setting", OptionKind::IntMap, IntMap{},
         "mode 2: {hash_order: N, -1: default}; groups without an entry use the automatic N"},
        {"mg-copyin-upper-bound", OptionKind::Int, int64_t(-1),
         "byte cap on the copy-in of a merged subgraph; -1 no cap", -1},
        {"merge-fuel", OptionKind::Int, int64_t(-1),
         "merges allowed before stopping (bisection); -1 unlimited", -1}},
       [](const PassOptionValues &v) {
         return createCubeNBufferMergePass({.mode = v.getInt("cube-nbuffer-mode"),
                                            .setting = v.getIntMap("cube-nbuffer-setting"),
                                            .copyInUpperBound = v.getInt("mg-copyin-upper-bound"),
                                            .fuel = v.getInt("merge-fuel")});
       }});
}

} // namespace ptoc::passes
