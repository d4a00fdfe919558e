// The numeric executor: checks a Program and its arguments up front, plans every leaf
// once, then runs the calls on host workers (each with its own tile arena) in the
// requested order as their predecessors finish, and copies out the results.
#include "ptoc/runtime/Executor.h"

#include <algorithm>
#include <new>
#include <thread>

#include "GmAccess.h"
#include "LeafPlan.h"
#include "PartialTiles.h"
#include "TaskGraph.h"
#include "TileArena.h"
#include "TileKernels.h"
#include "absl/strings/str_cat.h"
#include "ptoc/ir/Diagnostics.h"

namespace ptoc::runtime {
namespace {

using codegen::Program;

/// `order` must name every call exactly once (or be empty: program order).
absl::Status checkOrder(const Program &program, llvm::ArrayRef<int> order) {
  size_t n = program.calls.size();
  if (order.size() != n)
    return absl::InvalidArgumentError(absl::StrCat(
        "execution order has ", order.size(), " entries but @", program.funcName, " has ", n,
        " calls; pass every call index once, or an empty order for program order"));
  std::vector<bool> seen(n, false);
  for (int c : order) {
    if (c < 0 || size_t(c) >= n)
      return absl::InvalidArgumentError(absl::StrCat("execution order names call ", c, ", but @",
                                                      program.funcName, " has calls 0..",
                                                      int64_t(n) - 1));
    if (seen[c])
      return absl::InvalidArgumentError(
          absl::StrCat("execution order lists call ", c, " twice; list every call once"));
    seen[c] = true;
  }
  return absl::OkStatus();
}

/// Leaf, predecessor and result references of the program are in range.
absl::Status checkCalls(const Program &program) {
  for (size_t c = 0; c < program.calls.size(); ++c) {
    const codegen::Call &call = program.calls[c];
    if (call.leaf < 0 || size_t(call.leaf) >= program.leaves.size())
      return ir::internalError(absl::StrCat("program @", program.funcName, ": call ", c,
                                            " calls leaf ", call.leaf, ", but there are ",
                                            program.leaves.size(), " leaves"));
    for (int p : call.preds)
      if (p < 0 || size_t(p) >= c)
        return ir::internalError(absl::StrCat("program @", program.funcName, ": call ", c,
                                              " waits for call ", p,
                                              ", which is not an earlier call"));
  }
  for (size_t r = 0; r < program.results.size(); ++r) {
    int t = program.results[r];
    if (t < 0 || size_t(t) >= program.tensors.size())
      return ir::internalError(absl::StrCat("program @", program.funcName, ": result ", r,
                                            " names tensor ", t, ", but there are ",
                                            program.tensors.size()));
  }
  return absl::OkStatus();
}

/// Where each result goes: into the caller's buffers (executeInto) or into new
/// HostTensors (execute).
struct ResultSink {
  llvm::ArrayRef<TensorRef> refs;       ///< executeInto
  std::vector<HostTensor> *owned = nullptr; ///< execute
};

bool overlaps(const std::byte *a, size_t an, const std::byte *b, size_t bn) {
  return an && bn && a < b + bn && b < a + an;
}

/// The caller's result buffers match the program's results (count, dtype, shape).
absl::Status checkResultRefs(const Program &program, llvm::ArrayRef<TensorRef> results) {
  if (results.size() != program.results.size())
    return absl::InvalidArgumentError(absl::StrCat("@", program.funcName, " returns ",
                                                   program.results.size(), " tensors, got ",
                                                   results.size(), " result buffers"));
  for (size_t r = 0; r < results.size(); ++r) {
    const codegen::GmTensor &g = program.tensors[program.results[r]];
    if (results[r].dtype != g.dtype || results[r].shape != llvm::ArrayRef<int64_t>(g.shape))
      return absl::InvalidArgumentError(absl::StrCat(
          "@", program.funcName, " result ", r, ": expected a buffer of ",
          exec::tensorTypeStr(g.dtype, g.shape), ", got ",
          exec::tensorTypeStr(results[r].dtype, results[r].shape),
          "; pass a buffer of the result's element type and shape"));
    if (!results[r].data && results[r].numElements() > 0)
      return absl::InvalidArgumentError(absl::StrCat("@", program.funcName, " result ", r,
                                                     ": the buffer pointer is null"));
  }
  return absl::OkStatus();
}

/// Results written straight into the caller's buffer while the calls run: an
/// intermediate tensor returned once, whose buffer overlaps no argument and no other
/// result (an in-place update `x = f(x)` must not overwrite x while it is read).
std::vector<int> bindableResults(const Program &program, llvm::ArrayRef<ConstTensorRef> args,
                                 llvm::ArrayRef<TensorRef> results) {
  // Only arguments some call reads can clash: an output parameter passed in only for
  // its shape (never read) may share its buffer with the result written into it.
  std::vector<bool> read(program.tensors.size(), false);
  for (const codegen::Call &call : program.calls)
    for (const codegen::Region &region : call.regions) {
      int t = region.tensor;
      if (t < 0 || size_t(t) >= program.tensors.size()) continue;
      read[t] = true;
      int base = program.tensors[t].base;
      if (base >= 0 && size_t(base) < read.size()) read[base] = true;
    }
  // A tensor that starts as a copy of an argument (a loop's in-place update) reads it.
  for (const codegen::GmTensor &g : program.tensors)
    if (g.initFrom >= 0 && size_t(g.initFrom) < read.size()) read[g.initFrom] = true;
  std::vector<bool> argRead(args.size(), true);
  for (size_t i = 0; i < args.size() && i < program.arguments.size(); ++i) {
    int t = program.arguments[i];
    argRead[i] = t < 0 || size_t(t) >= read.size() || read[t];
  }
  std::vector<int> external(program.tensors.size(), -1);
  for (size_t r = 0; r < results.size(); ++r) {
    int t = program.results[r];
    if (program.tensors[t].kind != codegen::GmTensor::Kind::Intermediate) continue;
    if (std::count(program.results.begin(), program.results.end(), t) != 1) continue;
    bool clash = false;
    int initFrom = program.tensors[t].initFrom;
    for (size_t i = 0; i < args.size(); ++i) {
      // The argument it starts as, in the very same buffer: copied onto itself at
      // start, then updated in place, as on the device.
      bool inPlace = initFrom >= 0 && i < program.arguments.size() &&
                     program.arguments[i] == initFrom && args[i].data == results[r].data &&
                     args[i].sizeInBytes() == results[r].sizeInBytes();
      clash |= argRead[i] && !inPlace &&
               overlaps(args[i].data, args[i].sizeInBytes(), results[r].data, results[r].sizeInBytes());
    }
    for (size_t o = 0; o < results.size(); ++o)
      clash |= o != r && overlaps(results[o].data, results[o].sizeInBytes(), results[r].data,
                                  results[r].sizeInBytes());
    if (!clash) external[t] = int(r);
  }
  return external;
}

/// execute() minus the guard against running out of host memory.
absl::Status executeChecked(const Program &program, llvm::ArrayRef<ConstTensorRef> args,
                            ResultSink sink, llvm::ArrayRef<int> order,
                            const ExecOptions &options) {
  using namespace exec;
  size_t numCalls = program.calls.size();
  std::vector<int> programOrder;
  if (order.empty()) {
    programOrder.resize(numCalls);
    for (size_t c = 0; c < numCalls; ++c) programOrder[c] = int(c);
    order = programOrder;
  }
  if (absl::Status s = checkOrder(program, order); !s.ok()) return s;
  if (absl::Status s = checkCalls(program); !s.ok()) return s;
  std::vector<std::byte *> externalStorage;
  if (!sink.owned) {
    if (absl::Status s = checkResultRefs(program, sink.refs); !s.ok()) return s;
    std::vector<int> external = bindableResults(program, args, sink.refs);
    externalStorage.assign(program.tensors.size(), nullptr);
    for (size_t t = 0; t < external.size(); ++t)
      if (external[t] >= 0) externalStorage[t] = sink.refs[external[t]].data;
  }

  GmMemory gm;
  if (absl::Status s = gm.init(program, args, externalStorage); !s.ok()) return s;

  std::vector<LeafPlan> plans;
  plans.reserve(program.leaves.size());
  int64_t floatWords = 0, intWords = 0;
  for (size_t l = 0; l < program.leaves.size(); ++l) {
    absl::StatusOr<LeafPlan> plan = planLeaf(program.leaves[l], int(l));
    if (!plan.ok()) return plan.status();
    floatWords = std::max(floatWords, plan->floatWords);
    intWords = std::max(intWords, plan->intWords);
    plans.push_back(std::move(*plan));
  }
  // Every transfer of every call, before anything runs: bad regions must never reach
  // memory.
  for (size_t c = 0; c < numCalls; ++c)
    for (const OpPlan &op : plans[program.calls[c].leaf].ops)
      if (op.code == ir::OpCode::CopyIn || op.code == ir::OpCode::CopyOut)
        if (absl::Status s = gm.checkRegion(program, int(c), op); !s.ok()) return s;

  std::vector<int> predCounts(numCalls);
  for (size_t c = 0; c < numCalls; ++c) predCounts[c] = int(program.calls[c].preds.size());
  unsigned threads = options.threads ? options.threads : std::thread::hardware_concurrency();
  unsigned workers = unsigned(std::max<size_t>(1, std::min<size_t>(std::max(threads, 1u), numCalls)));
  std::vector<TileArena> arenas(workers);
  // A program with windows holding data only in part: each call also follows its
  // tiles' valid extents (PartialTiles.h), per worker.
  std::vector<PartialCalls> partial(gm.hasPartialData() ? workers : 0);

  auto runCall = [&](int c, unsigned worker) -> absl::Status {
    TileArena &arena = arenas[worker];
    // Allocated by the worker itself on its first call, then reused.
    arena.reserve(floatWords, intWords);
    TileMemory mem = arena.memory();
    const codegen::Call &call = program.calls[c];
    const LeafPlan &plan = plans[call.leaf];
    if (!partial.empty()) {
      partial[worker].run(gm, call, plan, mem);
      return absl::OkStatus();
    }
    for (size_t i = 0; i < plan.ops.size(); ++i) {
      const OpPlan &op = plan.ops[i];
      if (op.code == ir::OpCode::CopyIn) gm.copyIn(call.regions[op.region], op, mem);
      else if (op.code == ir::OpCode::CopyOut)
        gm.copyOut(call.regions[op.region], op, plan.ops[op.x], mem);
      else runComputeOp(plan, int(i), mem);
    }
    return absl::OkStatus();
  };
  if (absl::Status s = runTaskGraph(program.successors(), std::move(predCounts), order, workers,
                                    runCall);
      !s.ok())
    return s;

  if (!sink.owned) {
    // Bound results already hold their values; the rest are copied out.
    for (size_t r = 0; r < sink.refs.size(); ++r)
      if (externalStorage[program.results[r]] == nullptr)
        gm.materializeInto(program.results[r], sink.refs[r].data);
    return absl::OkStatus();
  }

  // Copies first (aliases may read an intermediate that is then handed over), then
  // each intermediate returned as it is laid out moves out, once, without a copy.
  size_t numResults = program.results.size();
  std::vector<bool> moves(numResults, false);
  for (size_t r = 0; r < numResults; ++r) {
    int t = program.results[r];
    bool lastMention = std::find(program.results.begin() + r + 1, program.results.end(), t) ==
                       program.results.end();
    moves[r] = lastMention && gm.canTake(t);
  }
  // Filled aside and swapped in last: `args` may be the caller's previous `results`.
  std::vector<HostTensor> out(numResults);
  for (size_t r = 0; r < numResults; ++r)
    if (!moves[r]) out[r] = gm.materialize(program.results[r]);
  for (size_t r = 0; r < numResults; ++r)
    if (moves[r]) out[r] = gm.take(program.results[r]);
  *sink.owned = std::move(out);
  return absl::OkStatus();
}

/// Runs `body`, reporting host memory running out (huge intermediates, results)
/// instead of throwing.
template <typename Body>
absl::Status guardMemory(const Program &program, Body body) {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "executing @", program.funcName, ": out of host memory for its tensors or tiles"));
  }
}

} // namespace

absl::Status execute(const Program &program, llvm::ArrayRef<HostTensor> args,
                     std::vector<HostTensor> &results, llvm::ArrayRef<int> order,
                     const ExecOptions &options) {
  std::vector<ConstTensorRef> refs(args.begin(), args.end());
  return guardMemory(program, [&] {
    return executeChecked(program, refs, ResultSink{{}, &results}, order, options);
  });
}

absl::Status executeInto(const Program &program, llvm::ArrayRef<ConstTensorRef> args,
                         llvm::ArrayRef<TensorRef> results, llvm::ArrayRef<int> order,
                         const ExecOptions &options) {
  return guardMemory(program, [&] {
    return executeChecked(program, args, ResultSink{results, nullptr}, order, options);
  });
}

int64_t executionBytes(const Program &program, llvm::ArrayRef<ConstTensorRef> args,
                       const llvm::ArrayRef<TensorRef> *results) {
  auto bytesOf = [](const codegen::GmTensor &t) {
    int64_t bytes = ir::elementSize(t.dtype);
    for (int64_t d : t.shape)
      bytes = d > 0 && bytes > INT64_MAX / d ? INT64_MAX : bytes * std::max<int64_t>(d, 0);
    return bytes;
  };
  std::vector<int> external;
  if (results && results->size() == program.results.size())
    external = bindableResults(program, args, *results);
  int64_t total = 0;
  auto add = [&](int64_t bytes) { total = bytes > INT64_MAX - total ? INT64_MAX : total + bytes; };
  for (size_t t = 0; t < program.tensors.size(); ++t)
    if (program.tensors[t].kind == codegen::GmTensor::Kind::Intermediate &&
        (external.empty() || external[t] < 0))
      add(bytesOf(program.tensors[t]));
  if (!results)
    for (int r : program.results)
      if (r >= 0 && size_t(r) < program.tensors.size() &&
          program.tensors[r].kind != codegen::GmTensor::Kind::Intermediate)
        add(bytesOf(program.tensors[r]));
  return total;
}

} // namespace ptoc::runtime
