// DeviceSpec: reading and writing device JSON, the built-in presets, and the
// consistency checks every device description must pass.
#include "ptoc/target/DeviceSpec.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include "ptoc/support/BoundedJson.h"
#include "ptoc/support/ReadFile.h"

namespace ptoc::target {
namespace {

/// The preset JSON files of lib/target/presets, embedded at build time.
struct PresetSource {
  const char *name;
  const char *json;
};
constexpr PresetSource kPresets[] = {
#include "ptoc/target/Presets.inc"
};

/// What a numeric field may hold: a closed range and why. A minimum of 0 makes the
/// field non-negative (latencies and overheads: a model without that cost); counts,
/// sizes, rates and factors have a positive minimum. The ranges are physical sanity
/// bounds, wide enough for any real or plausible part (docs/device-model.md "Bounds"
/// gives each one's reasoning); they keep every derived quantity (cycles, times,
/// core counts) far from overflow and from the simulator's precision limits.
struct Range {
  double min;
  double max;
  const char *why;
};

// Ranges shared by fields of one kind.
constexpr double kKiB = 1024, kGiB = kKiB * kKiB * kKiB;
constexpr Range kBufferBytes{1, kGiB, "on-chip buffers are KiB to a few MiB"};
constexpr Range kCoreBytesPerCycle{
    1, 65536, "a per-core pipe moves tens to hundreds of bytes per cycle (32-263 on a2)"};
constexpr Range kFixedCycles{
    0, 1e6, "a fixed cost of tens to a few thousand cycles on real parts; 1e6 cycles is "
            "about half a millisecond"};
constexpr Range kCubeFactor{1.0 / 1024, 1024,
                            "a multiple of the fp16 rate: 0.5 to 2 on real parts"};
constexpr Range kVectorFraction{1.0 / 1024, 1,
                                "a fraction of vector_bytes_per_cycle: 0.14 to 0.5 on a2"};

/// Every numeric field once: its JSON section ("" = top level), its key, the member
/// and its range. Parsing, printing, validation and hashing all walk this one list,
/// so a new field cannot be forgotten by one of them. The order is the JSON order.
template <typename Spec, typename Fn> void forEachField(Spec &d, Fn &&fn) {
  fn("", "aic_cores", d.aicCores,
     Range{1, 1024, "real dies have 20-32 cube cores; the simulator keeps state per core"});
  fn("", "aiv_cores", d.aivCores,
     Range{1, 4096, "real dies have 2 vector cores per cube core; the simulator keeps state "
                    "per core"});
  fn("", "clock_mhz", d.clockMHz,
     Range{10, 10000, "NPU clocks are 1-2 GHz, and no logic runs at 10 GHz"});
  fn("buffers", "l1", d.buffers.l1, kBufferBytes);
  fn("buffers", "l0a", d.buffers.l0a, kBufferBytes);
  fn("buffers", "l0b", d.buffers.l0b, kBufferBytes);
  fn("buffers", "l0c", d.buffers.l0c, kBufferBytes);
  fn("buffers", "ub", d.buffers.ub, kBufferBytes);
  fn("buffers", "block_bytes", d.buffers.blockBytes,
     Range{1, 4096, "a transfer and alignment granule: 32 bytes on real parts"});
  fn("compute", "cube_flops_per_cycle_fp16", d.compute.cubeFlopsPerCycleFp16,
     Range{1, 16777216, "8192 (16x16x16 MACs) per cube core on real parts"});
  fn("compute", "cube_int8_factor", d.compute.cubeInt8Factor, kCubeFactor);
  fn("compute", "cube_fp32_factor", d.compute.cubeFp32Factor, kCubeFactor);
  fn("compute", "cube_bf16_factor", d.compute.cubeBf16Factor, kCubeFactor);
  fn("compute", "cube_block_overhead_cycles", d.compute.cubeBlockOverheadCycles, kFixedCycles);
  fn("compute", "cube_latency_cycles", d.compute.cubeLatencyCycles, kFixedCycles);
  fn("compute", "vector_bytes_per_cycle", d.compute.vectorBytesPerCycle,
     Range{1, 65536, "256 bytes per cycle per vector core on real parts"});
  fn("compute", "vector_binary_rate", d.compute.vectorBinaryRate, kVectorFraction);
  fn("compute", "vector_div_rate", d.compute.vectorDivRate, kVectorFraction);
  fn("compute", "vector_transcendental_rate", d.compute.vectorTranscendentalRate,
     kVectorFraction);
  fn("compute", "vector_reduce_rate", d.compute.vectorReduceRate, kVectorFraction);
  fn("compute", "vector_latency_cycles", d.compute.vectorLatencyCycles, kFixedCycles);
  fn("pipes", "gm_to_l1_fixed_cycles", d.pipes.gmToL1FixedCycles, kFixedCycles);
  fn("pipes", "gm_to_l1_bytes_per_cycle", d.pipes.gmToL1BytesPerCycle, kCoreBytesPerCycle);
  fn("pipes", "nd2nz_fixed_cycles", d.pipes.nd2nzFixedCycles, kFixedCycles);
  fn("pipes", "nd2nz_bytes_per_cycle", d.pipes.nd2nzBytesPerCycle, kCoreBytesPerCycle);
  fn("pipes", "gm_to_ub_fixed_cycles", d.pipes.gmToUbFixedCycles, kFixedCycles);
  fn("pipes", "gm_to_ub_bytes_per_cycle", d.pipes.gmToUbBytesPerCycle, kCoreBytesPerCycle);
  fn("pipes", "mte1_fixed_cycles", d.pipes.mte1FixedCycles, kFixedCycles);
  fn("pipes", "mte1_l0a_bytes_per_cycle", d.pipes.mte1L0aBytesPerCycle, kCoreBytesPerCycle);
  fn("pipes", "mte1_l0b_bytes_per_cycle", d.pipes.mte1L0bBytesPerCycle, kCoreBytesPerCycle);
  fn("pipes", "fixpipe_fixed_cycles", d.pipes.fixpipeFixedCycles, kFixedCycles);
  fn("pipes", "fixpipe_bytes_per_cycle", d.pipes.fixpipeBytesPerCycle, kCoreBytesPerCycle);
  fn("pipes", "mte3_fixed_cycles", d.pipes.mte3FixedCycles, kFixedCycles);
  fn("pipes", "mte3_bytes_per_cycle", d.pipes.mte3BytesPerCycle, kCoreBytesPerCycle);
  fn("pipes", "sync_cycles", d.pipes.syncCycles, kFixedCycles);
  fn("memory", "hbm_bytes_per_second", d.memory.hbmBytesPerSecond,
     Range{1e9, 1e15, "1.6e12 on a2, about 8e12 on the fastest HBM parts"});
  fn("memory", "l2_bytes", d.memory.l2Bytes,
     Range{1, 1024 * kGiB, "192 MiB on a2; on-chip caches are MiB to a few GiB"});
  fn("memory", "l2_bytes_per_second", d.memory.l2BytesPerSecond,
     Range{1e9, 1e16, "4.752e12 on a2"});
  fn("memory", "core_hbm_bytes_per_cycle", d.memory.coreHbmBytesPerCycle, kCoreBytesPerCycle);
  fn("memory", "gm_latency_cycles", d.memory.gmLatencyCycles, kFixedCycles);
  fn("memory", "l2_latency_cycles", d.memory.l2LatencyCycles, kFixedCycles);
  fn("scheduler", "threads", d.scheduler.threads,
     Range{1, 256, "3 AICPU scheduler threads on real parts"});
  fn("scheduler", "dispatch_cycles", d.scheduler.dispatchCycles, kFixedCycles);
  fn("scheduler", "completion_cycles", d.scheduler.completionCycles, kFixedCycles);
  fn("scheduler", "dependency_resolve_cycles", d.scheduler.dependencyResolveCycles,
     kFixedCycles);
  fn("scheduler", "control_iteration_cycles", d.scheduler.controlIterationCycles, kFixedCycles);
  fn("scheduler", "control_task_cycles", d.scheduler.controlTaskCycles, kFixedCycles);
  fn("scheduler", "control_stitch_cycles", d.scheduler.controlStitchCycles, kFixedCycles);
  fn("", "launch_overhead_us", d.launchOverheadUs,
     Range{0, 1e6, "about 20 us on real parts; 1e6 us is a second"});
  fn("", "plain_kernel_start_us", d.plainKernelStartUs,
     Range{0, 1e6, "a few us on real parts; 1e6 us is a second"});
  fn("", "plain_cube_kernel_start_us", d.plainCubeKernelStartUs,
     Range{0, 1e6, "a few us on real parts; 1e6 us is a second"});
  fn("", "plain_block_cycles", d.plainBlockCycles, kFixedCycles);
}

constexpr const char *kSections[] = {"buffers", "compute", "pipes", "memory", "scheduler"};

std::string fieldPath(llvm::StringRef section, llvm::StringRef key) {
  return section.empty() ? key.str() : absl::StrCat(section.str(), ".", key.str());
}

/// Top-level keys in JSON order (for "unknown field" messages).
std::vector<std::string> topLevelKeys() {
  std::vector<std::string> keys = {"name", "base"};
  DeviceSpec d;
  forEachField(d, [&](const char *section, const char *key, auto &, const Range &) {
    llvm::StringRef s = section[0] ? section : key;
    if (std::find(keys.begin(), keys.end(), s) == keys.end()) keys.push_back(s.str());
  });
  return keys;
}

std::vector<std::string> sectionKeys(llvm::StringRef section) {
  std::vector<std::string> keys;
  DeviceSpec d;
  forEachField(d, [&](const char *s, const char *key, auto &, const Range &) {
    if (section == s) keys.push_back(key);
  });
  return keys;
}

/// Shortest text that parses back to exactly `v`.
std::string formatDouble(double v) {
  if (!std::isfinite(v)) return "null"; // JSON has no inf/nan; validate() rejects them
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

std::string describe(const llvm::json::Value &v) { return support::jsonPreview(v); }

std::string kindText(const Range &range, bool integral) {
  if (range.min > 0) return integral ? "a positive integer" : "a positive number";
  return integral ? "a non-negative integer" : "a non-negative number";
}

/// The value as a message shows it (integers without a fraction).
template <typename T> std::string valueText(T v) {
  if constexpr (std::is_integral_v<T>) return std::to_string(v);
  else return formatDouble(v);
}

/// True if `v` is finite and has the field's sign (positive, or non-negative).
template <typename T> bool hasKind(T v, const Range &range) {
  bool ok = range.min > 0 ? v > 0 : v >= 0;
  if constexpr (std::is_floating_point_v<T>) ok = ok && std::isfinite(v);
  return ok;
}

/// "" if `v` lies in `range`, else why not (without source and path).
template <typename T> std::string checkRange(T v, const Range &range) {
  double d = static_cast<double>(v);
  if (d >= range.min && d <= range.max) return "";
  return absl::StrCat(valueText(v), " is out of range: it must be between ",
                      formatDouble(range.min), " and ", formatDouble(range.max), " (",
                      range.why, ")");
}

/// Reads one numeric field into `out`; "" or the problem (without source and path).
template <typename T>
std::string readNumber(const llvm::json::Value &v, const Range &range, T &out) {
  constexpr bool integral = std::is_integral_v<T>;
  std::string expected =
      absl::StrCat("expected ", kindText(range, integral), ", got ", describe(v));
  if constexpr (integral) {
    std::optional<int64_t> i = support::jsonInteger(v);
    if (!i || !hasKind(*i, range)) return expected;
    if (std::string problem = checkRange(*i, range); !problem.empty()) return problem;
    out = static_cast<T>(*i);
  } else {
    llvm::Optional<double> d = v.getAsNumber();
    if (!d || !hasKind(*d, range)) return expected;
    if (std::string problem = checkRange(*d, range); !problem.empty()) return problem;
    // -0 is 0: one value, one content hash, and it prints back as what was read.
    out = *d == 0 ? 0.0 : *d;
  }
  return "";
}

/// First key of `obj` (in sorted order, so messages are deterministic) not in `known`.
std::optional<std::string> firstUnknownKey(const llvm::json::Object &obj,
                                           const std::vector<std::string> &known) {
  std::vector<std::string> unknown;
  for (const auto &kv : obj) {
    std::string key = kv.first.str();
    if (std::find(known.begin(), known.end(), key) == known.end()) unknown.push_back(key);
  }
  if (unknown.empty()) return std::nullopt;
  return *std::min_element(unknown.begin(), unknown.end());
}

std::string presetList() { return absl::StrJoin(DeviceSpec::presetNames(), ", "); }

const PresetSource *findPreset(llvm::StringRef name) {
  for (const PresetSource &p : kPresets)
    if (name == p.name) return &p;
  return nullptr;
}

/// The checks of validate(), as a message without the device's name ("" = valid).
std::string checkConsistency(const DeviceSpec &d) {
  if (d.name.empty()) return "name must not be empty";
  std::string problem;
  forEachField(d, [&](const char *section, const char *key, const auto &v, const Range &range) {
    if (!problem.empty()) return;
    constexpr bool integral = std::is_integral_v<std::decay_t<decltype(v)>>;
    if (!hasKind(v, range))
      problem = absl::StrCat(fieldPath(section, key), " must be ", kindText(range, integral),
                             ", got ", valueText(v));
    else if (std::string why = checkRange(v, range); !why.empty())
      problem = absl::StrCat(fieldPath(section, key), ": ", why);
  });
  if (!problem.empty()) return problem;
  if (d.aivCores % d.aicCores != 0)
    return absl::StrCat("aiv_cores (", d.aivCores, ") must be a multiple of aic_cores (",
                        d.aicCores, ")");
  if ((d.buffers.blockBytes & (d.buffers.blockBytes - 1)) != 0)
    return absl::StrCat("buffers.block_bytes (", d.buffers.blockBytes, ") must be a power of two");
  for (auto [key, bytes] : {std::pair{"l1", d.buffers.l1}, {"l0a", d.buffers.l0a},
                            {"l0b", d.buffers.l0b}, {"l0c", d.buffers.l0c}, {"ub", d.buffers.ub}})
    if (bytes < d.buffers.blockBytes)
      return absl::StrCat("buffers.", key, " (", bytes, ") must hold at least one block (",
                          "buffers.block_bytes = ", d.buffers.blockBytes, ")");
  if (d.memory.l2LatencyCycles > d.memory.gmLatencyCycles)
    return absl::StrCat("memory.l2_latency_cycles (", formatDouble(d.memory.l2LatencyCycles),
                        ") must not exceed memory.gm_latency_cycles (",
                        formatDouble(d.memory.gmLatencyCycles), "): an L2 hit is never slower than a miss");
  if (d.scheduler.threads > d.aicCores)
    return absl::StrCat("scheduler.threads (", d.scheduler.threads,
                        ") must be between 1 and aic_cores (", d.aicCores,
                        "): each scheduler thread owns a slice of the cube cores");
  return "";
}

/// Parses `json` from `source`. Presets (`isPreset`) must spell out every field and
/// have no base; other descriptions start from their base preset (default a2).
absl::StatusOr<DeviceSpec> parseDevice(llvm::StringRef json, llvm::StringRef source,
                                       bool isPreset) {
  auto fail = [&](const std::string &msg) {
    return absl::InvalidArgumentError(absl::StrCat(source.str(), ": ", msg));
  };

  absl::StatusOr<llvm::json::Value> parsed = support::parseJson(json, source);
  if (!parsed.ok()) return parsed.status();
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root)
    return fail(absl::StrCat("expected a JSON object at the top level, got ", describe(*parsed)));

  // Unknown keys first, at every level: a typo is the likeliest mistake and the
  // message for it should not depend on which other fields happen to be wrong.
  std::vector<std::string> known = topLevelKeys();
  if (auto key = firstUnknownKey(*root, known))
    return fail(
        absl::StrCat("unknown field '", *key, "' (known: ", absl::StrJoin(known, ", "), ")"));
  for (const char *section : kSections) {
    const llvm::json::Value *v = root->get(section);
    if (!v) continue;
    const llvm::json::Object *obj = v->getAsObject();
    if (!obj)
      return fail(absl::StrCat("field '", section, "': expected an object, got ", describe(*v)));
    std::vector<std::string> keys = sectionKeys(section);
    if (auto key = firstUnknownKey(*obj, keys))
      return fail(absl::StrCat("unknown field '", section, ".", *key,
                               "' (known: ", absl::StrJoin(keys, ", "), ")"));
  }

  DeviceSpec spec;
  if (const llvm::json::Value *base = root->get("base")) {
    if (isPreset) return fail("field 'base': a preset spells out every field and has no base");
    llvm::Optional<llvm::StringRef> baseName = base->getAsString();
    if (!baseName)
      return fail(absl::StrCat("field 'base': expected a preset name, got ", describe(*base)));
    if (!findPreset(*baseName))
      return fail(absl::StrCat("field 'base': unknown preset '", baseName->str(),
                               "' (known: ", presetList(), ")"));
    absl::StatusOr<DeviceSpec> b = DeviceSpec::preset(*baseName);
    if (!b.ok()) return b.status();
    spec = *std::move(b);
  } else if (!isPreset) {
    absl::StatusOr<DeviceSpec> b = DeviceSpec::preset("a2");
    if (!b.ok()) return b.status();
    spec = *std::move(b);
  }

  if (const llvm::json::Value *name = root->get("name")) {
    llvm::Optional<llvm::StringRef> s = name->getAsString();
    if (!s || s->empty())
      return fail(absl::StrCat("field 'name': expected a non-empty string, got ", describe(*name)));
    spec.name = s->str();
  } else if (isPreset) {
    return fail("missing field 'name' (a preset spells out every field)");
  }

  std::string problem;
  forEachField(spec, [&](const char *section, const char *key, auto &field, const Range &range) {
    if (!problem.empty()) return;
    const llvm::json::Object *obj = root;
    if (section[0]) {
      const llvm::json::Value *sv = root->get(section);
      obj = sv ? sv->getAsObject() : nullptr;
    }
    const llvm::json::Value *v = obj ? obj->get(key) : nullptr;
    if (!v) {
      if (isPreset)
        problem = absl::StrCat("missing field '", fieldPath(section, key),
                               "' (a preset spells out every field)");
      return;
    }
    std::string err = readNumber(*v, range, field);
    if (!err.empty()) problem = absl::StrCat("field '", fieldPath(section, key), "': ", err);
  });
  if (!problem.empty()) return fail(problem);

  if (std::string msg = checkConsistency(spec); !msg.empty()) return fail(msg);
  return spec;
}

} // namespace

absl::StatusOr<DeviceSpec> DeviceSpec::fromJson(llvm::StringRef json, llvm::StringRef sourceName) {
  return parseDevice(json, sourceName, /*isPreset=*/false);
}

absl::StatusOr<DeviceSpec> DeviceSpec::preset(llvm::StringRef name) {
  const PresetSource *p = findPreset(name);
  if (!p)
    return absl::InvalidArgumentError(
        absl::StrCat("unknown device preset '", name.str(), "' (known: ", presetList(), ")"));
  return parseDevice(p->json, absl::StrCat("preset ", p->name), /*isPreset=*/true);
}

absl::StatusOr<DeviceSpec> DeviceSpec::load(llvm::StringRef nameOrPath) {
  // A bare preset name means the preset, even if a file of that name exists here.
  bool looksLikePath = nameOrPath.endswith(".json") || nameOrPath.contains('/');
  if (!looksLikePath && findPreset(nameOrPath)) return preset(nameOrPath);
  bool isFile = llvm::sys::fs::exists(nameOrPath) && !llvm::sys::fs::is_directory(nameOrPath);
  if (isFile || looksLikePath) {
    absl::StatusOr<std::string> text =
        support::readFileBounded(nameOrPath, support::kMaxJsonBytes);
    if (!text.ok())
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot read device file '", nameOrPath.str(), "': ", text.status().message()));
    return fromJson(*text, nameOrPath);
  }
  if (findPreset(nameOrPath)) return preset(nameOrPath);
  return absl::InvalidArgumentError(absl::StrCat("unknown device '", nameOrPath.str(),
                                                 "': not a preset (", presetList(),
                                                 ") and no such file"));
}

std::vector<std::string> DeviceSpec::presetNames() {
  std::vector<std::string> names;
  for (const PresetSource &p : kPresets) names.push_back(p.name);
  std::sort(names.begin(), names.end());
  return names;
}

std::string DeviceSpec::toJson() const {
  std::string out;
  llvm::raw_string_ostream os(out);
  {
    llvm::json::OStream j(os, /*IndentSize=*/2);
    j.objectBegin();
    j.attribute("name", name);
    std::string openSection;
    forEachField(*this, [&](const char *section, const char *key, const auto &v, const Range &) {
      if (openSection != section) {
        if (!openSection.empty()) {
          j.objectEnd();
          j.attributeEnd();
        }
        openSection = section;
        if (!openSection.empty()) {
          j.attributeBegin(section);
          j.objectBegin();
        }
      }
      if constexpr (std::is_integral_v<std::decay_t<decltype(v)>>)
        j.attribute(key, int64_t(v));
      else {
        j.attributeBegin(key);
        j.rawValue(formatDouble(v));
        j.attributeEnd();
      }
    });
    if (!openSection.empty()) {
      j.objectEnd();
      j.attributeEnd();
    }
    j.objectEnd();
  }
  os << "\n";
  os.flush();
  return out;
}

absl::Status DeviceSpec::validate() const {
  std::string msg = checkConsistency(*this);
  if (msg.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("device '", name, "': ", msg));
}

uint64_t DeviceSpec::contentHash() const {
  // xxHash64 is a fixed algorithm, so the hash of the canonical text is stable
  // across processes, builds and platforms (unlike std::hash / absl::Hash).
  return llvm::xxHash64(toJson());
}

std::vector<std::string> DeviceSpec::numericFieldPaths() {
  std::vector<std::string> paths;
  DeviceSpec d;
  forEachField(d, [&](const char *section, const char *key, auto &, const Range &) {
    paths.push_back(fieldPath(section, key));
  });
  return paths;
}

namespace {
/// Calls fn(field, range) for the numeric field at `path`; false if there is none.
template <typename Spec, typename Fn> bool withField(Spec &d, llvm::StringRef path, Fn &&fn) {
  bool found = false;
  forEachField(d, [&](const char *section, const char *key, auto &field, const Range &range) {
    if (!found && fieldPath(section, key) == path) {
      found = true;
      fn(field, range);
    }
  });
  return found;
}

absl::Status unknownField(llvm::StringRef path) {
  return absl::InvalidArgumentError(
      absl::StrCat("unknown device field '", path.str(), "' (known: ",
                   absl::StrJoin(DeviceSpec::numericFieldPaths(), ", "), ")"));
}
} // namespace

absl::StatusOr<double> DeviceSpec::numericField(llvm::StringRef path) const {
  double value = 0;
  if (!withField(*this, path, [&](const auto &field, const Range &) {
        value = static_cast<double>(field);
      }))
    return unknownField(path);
  return value;
}

absl::StatusOr<DeviceSpec::FieldInfo> DeviceSpec::fieldInfo(llvm::StringRef path) {
  DeviceSpec d;
  FieldInfo info;
  if (!withField(d, path, [&](const auto &field, const Range &range) {
        info.min = range.min;
        info.max = range.max;
        info.integral = std::is_integral_v<std::decay_t<decltype(field)>>;
        info.why = range.why;
      }))
    return unknownField(path);
  return info;
}

absl::Status DeviceSpec::setNumericField(llvm::StringRef path, double value) {
  std::string problem;
  if (!withField(*this, path, [&](auto &field, const Range &range) {
        using T = std::decay_t<decltype(field)>;
        if (!std::isfinite(value)) {
          problem = absl::StrCat(path.str(), ": ", formatDouble(value), " is not a number");
        } else if constexpr (std::is_integral_v<T>) {
          double r = std::round(value);
          if (r < range.min || r > range.max)
            problem = absl::StrCat(path.str(), ": ", checkRange(r, range));
          else
            field = static_cast<T>(r);
        } else {
          field = value;
        }
      }))
    return unknownField(path);
  if (!problem.empty()) return absl::InvalidArgumentError(problem);
  return absl::OkStatus();
}

} // namespace ptoc::target
