// Internal to the tuner (lib/session/Tuner.cpp, TuneSpace.cpp): where a function's
// tile shapes sit, the knob names of the derived space, and applying a config given
// as knob values (a bank record's config has no index into the current space).
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
#include "ptoc/target/DeviceSpec.h"
#include "ptoc/tune/SearchSpace.h"

namespace ptoc::session {

struct TunedConfig;

/// Knob names of the derived space.
inline constexpr const char *kVecTileDim = "vec_tile";
inline constexpr const char *kCubeTileDim = "cube_tile";
/// Merge counts: `vec_nbuffer[k]` / `cube_nbuffer[k]` for the AIV / AIC group of hash
/// order k (vec_nbuffer_setting / cube_nbuffer_setting `{k: N}`); without an index
/// (custom spaces only), every group of that core kind (`{-1: N}`).
inline constexpr const char *kVecNBufferDim = "vec_nbuffer";
inline constexpr const char *kCubeNBufferDim = "cube_nbuffer";
inline constexpr const char *kSchedDim = "device_sched_mode";
/// The merge-count value meaning the automatic N of the merge pass (what the default
/// pipeline does for AIV groups).
inline constexpr const char *kNBufferAuto = "auto";

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
TileSites collectTileSites(ir::Func &func);

/// OK if every knob of a user's `space` applies to the function of `moduleText` (a
/// known name; a tile index below its count of distinct shapes), else why not.
absl::Status checkSpaceApplies(const tune::SearchSpace &space, llvm::StringRef moduleText);

/// Applies knob values by name (`vec_tile[0]` -> [2, 4096], ...) to `moduleText`.
/// Errors name a knob that does not apply to this function.
absl::StatusOr<TunedConfig> applyConfigValues(const std::map<std::string, tune::KnobValue> &values,
                                              llvm::StringRef moduleText,
                                              const passes::PassKnobs &baseKnobs);

/// Why a config cannot compile, known without compiling it: a tile value that fails
/// the verifier's checks (alignment, fit in the buffers) for an op it applies to. The
/// checks run once per knob value when the table is built; `reason` is then a lookup.
class PruneTable {
public:
  /// Checks every tile value of `space` against the ops of the function of
  /// `moduleText` on `device`.
  static absl::StatusOr<PruneTable> build(const tune::SearchSpace &space,
                                          llvm::StringRef moduleText,
                                          const target::DeviceSpec &device);
  /// The first failing knob value of `config` and why, or nullopt.
  std::optional<std::string> reason(const tune::Config &config) const;

private:
  /// [dimension][value index] -> "" (fine) or the reason.
  std::vector<std::vector<std::string>> reasons_;
};

} // namespace ptoc::session
