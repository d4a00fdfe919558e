// The tuner's search space over one tensor-level function, and how a config of it
// applies: the knob names, the space derived from the function's tile shapes, merge
// groups, scheduler modes and, for a function with a parallel loop, the iterations
// in flight (deriveSearchSpace), a user's space (parseSearchSpace),
// a config rewritten into the function's tile attributes and pass knobs (applyConfig,
// or applyConfigValues for knob values by name, as a bank record holds them), the
// config that is the function as written, and tiles pruned without compiling.
// session::tuneModule searches it; nothing here compiles or simulates.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"
#include "ptoc/ir/Func.h"
#include "ptoc/ir/Module.h"
#include "ptoc/ir/TileShape.h"
#include "ptoc/passes/PassKnobs.h"
#include "ptoc/runtime/ExpandLoops.h"
#include "ptoc/target/DeviceSpec.h"
#include "ptoc/tune/Search.h"
#include "ptoc/tune/SearchSpace.h"

namespace ptoc::tune {

/// Knob names of the derived space.
inline constexpr const char *kVecTileDim = "vec_tile";
inline constexpr const char *kCubeTileDim = "cube_tile";
/// Merge counts: `vec_nbuffer[k]` / `cube_nbuffer[k]` for the AIV / AIC group of hash
/// order k (vec_nbuffer_setting / cube_nbuffer_setting `{k: N}`: that order in every
/// root function), `vec_nbuffer[func<F>_<k>]` for group k of root function F only
/// (`{func<F>_<k>: N}`, what the derived space of a module with several root functions
/// holds); without an index (custom spaces only), every group of that core kind
/// (`{-1: N}`).
inline constexpr const char *kVecNBufferDim = "vec_nbuffer";
inline constexpr const char *kCubeNBufferDim = "cube_nbuffer";
inline constexpr const char *kSchedDim = "device_sched_mode";
/// Iterations of a parallel loop in flight (runtime option device_sched_parallelism,
/// 1..8): a knob only of functions with a loop marked parallel.
inline constexpr const char *kSchedParallelismDim = "device_sched_parallelism";
/// The merge-count value meaning the automatic N of the merge pass (what the default
/// pipeline does for AIV groups).
inline constexpr const char *kNBufferAuto = "auto";

/// One candidate applied: the tensor-level text with its tile shapes, the pass knobs
/// and the runtime options it is run with.
struct TunedConfig {
  std::string configJson;   ///< `{"dim": value, ...}` (SearchSpace::configToJson)
  std::string moduleText;   ///< the function with the config's tile shapes
  passes::PassKnobs knobs;
  int schedMode = 0;
  /// device_sched_parallelism; nullopt when the config does not set it (the kernel's
  /// own value applies: session::tuneModule fills it in).
  std::optional<int> schedParallelism;
};

/// A hash-order group of two or more subgraphs that the merge passes could fold (of
/// the function as written, partitioned with merging off): a merge-count knob each.
struct MergeGroup {
  /// The root function it belongs to (its position in the module: the F of
  /// `func<F>_<order>`), or passes::GroupKey::kEveryFunc for a knob that sets hash order
  /// `hashOrder` in every root function (a module with one root function).
  int64_t func = passes::GroupKey::kEveryFunc;
  int64_t hashOrder = 0;
  target::CoreKind core = target::CoreKind::None;
  int64_t size = 0;
};

/// The distinct tile shapes of a function, in order of first appearance, and the ops
/// carrying each: `vec_tile[k]` / `cube_tile[k]` of the space name entry k.
struct TileSites {
  std::vector<std::vector<int64_t>> vecTiles;
  std::vector<std::vector<ir::Operation *>> vecOps;
  std::vector<ir::CubeTile> cubeTiles;
  std::vector<std::vector<ir::Operation *>> cubeOps;
};

/// The function named `funcName`, or the module's only function.
absl::StatusOr<ir::Func *> selectFunc(ir::Module &module, llvm::StringRef funcName);

/// A module parsed from tuning text, with the function to tune.
struct ParsedFunc {
  std::unique_ptr<ir::Context> ctx;
  std::unique_ptr<ir::Module> module;
  ir::Func *func = nullptr;
};
/// Parses `moduleText` and selects its function (selectFunc).
absl::StatusOr<ParsedFunc> parseFunc(llvm::StringRef moduleText, llvm::StringRef funcName = "");
/// The tile shapes of every function of `module` (a module with loops keeps them in its
/// loop bodies), each distinct shape one site.
TileSites collectTileSites(ir::Module &module);

/// Whether a function of `module` has a loop marked parallel (the loop op's
/// `parallel` attribute): only then does device_sched_parallelism change a run.
bool hasParallelLoop(const ir::Module &module);

/// Derives the search space of the (only or `funcName`) function of `moduleText` on
/// `device`: tile candidates per distinct tile shape (variants that pass the
/// verifier's checks), a merge count per group of `groups` (and the count the
/// kernel's own merge options in `baseKnobs` give it, if it is none of those), the
/// scheduler modes and, when the module has a parallel loop, device_sched_parallelism
/// 1, 2, 4, 8 (and `schedParallelism`, the kernel's own value, if it is none of those).
absl::StatusOr<SearchSpace> deriveSearchSpace(
    llvm::StringRef moduleText, llvm::StringRef funcName, const target::DeviceSpec &device,
    llvm::ArrayRef<MergeGroup> groups,
    int schedParallelism = runtime::kDefaultSchedParallelism,
    const passes::PassKnobs &baseKnobs = passes::PassKnobs());

/// A search space written by a user, from JSON: an object `{"knob": [values...]}`
/// (dimensions in name order; kinds from the names: vec_* vector, cube_* cube, the
/// rest other), or the array form of a tune_result file's `space`. Knobs:
/// vec_tile / cube_tile (every site) or vec_tile[k] / cube_tile[k] (the k-th distinct
/// shape; a cube tile is [mL0, mL1, kL0, kL1, nL0, nL1]), vec_nbuffer[k] /
/// cube_nbuffer[k] (the group of hash order k; [func<F>_<k>]: that group of root
/// function F only; without [k]: every group),
/// device_sched_mode, device_sched_parallelism (values 1..8) and any scalar pass
/// option (pg_upper_bound, fuse_local, ...). Errors name the knob (and a value out of
/// its range).
absl::StatusOr<SearchSpace> parseSearchSpace(llvm::StringRef json);

/// Applies config `config` of `space` to `moduleText`.
absl::StatusOr<TunedConfig> applyConfig(const SearchSpace &space, const Config &config,
                                        llvm::StringRef moduleText,
                                        const passes::PassKnobs &baseKnobs);

/// The config of `space` that is the function as written (its tiles; the merging its
/// own options in `baseKnobs` give each group, by default automatic for AIV groups and
/// none for AIC groups; `schedMode` and `schedParallelism`, the kernel's own
/// device_sched_mode and device_sched_parallelism), or nullopt when the space has no
/// such config (a knob it does not know, a written value it lacks).
std::optional<Config> writtenConfig(const SearchSpace &space, llvm::StringRef moduleText,
                                    const passes::PassKnobs &baseKnobs, int schedMode = 0,
                                    int schedParallelism = runtime::kDefaultSchedParallelism);

/// OK if every knob of a user's `space` applies to the function of `moduleText` (a
/// known name; a tile index below its count of distinct shapes;
/// device_sched_parallelism only with a parallel loop), else why not.
absl::Status checkSpaceApplies(const SearchSpace &space, llvm::StringRef moduleText);

/// Applies knob values by name (`vec_tile[0]` -> [2, 4096], ...) to `moduleText`.
/// Errors name a knob that does not apply to this function.
absl::StatusOr<TunedConfig> applyConfigValues(const std::map<std::string, KnobValue> &values,
                                              llvm::StringRef moduleText,
                                              const passes::PassKnobs &baseKnobs);

/// Why a config cannot compile, known without compiling it: a tile value that fails
/// the verifier's checks (alignment, fit in the buffers) for an op it applies to. The
/// checks run once per knob value when the table is built; `reason` is then a lookup.
class PruneTable {
public:
  /// Checks every tile value of `space` against the ops of the function of
  /// `moduleText` on `device`.
  static absl::StatusOr<PruneTable> build(const SearchSpace &space,
                                          llvm::StringRef moduleText,
                                          const target::DeviceSpec &device);
  /// The first failing knob value of `config` and why, or nullopt.
  std::optional<std::string> reason(const Config &config) const;

private:
  /// [dimension][value index] -> "" (fine) or the reason.
  std::vector<std::vector<std::string>> reasons_;
};

} // namespace ptoc::tune
