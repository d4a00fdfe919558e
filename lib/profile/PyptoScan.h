// Internal to lib/profile: what the PyPTO readers (Machine View, Worker View) share —
// one pass over the trace keeping lane names, complete events and flow ends, with
// every malformed event an error naming the file and the event; and the small
// grammars of PyPTO's lane names and "event-hint" strings.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"
#include "ptoc/profile/Timeline.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::profile {

using PyptoLaneKey = std::pair<int64_t, int64_t>; ///< (pid, tid)

/// "<name>: <message>" as an InvalidArgument error: a problem of the trace `name`.
absl::Status pyptoTraceError(llvm::StringRef name, const std::string &message);
/// The same for one event: "<name>: event <index> ('<label>'): <message>".
absl::Status pyptoEventError(llvm::StringRef name, size_t index, llvm::StringRef label,
                             const std::string &message);

/// One complete ('X') event.
struct PyptoSlice {
  size_t event = 0;          ///< index in traceEvents
  PyptoLaneKey lane;
  double ts = 0, dur = 0;    ///< microseconds on the source's clock
  std::string name;
  std::string hint;          ///< args["event-hint"] ("" when absent)
  std::optional<double> kernelUs, setupUs; ///< Worker View: kernel-duration-us, local_setup_us
};

/// One end of a flow.
struct PyptoFlowEnd {
  size_t event = 0;
  PyptoLaneKey lane;
  double ts = 0;
};

/// A flow ('s' and 'f' events sharing an id).
struct PyptoFlow {
  std::string id;
  std::optional<PyptoFlowEnd> start, finish;
};

/// What a PyPTO reader keeps of a trace.
struct PyptoEvents {
  std::map<PyptoLaneKey, std::string> laneNames; ///< thread_name metadata
  std::vector<PyptoSlice> slices;                ///< in file order
  std::vector<PyptoFlow> flows;                  ///< in order of first sight
  size_t counters = 0;                           ///< 'C' events (ReadyCount_*), not analysed
};

/// Reads every event once. Complete events need integer pid / tid, numeric ts and dur
/// in [0, kMaxTraceUs] (dur finite and >= 0) and a named lane; flow events of
/// category `flowCategory` need an id, pid / tid and a ts, and each id at most one 's'
/// and one 'f'. Errors name `name`, the event index and its name.
absl::StatusOr<PyptoEvents> scanPyptoEvents(llvm::StringRef text, llvm::StringRef name,
                                            llvm::StringRef flowCategory);

/// A lane name: "AIC_12", "AIV_30" (kind and the number in the name) or the control
/// lane "Fake Core_0".
struct PyptoLane {
  LaneKind kind = LaneKind::Aiv;
  int number = 0;
};
std::optional<PyptoLane> parsePyptoLane(llvm::StringRef name);

/// The "key:value" pairs of an event-hint ("Task:[0-1-53], rootHash:1795..., ..."),
/// values with surrounding brackets removed.
std::map<std::string, std::string> parsePyptoHint(llvm::StringRef hint);

/// Core counts, name bases and each lane's core index for PyPTO lanes numbered across
/// both kinds, AIC first (`laneNumbers` parallel to timeline.lanes; `first` is the
/// number of the first AIC core: Machine View 1, Worker View 0). With a device, its
/// counts (a lane beyond them is an error naming it); without, the counts the lane
/// numbers imply, and a note saying so.
absl::Status numberPyptoCores(Timeline &timeline, int first, const std::vector<int> &laneNumbers,
                              const target::DeviceSpec *device, llvm::StringRef name);

} // namespace ptoc::profile
