// The progress bar of a search, as `ptoc tune` and Python's `ptoc.tune` draw it.
#pragma once

#include <cstdint>
#include <string>

#include "llvm/Support/raw_ostream.h"
#include "ptoc/tune/Search.h"

namespace ptoc::tune {

/// Draws a search's progress from its reports (tune::Progress), after a label:
///
///   tune: [#########...........]  28/64 evaluated, best 27.233 us, 3 pruned
///
/// On a terminal the line is redrawn in place after every batch; otherwise (a log, a
/// pipe) a line is written each time another tenth of the planned evaluations is
/// done, and at the end, so a long search does not flood the log.
class TuneProgress {
public:
  /// `interactive`: redraw in place (`os` is a terminal). `label` starts each line
  /// ("tune", "tuning softmax").
  TuneProgress(llvm::raw_ostream &os, bool interactive, std::string label = "tune")
      : os_(os), interactive_(interactive), label_(std::move(label)) {}

  void report(const SearchProgress &progress);
  /// Ends the display once the search is over: the in-place line gets its newline, a
  /// log gets the last report if it was not written yet.
  void finish();

  /// The text of one report: label, bar, counts, best time, pruned configs.
  std::string line(const SearchProgress &progress) const;

private:
  llvm::raw_ostream &os_;
  bool interactive_;
  std::string label_;
  /// The last report, and whether it still has to be ended (in place) or written (log).
  SearchProgress last_;
  bool pending_ = false;
  /// Non-interactive: the next tenth to report at.
  uint64_t nextTenth_ = 1;
};

} // namespace ptoc::tune
