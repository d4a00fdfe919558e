// The pass registry: one declaration per pass (argument, summary, options, factory).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include "ptoc/passes/Pass.h"
#include "ptoc/passes/PassOptions.h"

namespace ptoc::passes {

/// Everything known about one pass, declared once in the pass's own file.
struct PassInfo {
  std::string argument; ///< `canonicalize`
  std::string summary;  ///< one line for --list-passes and --help
  std::vector<PassOptionDecl> options;
  std::function<std::unique_ptr<Pass>(const PassOptionValues &)> factory;
};

/// A named pipeline (e.g. `default`), expanding to a pipeline string.
struct PipelineInfo {
  std::string name;
  std::string summary;
  std::string pipeline;
};

/// The set of passes a driver knows. Built explicitly (no static registration):
/// `PassRegistry r; registerAllPasses(r);`.
class PassRegistry {
public:
  void add(PassInfo info);
  void addPipeline(PipelineInfo info);
  const PassInfo *lookup(llvm::StringRef argument) const;
  const PipelineInfo *lookupPipeline(llvm::StringRef name) const;
  const std::vector<PassInfo> &passes() const { return passes_; }
  const std::vector<PipelineInfo> &pipelines() const { return pipelines_; }
  /// Every pass with its summary and options (the --list-passes text).
  void printHelp(llvm::raw_ostream &os) const;

private:
  std::vector<PassInfo> passes_;
  std::vector<PipelineInfo> pipelines_;
};

} // namespace ptoc::passes
