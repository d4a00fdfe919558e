// Measured kernels compiled by the session (see MeasurementSimulator.h).
#include "ptoc/session/MeasurementSimulator.h"

#include "absl/strings/str_cat.h"
#include "ptoc/session/Session.h"
#include "ptoc/support/ErrorCategory.h"

namespace ptoc::session {

absl::StatusOr<codegen::Program> compileMeasuredKernel(const calibrate::MeasuredKernel &kernel,
                                                       const target::DeviceSpec &device) {
  CompileOptions options;
  options.keepIr = false;
  options.collectStats = false;
  options.funcName = kernel.funcName;
  // The measured kernels (PyPTO's and CANN's) step each output tile's K loop from 0:
  // so does their simulation, unless the file's own pass options say otherwise.
  if (absl::Status st = options.knobs.set("cube_k_stagger", false); !st.ok())
    return support::internalError(llvm::Twine("the measured kernels' K order: ") +
                                  std::string(st.message()));
  for (const auto &[name, value] : kernel.passOptions)
    if (absl::Status st = options.knobs.setText(name, value); !st.ok())
      return absl::InvalidArgumentError(
          absl::StrCat("pass option ", name, "=", value, ": ", st.message()));
  absl::StatusOr<Kernel> compiled = Session(device).compileText(kernel.ptoText, kernel.label, options);
  if (!compiled.ok()) return compiled.status();
  return std::move(compiled->program);
}

calibrate::MeasurementSimulator measurementSimulator(size_t maxCachedPrograms) {
  return calibrate::MeasurementSimulator(compileMeasuredKernel, maxCachedPrograms);
}

} // namespace ptoc::session
