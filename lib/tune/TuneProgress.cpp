// TuneProgress: a search's progress bar (in place on a terminal, tenths in a log).
#include "ptoc/tune/TuneProgress.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace ptoc::tune {
namespace {
constexpr int kBarWidth = 20;
} // namespace

std::string TuneProgress::line(const SearchProgress &p) const {
  uint64_t planned = std::max<uint64_t>(p.evaluationsPlanned, 1);
  uint64_t used = std::min(p.evaluationsUsed, planned);
  int filled = static_cast<int>(used * kBarWidth / planned);
  std::string text = label_ + ": [" + std::string(filled, '#') + std::string(kBarWidth - filled, '.') +
                     "] " + absl::StrFormat("%*llu/%llu evaluated", int(std::to_string(planned).size()),
                                            static_cast<unsigned long long>(p.evaluationsUsed),
                                            static_cast<unsigned long long>(p.evaluationsPlanned));
  text += p.bestMicros ? absl::StrFormat(", best %.3f us", *p.bestMicros) : ", no valid config yet";
  if (p.pruned) text += absl::StrFormat(", %llu pruned", static_cast<unsigned long long>(p.pruned));
  return text;
}

void TuneProgress::report(const SearchProgress &p) {
  last_ = p;
  if (interactive_) {
    // "\r" and clear to the end of the line: the new text may be shorter.
    os_ << "\r" << line(p) << "\x1b[K";
    os_.flush();
    pending_ = true;
    return;
  }
  uint64_t planned = std::max<uint64_t>(p.evaluationsPlanned, 1);
  pending_ = p.evaluationsUsed * 10 < nextTenth_ * planned;
  if (pending_) return;
  os_ << line(p) << "\n";
  while (nextTenth_ <= 10 && nextTenth_ * planned <= p.evaluationsUsed * 10) ++nextTenth_;
}

void TuneProgress::finish() {
  if (!pending_) return;
  // In place: end the line. In a log: the last report, unless it was written (a search
  // may end below its plan: pruned configs, an exhausted space).
  if (!interactive_) os_ << line(last_);
  os_ << "\n";
  pending_ = false;
}

} // namespace ptoc::tune
