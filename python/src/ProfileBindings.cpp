// Python face of the trace analysis: `ptoc.profile.analyze` calls analyze_trace, the
// same library operation as `ptoc prof` (profile::profileTrace), which returns
// analysis.json's text (so Python sees exactly the documented keys).
#include "ProfileBindings.h"

#include <pybind11/pybind11.h>

#include "ptoc/profile/TraceProfile.h"
#include "ptoc/target/DeviceSpec.h"

namespace py = pybind11;

namespace ptoc::python {

void bindProfile(py::module_ &m) {
  m.def(
      "analyze_trace",
      [](const std::string &path, int top, bool write, const std::string &device) {
        profile::TraceProfileOptions options;
        options.analysis.summary.topTasks = top;
        options.analysis.topWaits = top;
        options.write = write;
        std::optional<target::DeviceSpec> spec;
        if (!device.empty()) {
          absl::StatusOr<target::DeviceSpec> loaded = target::DeviceSpec::load(device);
          if (!loaded.ok()) throw py::value_error(std::string(loaded.status().message()));
          spec = *std::move(loaded);
          options.read.device = &*spec;
        }
        absl::StatusOr<profile::TraceProfile> result;
        {
          py::gil_scoped_release release; // a large trace takes a while to parse
          result = profile::profileTrace(path, options);
        }
        // A bad trace is the caller's input, not a compile or run failure: ptoc/profile.py
        // turns the ValueError into ptoc.profile.TraceError.
        if (!result.ok()) throw py::value_error(std::string(result.status().message()));
        return result->analysisJson;
      },
      py::arg("path"), py::arg("top") = profile::SummaryOptions{}.topTasks,
      py::arg("write") = false, py::arg("device") = "",
      "analysis.json's text for a trace or run folder, as `ptoc prof` computes it "
      "(profile::profileTrace; ValueError if the trace is malformed); write=True also "
      "writes the analysis beside the trace and refreshes the page, as `ptoc prof` does.");
}

} // namespace ptoc::python
