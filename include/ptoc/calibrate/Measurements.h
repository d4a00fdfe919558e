// Measurements: kernels timed on a real device, as read from a measurement file (the
// form of benchmarks/data/npu-measurements/, documented in docs/fidelity.md). Each
// point becomes a ptoc function (.pto text) with its measured kernel time, so the
// simulator can be held to it and calibrated against it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::calibrate {

/// One measured kernel.
struct MeasuredKernel {
  /// How the point is named in reports: "No.4", "mkn=6144", "shape=[2,64,256]".
  std::string label;
  /// The kernel as a tensor-level ptoc function, and its name.
  std::string ptoText;
  std::string funcName;
  /// Pass options it was compiled with, by their Python names, values as text
  /// ("vec_nbuffer_setting" -> "{-1: 7}"): how the real kernel split its work.
  std::vector<std::pair<std::string, std::string>> passOptions;
  /// The measured kernel time, microseconds (after the launch head).
  double measuredUs = 0;
  /// Measured share of the kernel time each pipe was busy, by pipe name (one of
  /// kMeasuredPipes, MeasuredPipes.h: "cube", "gm_to_l1", ...); may be empty.
  std::map<std::string, double> measuredBusy;
};

/// The measured kernels of one file.
struct MeasurementSet {
  std::string path;      ///< the file
  std::string name;      ///< its stem ("matmul_ranking_256x512x1024")
  std::string what;      ///< its description
  std::string source;    ///< where the numbers come from
  /// The device they were measured on: a preset name or a device file (the file's
  /// "device" up to the first space; the rest is a note).
  std::string device;
  /// A plain kernel (launched on all its cores at once, no AICPU scheduler) or an
  /// AICPU-scheduled one (kernel_kind "aicpu").
  bool plainKernel = true;
  /// The points are alternative tilings of one problem ("configs"): the fastest one
  /// should be identified.
  bool alternatives = false;
  std::vector<MeasuredKernel> points;
};

/// Reads a measurement file. Errors name the file and the field (points[3].us) and
/// say what is expected. A file without "points" or "configs" (component data such
/// as transfer curves) is an error that says so.
absl::StatusOr<MeasurementSet> readMeasurements(llvm::StringRef path);
/// The same for text already in memory; `path` names it in errors and locates "pto"
/// kernel files.
absl::StatusOr<MeasurementSet> parseMeasurements(llvm::StringRef text, llvm::StringRef path);

/// The device `set` names: a preset, or a device file (a relative path is taken
/// relative to the measurement file, as a "pto" kernel's file is). Errors name the
/// file and its field 'device' ("m.json: field 'device': unknown device 'a9': ...").
absl::StatusOr<target::DeviceSpec> loadMeasuredDevice(const MeasurementSet &set);

/// Whether the JSON file at `path` holds measured kernels ("points" or "configs"),
/// rather than component data. False for anything unreadable.
bool holdsMeasuredKernels(llvm::StringRef path);

} // namespace ptoc::calibrate
