// `ptoc calibrate` (see CalibrateMain.h): reads measurement files, fits the chosen
// device fields with calibrate::calibrate, prints the error per set before and after,
// the fields that moved and the cross-validated error, and writes the device file.
// Arguments are parsed by hand (no process-wide option registry).
#include "ptoc/tools/CalibrateMain.h"

#include <cmath>
#include <map>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/strings/ascii.h"
#include "llvm/Support/raw_ostream.h"
#include "ptoc/calibrate/Calibrator.h"
#include "ptoc/calibrate/Measurements.h"
#include "ptoc/session/MeasurementSimulator.h"
#include "ptoc/support/AtomicWrite.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::tools {

using session::MeasurementSimulator;
namespace {

constexpr int kExitOk = 0, kExitError = 1, kExitUsage = 2;

constexpr const char *kUsage = R"(usage: ptoc calibrate MEASUREMENTS.json... -o OUT.json [--device NAME|FILE.json]
                      [--fit FIELD,FIELD...] [--max-factor F] [--budget N]
                      [--folds K] [--name NAME]

Fits device fields to kernels measured on your own part, so the simulator agrees
with it (docs/fidelity.md). Each file lists measured kernels and their kernel times,
in the form of benchmarks/data/npu-measurements/*.json.

  -o OUT.json      where the calibrated device description goes (a complete file;
                   use it as --device OUT.json); written only when the fit succeeds
  --device D       the device to start from: a preset (a2, a3, b3, b4, tiny) or a
                   device file [the files' own "device", when they agree]
  --fit FIELDS     comma-separated device fields to fit [the defaults: rates,
                   latencies and start-up costs public data pin down least]
  --max-factor F   each field stays within [start / F, start * F] and its physical
                   range [4]
  --budget N       simulations of all points one fit may spend [200]
  --folds K        cross-validation folds; 0 = none [4]
  --name NAME      the calibrated device's name [<device>-calibrated]

Prints the error per set before and after (MAPE of the kernel time, Spearman of the
ranking), every fitted field before and after with its bounds, and the
cross-validated error: each fold of points predicted by a fit made without it. A
cross-validated error far above the fitted one means the fit memorised the points.
)";

int usage(const std::string &msg) {
  llvm::errs() << "ptoc calibrate: " << msg << "; see 'ptoc calibrate --help'\n";
  return kExitUsage;
}

int fail(absl::string_view msg) {
  llvm::errs() << "ptoc calibrate: " << std::string(msg) << "\n";
  return kExitError;
}

std::string percent(double v) { return absl::StrFormat("%.1f%%", 100 * v); }

std::string number(double v) { return absl::StrFormat("%.4g", v); }

} // namespace

int calibrateMain(const std::vector<std::string> &args) {
  std::vector<std::string> files;
  std::map<std::string, std::string> values;
  static const char *kValued[] = {"-o", "--output", "--device", "--fit", "--max-factor",
                                  "--budget", "--folds", "--name"};
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg == "--help" || arg == "-h") {
      llvm::outs() << kUsage;
      return kExitOk;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      files.push_back(arg);
      continue;
    }
    std::string name = arg, value;
    bool hasValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      hasValue = true;
    }
    bool known = false;
    for (const char *k : kValued) known |= name == k;
    if (!known) return usage(absl::StrCat("unknown option '", name, "'"));
    if (!hasValue) {
      if (i + 1 >= args.size()) return usage(absl::StrCat(name, " needs a value"));
      value = args[++i];
    }
    values[name == "--output" ? "-o" : name] = value;
  }
  if (files.empty()) return usage("no measurement files");
  if (!values.count("-o"))
    return usage("no output: name the calibrated device file with -o OUT.json");

  calibrate::CalibrationOptions options;
  if (auto it = values.find("--fit"); it != values.end())
    for (absl::string_view f : absl::StrSplit(it->second, ',', absl::SkipWhitespace()))
      options.fields.push_back(std::string(absl::StripAsciiWhitespace(f)));
  auto intOption = [&](const char *name, int lo, int hi, int &out) -> std::string {
    auto it = values.find(name);
    if (it == values.end()) return "";
    int v = 0;
    if (!absl::SimpleAtoi(it->second, &v) || v < lo || v > hi)
      return absl::StrCat(name, " must be an integer in [", lo, ", ", hi, "], got '",
                          it->second, "'");
    out = v;
    return "";
  };
  if (std::string e = intOption("--budget", 1, 100000, options.maxEvaluations); !e.empty())
    return usage(e);
  if (std::string e = intOption("--folds", 0, 100, options.folds); !e.empty()) return usage(e);
  if (auto it = values.find("--max-factor"); it != values.end()) {
    double f = 0;
    if (!absl::SimpleAtod(it->second, &f) || !(f > 1) || f > 1000)
      return usage(absl::StrCat("--max-factor must be a number above 1 (at most 1000), got '",
                                it->second, "'"));
    options.maxFactor = f;
  }

  std::vector<calibrate::MeasurementSet> sets;
  for (const std::string &file : files) {
    absl::StatusOr<calibrate::MeasurementSet> set = calibrate::readMeasurements(file);
    if (!set.ok()) return fail(set.status().message());
    sets.push_back(*std::move(set));
  }
  std::string deviceName;
  if (auto it = values.find("--device"); it != values.end()) {
    deviceName = it->second;
    for (const calibrate::MeasurementSet &s : sets)
      if (s.device != deviceName)
        llvm::errs() << "ptoc calibrate: note: " << s.path << " was measured on '" << s.device
                     << "'; fitting it on --device " << deviceName << "\n";
  } else {
    deviceName = sets.front().device;
    for (const calibrate::MeasurementSet &s : sets)
      if (s.device != deviceName)
        return usage(absl::StrCat("the files name different devices ('", deviceName, "' in ",
                                  sets.front().path, ", '", s.device, "' in ", s.path,
                                  "); calibrate one part at a time, or pass --device"));
  }
  absl::StatusOr<target::DeviceSpec> start = target::DeviceSpec::load(deviceName);
  if (!start.ok()) return fail(start.status().message());

  size_t points = 0;
  for (const calibrate::MeasurementSet &s : sets) points += s.points.size();
  llvm::outs() << "calibrating " << start->name << " to " << points << " measured kernel"
               << (points == 1 ? "" : "s") << " in " << sets.size() << " set"
               << (sets.size() == 1 ? "" : "s") << "\n";
  llvm::outs().flush();

  MeasurementSimulator simulator;
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
  device.name = values.count("--name") ? values["--name"] : start->name + "-calibrated";
  if (absl::Status st = device.validate(); !st.ok())
    return fail(absl::StrCat("not writing ", values["-o"], ": ", st.message()));
  if (absl::Status st = support::writeFileAtomically(values["-o"], device.toJson(), support::Durability::Sync); !st.ok())
    return fail(absl::StrCat("cannot write ", values["-o"], ": ", st.message()));
  llvm::outs() << "\nwrote " << values["-o"] << " (device '" << device.name
               << "'; use it as --device " << values["-o"] << ")\n";
  return kExitOk;
}

} // namespace ptoc::tools
