// Performance reports: statistics, JSON write/read, building a report from a run
// folder's summary.json, and the comparison behind `ptoc prof compare`.
#include "ptoc/profile/PerfReport.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <numeric>

#include "JsonNumbers.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include "ptoc/support/BoundedJson.h"

namespace ptoc::profile {

namespace {

/// Host times are seconds; microsecond resolution is plenty for wall clocks.
constexpr int kSecondsDecimals = 6;
/// Relative changes below this many percent print as "same": reports store times
/// with nanosecond resolution, so a fresh in-memory value and its stored copy differ
/// by rounding only.
constexpr double kSamePercent = 0.001;
constexpr double kPercentile50 = 0.50;
constexpr double kPercentile95 = 0.95;

/// Decimals a metric is written with: integer counts, microseconds, ratios.
int metricDecimals(llvm::StringRef key) {
  if (key.endswith("_bytes") || key == "tasks" || key == "edges") return 0;
  if (key.endswith("_us")) return kUsDecimals;
  return kRatioDecimals;
}

void fixedKey(llvm::json::OStream &json, llvm::StringRef key, double value, int decimals) {
  json.attributeBegin(key);
  writeFixed(json, value, decimals);
  json.attributeEnd();
}

void writeStats(llvm::json::OStream &json, llvm::StringRef key, const SampleStats &s,
                int decimals) {
  json.attributeObject(key, [&] {
    json.attribute("count", s.count);
    fixedKey(json, "min", s.min, decimals);
    fixedKey(json, "max", s.max, decimals);
    fixedKey(json, "mean", s.mean, decimals);
    fixedKey(json, "p50", s.p50, decimals);
    fixedKey(json, "p95", s.p95, decimals);
    fixedKey(json, "cv", s.cv, kRatioDecimals);
  });
}

void writeTensors(llvm::json::OStream &json, llvm::StringRef key,
                  const std::vector<TensorInfo> &tensors) {
  json.attributeArray(key, [&] {
    for (const TensorInfo &t : tensors)
      json.object([&] {
        json.attribute("name", t.name);
        json.attribute("dtype", t.dtype);
        json.attributeArray("shape", [&] {
          for (int64_t d : t.shape) json.value(d);
        });
      });
  });
}

/// Typed access to a parsed JSON object; every error names the file and key path.
class Reader {
public:
  Reader(llvm::StringRef source) : source_(source.str()) {}

  absl::Status error(llvm::StringRef path, llvm::StringRef what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(source_, ": ", path.str(), ": ", what.str()));
  }
  absl::StatusOr<const llvm::json::Object *> object(const llvm::json::Object &o,
                                                    llvm::StringRef key,
                                                    llvm::StringRef path) const {
    const llvm::json::Object *v = o.getObject(key);
    if (!v) return error(absl::StrCat(path.str(), key.str()), "missing or not an object");
    return v;
  }
  absl::StatusOr<std::string> string(const llvm::json::Object &o, llvm::StringRef key,
                                     llvm::StringRef path) const {
    auto v = o.getString(key);
    if (!v) return error(absl::StrCat(path.str(), key.str()), "missing or not a string");
    return v->str();
  }
  absl::StatusOr<double> number(const llvm::json::Object &o, llvm::StringRef key,
                                llvm::StringRef path) const {
    auto v = o.getNumber(key);
    if (!v) return error(absl::StrCat(path.str(), key.str()), "missing or not a number");
    return *v;
  }
  /// An integer in [lo, hi] (a count, a mode, a version): checked before any cast.
  absl::StatusOr<int64_t> integer(const llvm::json::Object &o, llvm::StringRef key,
                                  llvm::StringRef path, int64_t lo, int64_t hi) const {
    const llvm::json::Value *v = o.get(key);
    std::optional<int64_t> i = v ? support::jsonInteger(*v) : std::nullopt;
    if (!i || *i < lo || *i > hi)
      return error(absl::StrCat(path.str(), key.str()),
                   absl::StrCat("missing or not an integer in [", lo, ", ", hi, "]"));
    return *i;
  }

private:
  std::string source_;
};

#define PTOC_ASSIGN(lhs, expr)                                                              \
  do {                                                                                     \
    auto _v = (expr);                                                                      \
    if (!_v.ok()) return _v.status();                                                      \
    lhs = *std::move(_v);                                                                  \
  } while (false)

absl::StatusOr<SampleStats> readStats(const Reader &r, const llvm::json::Object &o,
                                      llvm::StringRef key, llvm::StringRef path) {
  const llvm::json::Object *s;
  PTOC_ASSIGN(s, r.object(o, key, path));
  std::string p = absl::StrCat(path.str(), key.str(), ".");
  SampleStats out;
  PTOC_ASSIGN(out.count, r.integer(*s, "count", p, 0, INT_MAX));
  PTOC_ASSIGN(out.min, r.number(*s, "min", p));
  PTOC_ASSIGN(out.max, r.number(*s, "max", p));
  PTOC_ASSIGN(out.mean, r.number(*s, "mean", p));
  PTOC_ASSIGN(out.p50, r.number(*s, "p50", p));
  PTOC_ASSIGN(out.p95, r.number(*s, "p95", p));
  PTOC_ASSIGN(out.cv, r.number(*s, "cv", p));
  return out;
}

absl::StatusOr<std::vector<TensorInfo>> readTensors(const Reader &r, const llvm::json::Object &o,
                                                    llvm::StringRef key, llvm::StringRef path) {
  std::string p = absl::StrCat(path.str(), key.str());
  const llvm::json::Array *a = o.getArray(key);
  if (!a) return r.error(p, "missing or not an array");
  std::vector<TensorInfo> out;
  for (size_t i = 0; i < a->size(); ++i) {
    std::string ip = absl::StrCat(p, "[", i, "].");
    const llvm::json::Object *t = (*a)[i].getAsObject();
    if (!t) return r.error(ip, "not an object");
    TensorInfo info;
    PTOC_ASSIGN(info.name, r.string(*t, "name", ip));
    PTOC_ASSIGN(info.dtype, r.string(*t, "dtype", ip));
    const llvm::json::Array *shape = t->getArray("shape");
    if (!shape) return r.error(absl::StrCat(ip, "shape"), "missing or not an array");
    for (const llvm::json::Value &d : *shape) {
      std::optional<int64_t> v = support::jsonInteger(d);
      if (!v) return r.error(absl::StrCat(ip, "shape"), "holds a non-integer");
      info.shape.push_back(*v);
    }
    out.push_back(std::move(info));
  }
  return out;
}

std::string tensorsText(const std::vector<TensorInfo> &ts) {
  return absl::StrJoin(ts, ", ", [](std::string *out, const TensorInfo &t) {
    absl::StrAppend(out, t.name, ":", t.dtype, "[", absl::StrJoin(t.shape, "x"), "]");
  });
}

/// A metric value as the table shows it.
std::string valueText(llvm::StringRef metric, std::optional<double> v) {
  if (!v) return "-";
  int decimals = metricDecimals(metric);
  if (decimals == 0) return absl::StrFormat("%.0f", *v);
  return absl::StrFormat("%.*f", decimals, *v);
}

} // namespace

SampleStats computeStats(std::vector<double> samples) {
  SampleStats s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  s.count = static_cast<int>(n);
  s.min = samples.front();
  s.max = samples.back();
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(n);
  // Nearest rank: the smallest sample with at least q of the samples at or below it.
  auto rank = [&](double q) {
    size_t r = static_cast<size_t>(std::ceil(q * static_cast<double>(n)));
    return samples[std::clamp<size_t>(r, 1, n) - 1];
  };
  s.p50 = rank(kPercentile50);
  s.p95 = rank(kPercentile95);
  double var = 0;
  for (double x : samples) var += (x - s.mean) * (x - s.mean);
  var /= static_cast<double>(n);
  s.cv = s.mean != 0 ? std::sqrt(var) / std::fabs(s.mean) : 0;
  return s;
}

const std::vector<MetricInfo> &reportMetrics() {
  using S = MetricSense;
  static const std::vector<MetricInfo> kMetrics = {
      {"simulated_us", S::LowerIsBetter, "end-to-end simulated time, head overhead included"},
      {"span_us", S::LowerIsBetter, "simulated time after the head overhead"},
      {"bound_us", S::Neutral, "roofline bound (changes with shapes and device only)"},
      {"ratio", S::HigherIsBetter, "bound / simulated"},
      {"span_ratio", S::HigherIsBetter, "(bound - head) / (simulated - head)"},
      {"aic_utilisation", S::HigherIsBetter, "AIC busy / (cores x span)"},
      {"aiv_utilisation", S::HigherIsBetter, "AIV busy / (cores x span)"},
      {"tasks", S::Neutral, "tasks (calls of the execute graph)"},
      {"edges", S::Neutral, "dependency edges between tasks"},
      {"copy_in_bytes", S::LowerIsBetter, "bytes copied from GM into local buffers"},
      {"copy_out_bytes", S::LowerIsBetter, "bytes copied from local buffers to GM"},
      {"hbm_read_bytes", S::LowerIsBetter, "bytes read from HBM (L2 misses)"},
      {"hbm_write_bytes", S::LowerIsBetter, "bytes written to HBM"},
      {"hbm_bytes", S::LowerIsBetter, "HBM reads + writes"},
      {"l2_hit_rate", S::HigherIsBetter, "L2 hit bytes / read bytes"},
      {"head_us", S::Neutral, "kernel launch overhead (a device constant)"},
  };
  return kMetrics;
}

const MetricInfo *findMetric(llvm::StringRef key) {
  for (const MetricInfo &m : reportMetrics())
    if (key == m.key) return &m;
  return nullptr;
}

std::vector<std::string> defaultGatedMetrics() { return {"simulated_us"}; }

void fillMetrics(PerfReport &report, const Summary &s) {
  report.device = s.device;
  report.func = report.func.empty() ? s.func : report.func;
  report.schedMode = s.schedMode;
  report.limiter = s.limiter;
  auto &m = report.metrics;
  m["simulated_us"] = s.simulatedUs;
  m["span_us"] = s.spanUs;
  m["bound_us"] = s.boundUs;
  m["ratio"] = s.ratio;
  m["span_ratio"] = s.spanRatio;
  for (const CoreKindSummary &k : s.coreKinds) {
    if (k.kind == "AIC") m["aic_utilisation"] = k.utilization;
    if (k.kind == "AIV") m["aiv_utilisation"] = k.utilization;
  }
  m["tasks"] = s.tasks;
  m["edges"] = static_cast<double>(s.edges);
  m["copy_in_bytes"] = static_cast<double>(s.copyInBytes);
  m["copy_out_bytes"] = static_cast<double>(s.copyOutBytes);
  m["hbm_read_bytes"] = static_cast<double>(s.hbmReadBytes);
  m["hbm_write_bytes"] = static_cast<double>(s.hbmWriteBytes);
  m["hbm_bytes"] = static_cast<double>(s.hbmReadBytes + s.hbmWriteBytes);
  m["l2_hit_rate"] = s.l2HitRate;
  m["head_us"] = s.headUs;
}

std::string perfReportJson(const PerfReport &r) {
  std::string text;
  llvm::raw_string_ostream os(text);
  constexpr unsigned kIndent = 2;
  llvm::json::OStream json(os, kIndent);
  json.object([&] {
    json.attribute("schema", kPerfReportSchema);
    json.attribute("schema_version", r.schemaVersion);
    json.attribute("ptoc_version", r.ptocVersion);
    json.attribute("commit", r.commit);
    json.attribute("label", r.label);
    json.attribute("source", r.source);
    json.attributeObject("operator", [&] {
      json.attribute("func", r.func);
      json.attribute("file", r.file);
      writeTensors(json, "args", r.args);
      writeTensors(json, "results", r.results);
    });
    json.attributeObject("device", [&] {
      json.attribute("name", r.device);
      json.attribute("hash", r.deviceHash);
    });
    json.attributeObject("options", [&] {
      json.attribute("pipeline", r.pipeline);
      json.attribute("sched_mode", r.schedMode);
      json.attributeObject("pass_options", [&] {
        for (const auto &[k, v] : r.passOptions) json.attribute(k, v);
      });
      json.attribute("double_buffer", r.doubleBuffer);
    });
    json.attributeObject("metrics", [&] {
      for (const MetricInfo &m : reportMetrics())
        if (auto it = r.metrics.find(m.key); it != r.metrics.end())
          fixedKey(json, m.key, it->second, metricDecimals(m.key));
    });
    json.attribute("limiter", r.limiter);
    json.attributeObject("repeat", [&] {
      json.attribute("runs", r.runs);
      writeStats(json, "simulated_us", r.simulatedStats, kUsDecimals);
    });
    if (r.hasHostTimes)
      json.attributeObject("host", [&] {
        writeStats(json, "compile_s", r.compileSeconds, kSecondsDecimals);
        writeStats(json, "simulate_s", r.simulateSeconds, kSecondsDecimals);
      });
  });
  os << "\n";
  return text;
}

absl::StatusOr<PerfReport> parsePerfReport(llvm::StringRef text, llvm::StringRef sourceName) {
  absl::StatusOr<llvm::json::Value> value = support::parseJson(text, sourceName);
  if (!value.ok()) return value.status();
  const llvm::json::Object *root = value->getAsObject();
  Reader r(sourceName);
  if (!root) return r.error("(top level)", "not an object");
  auto schema = root->getString("schema");
  if (!schema || *schema != kPerfReportSchema)
    return r.error("schema", absl::StrCat("not a ptoc performance report (expected \"",
                                          kPerfReportSchema,
                                          "\"; write one with 'ptoc prof report')"));
  PerfReport out;
  double version;
  PTOC_ASSIGN(version, r.number(*root, "schema_version", ""));
  if (!(version >= 1 && version <= kPerfReportSchemaVersion) || version != std::floor(version))
    return r.error("schema_version",
                   absl::StrCat("version ", version, " is not supported (this ptoc reads ",
                                kPerfReportSchemaVersion, "); regenerate it with this ptoc"));
  out.schemaVersion = static_cast<int>(version);
  PTOC_ASSIGN(out.ptocVersion, r.string(*root, "ptoc_version", ""));
  PTOC_ASSIGN(out.commit, r.string(*root, "commit", ""));
  PTOC_ASSIGN(out.label, r.string(*root, "label", ""));
  PTOC_ASSIGN(out.source, r.string(*root, "source", ""));

  const llvm::json::Object *op;
  PTOC_ASSIGN(op, r.object(*root, "operator", ""));
  PTOC_ASSIGN(out.func, r.string(*op, "func", "operator."));
  PTOC_ASSIGN(out.file, r.string(*op, "file", "operator."));
  PTOC_ASSIGN(out.args, readTensors(r, *op, "args", "operator."));
  PTOC_ASSIGN(out.results, readTensors(r, *op, "results", "operator."));

  const llvm::json::Object *dev;
  PTOC_ASSIGN(dev, r.object(*root, "device", ""));
  PTOC_ASSIGN(out.device, r.string(*dev, "name", "device."));
  PTOC_ASSIGN(out.deviceHash, r.string(*dev, "hash", "device."));

  const llvm::json::Object *opts;
  PTOC_ASSIGN(opts, r.object(*root, "options", ""));
  PTOC_ASSIGN(out.pipeline, r.string(*opts, "pipeline", "options."));
  PTOC_ASSIGN(out.schedMode, r.integer(*opts, "sched_mode", "options.", 0, INT_MAX));
  const llvm::json::Object *knobs;
  PTOC_ASSIGN(knobs, r.object(*opts, "pass_options", "options."));
  for (const auto &[k, v] : *knobs) {
    auto s = v.getAsString();
    if (!s) return r.error(absl::StrCat("options.pass_options.", k.str()), "not a string");
    out.passOptions[k.str()] = s->str();
  }
  auto db = opts->getBoolean("double_buffer");
  if (!db) return r.error("options.double_buffer", "missing or not a boolean");
  out.doubleBuffer = *db;

  const llvm::json::Object *metrics;
  PTOC_ASSIGN(metrics, r.object(*root, "metrics", ""));
  for (const auto &[k, v] : *metrics) {
    // Unknown metrics (from a newer ptoc) are kept: compare shows what both have.
    auto d = v.getAsNumber();
    if (!d) return r.error(absl::StrCat("metrics.", k.str()), "not a number");
    out.metrics[k.str()] = *d;
  }
  PTOC_ASSIGN(out.limiter, r.string(*root, "limiter", ""));

  const llvm::json::Object *repeat;
  PTOC_ASSIGN(repeat, r.object(*root, "repeat", ""));
  PTOC_ASSIGN(out.runs, r.integer(*repeat, "runs", "repeat.", 0, INT_MAX));
  PTOC_ASSIGN(out.simulatedStats, readStats(r, *repeat, "simulated_us", "repeat."));

  if (const llvm::json::Object *host = root->getObject("host")) {
    out.hasHostTimes = true;
    PTOC_ASSIGN(out.compileSeconds, readStats(r, *host, "compile_s", "host."));
    PTOC_ASSIGN(out.simulateSeconds, readStats(r, *host, "simulate_s", "host."));
  }
  return out;
}

absl::StatusOr<PerfReport> reportFromSummaryJson(llvm::StringRef text,
                                                 llvm::StringRef sourceName) {
  absl::StatusOr<llvm::json::Value> value = support::parseJson(text, sourceName);
  if (!value.ok()) return value.status();
  const llvm::json::Object *root = value->getAsObject();
  Reader r(sourceName);
  if (!root) return r.error("(top level)", "not an object");
  // summary.json holds the Summary's fields under stable keys (docs/outputs.md);
  // rebuild the part of a Summary the report needs and fill the metrics as a run would.
  Summary s;
  PTOC_ASSIGN(s.func, r.string(*root, "func", ""));
  PTOC_ASSIGN(s.device, r.string(*root, "device", ""));
  PTOC_ASSIGN(s.schedMode, r.integer(*root, "sched_mode", "", 0, INT_MAX));
  PTOC_ASSIGN(s.tasks, r.integer(*root, "tasks", "", 0, INT_MAX));
  PTOC_ASSIGN(s.edges, r.integer(*root, "edges", "", 0, INT64_MAX));
  PTOC_ASSIGN(s.simulatedUs, r.number(*root, "simulated_us", ""));
  PTOC_ASSIGN(s.headUs, r.number(*root, "head_us", ""));
  PTOC_ASSIGN(s.spanUs, r.number(*root, "span_us", ""));
  PTOC_ASSIGN(s.boundUs, r.number(*root, "bound_us", ""));
  PTOC_ASSIGN(s.ratio, r.number(*root, "ratio", ""));
  PTOC_ASSIGN(s.spanRatio, r.number(*root, "span_ratio", ""));
  PTOC_ASSIGN(s.limiter, r.string(*root, "limiter", ""));
  const llvm::json::Array *cores = root->getArray("cores");
  if (!cores) return r.error("cores", "missing or not an array");
  for (size_t i = 0; i < cores->size(); ++i) {
    std::string p = absl::StrCat("cores[", i, "].");
    const llvm::json::Object *c = (*cores)[i].getAsObject();
    if (!c) return r.error(p, "not an object");
    CoreKindSummary k;
    PTOC_ASSIGN(k.kind, r.string(*c, "kind", p));
    PTOC_ASSIGN(k.utilization, r.number(*c, "utilisation", p));
    s.coreKinds.push_back(k);
  }
  const llvm::json::Object *bytes;
  PTOC_ASSIGN(bytes, r.object(*root, "bytes", ""));
  for (auto [key, field] : {std::pair{"copy_in", &s.copyInBytes},
                            std::pair{"copy_out", &s.copyOutBytes},
                            std::pair{"hbm_read", &s.hbmReadBytes},
                            std::pair{"hbm_write", &s.hbmWriteBytes}})
    PTOC_ASSIGN(*field, r.integer(*bytes, key, "bytes.", 0, INT64_MAX));
  PTOC_ASSIGN(s.l2HitRate, r.number(*bytes, "l2_hit_rate", "bytes."));

  PerfReport out;
  out.source = "run_folder";
  fillMetrics(out, s);
  out.runs = 1;
  out.simulatedStats = computeStats({s.simulatedUs});
  return out;
}

absl::StatusOr<Comparison> compareReports(const PerfReport &base, const PerfReport &current,
                                          const CompareOptions &options) {
  if (!(options.thresholdPercent >= 0))
    return absl::InvalidArgumentError(absl::StrCat(
        "the threshold must be a percentage >= 0, got ", options.thresholdPercent));
  std::vector<std::string> gated =
      options.gated.empty() ? defaultGatedMetrics() : options.gated;
  for (const std::string &g : gated) {
    const MetricInfo *m = findMetric(g);
    if (!m) {
      std::vector<std::string> names;
      for (const MetricInfo &mi : reportMetrics()) names.push_back(mi.key);
      return absl::InvalidArgumentError(absl::StrCat("unknown metric '", g,
                                                     "'; metrics: ", absl::StrJoin(names, ", ")));
    }
    if (m->sense == MetricSense::Neutral)
      return absl::InvalidArgumentError(absl::StrCat(
          "metric '", g, "' has no better or worse direction (", m->help,
          "), so it cannot gate; gate on simulated_us, ratio, a utilisation or a byte count"));
    for (const PerfReport *r : {&base, &current})
      if (!r->metrics.count(g))
        return absl::InvalidArgumentError(absl::StrCat(
            "the ", r == &base ? "base" : "new", " report has no metric '", g,
            "', which is gated; gate on a metric both reports have"));
  }

  Comparison cmp;
  // Identity: comparing different operators or devices is meaningless unless asked.
  std::vector<std::string> mismatches;
  if (base.func != current.func)
    mismatches.push_back(absl::StrCat("operator '", base.func, "' vs '", current.func, "'"));
  if (!base.args.empty() && !current.args.empty() &&
      (base.args != current.args || base.results != current.results))
    mismatches.push_back(absl::StrCat("signature (", tensorsText(base.args), " -> ",
                                      tensorsText(base.results), ") vs (",
                                      tensorsText(current.args), " -> ",
                                      tensorsText(current.results), ")"));
  if (base.device != current.device)
    mismatches.push_back(absl::StrCat("device '", base.device, "' vs '", current.device, "'"));
  else if (!base.deviceHash.empty() && !current.deviceHash.empty() &&
           base.deviceHash != current.deviceHash)
    mismatches.push_back(absl::StrCat("device '", base.device, "' content hash ",
                                      base.deviceHash, " vs ", current.deviceHash,
                                      " (the device description changed)"));
  if (!mismatches.empty()) {
    if (!options.force)
      return absl::InvalidArgumentError(
          absl::StrCat("the reports are of different runs: ", absl::StrJoin(mismatches, "; "),
                       "; compare reports of the same operator on the same device, or pass "
                       "--force to compare anyway"));
    for (const std::string &m : mismatches) cmp.warnings.push_back("forced: " + m);
  }
  // Differing options are the point of many comparisons; say so, do not refuse.
  if (base.schedMode != current.schedMode)
    cmp.warnings.push_back(absl::StrCat("sched mode differs: ", base.schedMode, " vs ",
                                        current.schedMode));
  if (base.passOptions != current.passOptions)
    cmp.warnings.push_back("pass options differ");
  if (!base.pipeline.empty() && !current.pipeline.empty() && base.pipeline != current.pipeline)
    cmp.warnings.push_back("pass pipelines differ");
  if (base.doubleBuffer != current.doubleBuffer) cmp.warnings.push_back("double buffering differs");

  for (const MetricInfo &m : reportMetrics()) {
    auto b = base.metrics.find(m.key), c = current.metrics.find(m.key);
    if (b == base.metrics.end() && c == current.metrics.end()) continue;
    MetricDiff d;
    d.metric = m.key;
    d.gated = std::find(gated.begin(), gated.end(), m.key) != gated.end();
    if (b != base.metrics.end()) d.base = b->second;
    if (c != current.metrics.end()) d.current = c->second;
    if (!d.base || !d.current) {
      d.verdict = "missing";
      cmp.rows.push_back(d);
      continue;
    }
    double diff = *d.current - *d.base;
    if (*d.base != 0) d.deltaPercent = diff / std::fabs(*d.base) * 100.0;
    else if (diff == 0) d.deltaPercent = 0.0;
    bool same = d.deltaPercent ? std::fabs(*d.deltaPercent) < kSamePercent : false;
    if (same) {
      d.verdict = "same";
    } else if (m.sense == MetricSense::Neutral) {
      d.verdict = "changed";
    } else {
      bool worse = m.sense == MetricSense::LowerIsBetter ? diff > 0 : diff < 0;
      // With a zero base every change is infinitely large.
      bool beyond = !d.deltaPercent || std::fabs(*d.deltaPercent) > options.thresholdPercent;
      if (!worse) d.verdict = "better";
      else if (d.gated && beyond) d.verdict = "REGRESSION";
      else d.verdict = "worse";
      cmp.regressed |= d.verdict == "REGRESSION";
    }
    cmp.rows.push_back(d);
  }
  return cmp;
}

std::string comparisonText(const Comparison &cmp, const PerfReport &base,
                           const PerfReport &current, const CompareOptions &options) {
  std::vector<std::vector<std::string>> rows = {
      {"metric", "base", "new", "delta", "verdict"}};
  for (const MetricDiff &d : cmp.rows) {
    std::string delta = "-";
    if (d.base && d.current)
      delta = d.deltaPercent ? absl::StrFormat("%+.2f%%", *d.deltaPercent) : "n/a";
    rows.push_back({d.metric + (d.gated ? " *" : ""), valueText(d.metric, d.base),
                    valueText(d.metric, d.current), delta, d.verdict});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto &row : rows)
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::string out = absl::StrCat("base: ", base.func, " on ", base.device, ", commit ",
                                 base.commit,
                                 base.label.empty() ? "" : absl::StrCat(" (", base.label, ")"),
                                 "\nnew:  ", current.func, " on ", current.device, ", commit ",
                                 current.commit,
                                 current.label.empty() ? ""
                                                       : absl::StrCat(" (", current.label, ")"),
                                 "\n");
  for (const auto &row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      // The metric name is left-aligned, numbers right-aligned, the verdict last.
      bool left = i == 0 || i + 1 == row.size();
      std::string pad(width[i] - row[i].size(), ' ');
      absl::StrAppend(&line, i ? "  " : "", left ? row[i] + pad : pad + row[i]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    absl::StrAppend(&out, line, "\n");
  }
  absl::StrAppend(&out, "(* gated, threshold ",
                  absl::StrFormat("%g%%", options.thresholdPercent), ")\n");
  for (const std::string &w : cmp.warnings) absl::StrAppend(&out, "warning: ", w, "\n");
  std::vector<std::string> regressed;
  for (const MetricDiff &d : cmp.rows)
    if (d.verdict == "REGRESSION")
      regressed.push_back(d.deltaPercent
                              ? absl::StrFormat("%s %+.2f%%", d.metric, *d.deltaPercent)
                              : d.metric + " (from 0)");
  if (cmp.regressed)
    absl::StrAppend(&out, "FAIL: regression beyond ",
                    absl::StrFormat("%g%%", options.thresholdPercent), ": ",
                    absl::StrJoin(regressed, ", "), "\n");
  else
    absl::StrAppend(&out, "PASS: no gated metric regressed beyond ",
                    absl::StrFormat("%g%%", options.thresholdPercent), "\n");
  return out;
}

absl::StatusOr<double> parseThresholdPercent(llvm::StringRef text) {
  llvm::StringRef number = text.trim();
  number.consume_back("%");
  double v;
  if (number.empty() || !absl::SimpleAtod(absl::string_view(number.data(), number.size()), &v) ||
      !std::isfinite(v) || v < 0)
    return absl::InvalidArgumentError(absl::StrCat(
        "the threshold must be a percentage >= 0 such as '5%' or '0.5', got '", text.str(),
        "'"));
  return v;
}

} // namespace ptoc::profile
