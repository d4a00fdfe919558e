// The one list of every pass and named pipeline ptoc knows. Each pass declares
// itself (argument, summary, options, factory) in its own file's register function.
#include "ptoc/passes/Passes.h"

namespace ptoc::passes {

void registerAllPasses(PassRegistry &registry) {
  registerCanonicalizePass(registry);
  registerCSEPass(registry);
  registerDCEPass(registry);
  registerExpandTilesPass(registry);
  registerPartitionPass(registry);
  registerNBufferMergePass(registry);
  registerCubeNBufferMergePass(registry);
  registerL1ReuseMergePass(registry);

  registry.addPipeline({"cleanup", "Tensor-level clean-up: canonicalize, cse, dce",
                        "canonicalize,cse,dce"});
}

} // namespace ptoc::passes
