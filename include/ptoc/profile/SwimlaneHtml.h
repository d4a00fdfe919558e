// swimlane.html: one self-contained page (inline script, style and SVG; nothing
// fetched) that draws a run's trace as lanes per core and per pipe, with zoom, pan,
// hover details, dependency arrows and the summary and verdicts on top
// (docs/profiling.md "swimlane.html" lists its element ids for tests).
#pragma once

#include "absl/status/status.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace ptoc::profile {

/// File name of the page, inside a run folder beside merged_swimlane.json.
inline constexpr const char *kSwimlaneHtmlFile = "swimlane.html";

/// What the page shows. Each is JSON text, embedded as it is (made safe for a
/// `<script>` element); the page parses it in the browser.
struct SwimlaneHtmlInputs {
  /// merged_swimlane.json: the Chrome trace (`writeSwimlane`). Required.
  llvm::StringRef traceJson;
  /// summary.json (`summaryJson`): numbers and verdicts when there is no analysis.
  llvm::StringRef summaryJson;
  /// analysis.json (`ptoc prof`); may be empty. When present, its numbers and
  /// verdicts are shown instead of the summary's.
  llvm::StringRef analysisJson;
};

/// Writes the page to `os`. Errors (nothing useful written): the trace is empty or
/// not a JSON object, or the summary / analysis is not empty and not valid JSON; the
/// message names which input and why. The trace is not parsed here (it may be
/// large); a trace the browser cannot read shows an error in the page instead.
absl::Status writeSwimlaneHtml(llvm::raw_ostream &os, const SwimlaneHtmlInputs &inputs);

/// Reads merged_swimlane.json, summary.json and (if present) analysis.json from the
/// run folder `folder` and writes `folder`/swimlane.html atomically. Call again after
/// writing analysis.json to show its numbers. Errors name the file that could not be
/// read or written.
absl::Status writeSwimlaneHtmlFile(llvm::StringRef folder);

} // namespace ptoc::profile
