// nbuffer-merge: folds isomorphic AIV subgraphs together N at a time, so a vector
// core runs fewer, larger tasks (less dispatch overhead; the leaf program can
// double-buffer across the merged tiles). cube-nbuffer-merge is the same merge for
// AIC groups (CubeNBufferMerge.cpp declares it).
//  - Per isomorphism group of subgraphs of the pass's core kind (S members), N is
//    chosen by the mode and setting knobs (chooseMergeCount: 0 off, 1 automatic, 2
//    `{func<F>_<order>: N, hash_order: N, -1: default}`, in that order, then automatic).
//  - Automatic N keeps at least C subgraphs (nbuffer: mg-vec-parallel-lb, default
//    the device's AIV core count; cube: the AIC core count): no merge if S <= C;
//    else start at ceil(S/C) and decrease while ceil(S/N) < C (automaticNBuffer);
//    a group pipelined with the other core kind takes pipelinedNBuffer. In a loop
//    body it is at least the control thread's N (controlThreadNBuffer for the body's
//    controlThreadTaskCycles), so the thread that builds every task of every
//    iteration does not bound the span.
//  - Members are merged in ascending id order, N consecutive members into the
//    first of each chunk (the last chunk may be smaller), each merge decided by
//    MergeRules (scope, copy-in cap, UB capacity, fuel, dependency cycle). A member
//    refused for any reason but its own scope starts the next chunk; a scoped
//    member joins nothing; spent fuel stops the pass.
//  - UB (AIV): a merged leaf runs its members one after another and double buffers
//    two of them (docs/codegen.md), so its footprint is twice one member's
//    per-chain peak (localPeakBytes in LocalScheduler order; isomorphic members
//    peak alike, so the first stands for all); over the device's UB, every merge of
//    the group is refused.
// `--debug-only=<pass>` logs each group's N and every decision.
#include "NBufferMerge.h"

#include "SettingKeys.h"

#include "ptoc/analysis/CostModel.h"
#include "ptoc/analysis/LocalSchedule.h"
#include "ptoc/analysis/Subgraphs.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Level.h"
#include "ptoc/ir/LoopView.h"
#include "ptoc/passes/MergeOptions.h"
#include "ptoc/passes/Passes.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::passes {
namespace {

using analysis::CostModel;
using analysis::hashOrderKey;
using analysis::LocalScheduler;
using analysis::localPeakBytes;
using analysis::scheduleLocalOps;
using analysis::Subgraph;
using analysis::SubgraphGraph;
using ir::Operation;

/// One member's cycles per pipe (CostModel estimates): copy_ins (MTE2), copy_outs
/// (MTE3) and the compute between them. A merged leaf double buffers its members,
/// so in steady state a member costs its busiest pipe; run alone it costs all three
/// in turn, plus a dispatch.
struct MemberPipes {
  int64_t in = 0, compute = 0, out = 0;
  int64_t steady() const { return std::max({in, compute, out}); }
  int64_t hidden(const target::DeviceSpec &device) const {
    return in + compute + out - steady() +
           static_cast<int64_t>(device.scheduler.dispatchCycles);
  }
};

/// The cycles per pipe of one member of a group (the first: members are isomorphic).
MemberPipes memberPipes(const Subgraph &first, const CostModel &cost) {
  MemberPipes pipes;
  for (const Operation *op : first.ops) {
    int64_t cycles = cost.opCycles(*op);
    if (op->code() == ir::OpCode::CopyIn) pipes.in += cycles;
    else if (op->code() == ir::OpCode::CopyOut) pipes.out += cycles;
    else pipes.compute += cycles;
  }
  return pipes;
}

/// Whether a member of the group has a producer or consumer on the other core kind
/// (the group waits on, or holds up, work of the other kind).
bool isPipelined(const SubgraphGraph &graph, const std::vector<int64_t> &members) {
  const Subgraph *first = graph.find(members.front());
  auto otherKind = [&](llvm::ArrayRef<int64_t> ids) {
    for (int64_t id : ids)
      if (const Subgraph *s = graph.find(id); s && s->core != first->core) return true;
    return false;
  };
  for (int64_t member : members)
    if (graph.find(member) &&
        (otherKind(graph.producers(member)) || otherKind(graph.consumers(member))))
      return true;
  return false;
}

/// What the merge knows of the function it merges: its position in the module (the F
/// of its group keys) and, for a loop body, the control thread's task length
/// (controlThreadTaskCycles; 0 outside loop bodies, where no control thread builds
/// the tasks).
struct FunctionContext {
  unsigned funcIndex = 0;
  bool loopBody = false;
  int64_t controlTaskLength = 0;
};

/// A group's automatic N, with the rules that gave it (for the debug log).
struct AutomaticCount {
  int64_t n = 1;
  int64_t oneWave = 1;
  std::optional<MemberPipes> pipelined; ///< the pipelined rule applied
  int64_t controlFloor = 1;             ///< the loop-body rule (controlThreadNBuffer)
};

/// The automatic N of a group of `members`: the one-wave rule (automaticNBuffer), or
/// the pipelined rule (pipelinedNBuffer) when a member feeds or is fed by the other
/// core kind; inside a loop body at least the control thread's rule
/// (controlThreadNBuffer), which keeps the thread that builds every task from
/// bounding the span.
AutomaticCount automaticCount(const SubgraphGraph &graph, const std::vector<int64_t> &members,
                              const NBufferMergeRequest &request, const FunctionContext &context,
                              const target::DeviceSpec &device, const CostModel &cost) {
  AutomaticCount out;
  int64_t size = static_cast<int64_t>(members.size());
  MemberPipes pipes = memberPipes(*graph.find(members.front()), cost);
  out.oneWave = automaticNBuffer(size, request.cores);
  out.n = out.oneWave;
  if (isPipelined(graph, members)) {
    out.pipelined = pipes;
    out.n = pipelinedNBuffer(size, request.cores, pipes.hidden(device), pipes.steady());
  }
  if (context.loopBody) {
    out.controlFloor = controlThreadNBuffer(context.controlTaskLength, size, pipes.steady());
    out.n = std::max(out.n, out.controlFloor);
  }
  return out;
}

/// The control thread's task length for a loop body (controlThreadTaskCycles) from
/// its groups as they are now: each group's size and its first member's steady-state
/// cycles; groups of the other core kind are merged by the rule only when the
/// request says their pass comes later.
int64_t controlTaskLength(const SubgraphGraph &graph, const NBufferMergeRequest &request,
                          const CostModel &cost) {
  std::vector<BodyGroup> groups;
  for (const std::vector<int64_t> &members : graph.groups()) {
    const Subgraph *first = members.empty() ? nullptr : graph.find(members.front());
    if (!first) continue;
    groups.push_back({first->core, static_cast<int64_t>(members.size()),
                      memberPipes(*first, cost).steady(),
                      first->core == request.core || request.otherKindMergesLater});
  }
  return controlThreadTaskCycles(groups, cost.device());
}

/// The merge of one function's groups (calls summarise() first; the caller writes
/// the table). Returns the number of merges.
int64_t mergeFunction(SubgraphGraph &graph, const NBufferMergeRequest &request,
                      FunctionContext context, const target::DeviceSpec &device,
                      MergeLog &log) {
  unsigned funcIndex = context.funcIndex;
  graph.summarise();
  // The groups as they are now: merging changes hashes, not these member lists.
  std::vector<std::vector<int64_t>> groups = graph.groups();
  std::string coreName(target::coreKindName(request.core));
  llvm::raw_ostream *debug = log.debug();
  MergeRules rules(graph, log);
  CostModel cost(device);
  if (context.loopBody) context.controlTaskLength = controlTaskLength(graph, request, cost);
  int64_t merges = 0;
  for (size_t order = 0; order < groups.size(); ++order) {
    const std::vector<int64_t> &members = groups[order];
    const Subgraph *first = graph.find(members.front());
    if (!first || first->core != request.core) continue;
    int64_t size = static_cast<int64_t>(members.size());
    AutomaticCount automatic = automaticCount(graph, members, request, context, device, cost);
    MergeCount choice = chooseMergeCount(request.mode, request.setting, funcIndex,
                                         int64_t(order), automatic.n);
    std::string key = hashOrderKey(funcIndex, int64_t(order));
    if (debug) {
      *debug << log.pass() << ": @" << graph.func().name() << " group " << key << " ("
             << size << " " << coreName << " subgraphs): N = " << choice.n << " ("
             << countSourceName(choice.source);
      if (choice.source == CountSource::SettingKey) *debug << " " << groupKeyToString(choice.key);
      if (choice.source == CountSource::Automatic) {
        *debug << ", parallelism " << request.cores;
        if (const std::optional<MemberPipes> &pipes = automatic.pipelined)
          *debug << ", pipelined with the other core kind: " << pipes->hidden(device)
                 << " cycles hidden and " << pipes->steady()
                 << " steady per member, one wave would be N = " << automatic.oneWave;
        if (context.loopBody)
          *debug << "; loop body: tasks of at least " << context.controlTaskLength
                 << " cycles keep the control thread within the body's work, N >= "
                 << automatic.controlFloor;
      }
      *debug << ")" << (choice.n <= 1 ? ", no merge" : "") << "\n";
    }
    if (choice.n <= 1) continue;
    std::optional<MergeProposal::Buffer> ub;
    if (request.core == target::CoreKind::AIV) {
      std::vector<const Operation *> ops(first->ops.begin(), first->ops.end());
      LocalScheduler scheduler;
      int64_t peak = localPeakBytes(scheduleLocalOps(ops, scheduler), ir::MemSpace::UB,
                                    device.buffers.blockBytes);
      if (2 * peak > device.buffers.ub)
        ub = MergeProposal::Buffer{
            MergeVerdict::RefusedUbCapacity,
            "2 x " + std::to_string(peak) + " > " + std::to_string(device.buffers.ub) +
                " bytes of UB on device '" + device.name + "' (each member's tiles peak at " +
                std::to_string(peak) + " bytes; a merged leaf double buffers two members)"};
    }
    std::string detail = "group " + key + ", chunks of " + std::to_string(choice.n);
    int64_t head = -1, inChunk = 0;
    for (int64_t member : members) {
      if (head < 0 || inChunk == choice.n) {
        head = member;
        inChunk = 1;
        continue;
      }
      MergeProposal p{*graph.find(head), *graph.find(member)};
      p.copyInCap = request.copyInUpperBound;
      p.bufferOverflow = ub;
      bool scopedHead = p.into.scope != -1, scopedMember = p.from.scope != -1;
      // What a refusal means for the chunks (spent fuel ends the pass instead).
      std::string next = (scopedMember && !scopedHead) || !log.hasFuel()
                             ? std::string()
                             : "; sg " + std::to_string(member) + " starts the next chunk";
      MergeVerdict v = rules.tryMerge(p, detail, next);
      if (v == MergeVerdict::Merged) {
        ++merges;
        ++inChunk;
        continue;
      }
      if (v == MergeVerdict::RefusedFuel) return merges;
      // A scoped member joins nothing; anything else starts the next chunk with it.
      if (!(v == MergeVerdict::RefusedScope && scopedMember && !scopedHead)) {
        head = member;
        inChunk = 1;
      }
    }
  }
  return merges;
}

/// The whole run over `m`: checks that every function with work is partitioned and
/// the setting (checkGroupSetting), then merges each partitioned function.
PassResult runNBufferMerge(ir::Module &m, const target::DeviceSpec &device,
                           llvm::StringRef settingName, NBufferMergeRequest request,
                           MergeLog &log) {
  ir::Context &ctx = m.context();
  llvm::StringRef pass = log.pass();
  bool failed = false;
  for (ir::Func &f : m.funcs()) {
    ir::Level level = ir::levelOf(f);
    if (level == ir::Level::Tensor || level == ir::Level::Tile) {
      ctx.emitError(f.loc()) << "'" << pass << "' needs a partitioned function, but @"
                             << f.name() << " has no subgraph table; run partition first";
      failed = true;
    }
  }
  if (failed) return PassResult::failure();
  if (!checkGroupSetting(m, request.setting, request.mode,
                         {pass, settingName, "N, the subgraphs merged into one", request.core}))
    return PassResult::failure();
  std::set<std::string> bodies = ir::loopBodyNames(m);
  if (request.mode == 0 || (request.mode == kNBufferModeLoopBodies && bodies.empty()))
    return PassResult::unchanged();
  if (request.cores < 0)
    request.cores = request.core == target::CoreKind::AIC ? device.aicCores : device.aivCores;

  CostModel cost(device);
  bool changed = false;
  unsigned funcIndex = 0;
  for (ir::Func &f : m.funcs()) {
    unsigned index = funcIndex++;
    if (ir::levelOf(f) != ir::Level::Partitioned) continue;
    FunctionContext context{.funcIndex = index, .loopBody = bodies.count(f.name().str()) > 0};
    NBufferMergeRequest own = request;
    if (own.mode == kNBufferModeLoopBodies) own.mode = context.loopBody ? 1 : 0;
    if (own.mode == 0) continue;
    SubgraphGraph graph = SubgraphGraph::fromFunc(f, cost);
    if (int64_t member = graph.cycleMember(); member >= 0) {
      const Operation &op = *graph.find(member)->ops.front();
      ctx.emitError(op.loc()) << "'" << pass << "': the subgraphs of @" << f.name()
                              << " depend on each other in a cycle (through the subgraph of this '"
                              << op.name() << "'); run partition again";
      return PassResult::failure();
    }
    if (mergeFunction(graph, own, context, device, log) > 0) changed |= graph.writeTable();
  }
  return PassResult::changed(changed);
}

// Both NBuffer passes: the same chunking for one core kind (the request's).
class NBufferMergePass final : public Pass {
public:
  NBufferMergePass(llvm::StringRef argument, llvm::StringRef settingName,
                   NBufferMergeRequest request, int64_t fuel)
      : argument_(argument.str()), settingName_(settingName.str()),
        request_(std::move(request)), fuel_(fuel) {}
  llvm::StringRef argument() const override { return argument_; }

  PassResult run(ir::Module &m, PassContext &ctx) override {
    MergeLog log(argument(), ctx.debugStream(argument()), fuel_);
    PassResult result = runNBufferMerge(m, ctx.device, settingName_, request_, log);
    merged_ += log.count(MergeVerdict::Merged);
    refusedScope_ += log.count(MergeVerdict::RefusedScope);
    refusedCycle_ += log.count(MergeVerdict::RefusedCycle);
    refusedFuel_ += log.count(MergeVerdict::RefusedFuel);
    refusedCopyIn_ += log.count(MergeVerdict::RefusedCopyInCap);
    refusedUb_ += log.count(MergeVerdict::RefusedUbCapacity);
    return result;
  }

private:
  std::string argument_, settingName_;
  NBufferMergeRequest request_;
  int64_t fuel_;
  PassStatistic merged_{this, "merged", "Subgraphs merged into the first of their chunk"};
  PassStatistic refusedScope_{this, "refused-scope", "Merges refused: an sg_scope"};
  PassStatistic refusedCycle_{this, "refused-would-create-cycle",
                              "Merges refused: would create a dependency cycle"};
  PassStatistic refusedFuel_{this, "refused-fuel", "Merges refused: merge-fuel ran out"};
  PassStatistic refusedCopyIn_{this, "refused-copy-in-cap",
                               "Merges refused: copy-in bytes over mg-copyin-upper-bound"};
  PassStatistic refusedUb_{this, "refused-ub-capacity",
                           "Merges refused: a double-buffered merged leaf would exceed UB"};
};

} // namespace

std::unique_ptr<Pass> createNBufferMergePassFor(llvm::StringRef argument,
                                                llvm::StringRef settingName,
                                                NBufferMergeRequest request, int64_t fuel) {
  return std::make_unique<NBufferMergePass>(argument, settingName, std::move(request), fuel);
}

std::unique_ptr<Pass> createNBufferMergePass(const NBufferMergeOptions &options) {
  return createNBufferMergePassFor("nbuffer-merge", "vec-nbuffer-setting",
                                   {.core = target::CoreKind::AIV,
                                    .mode = options.mode,
                                    .setting = options.setting,
                                    .cores = options.parallelLowerBound,
                                    .copyInUpperBound = options.copyInUpperBound,
                                    .otherKindMergesLater = true},
                                   options.fuel);
}

void registerNBufferMergePass(PassRegistry &registry) {
  static const OptionRow<NBufferMergeOptions> kRows[] = {
      {"vec-nbuffer-mode", &NBufferMergeOptions::mode,
       "0 off, 1 automatic N per group (keeps mg-vec-parallel-lb subgraphs), 2 from "
       "vec-nbuffer-setting",
       0, 2},
      {"vec-nbuffer-setting", &NBufferMergeOptions::setting,
       "mode 2: {hash_order: N, func<F>_<order>: N, -1: default} (a func<F>_ key wins in "
       "its root function); groups without an entry, and N = 0, use the automatic N",
       double(kAutomaticCount)},
      {"mg-vec-parallel-lb", &NBufferMergeOptions::parallelLowerBound,
       "automatic N keeps at least this many subgraphs per group; -1 = the device's AIV core "
       "count",
       -1},
      copyInUpperBoundRow(&NBufferMergeOptions::copyInUpperBound),
      mergeFuelRow(&NBufferMergeOptions::fuel),
  };
  registry.add({"nbuffer-merge",
                "Merge isomorphic AIV subgraphs N at a time (fewer, larger vector tasks)",
                declareOptions(kRows), [](const PassOptionValues &v) {
                  return createNBufferMergePass(readOptions(kRows, v));
                }});
}

} // namespace ptoc::passes
