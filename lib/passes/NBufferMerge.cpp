// nbuffer-merge: folds isomorphic AIV subgraphs together N at a time, so a vector
// core runs fewer, larger tasks (less dispatch overhead; the leaf program can
// double-buffer across the merged tiles).
//  - Per isomorphism group of AIV subgraphs (S members), N is chosen by
//    vec-nbuffer-mode: 0 off, 1 automatic, 2 from vec-nbuffer-setting
//    `{hash_order: N, -1: default}` (exact key, then -1, then automatic).
//  - Automatic N keeps at least C = mg-vec-parallel-lb subgraphs (default: the
//    device's AIV core count): no merge if S <= C; else start at ceil(S/C) and
//    decrease while ceil(S/N) < C (automaticNBuffer in Subgraphs.h).
//  - Members are merged in ascending id order, N consecutive members into the
//    first of each chunk (the last chunk may be smaller); a merge is refused for an
//    sg_scope, a dependency cycle, spent merge-fuel, copy-in bytes over
//    mg-copyin-upper-bound, or (AIV) UB: when two members' tiles (a merged leaf
//    double buffers two members) would not fit the device's UB.
// The chunking is nbufferMerge() in Subgraphs.cpp, shared with cube-nbuffer-merge.
// `--debug-only=nbuffer-merge` logs each group's N and every decision.
#include "ptoc/passes/Passes.h"

#include "ptoc/passes/Subgraphs.h"

namespace ptoc::passes {
namespace {

// Both NBuffer passes: the same chunking for one core kind (the request's).
class NBufferMergePass final : public Pass {
public:
  NBufferMergePass(llvm::StringRef argument, llvm::StringRef settingName,
                   NBufferMergeRequest request, int64_t fuel)
      : argument_(argument.str()), settingName_(settingName.str()),
        request_(std::move(request)), fuel_(fuel) {}
  llvm::StringRef argument() const override { return argument_; }

  PassResult run(ir::Module &m, PassContext &ctx) override {
    MergeLog log(argument(), ctx.debugStream(argument()), fuel_);
    PassResult result = runNBufferMergePass(m, ctx.device, settingName_, request_, log);
    merged_ += log.count(MergeVerdict::Merged);
    refusedScope_ += log.count(MergeVerdict::RefusedScope);
    refusedCycle_ += log.count(MergeVerdict::RefusedCycle);
    refusedFuel_ += log.count(MergeVerdict::RefusedFuel);
    refusedCopyIn_ += log.count(MergeVerdict::RefusedCopyInCap);
    refusedUb_ += log.count(MergeVerdict::RefusedUbCapacity);
    return result;
  }

private:
  std::string argument_, settingName_;
  NBufferMergeRequest request_;
  int64_t fuel_;
  PassStatistic merged_{this, "merged", "Subgraphs merged into the first of their chunk"};
  PassStatistic refusedScope_{this, "refused-scope", "Merges refused: an sg_scope"};
  PassStatistic refusedCycle_{this, "refused-would-create-cycle",
                              "Merges refused: would create a dependency cycle"};
  PassStatistic refusedFuel_{this, "refused-fuel", "Merges refused: merge-fuel ran out"};
  PassStatistic refusedCopyIn_{this, "refused-copy-in-cap",
                               "Merges refused: copy-in bytes over mg-copyin-upper-bound"};
  PassStatistic refusedUb_{this, "refused-ub-capacity",
                           "Merges refused: a double-buffered merged leaf would exceed UB"};
};

} // namespace

std::unique_ptr<Pass> createNBufferMergePassFor(llvm::StringRef argument,
                                                llvm::StringRef settingName,
                                                NBufferMergeRequest request, int64_t fuel) {
  return std::make_unique<NBufferMergePass>(argument, settingName, std::move(request), fuel);
}

std::unique_ptr<Pass> createNBufferMergePass(const NBufferMergeOptions &options) {
  return createNBufferMergePassFor("nbuffer-merge", "vec-nbuffer-setting",
                                   {.core = target::CoreKind::AIV,
                                    .mode = options.mode,
                                    .setting = options.setting,
                                    .cores = options.parallelLowerBound,
                                    .copyInUpperBound = options.copyInUpperBound},
                                   options.fuel);
}

void registerNBufferMergePass(PassRegistry &registry) {
  registry.add(
      {"nbuffer-merge",
       "Merge isomorphic AIV subgraphs N at a time (fewer, larger vector tasks)",
       {{"vec-nbuffer-mode", OptionKind::Int, int64_t(0),
         "0 off, 1 automatic N per group (keeps mg-vec-parallel-lb subgraphs), 2 from "
         "vec-nbuffer-setting",
         0, 2},
        {"vec-nbuffer-setting", OptionKind::IntMap, IntMap{},
         "mode 2: {hash_order: N, -1: default}; groups without an entry use the automatic N",
         1},
        {"mg-vec-parallel-lb", OptionKind::Int, int64_t(-1),
         "automatic N keeps at least this many subgraphs per group; -1 = the device's AIV "
         "core count",
         -1},
        {"mg-copyin-upper-bound", OptionKind::Int, int64_t(-1),
         "byte cap on the copy-in of a merged subgraph; -1 no cap", -1},
        {"merge-fuel", OptionKind::Int, int64_t(-1),
         "merges allowed before stopping (bisection); -1 unlimited", -1}},
       [](const PassOptionValues &v) {
         return createNBufferMergePass({.mode = v.getInt("vec-nbuffer-mode"),
                                        .setting = v.getIntMap("vec-nbuffer-setting"),
                                        .parallelLowerBound = v.getInt("mg-vec-parallel-lb"),
                                        .copyInUpperBound = v.getInt("mg-copyin-upper-bound"),
                                        .fuel = v.getInt("merge-fuel")});
       }});
}

} // namespace ptoc::passes
