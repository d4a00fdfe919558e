// Fuzz target: the device-description loader (`ptoc run --device FILE.json`,
// `ptoc-opt --device`, `@ptoc.jit(device=...)`): DeviceSpec::fromJson. A description
// it accepts must also pass validate(), print with toJson() and load back to the same
// device (docs/device-model.md: fromJson(toJson()) is identical). Findings: crashes
// and sanitizer reports, an internal error, an accepted description that fails
// validate(), a round trip that does not load or changes the device.
#include <cstddef>
#include <cstdint>
#include <string>

#include "FuzzCheck.h"
#include "absl/status/statusor.h"
#include "ptoc/target/DeviceSpec.h"

using namespace ptoc;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef json(reinterpret_cast<const char *>(data), size);
  absl::StatusOr<target::DeviceSpec> device = target::DeviceSpec::fromJson(json, "fuzz.json");
  if (!device.ok()) {
    fuzz::checkNotABug(device.status(), "fromJson");
    return 0;
  }
  if (absl::Status valid = device->validate(); !valid.ok())
    fuzz::finding("fromJson accepted a device that validate() rejects: " +
                  std::string(valid.message()));
  std::string printed = device->toJson();
  absl::StatusOr<target::DeviceSpec> again = target::DeviceSpec::fromJson(printed, "printed.json");
  if (!again.ok())
    fuzz::finding("toJson() of an accepted device does not load back: " +
                  std::string(again.status().message()) + "\n" + printed);
  if (again->contentHash() != device->contentHash() || again->toJson() != printed)
    fuzz::finding("toJson() of an accepted device loads back as a different device:\n" +
                  printed + "\n" + again->toJson());
  return 0;
}
