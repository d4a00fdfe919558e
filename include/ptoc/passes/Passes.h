// Factories for every pass, and the function that registers them all. Each options
// struct below holds its options' defaults (the member initializers); the pass's own
// file declares each option once, as an OptionRow naming the field, with its
// spelling, help and bounds (PassOptions.h), from which the registry's declarations
// and the factory's struct are derived.
#pragma once

#include <cstdint>
#include <memory>

#include "ptoc/passes/MergeOptions.h"
#include "ptoc/passes/Pass.h"
#include "ptoc/passes/PassRegistry.h"

namespace ptoc::passes {

/// Options of `canonicalize`.
struct CanonicalizeOptions {
  /// Fold ops whose operands are all constants (`full`) into a constant, and drop
  /// `x + 0`-style identities. Off: only the layout simplifications run.
  bool foldConstants = true;
};

/// Fold reshape chains, drop identity casts/transposes/views, fold constants in
/// elementwise ops; erases ops it made dead.
std::unique_ptr<Pass> createCanonicalizePass(const CanonicalizeOptions &options = {});
/// Common-subexpression elimination: identical ops on identical operands.
std::unique_ptr<Pass> createCSEPass();
/// Dead-code elimination: ops whose results reach no `return`.
std::unique_ptr<Pass> createDCEPass();
/// In control functions (with loops): each run of ops between loops becomes a root
/// function run by a one-iteration loop, its results in workspaces (docs/ir.md).
std::unique_ptr<Pass> createOutlineSegmentsPass();

/// Gives every tensor-level op that needs a tile shape and has none (a vector op
/// without vec_tile, a matmul without cube_tile) one derived from the op and the
/// device: vector chains share one 16-64 KiB tile with their kept axes whole, matmuls
/// get cube tiles that fit the buffers and fill the cube cores in whole waves
/// (docs/passes.md "default-tiles"). Tiles the user set are kept. Each derived tile is
/// a remark and a PassContext::derivedTiles record.
std::unique_ptr<Pass> createDefaultTilesPass();

/// Options of `expand-tiles`.
struct ExpandTilesOptions {
  /// fuse-local: a consumer that needs exactly a UB tile a producer already holds
  /// (same region, same sg_scope) uses it directly, and reads of one GM region are
  /// shared, so fused chains never go through GM. Off: every intermediate is
  /// written to GM and read back by each consumer.
  bool fuseLocal = true;
  /// cube-k-stagger: each output tile of a matmul starts its K loop at its own step
  /// (StaggeredKOrder.h), so tiles that run at once on different cube cores read
  /// different slabs of an operand they share instead of waiting for one core's fill
  /// of the same slab. Off: every tile steps K from 0.
  bool cubeKStagger = true;
};

/// Lowers every tensor-level op to tile ops (copy_in / compute on tiles /
/// copy_out, gm_tensor workspaces) using its vec_tile / cube_tile; checks tiles
/// against the device's buffers. Functions already at the tile level are left alone.
std::unique_ptr<Pass> createExpandTilesPass(const ExpandTilesOptions &options = {});

/// Options of `l1-reuse-merge` (pipeline names in dashes; the Python spelling
/// with underscores is accepted too).
struct L1ReuseMergeOptions {
  /// cube_l1_reuse_mode: 0 off (the default: merging trades cube parallelism for
  /// fewer GM reads, a choice the user makes), 1 automatic merge count per group,
  /// 2 per-group count from `setting`.
  int64_t mode = 0;
  /// cube_l1_reuse_setting: group -> members per anchor (GroupSetting.h: a plain hash
  /// order in every root function, `func<F>_<order>` in one, which wins; -1 = default
  /// for groups without a key). Mode 2 only.
  GroupSetting setting;
  /// mg_copyin_upper_bound: a merged subgraph may copy in at most this many bytes
  /// (-1: no cap). Unlike the other merge passes, capped by default: 1 MiB
  /// (kL1ReuseCopyInCap, MergeOptions.h).
  int64_t copyInUpperBound = kL1ReuseCopyInCap;
  /// merge-fuel: merges allowed before the pass stops (bisection); -1 = unlimited.
  int64_t fuel = kUnlimitedFuel;
};

/// Merges AIC subgraphs of one isomorphism group that copy the same GM region into
/// L1, and removes the duplicate copy_ins, so the region is loaded once.
std::unique_ptr<Pass> createL1ReuseMergePass(const L1ReuseMergeOptions &options = {});

/// Options of `partition` (PyPTO's pg_* knobs; bounds in estimated cycles).
struct PartitionOptions {
  /// pg_skip_partition: no bound-driven merging; one subgraph per core kind per
  /// connected region (sg_scopes still kept apart).
  bool skipPartition = false;
  /// pg_lower_bound: subgraphs under this many cycles try to merge with a neighbour.
  int64_t lowerBound = 512;
  /// pg_upper_bound: no merge makes a subgraph exceed this many cycles; 0 =
  /// automatic from the function's total (automaticUpperBound in Subgraphs.h).
  int64_t upperBound = 0;
  /// pg_parallel_lower_bound: isomorphic groups of different sizes merge only if
  /// the smaller has at least this many members (or its total cycles are at most
  /// lowerBound).
  int64_t parallelLowerBound = 20;
  /// mg_copyin_upper_bound: no merge makes a subgraph copy in more bytes; -1 = no cap.
  int64_t copyInUpperBound = kNoCopyInCap;
  /// merge-fuel: merges allowed before the pass stops merging (bisection); -1 = unlimited.
  int64_t fuel = kUnlimitedFuel;
};

/// Groups the tile ops of each function into subgraphs (tasks for one core) and
/// merges small ones within the bounds; writes the subgraph table.
std::unique_ptr<Pass> createPartitionPass(const PartitionOptions &options = {});

/// Options of `nbuffer-merge` (AIV isomorphism groups).
/// The `*_nbuffer_mode` that merges automatically (mode 1) in loop bodies, the
/// functions the AICPU control thread instantiates per iteration and builds every task
/// of, and leaves every other function alone (mode 0). cube_nbuffer_mode's default:
/// outside loops cube groups keep their parallelism (l1-reuse-merge merges what shares
/// an L1 load), inside them the control thread needs fewer, bigger tasks.
inline constexpr int64_t kNBufferModeLoopBodies = -1;

struct NBufferMergeOptions {
  /// vec_nbuffer_mode: 0 off, 1 automatic N per group, 2 N from `setting`.
  int64_t mode = 0;
  /// vec_nbuffer_setting: group -> N (GroupSetting.h: a plain hash order in every root
  /// function, `func<F>_<order>` in one, which wins; -1 = default for groups without a
  /// key).
  GroupSetting setting;
  /// mg_vec_parallel_lb: the automatic N keeps at least this many subgraphs per
  /// group; -1 = the device's AIV core count.
  int64_t parallelLowerBound = -1;
  /// mg_copyin_upper_bound: no merged subgraph copies in more bytes; -1 = no cap.
  int64_t copyInUpperBound = kNoCopyInCap;
  /// merge-fuel: merges allowed before the pass stops (bisection); -1 = unlimited.
  int64_t fuel = kUnlimitedFuel;
};

/// Merges consecutive members of each isomorphism group of AIV subgraphs N at a
/// time (fewer, larger tasks; the leaf program can double-buffer across them).
std::unique_ptr<Pass> createNBufferMergePass(const NBufferMergeOptions &options = {});

/// Options of `cube-nbuffer-merge` (AIC isomorphism groups).
struct CubeNBufferMergeOptions {
  /// cube_nbuffer_mode: 0 off, 1 automatic N per group (keeps at least the
  /// device's AIC core count of subgraphs), 2 N from `setting`; the default,
  /// kNBufferModeLoopBodies, merges automatically in loop bodies only.
  int64_t mode = kNBufferModeLoopBodies;
  /// cube_nbuffer_setting: group -> N, keyed as vec_nbuffer_setting.
  GroupSetting setting;
  /// mg_copyin_upper_bound: no merged subgraph copies in more bytes; -1 = no cap.
  int64_t copyInUpperBound = kNoCopyInCap;
  /// merge-fuel: merges allowed before the pass stops (bisection); -1 = unlimited.
  int64_t fuel = kUnlimitedFuel;
};

/// The AIC counterpart of nbuffer-merge.
std::unique_ptr<Pass> createCubeNBufferMergePass(const CubeNBufferMergeOptions &options = {});

/// Each pass's declaration (argument, summary, options, factory), defined in the
/// pass's own file.
void registerCanonicalizePass(PassRegistry &registry);
void registerCSEPass(PassRegistry &registry);
void registerDCEPass(PassRegistry &registry);
void registerOutlineSegmentsPass(PassRegistry &registry);
void registerDefaultTilesPass(PassRegistry &registry);
void registerExpandTilesPass(PassRegistry &registry);
void registerL1ReuseMergePass(PassRegistry &registry);
void registerPartitionPass(PassRegistry &registry);
void registerNBufferMergePass(PassRegistry &registry);
void registerCubeNBufferMergePass(PassRegistry &registry);

/// The `default` pipeline: what ptoc runs when the user names no passes.
llvm::StringRef defaultPipelineText();

/// Registers every pass and named pipeline into `registry`.
void registerAllPasses(PassRegistry &registry);

} // namespace ptoc::passes
