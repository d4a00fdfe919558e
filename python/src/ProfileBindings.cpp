// Python face of the trace analysis: `ptoc.profile.analyze` calls analyze_trace, which
// returns analysis.json's text (so Python sees exactly the documented keys).
#include "ProfileBindings.h"

#include <pybind11/pybind11.h>

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"
#include "ptoc/profile/OutputDir.h"
#include "ptoc/profile/TraceAnalysis.h"
#include "ptoc/support/AtomicWrite.h"

namespace py = pybind11;

namespace ptoc::python {

void bindProfile(py::module_ &m) {
  m.def(
      "analyze_trace",
      [](const std::string &path, int top, bool write) {
        absl::StatusOr<profile::TraceData> trace;
        {
          py::gil_scoped_release release; // a large trace takes a while to parse
          trace = profile::loadTrace(path);
        }
        // A bad trace is the caller's input, not a compile or run failure: ptoc/profile.py
        // turns the ValueError into ptoc.profile.TraceError.
        if (!trace.ok()) throw py::value_error(std::string(trace.status().message()));
        profile::AnalysisOptions options;
        options.summary.topTasks = top;
        options.topWaits = top;
        std::string json = profile::analysisJson(profile::analyze(*trace, options));
        if (write) {
          llvm::SmallString<256> out(trace->path);
          llvm::sys::path::remove_filename(out);
          llvm::sys::path::append(out, profile::kAnalysisFile);
          if (absl::Status s = support::writeFileAtomically(out, json); !s.ok())
            throw py::value_error(std::string(s.message()));
        }
        return json;
      },
      py::arg("path"), py::arg("top") = profile::SummaryOptions{}.topTasks,
      py::arg("write") = false,
      "analysis.json's text for a merged_swimlane.json or run folder (ValueError if the "
      "trace is malformed); write=True also writes analysis.json beside the trace.");
}

} // namespace ptoc::python
