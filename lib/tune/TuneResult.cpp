// Writing and reading tune_result_<timestamp>_pid<n>.json.
#include "ptoc/tune/TuneResult.h"

#include <ctime>

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "ptoc/profile/OutputDir.h"
#include "ptoc/support/AtomicWrite.h"
#include "ptoc/support/BoundedJson.h"

namespace ptoc::tune {

namespace {

/// How many `_<k>` suffixes to try before giving up on a fresh file name.
constexpr int kMaxNameAttempts = 1000;

llvm::json::Value timeJson(const std::optional<double> &micros) {
  if (micros) return *micros;
  return nullptr;
}

absl::Status fieldError(const std::string &field, const std::string &what) {
  return absl::InvalidArgumentError(
      absl::StrCat("tune result file: field '", field, "' ", what));
}

} // namespace

// Keys in sorted order throughout, as llvm::json prints an object's keys.
void writeTuneResultJson(llvm::raw_ostream &os, const SearchSpace &space,
                         const SearchResult &result) {
  llvm::json::OStream j(os, 2);
  j.object([&] {
    j.attributeBegin("best");
    if (const Evaluation *b = result.bestEvaluation())
      j.object([&] {
        j.attribute("config", space.configToJson(b->config));
        j.attribute("index", static_cast<int64_t>(*result.best));
        j.attribute("time_us", timeJson(b->micros));
      });
    else
      j.value(nullptr);
    j.attributeEnd();
    j.attribute("budget", static_cast<int64_t>(result.budget));
    j.attributeArray("evaluations", [&] {
      for (std::size_t i = 0; i < result.evaluations.size(); ++i) {
        const Evaluation &e = result.evaluations[i];
        j.object([&] {
          j.attribute("config", space.configToJson(e.config));
          j.attribute("index", static_cast<int64_t>(i));
          if (!e.micros) j.attribute("invalid_reason", e.invalidReason);
          j.attribute("time_us", timeJson(e.micros));
          j.attribute("valid", e.micros.has_value());
        });
      }
    });
    j.attribute("evaluations_used", static_cast<int64_t>(result.evaluationsUsed()));
    j.attribute("format", kTuneResultFormat);
    j.attribute("pruned", static_cast<int64_t>(result.prunedCount()));
    j.attributeArray("pruned_configs", [&] {
      for (const PrunedConfig &p : result.prunedConfigs)
        j.object([&] {
          j.attribute("config", space.configToJson(p.config));
          j.attribute("reason", p.reason);
        });
    });
    j.attribute("seed", static_cast<int64_t>(result.seed));
    j.attribute("space", space.toJson());
    j.attribute("space_exhausted", result.spaceExhausted);
    j.attribute("strategy", result.strategy);
    j.attribute("version", kTuneResultVersion);
  });
}

absl::StatusOr<TuneResultFile> parseTuneResult(llvm::StringRef text) {
  absl::StatusOr<llvm::json::Value> parsed = support::parseJson(text, "tune result file");
  if (!parsed.ok()) return parsed.status();
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root) return absl::InvalidArgumentError("tune result file: the top level is not an object");
  if (root->getString("format").getValueOr("") != kTuneResultFormat)
    return fieldError("format", absl::StrCat("is not \"", kTuneResultFormat.str(), "\""));
  if (support::jsonInteger(*root, "version").value_or(-1) != kTuneResultVersion)
    return fieldError("version", absl::StrCat("is not ", kTuneResultVersion,
                                              " (written by another ptoc version?)"));
  TuneResultFile file;
  const llvm::json::Value *space = root->get("space");
  if (!space) return fieldError("space", "is missing");
  auto parsedSpace = SearchSpace::fromJson(*space);
  if (!parsedSpace.ok()) return parsedSpace.status();
  file.space = std::move(*parsedSpace);

  SearchResult &result = file.result;
  auto strategy = root->getString("strategy");
  if (!strategy) return fieldError("strategy", "is missing or not a string");
  result.strategy = strategy->str();
  std::optional<int64_t> seed = support::jsonInteger(*root, "seed");
  std::optional<int64_t> budget = support::jsonInteger(*root, "budget");
  if (!seed || *seed < 0) return fieldError("seed", "is missing or negative");
  if (!budget || *budget < 0) return fieldError("budget", "is missing or negative");
  result.seed = static_cast<uint64_t>(*seed);
  result.budget = static_cast<uint64_t>(*budget);
  result.spaceExhausted = root->getBoolean("space_exhausted").getValueOr(false);

  const llvm::json::Array *evaluations = root->getArray("evaluations");
  if (!evaluations) return fieldError("evaluations", "is missing or not an array");
  for (std::size_t i = 0; i < evaluations->size(); ++i) {
    const llvm::json::Object *e = (*evaluations)[i].getAsObject();
    std::string where = absl::StrCat("evaluations[", i, "]");
    if (!e || !e->get("config")) return fieldError(where, "is not an object with a config");
    auto config = file.space.configFromJson(*e->get("config"));
    if (!config.ok())
      return fieldError(absl::StrCat(where, ".config"), std::string(config.status().message()));
    Evaluation evaluation{std::move(*config), std::nullopt, ""};
    if (auto time = e->getNumber("time_us")) evaluation.micros = *time;
    else evaluation.invalidReason = e->getString("invalid_reason").getValueOr("").str();
    result.evaluations.push_back(std::move(evaluation));
  }
  if (const llvm::json::Array *pruned = root->getArray("pruned_configs"))
    for (std::size_t i = 0; i < pruned->size(); ++i) {
      std::string where = absl::StrCat("pruned_configs[", i, "]");
      const llvm::json::Object *p = (*pruned)[i].getAsObject();
      if (!p || !p->get("config")) return fieldError(where, "is not an object with a config");
      auto config = file.space.configFromJson(*p->get("config"));
      if (!config.ok())
        return fieldError(absl::StrCat(where, ".config"), std::string(config.status().message()));
      result.prunedConfigs.push_back(
          PrunedConfig{std::move(*config), p->getString("reason").getValueOr("").str()});
    }
  if (const llvm::json::Object *best = root->getObject("best")) {
    std::optional<int64_t> index = support::jsonInteger(*best, "index");
    if (!index || *index < 0 || static_cast<std::size_t>(*index) >= result.evaluations.size() ||
        !result.evaluations[*index].micros)
      return fieldError("best.index", "does not name a valid evaluation");
    result.best = static_cast<std::size_t>(*index);
  }
  return file;
}

std::string tuneResultFileName() {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d_%H%M%S", &local);
  return absl::StrFormat("tune_result_%s_pid%d.json", stamp, getpid());
}

absl::StatusOr<std::string> writeTuneResult(const SearchSpace &space,
                                            const SearchResult &result,
                                            llvm::StringRef folder) {
  if (std::error_code ec = llvm::sys::fs::create_directories(folder))
    return absl::InvalidArgumentError(absl::StrCat("cannot create tune result folder '",
                                                   folder.str(), "': ", ec.message()));
  const std::string name = tuneResultFileName();
  llvm::StringRef stem = llvm::StringRef(name).drop_back(llvm::StringRef(".json").size());
  for (int attempt = 0; attempt < kMaxNameAttempts; ++attempt) {
    llvm::SmallString<256> path(folder);
    llvm::sys::path::append(path, attempt == 0 ? name
                                               : absl::StrCat(stem.str(), "_", attempt, ".json"));
    if (llvm::sys::fs::exists(path)) continue;
    absl::Status written = support::writeFileAtomically(path, [&](llvm::raw_ostream &os) {
      writeTuneResultJson(os, space, result);
      os << "\n";
      return absl::OkStatus();
    });
    if (!written.ok()) return written;
    return std::string(path);
  }
  return absl::InternalError(absl::StrCat("could not find a fresh tune result file name in '",
                                          folder.str(), "'"));
}

} // namespace ptoc::tune
