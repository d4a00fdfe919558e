// The pass registry: lookup by argument, named pipelines, and the --list-passes text.
#include "ptoc/passes/PassRegistry.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

namespace ptoc::passes {

void PassRegistry::add(PassInfo info) {
  // Registration is ptoc's own code, never user input: a clash is a bug.
  if (lookup(info.argument) || lookupPipeline(info.argument))
    llvm::report_fatal_error("ptoc bug: pass '" + llvm::Twine(info.argument) +
                             "' registered twice");
  if (!info.factory)
    llvm::report_fatal_error("ptoc bug: pass '" + llvm::Twine(info.argument) +
                             "' registered without a factory");
  passes_.push_back(std::move(info));
}

void PassRegistry::addPipeline(PipelineInfo info) {
  if (lookup(info.name) || lookupPipeline(info.name))
    llvm::report_fatal_error("ptoc bug: pipeline '" + llvm::Twine(info.name) +
                             "' clashes with a registered pass or pipeline");
  pipelines_.push_back(std::move(info));
}

const PassInfo *PassRegistry::lookup(llvm::StringRef argument) const {
  for (const PassInfo &p : passes_)
    if (p.argument == argument) return &p;
  return nullptr;
}

const PipelineInfo *PassRegistry::lookupPipeline(llvm::StringRef name) const {
  for (const PipelineInfo &p : pipelines_)
    if (p.name == name) return &p;
  return nullptr;
}

void PassRegistry::printHelp(llvm::raw_ostream &os) const {
  os << "Passes:\n";
  for (const PassInfo &p : passes_) {
    os << "  " << p.argument << "  " << p.summary << "\n";
    for (const PassOptionDecl &o : p.options)
      os << "    " << o.name << "=" << optionKindName(o.kind) << "  " << o.help
         << " (default " << optionValueToString(o.defaultValue) << ")\n";
  }
  if (pipelines_.empty()) return;
  os << "Pipelines:\n";
  for (const PipelineInfo &p : pipelines_)
    os << "  " << p.name << "  " << p.summary << "\n    = " << p.pipeline << "\n";
}

} // namespace ptoc::passes
