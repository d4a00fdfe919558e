// The one list of every pass and named pipeline ptoc knows. Each pass declares
// itself (argument, summary, options, factory) in its own file's register function.
#include "ptoc/passes/Passes.h"

namespace ptoc::passes {

llvm::StringRef defaultPipelineText() {
  // Ops without a tile shape get one derived from the op and the device before
  // tiling. Vector groups are merged automatically (tasks of at least the AIV core
  // count); cube groups keep their parallelism, and merge only to share an L1 load,
  // except in loop bodies (cube-nbuffer-merge's default mode), where the control
  // thread builds every task and both kinds merge at least its count.
  return "canonicalize,cse,dce,default-tiles,expand-tiles,partition,nbuffer-merge{vec-nbuffer-mode=1},"
         "cube-nbuffer-merge,l1-reuse-merge{cube-l1-reuse-mode=1}";
}

void registerAllPasses(PassRegistry &registry) {
  registerCanonicalizePass(registry);
  registerCSEPass(registry);
  registerDCEPass(registry);
  registerOutlineSegmentsPass(registry);
  registerDefaultTilesPass(registry);
  registerExpandTilesPass(registry);
  registerPartitionPass(registry);
  registerNBufferMergePass(registry);
  registerCubeNBufferMergePass(registry);
  registerL1ReuseMergePass(registry);

  registry.addPipeline({"cleanup", "Tensor-level clean-up: canonicalize, cse, dce",
                        "canonicalize,cse,dce"});
  registry.addPipeline({"default",
                        "What a user gets without naming passes: clean-up, tiling, "
                        "partition and the merges",
                        std::string(defaultPipelineText())});
}

} // namespace ptoc::passes
