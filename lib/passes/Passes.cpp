// The one list of every pass and named pipeline ptoc knows.
#include "ptoc/passes/Passes.h"

namespace ptoc::passes {

void registerAllPasses(PassRegistry &registry) {
  registry.add({"canonicalize",
                "Fold reshape chains, drop identity casts/transposes/views, fold constants",
                {{"fold-constants", OptionKind::Bool, true,
                  "fold ops on constants and drop x+0, x*1 identities"}},
                [](const PassOptionValues &v) {
                  return createCanonicalizePass({.foldConstants = v.getBool("fold-constants")});
                }});
  registry.add({"cse", "Replace operations by identical earlier ones", {},
                [](const PassOptionValues &) { return createCSEPass(); }});
  registry.add({"dce", "Remove operations whose results never reach a return", {},
                [](const PassOptionValues &) { return createDCEPass(); }});

  registry.addPipeline({"cleanup", "Tensor-level clean-up: canonicalize, cse, dce",
                        "canonicalize,cse,dce"});
}

} // namespace ptoc::passes
