// `ptoc calibrate` (see CalibrateMain.h): reads measurement files, fits the chosen
// device fields with calibrate::calibrate, prints the error per set before and after,
// the fields that moved and the cross-validated error, and writes the device file.
#include "ptoc/tools/CalibrateMain.h"

#include <cmath>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/strings/ascii.h"
#include "llvm/Support/raw_ostream.h"
#include "ptoc/calibrate/Calibrator.h"
#include "ptoc/calibrate/Measurements.h"
#include "ptoc/session/MeasurementSimulator.h"
#include "ptoc/support/AtomicWrite.h"
#include "ptoc/target/DeviceSpec.h"
#include "ptoc/tools/ArgParser.h"

namespace ptoc::tools {

using calibrate::MeasurementSimulator;
namespace {

/// `ptoc calibrate` arguments: the fit's options are calibrate::CalibrationOptions, so
/// its defaults are the calibrator's.
struct CalibrateArgs {
  std::vector<std::string> files;
  std::string output;
  std::string device;
  std::string name;
  calibrate::CalibrationOptions options;
};

CommandSpec calibrateSpec(CalibrateArgs &a) {
  std::vector<std::string> *fields = &a.options.fields;
  CustomValue fit{[fields](llvm::StringRef, const std::string &text) {
                    for (absl::string_view f : absl::StrSplit(text, ',', absl::SkipWhitespace()))
                      fields->push_back(std::string(absl::StripAsciiWhitespace(f)));
                    return std::string();
                  },
                  "the defaults: rates, latencies and start-up costs public data pin down least"};
  return CommandSpec{
      "ptoc calibrate",
      R"(Fits device fields to kernels measured on your own part, so the simulator agrees
with it (docs/fidelity.md). Each file lists measured kernels and their kernel times,
in the form of benchmarks/data/npu-measurements/*.json.

Prints the error per set before and after (MAPE of the kernel time, Spearman of the
ranking), every fitted field before and after with its bounds, and the
cross-validated error: each fold of points predicted by a fit made without it. A
cross-validated error far above the fitted one means the fit memorised the points.
)",
      ArgPositional{"MEASUREMENTS.json...", &a.files, "measurement files", 1, 0,
                    "no measurement files"},
      {
          {"output", &a.output, "OUT.json",
           "where the calibrated device description goes (a complete file; use it as "
           "--device OUT.json); written only when the fit succeeds",
           {}, "", 'o', true},
          {"device", &a.device, "D",
           "the device to start from: a preset (" +
               absl::StrJoin(target::DeviceSpec::presetNames(), ", ") + ") or a device file",
           {}, "the files' own \"device\", when they agree"},
          {"fit", fit, "FIELDS", "comma-separated device fields to fit"},
          {"max-factor", &a.options.maxFactor, "F",
           "each field stays within [start / F, start * F] and its physical range",
           Bounds::above(1, 1000)},
          {"budget", &a.options.maxEvaluations, "N", "simulations of all points one fit may spend",
           Bounds::between(1, 100000)},
          {"folds", &a.options.folds, "K", "cross-validation folds; 0 = none",
           Bounds::between(0, 100)},
          {"name", &a.name, "NAME", "the calibrated device's name", {}, "<device>-calibrated"},
      }};
}

int fail(absl::string_view msg) {
  llvm::errs() << "ptoc calibrate: " << std::string(msg) << "\n";
  return kExitError;
}

std::string percent(double v) { return absl::StrFormat("%.1f%%", 100 * v); }

std::string number(double v) { return absl::StrFormat("%.4g", v); }

} // namespace

int calibrateMain(const std::vector<std::string> &argv) {
  CalibrateArgs args;
  ArgParser parser(calibrateSpec(args));
  if (std::optional<int> status = parser.parse(argv)) return *status;
  const calibrate::CalibrationOptions &options = args.options;

  std::vector<calibrate::MeasurementSet> sets;
  for (const std::string &file : args.files) {
    absl::StatusOr<calibrate::MeasurementSet> set = calibrate::readMeasurements(file);
    if (!set.ok()) return fail(set.status().message());
    sets.push_back(*std::move(set));
  }
  std::string deviceName;
  if (!args.device.empty()) {
    deviceName = args.device;
    for (const calibrate::MeasurementSet &s : sets)
      if (s.device != deviceName)
        llvm::errs() << "ptoc calibrate: note: " << s.path << " was measured on '" << s.device
                     << "'; fitting it on --device " << deviceName << "\n";
  } else {
    deviceName = sets.front().device;
    for (const calibrate::MeasurementSet &s : sets)
      if (s.device != deviceName)
        return parser.usageError(absl::StrCat("the files name different devices ('", deviceName, "' in ",
                                  sets.front().path, ", '", s.device, "' in ", s.path,
                                  "); calibrate one part at a time, or pass --device"));
  }
  // The files' own device is found (and named in errors) by the first file.
  absl::StatusOr<target::DeviceSpec> start = args.device.empty()
                                                 ? calibrate::loadMeasuredDevice(sets.front())
                                                 : target::DeviceSpec::load(deviceName);
  if (!start.ok()) return fail(start.status().message());

  size_t points = 0;
  for (const calibrate::MeasurementSet &s : sets) points += s.points.size();
  llvm::outs() << "calibrating " << start->name << " to " << points << " measured kernel"
               << (points == 1 ? "" : "s") << " in " << sets.size() << " set"
               << (sets.size() == 1 ? "" : "s") << "\n";
  llvm::outs().flush();

  MeasurementSimulator simulator = session::measurementSimulator();
  simulator.fixTransferCostsForCompile(*start);
  calibrate::KernelSimulator simulate = [&](const calibrate::MeasurementSet &set,
                                            const calibrate::MeasuredKernel &kernel,
                                            const target::DeviceSpec &device) {
    return simulator.simulate(set, kernel, device);
  };
  absl::StatusOr<calibrate::CalibrationResult> result =
      calibrate::calibrate(sets, *start, simulate, options);
  if (!result.ok()) return fail(result.status().message());

  llvm::outs() << "\nerror per set (MAPE of the kernel time; Spearman of the ranking)\n";
  llvm::outs() << absl::StrFormat("  %-34s %6s %-24s %s\n", "set", "points", "before", "after");
  for (const calibrate::SetChange &s : result->sets)
    llvm::outs() << absl::StrFormat("  %-34s %6zu %7s  Spearman %5.3f   %7s  Spearman %5.3f\n",
                                    s.name, s.points, percent(s.mapeBefore), s.spearmanBefore,
                                    percent(s.mapeAfter), s.spearmanAfter);
  for (const calibrate::SetChange &s : result->sets)
    if (!s.measuredBest.empty())
      llvm::outs() << "  " << s.name << ": measured fastest " << s.measuredBest
                   << "; simulated fastest " << s.bestBefore << " before, " << s.bestAfter
                   << " after\n";
  llvm::outs() << absl::StrFormat("  %-34s %6zu %7s                    %7s\n", "every point",
                                  points, percent(result->mapeBefore),
                                  percent(result->mapeAfter));

  llvm::outs() << "\nfields (" << result->evaluations << " simulations of every point)\n";
  for (const calibrate::FieldChange &f : result->fields) {
    std::string change = f.after == f.before
                             ? "unchanged"
                             : (f.before != 0 ? absl::StrFormat("x%.3g", f.after / f.before)
                                              : absl::StrFormat("%+.4g", f.after - f.before));
    llvm::outs() << absl::StrFormat("  %-36s %10s -> %-10s %-10s bounds [%s, %s]%s\n", f.path,
                                    number(f.before), number(f.after), change, number(f.lo),
                                    number(f.hi),
                                    f.atBound ? "  at its bound: the data would move it "
                                                "further; check this field and the measurements"
                                              : "");
  }
  if (result->folds > 0)
    llvm::outs() << "\ncross-validated error: " << percent(result->crossValidatedMape) << " ("
                 << result->folds << " folds: each fold of points predicted by a fit made "
                 << "without it; fitted error " << percent(result->mapeAfter) << ")\n";

  target::DeviceSpec device = result->device;
  device.name = args.name.empty() ? start->name + "-calibrated" : args.name;
  if (absl::Status st = device.validate(); !st.ok())
    return fail(absl::StrCat("not writing ", args.output, ": ", st.message()));
  if (absl::Status st = support::writeFileAtomically(args.output, device.toJson(), support::Durability::Sync); !st.ok())
    return fail(absl::StrCat("cannot write ", args.output, ": ", st.message()));
  llvm::outs() << "\nwrote " << args.output << " (device '" << device.name
               << "'; use it as --device " << args.output << ")\n";
  return kExitOk;
}

} // namespace ptoc::tools
