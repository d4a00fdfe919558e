// cube-nbuffer-merge: the AIC counterpart of nbuffer-merge. Folds isomorphic cube
// subgraphs together N at a time, so a cube core runs fewer, larger tasks.
//  - Per isomorphism group of AIC subgraphs (S members), N is chosen by
//    cube-nbuffer-mode: 0 off, 1 automatic, 2 from cube-nbuffer-setting
//    `{func<F>_<order>: N, hash_order: N, -1: default}`: the first that exists, else
//    automatic; the default -1: automatic in loop bodies, off elsewhere (the
//    default pipeline runs this pass, so loop bodies' cube tasks are merged for the
//    control thread).
//  - Automatic N keeps at least C = the device's AIC core count subgraphs: no
//    merge if S <= C; else start at ceil(S/C) and decrease while ceil(S/N) < C;
//    in a loop body at least the control thread's N (as nbuffer-merge's).
//  - Members are merged in ascending id order, N consecutive members into the
//    first of each chunk; refused for an sg_scope, a cycle or spent merge-fuel.
// The pass object and the chunking are nbuffer-merge's (NBufferMerge.cpp); only
// the core kind and option names differ.
// `--debug-only=cube-nbuffer-merge` logs each group's N and every decision.
#include "ptoc/passes/MergeOptions.h"
#include "ptoc/passes/Passes.h"

#include "NBufferMerge.h"

namespace ptoc::passes {

std::unique_ptr<Pass> createCubeNBufferMergePass(const CubeNBufferMergeOptions &options) {
  return createNBufferMergePassFor("cube-nbuffer-merge", "cube-nbuffer-setting",
                                   {.core = target::CoreKind::AIC,
                                    .mode = options.mode,
                                    .setting = options.setting,
                                    .cores = -1,
                                    .copyInUpperBound = options.copyInUpperBound},
                                   options.fuel);
}

void registerCubeNBufferMergePass(PassRegistry &registry) {
  static const OptionRow<CubeNBufferMergeOptions> kRows[] = {
      {"cube-nbuffer-mode", &CubeNBufferMergeOptions::mode,
       "0 off, 1 automatic N per group (keeps the device's AIC core count of subgraphs; "
       "in loop bodies at least the control thread's N), 2 from cube-nbuffer-setting, -1 "
       "automatic in loop bodies only",
       -1, 2},
      {"cube-nbuffer-setting", &CubeNBufferMergeOptions::setting,
       "mode 2: {hash_order: N, func<F>_<order>: N, -1: default} (a func<F>_ key wins in "
       "its root function); groups without an entry, and N = 0, use the automatic N",
       double(kAutomaticCount)},
      copyInUpperBoundRow(&CubeNBufferMergeOptions::copyInUpperBound),
      mergeFuelRow(&CubeNBufferMergeOptions::fuel),
  };
  registry.add({"cube-nbuffer-merge",
                "Merge isomorphic AIC subgraphs N at a time (fewer, larger cube tasks)",
                declareOptions(kRows), [](const PassOptionValues &v) {
                  return createCubeNBufferMergePass(readOptions(kRows, v));
                }});
}

} // namespace ptoc::passes
