// The record of one tuning run: tune_result_<YYYYmmdd_HHMMSS>_pid<n>.json.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"
#include "ptoc/tune/Search.h"
#include "ptoc/tune/SearchSpace.h"

namespace ptoc::tune {

/// The `format` field of a tune result file, and its version.
inline constexpr llvm::StringLiteral kTuneResultFormat = "ptoc-tune-result";
inline constexpr int64_t kTuneResultVersion = 2;

/// The JSON of a run:
/// ```
/// {"format": "ptoc-tune-result", "version": 2,
///  "strategy": "ga", "seed": 0, "budget": 64,
///  "evaluations_used": 40, "pruned": 3, "space_exhausted": false,
///  "space": [{"name": "vec_tile[0]", "kind": "vector", "values": [[1,4096], ...]}, ...],
///  "evaluations": [{"index": 0, "config": {...}, "valid": true, "time_us": 12.5},
///                  {"index": 1, "config": {...}, "valid": false, "time_us": null,
///                   "invalid_reason": "vec_tile [64, 4096] of 'exp' at f.py:12 needs ..."}, ...],
///  "pruned_configs": [{"config": {...}, "reason": "..."}, ...],
///  "best": {"index": 7, "config": {...}, "time_us": 9.75} | null}
/// ```
/// An invalid config has "valid": false, "time_us": null and the reason. Streamed to
/// `os` (indented by two, keys sorted, as llvm::json prints a tree) without building a
/// JSON tree, so a run of a million evaluations needs no more memory than its
/// SearchResult.
void writeTuneResultJson(llvm::raw_ostream &os, const SearchSpace &space,
                         const SearchResult &result);

/// A parsed tune result file: the space it searched and what the search did.
struct TuneResultFile {
  SearchSpace space;
  SearchResult result;
};
/// Parses the JSON text of a tune result file. Errors name the field that is wrong.
absl::StatusOr<TuneResultFile> parseTuneResult(llvm::StringRef text);

/// The file name for a run now in this process: `tune_result_<YYYYmmdd_HHMMSS>_pid<n>.json`
/// (local time).
std::string tuneResultFileName();

/// Writes the run's JSON (streamed) into `folder` (created if needed) atomically and returns the
/// file's path. If a file of that name exists already (two runs in one second), a
/// suffix `_<k>` goes before ".json" so no result is overwritten.
absl::StatusOr<std::string> writeTuneResult(const SearchSpace &space,
                                            const SearchResult &result,
                                            llvm::StringRef folder);

} // namespace ptoc::tune
