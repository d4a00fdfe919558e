// `ptoc prof PATH` as a library operation: read, analyse, write analysis and page.
#include "ptoc/profile/TraceProfile.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "ptoc/profile/OutputDir.h"
#include "ptoc/profile/RunOutputs.h"
#include "ptoc/profile/SwimlaneHtml.h"
#include "ptoc/profile/TimelineTrace.h"
#include "ptoc/support/AtomicWrite.h"

namespace ptoc::profile {

namespace {

/// `file` beside `traceFile`: a ptoc trace's run folder has one trace, so the plain
/// name; a device trace's gets the trace's stem ("<stem>.<file>"), as a folder may
/// hold several.
std::string besideTrace(llvm::StringRef traceFile, TimelineFamily family, llvm::StringRef file) {
  llvm::SmallString<256> path(traceFile);
  std::string stem = llvm::sys::path::stem(traceFile).str();
  llvm::sys::path::remove_filename(path);
  if (path.empty()) path = ".";
  bool ptoc = family == TimelineFamily::PtocTrace || family == TimelineFamily::PtocRun;
  llvm::sys::path::append(path, ptoc ? file.str() : stem + "." + file.str());
  return std::string(path);
}

} // namespace

std::string analysisPathFor(llvm::StringRef traceFile, TimelineFamily family) {
  return besideTrace(traceFile, family, kAnalysisFile);
}

std::string swimlaneHtmlPathFor(llvm::StringRef traceFile, TimelineFamily family) {
  return besideTrace(traceFile, family, kSwimlaneHtmlFile);
}

absl::StatusOr<TraceProfile> profileTrace(llvm::StringRef path,
                                          const TraceProfileOptions &options) {
  absl::StatusOr<Timeline> timeline = loadTrace(path, options.read);
  if (!timeline.ok()) return timeline.status();
  TraceProfile out;
  out.timeline = *std::move(timeline);
  out.analysis = analyze(out.timeline, options.analysis);
  out.analysisJson = analysisJson(out.analysis);
  if (!options.write) return out;
  const std::string &trace = out.timeline.source;
  out.analysisPath = analysisPathFor(trace, out.timeline.family);
  if (absl::Status s = support::writeFileAtomically(out.analysisPath, out.analysisJson); !s.ok()) return s;
  std::string html = swimlaneHtmlPathFor(trace, out.timeline.family);
  if (out.timeline.family == TimelineFamily::PtocTrace) {
    // A run folder's page shows the analysis once it exists: refresh it.
    if (!llvm::sys::fs::exists(html)) return out;
    llvm::SmallString<256> folder(trace);
    llvm::sys::path::remove_filename(folder);
    if (folder.empty()) folder = ".";
    if (absl::Status s = writeSwimlaneHtmlFile(folder); !s.ok())
      out.htmlWarning = std::string(s.message());
    else
      out.htmlPath = html;
    return out;
  }
  // Another family's page draws its timeline in ptoc's layout.
  std::string display;
  llvm::raw_string_ostream os(display);
  if (absl::Status s = writeTimelineTrace(os, out.timeline); !s.ok()) return s;
  os.flush();
  SwimlaneHtmlInputs inputs;
  inputs.traceJson = display;
  inputs.analysisJson = out.analysisJson;
  if (absl::Status s = support::writeFileAtomically(html, [&](llvm::raw_ostream &page) {
        return writeSwimlaneHtml(page, inputs);
      });
      !s.ok())
    return s;
  out.htmlPath = html;
  return out;
}

} // namespace ptoc::profile
