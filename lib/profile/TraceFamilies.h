// Internal to lib/profile: the reader of each trace family TraceReader.cpp dispatches
// to, what family detection sees of a trace, and the wording of problems every reader
// shares (JSON syntax, the document's shape).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "TraceScanner.h"
#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"
#include "ptoc/profile/Timeline.h"
#include "ptoc/profile/TraceReader.h"

namespace ptoc::profile {

/// What a trace holds, as far as telling its family goes.
struct TraceSniff {
  size_t events = 0, completeEvents = 0;
  std::vector<std::string> processNames; ///< process_name metadata, in file order
  std::set<std::string> categories;      ///< "cat" values seen (at most kMaxCategories)
  bool otherData = false;
  static constexpr size_t kMaxCategories = 8;
  static constexpr size_t kMaxProcessNames = 8;
  /// Counts one element of traceEvents.
  void note(JsonRef event);
  /// "12 events (7 complete), process names "Worker View", categories "event"".
  std::string describe() const;
  /// A process name of a PyPTO family was seen ("Machine View", "Worker View").
  bool pypto() const;
};

/// Who wrote a trace, for the advice on getting a whole one: ptoc, PyPTO, or not known
/// (a text cut short before its first process name).
enum class TraceWriter { Ptoc, Pypto, Unknown };

/// The writer the events read so far point to: PyPTO when a process name of its
/// families was seen, ptoc when other process names were, else not known.
TraceWriter writerOf(const TraceSniff &sniff);

/// ptoc's own trace. nullopt (with `sniff` filled) when the text is a well-formed
/// trace without "otherData": another family's, for TraceReader to detect.
std::optional<absl::StatusOr<Timeline>> readPtocTrace(llvm::StringRef text, llvm::StringRef name,
                                                      TraceSniff &sniff);

/// PyPTO's "Machine View" (a process named so; lanes AIC_n / AIV_n numbered across
/// both kinds from 1, a "Fake Core_0" lane of control nodes, flows
/// machine-view-last-dep).
absl::StatusOr<Timeline> readMachineView(llvm::StringRef text, llvm::StringRef name,
                                         const TraceReadOptions &options);

/// PyPTO-3's "Worker View" (a process named so; one event per block of a task with
/// kernel-duration-us and local_setup_us; each core's clock has its own origin).
absl::StatusOr<Timeline> readWorkerView(llvm::StringRef text, llvm::StringRef name,
                                        const TraceReadOptions &options);

/// The error for a document walkTrace could not read: bad JSON (where, and "a
/// truncated trace?" only when the text ends inside a value, with how `writer` gives a
/// whole one) or the wrong shape.
absl::Status walkProblem(llvm::StringRef name, llvm::StringRef text,
                         const TraceWalkError &problem, TraceWriter writer);

/// Largest time (us) a trace may carry: 1e15 us is 31 years; it keeps every sum and
/// difference of times finite and printable. A device clock's absolute microseconds
/// (about 2.4e12 on the traces seen) fit.
inline constexpr double kMaxTraceUs = 1e15;
/// Largest byte count one event may carry: 2^53 (8 PiB), the largest integer a double
/// (and so any JSON reader) holds exactly; far beyond any task's transfers. The
/// totals over all events are checked as they are summed.
inline constexpr int64_t kMaxTraceBytes = int64_t(1) << 53;

} // namespace ptoc::profile
