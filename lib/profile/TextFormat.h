// What the run summary (summary.txt/.json) and the trace analysis (`ptoc prof`,
// analysis.json) render alike: aligned tables, number formats and the verdicts.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "JsonNumbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/JSON.h"
#include "ptoc/profile/Summary.h"

namespace ptoc::profile::text {

/// Columns of cells, right-aligned (numbers line up) except a leading label column.
class Table {
public:
  explicit Table(std::vector<std::string> header, bool labelColumn = true)
      : labelColumn_(labelColumn) {
    rows_.push_back(std::move(header));
  }
  void row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  void print(std::string &out, llvm::StringRef indent = "") const {
    std::vector<size_t> width;
    for (const auto &row : rows_)
      for (size_t i = 0; i < row.size(); ++i) {
        if (width.size() <= i) width.push_back(0);
        width[i] = std::max(width[i], row[i].size());
      }
    for (const auto &row : rows_) {
      std::string line = indent.str();
      for (size_t i = 0; i < row.size(); ++i) {
        if (i) line += "  ";
        std::string pad(width[i] - row[i].size(), ' ');
        line += i == 0 && labelColumn_ ? row[i] + pad : pad + row[i];
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
  }

private:
  std::vector<std::vector<std::string>> rows_;
  bool labelColumn_;
};

inline std::string us3(double value) { return absl::StrFormat("%.3f", value); }
inline std::string percent(double share) { return absl::StrFormat("%.1f%%", 100 * share); }

/// Bytes in B / KiB / MiB / GiB.
inline std::string bytes(int64_t n) {
  constexpr double kKiB = 1024.0;
  double v = static_cast<double>(n);
  if (v < kKiB) return absl::StrCat(n, " B");
  if (v < kKiB * kKiB) return absl::StrFormat("%.1f KiB", v / kKiB);
  if (v < kKiB * kKiB * kKiB) return absl::StrFormat("%.1f MiB", v / (kKiB * kKiB));
  return absl::StrFormat("%.2f GiB", v / (kKiB * kKiB * kKiB));
}

/// The "verdicts" section of the text renderings.
inline void appendVerdicts(std::string &out, llvm::ArrayRef<Verdict> verdicts) {
  out += "\nverdicts\n";
  if (verdicts.empty()) out += "  none: no rule of thumb fired\n";
  for (const Verdict &v : verdicts) {
    absl::StrAppendFormat(&out, "  [%s] %s (%s): %s\n", v.severity, v.rule, v.scope, v.finding);
    absl::StrAppendFormat(&out, "         try: %s\n", v.knob);
  }
}

/// The "verdicts" array of the JSON renderings.
inline void writeVerdicts(llvm::json::OStream &json, llvm::ArrayRef<Verdict> verdicts) {
  json.attributeArray("verdicts", [&] {
    for (const Verdict &v : verdicts)
      json.object([&] {
        json.attribute("rule", v.rule);
        json.attribute("severity", v.severity);
        json.attribute("scope", v.scope);
        json.attribute("finding", v.finding);
        json.attribute("knob", v.knob);
        json.attributeObject("evidence", [&] {
          for (const auto &[name, value] : v.evidence) {
            json.attributeBegin(name);
            writeFixed(json, value, kRatioDecimals);
            json.attributeEnd();
          }
        });
      });
  });
}

} // namespace ptoc::profile::text
