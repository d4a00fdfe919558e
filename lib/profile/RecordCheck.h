// Internal to lib/profile: checks that a RunRecord belongs to a Program before the
// trace writer and the summary index one with the other.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "ptoc/codegen/Program.h"
#include "ptoc/runtime/RunRecord.h"

namespace ptoc::profile {

/// OK when every index in `record` (calls, leaves, cores, threads, pipe instructions)
/// is in range for `program` and every time is finite, non-negative and ordered
/// (start <= end). A mismatch is a bug in whoever produced the record, so the error
/// is an InternalError naming the first offending task or pipe record.
absl::Status checkRunRecord(const codegen::Program &program, const runtime::RunRecord &record);

/// The pipes a core of `kind` has, in lane order (AIC: MTE2 MTE1 CUBE FIXPIPE; AIV:
/// MTE2 VEC MTE3).
llvm::ArrayRef<codegen::Pipe> pipesOf(target::CoreKind kind);

/// Position of `pipe` in pipesOf(kind), or -1 when that core kind has no such pipe.
int pipeLane(target::CoreKind kind, codegen::Pipe pipe);

/// "AIC" / "AIV" (the trace's process names and the summary's core-kind labels).
llvm::StringRef coreKindLabel(target::CoreKind kind);

} // namespace ptoc::profile
