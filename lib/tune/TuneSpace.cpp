// The tuner's search space and how a config of it is applied: tile-shape candidates
// per distinct vec_tile / cube_tile of a tensor-level function, merge counts and
// scheduler modes and parallel-loop parallelism (deriveSearchSpace), and the rewrite of the function's tile
// attributes and pass knobs for one config (applyConfig).
#include "ptoc/tune/TuneSpace.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "ptoc/ir/OpViews.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/LoopView.h"
#include "ptoc/passes/Passes.h"
#include "ptoc/ir/OpDef.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/ir/Printer.h"
#include "ptoc/ir/TileShape.h"
#include "ptoc/runtime/Simulator.h"
#include "ptoc/support/BoundedJson.h"

namespace ptoc::tune {
namespace {

/// Scale factors (numerator, denominator) tried on the non-last dims of a vec_tile.
constexpr std::pair<int64_t, int64_t> kVecOuterScales[] = {{1, 1}, {1, 8}, {1, 4}, {1, 2},
                                                           {2, 1}, {4, 1}, {8, 1}};
/// ... and on its last dim (which must stay block-aligned, so a smaller range).
constexpr std::pair<int64_t, int64_t> kVecLastScales[] = {{1, 1}, {1, 2}, {2, 1}};
/// Scale factors tried on cube m, n (L0 and L1 together) and k L1.
constexpr std::pair<int64_t, int64_t> kCubeScales[] = {{1, 1}, {1, 2}, {2, 1}};
/// Merge counts tried per group (a count over twice the group's size repeats "merge
/// all"; 1 = no merging).
constexpr int64_t kNBufferCounts[] = {1, 2, 4, 8, 16};
/// The number of scheduler modes (device_sched_mode 0..3).
constexpr int64_t kSchedModes = runtime::kMaxSchedMode + 1;
/// device_sched_parallelism values tried for a function with a parallel loop (powers
/// of two up to the runtime's most, runtime::kMaxSchedParallelism).
constexpr int64_t kSchedParallelisms[] = {1, 2, 4, 8};
static_assert(kSchedParallelisms[3] == runtime::kMaxSchedParallelism);
/// Cube sizes are multiples of this many elements (checkCubeTile's alignment).
constexpr int64_t kCubeRound = 16;

/// Scales `v` by num/den; nullopt when the result is not a positive integer.
std::optional<int64_t> scaled(int64_t v, std::pair<int64_t, int64_t> s) {
  if ((v * s.first) % s.second != 0) return std::nullopt;
  int64_t r = v * s.first / s.second;
  if (r < 1) return std::nullopt;
  return r;
}

int64_t roundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

/// The device_sched_parallelism value of knob `name`, or why it is not one (the
/// runtime's values, runtime::checkSchedParallelism's: 0 automatic, or 1..8).
absl::StatusOr<int> parallelismValue(llvm::StringRef name, const KnobValue &value) {
  const auto *p = std::get_if<int64_t>(&value);
  if (!p || *p < runtime::kAutoSchedParallelism || *p > runtime::kMaxSchedParallelism ||
      !runtime::checkSchedParallelism(static_cast<int>(*p)).ok())
    return absl::InvalidArgumentError(absl::StrCat(
        "knob '", name.str(), "' = ", knobValueToString(value),
        ": device_sched_parallelism (iterations of a parallel loop in flight) must be an "
        "integer in ", runtime::kMinSchedParallelism, "..", runtime::kMaxSchedParallelism,
        ", or ", runtime::kAutoSchedParallelism, " (automatic)"));
  return static_cast<int>(*p);
}

/// True if `tile` is a meaningful variant of `written` for every op: it passes
/// checkVecTile, its rows fill whole blocks (ops accept shorter rows, padded in UB,
/// but a variant should not add padding), its last dim divides the op's (unless the
/// written one already covers it), and no other dim exceeds the op's (unless the
/// written one already does; a larger tile is clamped to the iteration shape, so it
/// would repeat a candidate).
bool vecCandidateFits(const std::vector<int64_t> &tile, const std::vector<int64_t> &written,
                      const std::vector<ir::Operation *> &ops,
                      const target::DeviceSpec &device) {
  for (ir::Operation *op : ops) {
    ir::VecTileView info = ir::VecTileView::of(*op);
    if (!info.check(tile, &device).empty()) return false;
    if (tile == written) continue;
    if (!tile.empty() && (tile.back() * int64_t(info.minElemSize)) % device.buffers.blockBytes != 0)
      return false;
    for (size_t i = 0; i < tile.size(); ++i) {
      int64_t extent = info.iter[i];
      if (extent <= 0) continue;
      // An op whose written tile already exceeds it (a reshape to [n, 1] under a
      // [1, 4096] tile) clamps every candidate alike: no constraint from it.
      if (written[i] > extent) continue;
      if (tile[i] > extent) return false;
      bool last = i + 1 == tile.size();
      if (last && extent % tile[i] != 0) return false;
    }
  }
  return true;
}

/// M, N and K of a matmul op (batch dims ignored).
std::array<int64_t, 3> matmulExtents(const ir::Operation &op) {
  std::optional<ir::MatmulView> mm = ir::MatmulView::of(op);
  return mm ? std::array<int64_t, 3>{mm->m, mm->n, mm->k} : std::array<int64_t, 3>{1, 1, 1};
}

bool cubeCandidateFits(const ir::CubeTile &tile, const ir::CubeTile &written,
                       const std::vector<ir::Operation *> &ops,
                       const target::DeviceSpec &device) {
  for (ir::Operation *op : ops) {
    if (!ir::checkCubeTile(tile, op->operandType(0).dtype(), &device).empty()) return false;
    if (tile == written) continue;
    auto [m, n, k] = matmulExtents(*op);
    // An L1 size beyond the (aligned) extent is clamped: it would repeat a candidate.
    if (tile.m[1] > std::max(written.m[1], roundUp(m, kCubeRound))) return false;
    if (tile.n[1] > std::max(written.n[1], roundUp(n, kCubeRound))) return false;
    if (tile.k[1] > std::max(written.k[1], roundUp(k, kCubeRound))) return false;
  }
  return true;
}

std::vector<int64_t> flattenCube(const ir::CubeTile &t) {
  return {t.m[0], t.m[1], t.k[0], t.k[1], t.n[0], t.n[1]};
}

std::optional<ir::CubeTile> unflattenCube(const std::vector<int64_t> &v) {
  if (v.size() != 6) return std::nullopt;
  ir::CubeTile t;
  t.m = {v[0], v[1]};
  t.k = {v[2], v[3]};
  t.n = {v[4], v[5]};
  return t;
}

/// Parses `<prefix>[<k>]`; nullopt when `name` is not of that form.
std::optional<size_t> indexedName(llvm::StringRef name, llvm::StringRef prefix) {
  if (!name.consume_front(prefix) || !name.consume_front("[") || !name.consume_back("]"))
    return std::nullopt;
  size_t k = 0;
  if (name.getAsInteger(10, k)) return std::nullopt;
  return k;
}

/// `<prefix>[<key>]`: `vec_nbuffer[3]`, `vec_nbuffer[func1_3]`.
std::string mergeDimName(llvm::StringRef prefix, const passes::GroupKey &key) {
  return absl::StrCat(prefix.str(), "[", passes::groupKeyToString(key), "]");
}

/// A merge-count knob: `vec_nbuffer`, `vec_nbuffer[k]`, `vec_nbuffer[func<F>_<k>]`, and
/// the same for `cube_nbuffer`.
struct MergeKnob {
  bool vector = true;
  /// The setting key it sets (a hash order >= 0, or func<F>_<k>); nullopt: every group
  /// of the core kind (-1).
  std::optional<passes::GroupKey> key;
};

std::optional<MergeKnob> mergeKnob(llvm::StringRef name) {
  for (bool vector : {true, false}) {
    llvm::StringRef prefix = vector ? kVecNBufferDim : kCubeNBufferDim;
    if (name == prefix) return MergeKnob{vector, std::nullopt};
    llvm::StringRef inside = name;
    if (!inside.consume_front(prefix) || !inside.consume_front("[") || !inside.consume_back("]"))
      continue;
    // The key as the setting prints it: no quotes or spaces, no default -1.
    auto keyChar = [](char c) { return llvm::isAlnum(c) || c == '_'; };
    if (inside.empty() || !llvm::all_of(inside, keyChar)) continue;
    if (std::optional<passes::GroupKey> key = passes::parseGroupKey(inside);
        key && key->valid() && !key->isDefault())
      return MergeKnob{vector, key};
  }
  return std::nullopt;
}

/// The merge counts a config asks for, for one core kind.
struct MergeRequest {
  bool present = false;
  bool allAuto = false;       ///< `vec_nbuffer` / `cube_nbuffer` = "auto"
  /// group (or -1) -> N; a group's "auto" is passes::kAutomaticCount
  passes::GroupSetting setting;
};

/// The merge modes `knobs` give the groups of each core kind in a module:
/// vec_nbuffer_mode / cube_nbuffer_mode as set, else the default pipeline's (AIV 1; AIC
/// the pass's default, passes::kNBufferModeLoopBodies), that mode resolved to 1 in a
/// module with loops (whose root functions are all loop bodies) and to 0 in one without.
struct MergeModes {
  int64_t vec = 1, cube = 0;

  static MergeModes of(const passes::PassKnobs &knobs, const ir::Module &module) {
    bool loops = !ir::loopBodyNames(module).empty();
    auto resolve = [&](llvm::StringRef name, int64_t mode) {
      if (auto it = knobs.values().find(name.str()); it != knobs.values().end())
        if (const int64_t *set = std::get_if<int64_t>(&it->second)) mode = *set;
      return mode == passes::kNBufferModeLoopBodies ? int64_t(loops ? 1 : 0) : mode;
    };
    return {resolve("vec_nbuffer_mode", 1),
            resolve("cube_nbuffer_mode", passes::CubeNBufferMergeOptions{}.mode)};
  }
  int64_t of(bool vector) const { return vector ? vec : cube; }
  /// AIC groups without a count of their own merge automatically.
  bool cubeAutomatic() const { return cube == 1; }
};

/// The vec_nbuffer_setting (`vector`) or cube_nbuffer_setting `knobs` set, or null.
const passes::GroupSetting *mergeSettingOf(const passes::PassKnobs &knobs, bool vector) {
  const auto &values = knobs.values();
  auto it = values.find(vector ? "vec_nbuffer_setting" : "cube_nbuffer_setting");
  return it != values.end() ? std::get_if<passes::GroupSetting>(&it->second) : nullptr;
}

/// The counts of one core kind a config runs with: the base knobs' own setting (when
/// their mode for that kind reads it, `mode` 2) with the request's entries over it, so
/// a group the config does not name keeps the kernel's count; `vec_nbuffer` /
/// `cube_nbuffer` = "auto" leaves nothing of the base's.
passes::GroupSetting mergedSetting(const MergeRequest &request, const passes::PassKnobs &knobs,
                                   bool vector, int64_t mode) {
  passes::GroupSetting out;
  if (!request.allAuto && mode == 2)
    if (const passes::GroupSetting *base = mergeSettingOf(knobs, vector)) out = *base;
  for (const auto &[key, n] : request.setting) out[key] = n;
  // An automatic entry that no less specific entry would override says what its
  // absence says: left out, a config compiles with the knobs a kernel written with
  // the automatic count has.
  for (auto it = out.begin(); it != out.end();) {
    const passes::GroupKey &key = it->first;
    bool shadows = out.count(passes::GroupKey(-1)) ||
                   (key.perFunction() && out.count(passes::GroupKey(key.order)));
    if (it->second == passes::kAutomaticCount && !key.isDefault() && !shadows)
      it = out.erase(it);
    else
      ++it;
  }
  return out;
}

/// Sets the merge passes' knobs for the requests. A group the config does not name
/// keeps what the base knobs give it (mergedSetting); one it names "auto" takes the
/// automatic N. AIV groups without any count keep the default pipeline's automatic N;
/// AIC groups without one keep the automatic N when the base knobs' AIC merge mode is
/// 1 (MergeModes), else are not merged unless `cube_nbuffer` = "auto".
absl::Status applyMerges(const MergeRequest &vec, const MergeRequest &cube,
                         const MergeModes &modes, passes::PassKnobs &knobs) {
  if (vec.present) {
    passes::GroupSetting setting = mergedSetting(vec, knobs, true, modes.vec);
    bool automatic = setting.empty();
    if (absl::Status s = knobs.set("vec_nbuffer_mode", int64_t(automatic ? 1 : 2)); !s.ok())
      return s;
    if (!automatic)
      if (absl::Status s = knobs.set("vec_nbuffer_setting", setting); !s.ok()) return s;
  }
  if (!cube.present) return absl::OkStatus();
  const bool cubeAutomatic = modes.cubeAutomatic();
  passes::GroupSetting setting = mergedSetting(cube, knobs, false, modes.cube);
  // Every AIC count 1 is the default pipeline's "no cube merging": leave the pass out
  // (running it to merge nothing costs a subgraph-table rebuild per candidate).
  bool cubeAllOnes = !cube.allAuto && !setting.empty() &&
                     std::all_of(setting.begin(), setting.end(),
                                 [](const auto &e) { return e.second == 1; });
  if (cubeAllOnes) {
    if (cubeAutomatic || knobs.values().count("cube_nbuffer_mode"))
      // The base knobs merged AIC groups; this config says not to.
      if (absl::Status s = knobs.set("cube_nbuffer_mode", int64_t(0)); !s.ok()) return s;
  } else {
    if (!cube.allAuto && !cubeAutomatic) setting.try_emplace(-1, 1);
    bool automatic = setting.empty();
    if (absl::Status s = knobs.set("cube_nbuffer_mode", int64_t(automatic ? 1 : 2)); !s.ok())
      return s;
    if (!automatic)
      if (absl::Status s = knobs.set("cube_nbuffer_setting", setting); !s.ok()) return s;
  }
  return absl::OkStatus();
}

/// A config value as the pass option `name` (a flag, a number or a text; map-valued
/// options are tuned through the merge knobs).
absl::StatusOr<passes::OptionValue> passKnobValue(llvm::StringRef name,
                                                  const KnobValue &value) {
  const passes::PassOptionDecl *decl = passes::PassKnobs::find(name);
  auto wrong = [&](llvm::StringRef want) {
    return absl::InvalidArgumentError(absl::StrCat(
        "config knob '", name.str(), "' = ", knobValueToString(value),
        ": the pass option takes ", want.str()));
  };
  switch (decl->kind) {
  case passes::OptionKind::Bool:
    if (const auto *b = std::get_if<bool>(&value)) return passes::OptionValue(*b);
    return wrong("true or false");
  case passes::OptionKind::Int:
    if (const auto *i = std::get_if<int64_t>(&value)) return passes::OptionValue(*i);
    return wrong("an integer");
  case passes::OptionKind::Float:
    if (const auto *i = std::get_if<int64_t>(&value))
      return passes::OptionValue(static_cast<double>(*i));
    return wrong("a number");
  case passes::OptionKind::String:
    if (const auto *t = std::get_if<std::string>(&value)) return passes::OptionValue(*t);
    return wrong("a string");
  case passes::OptionKind::GroupSetting:
    return wrong(absl::StrCat("a map, which a config cannot hold; tune merge counts with ",
                              kVecNBufferDim, "[k] / ", kCubeNBufferDim,
                              "[k] (k = a hash order, or func<F>_<order> for one root "
                              "function's group)"));
  }
  return wrong("a value of its kind");
}

/// The text parsed for tuning is named this in locations.
constexpr const char *kTuneFileName = "<tune>";

/// "'exp' at f.py:12:3", or "'exp' (line 5 of the tuned text)" for tuning text.
std::string opWhere(const ir::Operation &op) {
  if (op.loc().isKnown() && op.loc().fileName() != kTuneFileName)
    return absl::StrCat("'", op.name().str(), "' at ", op.loc().str());
  return absl::StrCat("'", op.name().str(), "' (line ", op.loc().line, " of the tuned text)");
}

} // namespace

absl::StatusOr<ir::Func *> selectFunc(ir::Module &module, llvm::StringRef funcName) {
  if (!funcName.empty()) {
    if (ir::Func *f = module.lookup(funcName)) return f;
    return absl::NotFoundError(absl::StrCat("no function named '", funcName.str(),
                                            "' in the module to tune"));
  }
  if (ir::Func *entry = ir::loopEntry(module)) return entry; // its bodies are tuned with it
  if (module.numFuncs() != 1)
    return absl::InvalidArgumentError(
        absl::StrCat("the module to tune has ", module.numFuncs(),
                     " functions; name the one to tune (or keep one function per file)"));
  return &module.func(0);
}

absl::StatusOr<ParsedFunc> parseFunc(llvm::StringRef moduleText, llvm::StringRef funcName) {
  ParsedFunc parsed;
  parsed.ctx = std::make_unique<ir::Context>();
  absl::StatusOr<std::unique_ptr<ir::Module>> module =
      ir::parseModuleOrError(moduleText, kTuneFileName, *parsed.ctx);
  if (!module.ok()) return module.status();
  parsed.module = *std::move(module);
  absl::StatusOr<ir::Func *> func = selectFunc(*parsed.module, funcName);
  if (!func.ok()) return func.status();
  parsed.func = *func;
  return parsed;
}

TileSites collectTileSites(ir::Module &module) {
  TileSites sites;
  for (ir::Func &func : module.funcs())
  for (ir::Operation &op : func.ops()) {
    if (ir::Attribute vt = op.attr("vec_tile")) {
      llvm::ArrayRef<int64_t> shape = vt.getIntArray();
      std::vector<int64_t> tile(shape.begin(), shape.end());
      auto it = std::find(sites.vecTiles.begin(), sites.vecTiles.end(), tile);
      if (it == sites.vecTiles.end()) {
        sites.vecTiles.push_back(tile);
        sites.vecOps.emplace_back();
        it = sites.vecTiles.end() - 1;
      }
      sites.vecOps[it - sites.vecTiles.begin()].push_back(&op);
    }
    if (ir::Attribute ct = op.attr("cube_tile")) {
      std::optional<ir::CubeTile> tile = ir::CubeTile::fromAttr(ct);
      if (!tile) continue; // malformed: the verifier reports it at compile time
      auto it = std::find(sites.cubeTiles.begin(), sites.cubeTiles.end(), *tile);
      if (it == sites.cubeTiles.end()) {
        sites.cubeTiles.push_back(*tile);
        sites.cubeOps.emplace_back();
        it = sites.cubeTiles.end() - 1;
      }
      sites.cubeOps[it - sites.cubeTiles.begin()].push_back(&op);
    }
  }
  return sites;
}

std::string vecTileDimName(size_t k) { return absl::StrCat(kVecTileDim, "[", k, "]"); }
std::string cubeTileDimName(size_t k) { return absl::StrCat(kCubeTileDim, "[", k, "]"); }

bool hasParallelLoop(const ir::Module &module) {
  for (const ir::Func &func : module.funcs())
    for (const ir::Operation &op : func.ops()) {
      if (op.code() != ir::OpCode::Loop) continue;
      absl::StatusOr<ir::LoopView> loop = ir::LoopView::of(op);
      if (loop.ok() && loop->parallel) return true; // a malformed one: the verifier says
    }
  return false;
}

namespace {

/// The merge count the kernel's own pass options give the group of a core kind that
/// `key` names (a hash order, func<F>_<order>; nullopt: every group of the kind), as a
/// value of its merge knob, for the kind's merge `mode` (MergeModes): 1 when merging is
/// off, "auto" for the automatic N (a per-group cube knob has "auto" only when the AIC
/// groups merge automatically), N from the setting (the merge passes' lookup:
/// func<F>_<order>, then the hash order, then -1, then the automatic N).
std::optional<KnobValue> writtenMerge(const passes::PassKnobs &knobs, bool vector,
                                      std::optional<passes::GroupKey> key, int64_t mode) {
  std::optional<KnobValue> automatic;
  if (vector || !key || mode == 1) automatic = std::string(kNBufferAuto);
  if (mode == 0) return int64_t(1);
  if (mode == 1) return automatic;
  if (const passes::GroupSetting *setting = mergeSettingOf(knobs, vector)) {
    if (!key) {
      if (auto it = setting->find(-1); it != setting->end()) return it->second;
    } else if (key->perFunction()) {
      if (auto entry = passes::lookupGroupSetting(*setting, unsigned(key->func), key->order))
        return entry->second == passes::kAutomaticCount ? automatic : KnobValue(entry->second);
    } else {
      for (passes::GroupKey k : {*key, passes::GroupKey(-1)})
        if (auto it = setting->find(k); it != setting->end())
          return it->second == passes::kAutomaticCount ? automatic : KnobValue(it->second);
    }
  }
  return automatic;
}

} // namespace

absl::StatusOr<SearchSpace> deriveSearchSpace(llvm::StringRef moduleText,
                                              llvm::StringRef funcName,
                                              const target::DeviceSpec &device,
                                              llvm::ArrayRef<MergeGroup> groups,
                                              int schedParallelism,
                                              const passes::PassKnobs &baseKnobs) {
  absl::StatusOr<ParsedFunc> parsed = parseFunc(moduleText, funcName);
  if (!parsed.ok()) return parsed.status();
  TileSites sites = collectTileSites(*parsed->module);

  SearchSpace space;
  for (size_t k = 0; k < sites.vecTiles.size(); ++k) {
    const std::vector<int64_t> &written = sites.vecTiles[k];
    std::set<std::vector<int64_t>> candidates{written};
    for (auto outer : kVecOuterScales)
      for (auto last : kVecLastScales) {
        if (written.empty()) continue;
        std::vector<int64_t> tile = written;
        bool ok = true;
        for (size_t i = 0; ok && i + 1 < tile.size(); ++i) {
          std::optional<int64_t> v = scaled(tile[i], outer);
          ok = v.has_value();
          if (ok) tile[i] = *v;
        }
        std::optional<int64_t> l = scaled(tile.back(), last);
        if (!ok || !l) continue;
        tile.back() = *l;
        if (vecCandidateFits(tile, written, sites.vecOps[k], device)) candidates.insert(tile);
      }
    Dimension dim{vecTileDimName(k), {}, DimensionKind::Vector};
    for (const std::vector<int64_t> &c : candidates) dim.values.push_back(c);
    if (absl::Status s = space.addDimension(std::move(dim)); !s.ok()) return s;
  }
  for (size_t k = 0; k < sites.cubeTiles.size(); ++k) {
    const ir::CubeTile &written = sites.cubeTiles[k];
    std::set<std::vector<int64_t>> candidates{flattenCube(written)};
    for (auto sm : kCubeScales)
      for (auto sn : kCubeScales)
        for (auto sk : kCubeScales) {
          ir::CubeTile t = written;
          std::optional<int64_t> m0 = scaled(t.m[0], sm), m1 = scaled(t.m[1], sm);
          std::optional<int64_t> n0 = scaled(t.n[0], sn), n1 = scaled(t.n[1], sn);
          std::optional<int64_t> k1 = scaled(t.k[1], sk);
          if (!m0 || !m1 || !n0 || !n1 || !k1) continue;
          t.m = {*m0, *m1};
          t.n = {*n0, *n1};
          // k L0 stays (it must divide the new L1, so it shrinks with a halved L1).
          t.k = {std::min(t.k[0], *k1), *k1};
          if (cubeCandidateFits(t, written, sites.cubeOps[k], device))
            candidates.insert(flattenCube(t));
        }
    Dimension dim{cubeTileDimName(k), {}, DimensionKind::Cube};
    for (const std::vector<int64_t> &c : candidates) dim.values.push_back(c);
    if (absl::Status s = space.addDimension(std::move(dim)); !s.ok()) return s;
  }
  // Merge counts per hash-order group, for the groups of the function as written.
  MergeModes modes = MergeModes::of(baseKnobs, *parsed->module);
  for (const MergeGroup &group : groups) {
    bool vector = group.core == target::CoreKind::AIV;
    passes::GroupKey key = group.func == passes::GroupKey::kEveryFunc
                               ? passes::GroupKey(group.hashOrder)
                               : passes::GroupKey::inFunc(group.func, group.hashOrder);
    Dimension dim{mergeDimName(vector ? kVecNBufferDim : kCubeNBufferDim, key), {},
                  vector ? DimensionKind::Vector : DimensionKind::Cube};
    // The default pipeline merges AIV groups automatically (and AIC groups of loop
    // bodies): keep that as a choice.
    if (vector || modes.cubeAutomatic()) dim.values.push_back(std::string(kNBufferAuto));
    for (int64_t n : kNBufferCounts)
      if (n == 1 || n / 2 < group.size) dim.values.push_back(n);
    // The kernel's own count is always a choice (the function as written is a config
    // of the space), even one the counts above skip.
    if (std::optional<KnobValue> own =
            writtenMerge(baseKnobs, vector, key, modes.of(vector));
        own && std::find(dim.values.begin(), dim.values.end(), *own) == dim.values.end())
      dim.values.push_back(*own);
    if (absl::Status s = space.addDimension(std::move(dim)); !s.ok()) return s;
  }
  Dimension sched{kSchedDim, {}, DimensionKind::Other};
  for (int64_t mode = 0; mode < kSchedModes; ++mode) sched.values.push_back(mode);
  if (absl::Status s = space.addDimension(std::move(sched)); !s.ok()) return s;
  // Iterations in flight matter only to a parallel loop; the kernel's own value is
  // always a choice (the function as written is a config of the space).
  if (hasParallelLoop(*parsed->module)) {
    if (absl::StatusOr<int> own = parallelismValue(kSchedParallelismDim, int64_t(schedParallelism));
        !own.ok())
      return own.status();
    std::set<int64_t> values(std::begin(kSchedParallelisms), std::end(kSchedParallelisms));
    values.insert(schedParallelism);
    Dimension parallelism{kSchedParallelismDim, {}, DimensionKind::Other};
    for (int64_t p : values) parallelism.values.push_back(p);
    if (absl::Status s = space.addDimension(std::move(parallelism)); !s.ok()) return s;
  }
  return space;
}

absl::StatusOr<TunedConfig> applyConfigValues(const std::map<std::string, KnobValue> &values,
                                              llvm::StringRef moduleText,
                                              const passes::PassKnobs &baseKnobs) {
  absl::StatusOr<ParsedFunc> parsed = parseFunc(moduleText);
  if (!parsed.ok()) return parsed.status();
  ir::Func *func = parsed->func;
  TileSites sites = collectTileSites(*parsed->module);

  TunedConfig out;
  out.knobs = baseKnobs;
  const MergeModes modes = MergeModes::of(baseKnobs, *parsed->module);
  const bool cubeAutomatic = modes.cubeAutomatic();
  MergeRequest vecMerge, cubeMerge;
  llvm::json::Object json;
  for (const auto &[name, value] : values) {
    json[name] = knobValueToJson(value);
    const auto *ints = std::get_if<std::vector<int64_t>>(&value);
    if (name == kVecTileDim || name == kCubeTileDim) {
      // Every site of that kind (a per-site `[k]` knob, sorted after this one, wins).
      bool vector = name == kVecTileDim;
      std::optional<ir::CubeTile> cube = ints ? unflattenCube(*ints) : std::nullopt;
      if (!ints || (!vector && !cube))
        return absl::InvalidArgumentError(absl::StrCat(
            "config knob '", name, "' = ", knobValueToString(value), " is not a ",
            vector ? "vec_tile (a list of sizes)" : "cube tile [mL0, mL1, kL0, kL1, nL0, nL1]"));
      if ((vector ? sites.vecOps.size() : sites.cubeOps.size()) == 0)
        return absl::InvalidArgumentError(absl::StrCat(
            "config knob '", name, "' does not apply: the function has no ", name, " shapes"));
      for (const std::vector<ir::Operation *> &ops : vector ? sites.vecOps : sites.cubeOps)
        for (ir::Operation *op : ops)
          op->setAttr(name, vector ? parsed->ctx->intArrayAttr(*ints)
                                   : cube->toAttr(*parsed->ctx));
    } else if (std::optional<size_t> k = indexedName(name, kVecTileDim)) {
      if (*k >= sites.vecTiles.size() || !ints)
        return absl::InvalidArgumentError(absl::StrCat(
            "config knob '", name, "' = ", knobValueToString(value),
            " does not apply: the function has ", sites.vecTiles.size(),
            " distinct vec_tile shapes and a vec_tile is a list of sizes"));
      for (ir::Operation *op : sites.vecOps[*k])
        op->setAttr("vec_tile", parsed->ctx->intArrayAttr(*ints));
    } else if (std::optional<size_t> k = indexedName(name, kCubeTileDim)) {
      std::optional<ir::CubeTile> tile = ints ? unflattenCube(*ints) : std::nullopt;
      if (*k >= sites.cubeTiles.size() || !tile)
        return absl::InvalidArgumentError(absl::StrCat(
            "config knob '", name, "' = ", knobValueToString(value),
            " does not apply: the function has ", sites.cubeTiles.size(),
            " distinct cube_tile shapes and a cube tile is [mL0, mL1, kL0, kL1, nL0, nL1]"));
      for (ir::Operation *op : sites.cubeOps[*k])
        op->setAttr("cube_tile", tile->toAttr(*parsed->ctx));
    } else if (name == kSchedDim) {
      const auto *mode = std::get_if<int64_t>(&value);
      if (!mode || *mode < 0 || *mode >= kSchedModes)
        return absl::InvalidArgumentError(absl::StrCat(
            "config knob '", name, "' = ", knobValueToString(value),
            ": the scheduler mode must be 0..", kSchedModes - 1));
      out.schedMode = static_cast<int>(*mode);
    } else if (name == kSchedParallelismDim) {
      absl::StatusOr<int> parallelism = parallelismValue(name, value);
      if (!parallelism.ok())
        return absl::InvalidArgumentError(
            absl::StrCat("config ", parallelism.status().message()));
      out.schedParallelism = *parallelism;
    } else if (std::optional<MergeKnob> merge = mergeKnob(name)) {
      MergeRequest &request = merge->vector ? vecMerge : cubeMerge;
      request.present = true;
      passes::GroupKey key = merge->key.value_or(passes::GroupKey(-1));
      const auto *n = std::get_if<int64_t>(&value);
      const auto *text = std::get_if<std::string>(&value);
      bool isAuto = text && *text == kNBufferAuto;
      if (n && *n >= 1) {
        request.setting[key] = *n;
      } else if (isAuto && (merge->vector || key.isDefault() || cubeAutomatic)) {
        if (key.isDefault()) request.allAuto = true;
        else request.setting[key] = passes::kAutomaticCount;
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            "config knob '", name, "' = ", knobValueToString(value),
            ": a merge count is a number >= 1",
            merge->vector || key.isDefault() || cubeAutomatic
                ? " or \"auto\""
                : " (\"auto\" only for every group: cube_nbuffer)"));
      }
    } else if (passes::PassKnobs::find(name)) {
      absl::StatusOr<passes::OptionValue> option = passKnobValue(name, value);
      if (!option.ok()) return option.status();
      if (absl::Status s = out.knobs.set(name, *option); !s.ok()) return s;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown config knob '", name, "'; the tuner knows vec_tile, vec_tile[k], cube_tile, "
          "cube_tile[k], ", kVecNBufferDim, ", ", kVecNBufferDim, "[k], ", kCubeNBufferDim, ", ",
          kCubeNBufferDim, "[k], ", kSchedDim, ", ", kSchedParallelismDim, " and the pass options (",
          absl::StrJoin(passes::PassKnobs::names(), ", "), ")"));
    }
  }
  if (absl::Status s = applyMerges(vecMerge, cubeMerge, modes, out.knobs); !s.ok())
    return s;
  out.configJson = llvm::formatv("{0}", llvm::json::Value(std::move(json))).str();
  // Keep the user's locations (loc(...) in the text, as Python's tracer writes it) so
  // that errors of the tuned kernel name the user's lines.
  ir::PrintOptions print;
  for (ir::Operation &op : func->ops())
    if (op.loc().isKnown() && op.loc().fileName() != kTuneFileName) print.printLocations = true;
  out.moduleText = ir::toString(*parsed->module, print);
  return out;
}

std::optional<Config> writtenConfig(const SearchSpace &space, llvm::StringRef moduleText,
                                    const passes::PassKnobs &baseKnobs, int schedMode,
                                    int schedParallelism) {
  absl::StatusOr<ParsedFunc> parsed = parseFunc(moduleText);
  if (!parsed.ok()) return std::nullopt;
  TileSites sites = collectTileSites(*parsed->module);
  MergeModes modes = MergeModes::of(baseKnobs, *parsed->module);
  Config config;
  for (const Dimension &dim : space.dimensions()) {
    std::optional<KnobValue> want;
    if (std::optional<size_t> k = indexedName(dim.name, kVecTileDim)) {
      if (*k < sites.vecTiles.size()) want = sites.vecTiles[*k];
    } else if (std::optional<size_t> k = indexedName(dim.name, kCubeTileDim)) {
      if (*k < sites.cubeTiles.size()) want = flattenCube(sites.cubeTiles[*k]);
    } else if (dim.name == kSchedDim) {
      want = int64_t(schedMode);
    } else if (dim.name == kSchedParallelismDim) {
      want = int64_t(schedParallelism);
    } else if (std::optional<MergeKnob> merge = mergeKnob(dim.name)) {
      want = writtenMerge(baseKnobs, merge->vector, merge->key, modes.of(merge->vector));
    }
    if (!want) return std::nullopt;
    auto it = std::find(dim.values.begin(), dim.values.end(), *want);
    if (it == dim.values.end()) return std::nullopt;
    config.push_back(it - dim.values.begin());
  }
  return config;
}

absl::StatusOr<TunedConfig> applyConfig(const SearchSpace &space, const Config &config,
                                        llvm::StringRef moduleText, const passes::PassKnobs &baseKnobs) {
  if (!space.isValid(config))
    return absl::InvalidArgumentError("the config does not belong to the search space");
  std::map<std::string, KnobValue> values;
  for (size_t i = 0; i < space.numDimensions(); ++i) {
    const Dimension &dim = space.dimensions()[i];
    values[dim.name] = dim.values[config[i]];
  }
  absl::StatusOr<TunedConfig> out = applyConfigValues(values, moduleText, baseKnobs);
  if (out.ok()) out->configJson = space.configToString(config);
  return out;
}

absl::StatusOr<PruneTable> PruneTable::build(const SearchSpace &space,
                                             llvm::StringRef moduleText,
                                             const target::DeviceSpec &device) {
  absl::StatusOr<ParsedFunc> parsed = parseFunc(moduleText);
  if (!parsed.ok()) return parsed.status();
  TileSites sites = collectTileSites(*parsed->module);
  PruneTable table;
  for (const Dimension &dim : space.dimensions()) {
    std::vector<std::string> &reasons = table.reasons_.emplace_back(dim.values.size());
    // The ops a tile knob applies to: one site, or every site of its kind.
    std::vector<ir::Operation *> vecOps, cubeOps;
    if (dim.name == kVecTileDim)
      for (const auto &ops : sites.vecOps) vecOps.insert(vecOps.end(), ops.begin(), ops.end());
    else if (std::optional<size_t> k = indexedName(dim.name, kVecTileDim); k && *k < sites.vecOps.size())
      vecOps = sites.vecOps[*k];
    if (dim.name == kCubeTileDim)
      for (const auto &ops : sites.cubeOps) cubeOps.insert(cubeOps.end(), ops.begin(), ops.end());
    else if (std::optional<size_t> k = indexedName(dim.name, kCubeTileDim); k && *k < sites.cubeOps.size())
      cubeOps = sites.cubeOps[*k];
    for (size_t v = 0; v < dim.values.size(); ++v) {
      const auto *ints = std::get_if<std::vector<int64_t>>(&dim.values[v]);
      if (!ints) continue; // applyConfig reports a value of the wrong kind
      std::string why;
      for (ir::Operation *op : vecOps) {
        why = ir::VecTileView::of(*op).check(*ints, &device);
        if (!why.empty()) {
          why = absl::StrCat(opWhere(*op), ": ", why);
          break;
        }
      }
      if (std::optional<ir::CubeTile> tile = unflattenCube(*ints); tile && why.empty())
        for (ir::Operation *op : cubeOps) {
          why = ir::checkCubeTile(*tile, op->operandType(0).dtype(), &device);
          if (!why.empty()) {
            why = absl::StrCat(opWhere(*op), ": ", why);
            break;
          }
        }
      if (!why.empty())
        reasons[v] = absl::StrCat(dim.name, " = ", knobValueToString(dim.values[v]),
                                  " does not fit ", why);
    }
  }
  return table;
}

std::optional<std::string> PruneTable::reason(const Config &config) const {
  for (size_t d = 0; d < config.size() && d < reasons_.size(); ++d)
    if (config[d] < reasons_[d].size() && !reasons_[d][config[d]].empty())
      return reasons_[d][config[d]];
  return std::nullopt;
}

namespace {

/// The kind a knob of a user's space gets from its name.
DimensionKind kindOfKnob(llvm::StringRef name) {
  if (name.startswith("vec_")) return DimensionKind::Vector;
  if (name.startswith("cube_")) return DimensionKind::Cube;
  return DimensionKind::Other;
}

/// Why knob `name` means nothing to the tuner, or OK.
absl::Status checkKnobName(llvm::StringRef name) {
  if (name == kVecTileDim || name == kCubeTileDim || name == kSchedDim || name == kSchedParallelismDim ||
      indexedName(name, kVecTileDim) || indexedName(name, kCubeTileDim) || mergeKnob(name))
    return absl::OkStatus();
  if (const passes::PassOptionDecl *decl = passes::PassKnobs::find(name)) {
    if (decl->kind != passes::OptionKind::GroupSetting) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        "search space knob '", name.str(), "' is a map, which a config cannot hold; tune merge "
        "counts with ", kVecNBufferDim, "[k] / ", kCubeNBufferDim, "[k] (k = a hash order, or "
        "func<F>_<order> for one root function's group)"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown search space knob '", name.str(), "'; the tuner knows vec_tile, vec_tile[k], "
      "cube_tile, cube_tile[k], ", kVecNBufferDim, "[k], ", kCubeNBufferDim, "[k] (k a hash "
      "order or func<F>_<order>; without [k]: every group), ", kSchedDim, ", ",
      kSchedParallelismDim, " and the scalar pass options (",
      absl::StrJoin(passes::PassKnobs::names(), ", "), ")"));
}

} // namespace

absl::StatusOr<SearchSpace> parseSearchSpace(llvm::StringRef text) {
  absl::StatusOr<llvm::json::Value> json = support::parseJson(text, "search space");
  if (!json.ok()) return json.status();
  SearchSpace space;
  if (json->getAsArray()) {
    absl::StatusOr<SearchSpace> parsed = SearchSpace::fromJson(*json);
    if (!parsed.ok()) return parsed.status();
    space = *std::move(parsed);
  } else if (const llvm::json::Object *object = json->getAsObject()) {
    std::vector<std::string> names;
    for (const auto &entry : *object) names.push_back(entry.first.str());
    std::sort(names.begin(), names.end());
    for (const std::string &name : names) {
      const llvm::json::Array *values = object->getArray(name);
      if (!values)
        return absl::InvalidArgumentError(absl::StrCat(
            "search space knob '", name, "' must list its values, e.g. \"", name, "\": [..]"));
      Dimension dim{name, {}, kindOfKnob(name)};
      for (size_t i = 0; i < values->size(); ++i) {
        absl::StatusOr<KnobValue> v =
            knobValueFromJson((*values)[i], absl::StrCat(name, "[", i, "]"));
        if (!v.ok()) return v.status();
        dim.values.push_back(*std::move(v));
      }
      if (absl::Status s = space.addDimension(std::move(dim)); !s.ok())
        return absl::InvalidArgumentError(
            absl::StrCat("search space: ", std::string(s.message())));
    }
  } else {
    return absl::InvalidArgumentError(
        "a search space is a JSON object {\"knob\": [values...]} (or a tune_result's "
        "\"space\" array)");
  }
  for (const Dimension &dim : space.dimensions()) {
    if (absl::Status s = checkKnobName(dim.name); !s.ok()) return s;
    if (dim.name == kSchedParallelismDim)
      for (const KnobValue &value : dim.values)
        if (absl::StatusOr<int> p = parallelismValue(dim.name, value); !p.ok())
          return absl::InvalidArgumentError(absl::StrCat("search space ", p.status().message()));
  }
  return space;
}

absl::Status checkSpaceApplies(const SearchSpace &space, llvm::StringRef moduleText) {
  absl::StatusOr<ParsedFunc> parsed = parseFunc(moduleText);
  if (!parsed.ok()) return parsed.status();
  TileSites sites = collectTileSites(*parsed->module);
  for (const Dimension &dim : space.dimensions()) {
    if (absl::Status s = checkKnobName(dim.name); !s.ok()) return s;
    if (dim.name == kSchedParallelismDim && !hasParallelLoop(*parsed->module))
      return absl::InvalidArgumentError(absl::StrCat(
          "search space knob '", dim.name, "' does not apply: the function has no parallel "
          "loop (mark a loop whose iterations are independent parallel: ptoc.loop(..., "
          "parallel=True), or `parallel = true` on the loop op), or drop the knob"));
    for (bool vector : {true, false}) {
      llvm::StringRef prefix = vector ? kVecTileDim : kCubeTileDim;
      size_t count = vector ? sites.vecTiles.size() : sites.cubeTiles.size();
      std::optional<size_t> k = indexedName(dim.name, prefix);
      if ((dim.name == prefix && count == 0) || (k && *k >= count))
        return absl::InvalidArgumentError(absl::StrCat(
            "search space knob '", dim.name, "' does not apply: the function has ", count,
            " distinct ", prefix.str(), " shape", count == 1 ? "" : "s",
            count ? absl::StrCat(" (", prefix.str(), "[0] .. ", prefix.str(), "[", count - 1, "])")
                  : std::string()));
    }
  }
  return absl::OkStatus();
}

} // namespace ptoc::tune
