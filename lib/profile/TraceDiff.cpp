// Comparing two analyses (TraceDiff.h): rows per core kind and per group with their
// ratios, and where the critical paths part; as text and as JSON.
#include "ptoc/profile/TraceDiff.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "JsonNumbers.h"
#include "TextFormat.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "llvm/Support/JSON.h"

namespace ptoc::profile {

namespace {

/// Ratios within this of 1 print as "same": the traces' own rounding (ns, 4 decimals).
constexpr double kSameRatio = 1e-9;

std::optional<double> ratio(double b, double a) {
  if (a == 0) return b == 0 ? std::optional<double>(1.0) : std::nullopt;
  return b / a;
}

DiffRow row(std::string key, std::string core, std::optional<DiffSide> a,
            std::optional<DiffSide> b) {
  DiffRow r{std::move(key), "", std::move(core), a, b, {}, {}, {}};
  if (a && b) {
    r.tasksRatio = ratio(b->tasks, a->tasks);
    r.totalRatio = ratio(b->totalUs, a->totalUs);
    r.meanRatio = ratio(b->meanUs, a->meanUs);
  }
  return r;
}

DiffSide sideOf(const GroupSummary &g) { return DiffSide{g.tasks, g.totalUs, g.avgUs}; }

bool sameRow(const DiffRow &r) {
  auto one = [](const std::optional<double> &x) { return x && std::abs(*x - 1) <= kSameRatio; };
  return r.a && r.b && one(r.tasksRatio) && one(r.totalRatio) && one(r.meanRatio);
}

void matchGroups(const Summary &a, const Summary &b, TraceDiff &d) {
  std::map<std::string, const GroupSummary *> inB;
  for (const GroupSummary &g : b.groups) inB[g.key] = &g;
  bool anyCommon = false;
  for (const GroupSummary &g : a.groups) anyCommon |= inB.count(g.key) > 0;
  if (anyCommon || a.groups.empty() || b.groups.empty()) {
    d.groupMatch = "key";
    for (const GroupSummary &g : a.groups) {
      auto it = inB.find(g.key);
      if (it == inB.end()) {
        d.groups.push_back(row(g.key, g.core, sideOf(g), std::nullopt));
        continue;
      }
      // A task may run on one kind in one trace and on both in the other.
      d.groups.push_back(row(g.key, mergedCoreLabel(g.core, it->second->core), sideOf(g),
                             sideOf(*it->second)));
      inB.erase(it);
    }
    for (const GroupSummary &g : b.groups)
      if (inB.count(g.key)) d.groups.push_back(row(g.key, g.core, std::nullopt, sideOf(g)));
    return;
  }
  // No key in common (a simulation and a device run name groups differently): the
  // groups of each core label in the order they first ran; a group only one side has
  // leaves the other side's key empty.
  d.groupMatch = "position";
  for (llvm::StringRef label : {laneKindLabel(LaneKind::Aic), laneKindLabel(LaneKind::Aiv),
                                llvm::StringRef(kBothKindsLabel)}) {
    auto ordered = [&](const Summary &s) {
      std::vector<const GroupSummary *> out;
      for (const GroupSummary &g : s.groups)
        if (g.core == label) out.push_back(&g);
      std::stable_sort(out.begin(), out.end(), [](const GroupSummary *x, const GroupSummary *y) {
        return x->firstStartUs < y->firstStartUs;
      });
      return out;
    };
    std::vector<const GroupSummary *> ga = ordered(a), gb = ordered(b);
    for (size_t i = 0; i < std::max(ga.size(), gb.size()); ++i) {
      const GroupSummary *x = i < ga.size() ? ga[i] : nullptr;
      const GroupSummary *y = i < gb.size() ? gb[i] : nullptr;
      DiffRow r = row(x ? x->key : "", label.str(),
                      x ? std::optional<DiffSide>(sideOf(*x)) : std::nullopt,
                      y ? std::optional<DiffSide>(sideOf(*y)) : std::nullopt);
      if (y) r.otherKey = y->key;
      d.groups.push_back(std::move(r));
    }
  }
}

void comparePaths(const Analysis &a, const Analysis &b, TraceDiff &d) {
  PathDiff &p = d.criticalPath;
  p.known = a.summary.carries.commonClock && b.summary.carries.commonClock;
  if (!p.known) {
    p.summary = "no critical path to compare: a Worker View has no clock common to its cores";
    return;
  }
  const CriticalPath &x = a.summary.criticalPath, &y = b.summary.criticalPath;
  p.lengthA = x.lengthUs;
  p.lengthB = y.lengthUs;
  p.lengthRatio = ratio(y.lengthUs, x.lengthUs);
  p.tasksA = static_cast<int>(x.calls.size());
  p.tasksB = static_cast<int>(y.calls.size());
  p.stepsA = criticalPathSteps(x);
  p.stepsB = criticalPathSteps(y);
  size_t n = std::min(p.stepsA.size(), p.stepsB.size());
  while (static_cast<size_t>(p.commonSteps) < n && p.stepsA[p.commonSteps] == p.stepsB[p.commonSteps])
    ++p.commonSteps;
  if (p.stepsA == p.stepsB) {
    p.summary = absl::StrFormat("the critical paths run through the same groups (%s)",
                                absl::StrJoin(p.stepsA, " -> "));
    return;
  }
  auto at = [](const std::vector<std::string> &s, int i) {
    return i < static_cast<int>(s.size()) ? s[i] : std::string("(its end)");
  };
  std::string parting = absl::StrFormat("A goes through %s and B through %s",
                                        at(p.stepsA, p.commonSteps), at(p.stepsB, p.commonSteps));
  p.summary = p.commonSteps == 0
                  ? absl::StrCat("the critical paths differ from their first step: ", parting)
                  : absl::StrFormat("the critical paths share their first %d step%s, then %s",
                                    p.commonSteps, p.commonSteps == 1 ? "" : "s", parting);
}

std::string ratioText(const std::optional<double> &r) {
  if (!r) return "-";
  if (std::abs(*r - 1) <= kSameRatio) return "same";
  return absl::StrFormat("%.3fx", *r);
}

} // namespace

TraceDiff diffAnalyses(const Analysis &a, const Analysis &b) {
  TraceDiff d;
  d.sourceA = a.source;
  d.sourceB = b.source;
  d.familyA = familyName(a.family).str();
  d.familyB = familyName(b.family).str();
  if (a.summary.carries.commonClock) d.spanA = a.summary.spanUs;
  if (b.summary.carries.commonClock) d.spanB = b.summary.spanUs;
  if (d.spanA && d.spanB) d.spanRatio = ratio(*d.spanB, *d.spanA);
  for (size_t i = 0; i < a.summary.coreKinds.size() && i < b.summary.coreKinds.size(); ++i) {
    const CoreKindSummary &x = a.summary.coreKinds[i], &y = b.summary.coreKinds[i];
    auto side = [](const CoreKindSummary &k) {
      return DiffSide{k.tasks, k.busyUs, k.tasks ? k.busyUs / k.tasks : 0.0};
    };
    d.kinds.push_back(row(x.kind, x.kind, side(x), side(y)));
  }
  matchGroups(a.summary, b.summary, d);
  comparePaths(a, b, d);
  d.same = (!d.spanRatio || std::abs(*d.spanRatio - 1) <= kSameRatio) && d.groupMatch == "key" &&
           std::all_of(d.kinds.begin(), d.kinds.end(), sameRow) &&
           std::all_of(d.groups.begin(), d.groups.end(), sameRow) &&
           d.criticalPath.stepsA == d.criticalPath.stepsB &&
           (!d.criticalPath.lengthRatio ||
            std::abs(*d.criticalPath.lengthRatio - 1) <= kSameRatio);
  return d;
}

std::string traceDiffText(const TraceDiff &d) {
  using text::Table;
  using text::us3;
  std::string out;
  absl::StrAppendFormat(&out, "A: %s (%s)\nB: %s (%s)\n", d.sourceA, d.familyA, d.sourceB,
                        d.familyB);
  absl::StrAppendFormat(&out, "span: A %s us, B %s us, B/A %s\n",
                        d.spanA ? us3(*d.spanA) : "-", d.spanB ? us3(*d.spanB) : "-",
                        ratioText(d.spanRatio));
  auto table = [&](const char *title, const std::vector<DiffRow> &rows, bool withOther) {
    absl::StrAppend(&out, "\n", title, "\n");
    std::vector<std::string> header = {"key", "core", "tasks_A", "tasks_B", "tasks_B/A",
                                       "total_us_A", "total_us_B", "total_B/A", "mean_us_A",
                                       "mean_us_B", "mean_B/A"};
    if (withOther) header.insert(header.begin() + 1, "key_B");
    Table t(header);
    for (const DiffRow &r : rows) {
      auto side = [](const std::optional<DiffSide> &s, int what) -> std::string {
        if (!s) return "-";
        return what == 0 ? absl::StrCat(s->tasks) : us3(what == 1 ? s->totalUs : s->meanUs);
      };
      std::vector<std::string> cells = {r.key.empty() ? "-" : r.key, r.core, side(r.a, 0), side(r.b, 0),
                                        ratioText(r.tasksRatio), side(r.a, 1), side(r.b, 1),
                                        ratioText(r.totalRatio), side(r.a, 2), side(r.b, 2),
                                        ratioText(r.meanRatio)};
      if (withOther) cells.insert(cells.begin() + 1, r.otherKey.empty() ? "-" : r.otherKey);
      t.row(cells);
    }
    t.print(out, "  ");
  };
  table("core kinds", d.kinds, false);
  table(d.groupMatch == "key" ? "groups (matched by key)"
                              : "groups (no key in common: matched by core kind and the order "
                                "they first ran)",
        d.groups, d.groupMatch != "key");
  const PathDiff &p = d.criticalPath;
  out += "\ncritical path\n";
  if (p.known) {
    auto side = [&](const char *name, double length, int tasks,
                    const std::vector<std::string> &steps) {
      absl::StrAppendFormat(&out, "  %s: %s us, %d task%s: %s\n", name, us3(length), tasks,
                            tasks == 1 ? "" : "s", absl::StrJoin(steps, " -> "));
    };
    side("A", p.lengthA, p.tasksA, p.stepsA);
    side("B", p.lengthB, p.tasksB, p.stepsB);
    absl::StrAppendFormat(&out, "  B/A %s; %s\n", ratioText(p.lengthRatio), p.summary);
  } else {
    absl::StrAppend(&out, "  ", p.summary, "\n");
  }
  out += d.same ? "\nno difference\n" : "\ndifferent\n";
  return out;
}

std::string traceDiffJson(const TraceDiff &d) {
  std::string text;
  llvm::raw_string_ostream os(text);
  constexpr unsigned kIndent = 2;
  llvm::json::OStream json(os, kIndent);
  auto number = [&](llvm::StringRef key, const std::optional<double> &v, int decimals) {
    json.attributeBegin(key);
    if (v) writeFixed(json, *v, decimals);
    else json.value(nullptr);
    json.attributeEnd();
  };
  // Rows matched by position name each side's key; a side without the group has null.
  auto key = [&](llvm::StringRef name, const std::string &value) {
    if (value.empty()) json.attribute(name, nullptr);
    else json.attribute(name, value);
  };
  auto rows = [&](llvm::StringRef name, const std::vector<DiffRow> &list, bool byPosition) {
    json.attributeArray(name, [&] {
      for (const DiffRow &r : list)
        json.object([&] {
          key("key", r.key);
          if (byPosition) key("key_b", r.otherKey);
          json.attribute("core", r.core);
          for (const auto &entry : {std::pair{"a", &r.a}, std::pair{"b", &r.b}}) {
            // A named copy: clang 14's lambdas cannot capture structured bindings.
            const auto *side = entry.second;
            json.attributeBegin(entry.first);
            if (!*side) {
              json.value(nullptr);
            } else {
              json.object([&] {
                json.attribute("tasks", (*side)->tasks);
                number("total_us", (*side)->totalUs, kUsDecimals);
                number("mean_us", (*side)->meanUs, kUsDecimals);
              });
            }
            json.attributeEnd();
          }
          number("tasks_ratio", r.tasksRatio, kRatioDecimals);
          number("total_ratio", r.totalRatio, kRatioDecimals);
          number("mean_ratio", r.meanRatio, kRatioDecimals);
        });
    });
  };
  json.object([&] {
    json.attributeObject("a", [&] {
      json.attribute("source", d.sourceA);
      json.attribute("family", d.familyA);
    });
    json.attributeObject("b", [&] {
      json.attribute("source", d.sourceB);
      json.attribute("family", d.familyB);
    });
    number("span_us_a", d.spanA, kUsDecimals);
    number("span_us_b", d.spanB, kUsDecimals);
    number("span_ratio", d.spanRatio, kRatioDecimals);
    rows("core_kinds", d.kinds, false);
    json.attribute("group_match", d.groupMatch);
    rows("groups", d.groups, d.groupMatch == "position");
    const PathDiff &p = d.criticalPath;
    json.attributeBegin("critical_path");
    if (!p.known) {
      json.value(nullptr);
    } else {
      json.object([&] {
        number("length_us_a", p.lengthA, kUsDecimals);
        number("length_us_b", p.lengthB, kUsDecimals);
        number("length_ratio", p.lengthRatio, kRatioDecimals);
        json.attribute("tasks_a", p.tasksA);
        json.attribute("tasks_b", p.tasksB);
        json.attributeArray("steps_a", [&] {
          for (const std::string &s : p.stepsA) json.value(s);
        });
        json.attributeArray("steps_b", [&] {
          for (const std::string &s : p.stepsB) json.value(s);
        });
        json.attribute("common_steps", p.commonSteps);
        json.attribute("summary", p.summary);
      });
    }
    json.attributeEnd();
    json.attribute("same", d.same);
  });
  os << "\n";
  os.flush();
  return text;
}

} // namespace ptoc::profile
