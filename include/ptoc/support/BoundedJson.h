// BoundedJson: the one way ptoc parses a JSON document it reads from outside (device
// files, bank lines, search spaces, reports, summaries): llvm::json with limits on
// nesting depth and size checked first, and errors that name the source and position.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

namespace ptoc::support {

/// Deepest nesting of arrays and objects ptoc reads. llvm::json's parser (and the
/// trace reader's) recurse once per level, so without a limit a line of 40,000 '['
/// overflows the stack; 64 levels cost a few tens of KB of stack even under
/// sanitizers, on any thread. ptoc's own files nest at most kOwnJsonDepth levels,
/// and JSON written by hand rarely passes 20, so 64 refuses nothing real. The trace
/// reader (lib/profile/TraceScanner) uses the same limit.
inline constexpr int kMaxJsonDepth = 64;
/// The deepest nesting of a JSON file ptoc writes (a trace, a report or summary, a
/// bank line, a tune result), for messages: a file nested past kMaxJsonDepth is not
/// one of ptoc's.
inline constexpr int kOwnJsonDepth = 5;

/// Largest JSON text read as one document. A parsed llvm::json tree takes several
/// times its text in memory (up to ~16x for arrays of small numbers), so the limit
/// keeps a mistaken or hostile file to a few GB at worst. ptoc's own documents are
/// far smaller (a device file ~2 KB, a bank line ~1 KB, a tune result a few MB); the
/// traces, which can be GBs, are read by the event-at-a-time trace reader instead.
inline constexpr size_t kMaxJsonBytes = size_t(256) << 20;

/// The limits of one parse; the defaults are the constants above.
struct JsonLimits {
  int maxDepth = kMaxJsonDepth;
  size_t maxBytes = kMaxJsonBytes;
};

/// Parses `text` as one JSON value. Before anything recurses or allocates, a linear
/// scan checks the size and the nesting depth against `limits` and the numbers'
/// range; then llvm::json::parse builds the tree, so the depth of every recursion
/// over it (parse, copy, print, destroy) is bounded too.
///
/// Numbers: an integer written without fraction or exponent that does not fit in
/// int64 (llvm::json would clamp it to INT64_MAX silently) is read as the nearest
/// double, as a number with an exponent is; a number beyond the range of a double
/// (1e999) is an error rather than infinity.
///
/// Errors are InvalidArgument: "<source>: <problem> at line L column C: <detail>",
/// with the fix where there is one (`source` is left out when empty, for callers whose
/// own message names the input).
absl::StatusOr<llvm::json::Value> parseJson(llvm::StringRef text, llvm::StringRef source,
                                            const JsonLimits &limits = {});

/// `v` as an integer if it is one (an integer, or a double with no fractional part)
/// and fits in int64. Use it instead of llvm::json's getAsInteger, which also accepts
/// the double 2^63 and converts it to int64 (undefined behaviour).
std::optional<int64_t> jsonInteger(const llvm::json::Value &v);
/// The member `key` of `o` as jsonInteger reads it; nullopt when absent.
std::optional<int64_t> jsonInteger(const llvm::json::Object &o, llvm::StringRef key);

/// A JSON value as it would appear in its file, shortened to at most 60 characters
/// ("..." at the end) for error messages.
std::string jsonPreview(const llvm::json::Value &v);

} // namespace ptoc::support
