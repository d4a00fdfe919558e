// PassKnobs: user knob names -> options of the default pipeline's passes.
#include "ptoc/passes/PassKnobs.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ptoc/passes/Passes.h"
#include "ptoc/passes/Pipeline.h"

namespace ptoc::passes {
namespace {

constexpr llvm::StringLiteral kScopeKnob = "sg_set_scope";

std::string underscored(llvm::StringRef name) {
  std::string s = name.str();
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

/// The passes knobs may configure, in pipeline order, and their option
/// declarations (built once; immutable afterwards).
struct KnobTable {
  PassRegistry registry;
  std::vector<const PassInfo *> passes;
  std::vector<std::string> names;

  KnobTable() {
    registerAllPasses(registry);
    for (llvm::StringRef arg : {"canonicalize", "cse", "dce", "expand-tiles", "partition",
                                "nbuffer-merge", "cube-nbuffer-merge", "l1-reuse-merge"})
      if (const PassInfo *info = registry.lookup(arg)) passes.push_back(info);
    for (const PassInfo *info : passes)
      for (const PassOptionDecl &d : info->options) names.push_back(underscored(d.name));
    names.push_back(kScopeKnob.str());
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
  }
};

const KnobTable &table() {
  static const KnobTable t;
  return t;
}

absl::Status unknownKnob(llvm::StringRef name) {
  return absl::InvalidArgumentError(absl::StrCat("unknown pass option '", name.str(),
                                                 "'; valid pass options: ",
                                                 absl::StrJoin(PassKnobs::names(), ", ")));
}

absl::Status scopeAdvice() {
  return absl::InvalidArgumentError(
      "sg_set_scope applies to the ops created after it, not to the pipeline: set it while "
      "building (Python: ptoc.set_pass_options(sg_set_scope=N) inside the traced function; "
      "C++: GraphBuilder::setScope)");
}

} // namespace

std::vector<std::string> PassKnobs::names() { return table().names; }

const PassOptionDecl *PassKnobs::find(llvm::StringRef name) {
  std::string key = underscored(name);
  for (const PassInfo *info : table().passes)
    for (const PassOptionDecl &d : info->options)
      if (underscored(d.name) == key) return &d;
  return nullptr;
}

std::vector<std::pair<std::string, OptionValue>> PassKnobs::defaults(llvm::StringRef name) {
  std::string key = underscored(name);
  std::vector<std::pair<std::string, OptionValue>> out;
  for (const PassInfo *info : table().passes)
    for (const PassOptionDecl &d : info->options)
      if (underscored(d.name) == key) out.emplace_back(info->argument, d.defaultValue);
  return out;
}

absl::Status PassKnobs::set(llvm::StringRef name, const OptionValue &value) {
  std::string key = underscored(name);
  if (key == kScopeKnob) return scopeAdvice();
  if (!find(key)) return unknownKnob(name);
  // Every pass declaring the knob checks the value (kinds and bounds may differ).
  for (const PassInfo *info : table().passes) {
    PassOptionValues check(info->options, info->argument);
    bool declares = std::any_of(info->options.begin(), info->options.end(),
                                [&](const PassOptionDecl &d) {
                                  return underscored(d.name) == key;
                                });
    if (!declares) continue;
    if (absl::Status st = check.set(key, value); !st.ok())
      return absl::InvalidArgumentError(
          absl::StrCat("pass option '", key, "': ", std::string(st.message())));
  }
  values_[key] = value;
  return absl::OkStatus();
}

absl::Status PassKnobs::setText(llvm::StringRef name, llvm::StringRef text) {
  std::string key = underscored(name);
  if (key == kScopeKnob) return scopeAdvice();
  const PassOptionDecl *decl = find(key);
  if (!decl) return unknownKnob(name);
  absl::StatusOr<OptionValue> value = parseOptionValue(*decl, text);
  if (!value.ok())
    return absl::InvalidArgumentError(
        absl::StrCat("pass option '", key, "': ", std::string(value.status().message())));
  return set(key, *value);
}

std::string PassKnobs::pipeline(bool throughExpandTiles) const {
  const KnobTable &t = table();
  absl::StatusOr<std::vector<PipelineElement>> parsed =
      parsePipeline(defaultPipelineText(), t.registry);
  // The default pipeline always parses (a unit test holds it to that).
  if (!parsed.ok()) return defaultPipelineText().str();
  std::vector<PipelineElement> pipeline = *std::move(parsed);

  if (throughExpandTiles) {
    auto expand = std::find_if(pipeline.begin(), pipeline.end(), [](const auto &e) {
      return e.info->argument == "expand-tiles";
    });
    if (expand != pipeline.end()) pipeline.erase(expand + 1, pipeline.end());
  }
  for (PipelineElement &e : pipeline)
    for (const auto &[key, value] : values_)
      for (const PassOptionDecl &d : e.info->options)
        if (underscored(d.name) == key) (void)e.options.set(d.name, value); // checked in set()
  return pipelineToString(pipeline);
}

} // namespace ptoc::passes
