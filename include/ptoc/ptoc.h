// The one header an embedder includes: build a function, compile it, run it on the
// caller's buffers and read the run report (docs/embedding.md; examples/embed).
//
//   #include "ptoc/ptoc.h"
//
//   absl::StatusOr<ptoc::Session> session = ptoc::Session::create("a2");
//
//   // 1. Build: a tensor-level function, with tile shapes for the ops that follow.
//   ptoc::ir::Context ctx;                      // one per compilation
//   ptoc::ir::Module module(ctx);
//   ptoc::ir::GraphBuilder b(module, &session->device());
//   b.setLocation(ptoc::callerLocation(ctx));   // errors name this file:line
//   auto f = b.beginFunc("scale", {ctx.tensorType(ptoc::ir::DType::F32, {64, 256})}, {"x"});
//   b.setVecTile({8, 256});
//   absl::StatusOr<ptoc::ir::Value *> y = b.unary(ptoc::ir::OpCode::Relu, b.arg(0));
//   absl::Status done = b.endFunc({*y});         // check every status in real code
//
//   // 2. Compile: the default pipeline, tuned through named knobs.
//   ptoc::CompileOptions copts;
//   absl::Status knob = copts.knobs.set("pg_lower_bound", ptoc::passes::OptionValue(int64_t(512)));
//   absl::StatusOr<ptoc::Kernel> kernel = session->compile(module, copts);
//
//   // 3. Run on caller-owned, dense row-major buffers (no copies).
//   std::vector<float> x(64 * 256), out(64 * 256);
//   int64_t shape[] = {64, 256};
//   ptoc::ConstTensorRef args[] = {{ptoc::ir::DType::F32, shape, x.data()}};
//   ptoc::TensorRef results[] = {{ptoc::ir::DType::F32, shape, out.data()}};
//   absl::StatusOr<ptoc::RunReport> report = session->run(*kernel, args, results);
//
//   // 4. Read the report.
//   // report->simulatedUs, report->boundUs, report->aivUtilization, report->summary
#pragma once

#include <cstdint>
#include <source_location>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "ptoc/ir/Context.h"
#include "ptoc/ir/DType.h"
#include "ptoc/ir/GraphBuilder.h"
#include "ptoc/ir/Location.h"
#include "ptoc/ir/Module.h"
#include "ptoc/ir/Printer.h"
#include "ptoc/passes/PassOptions.h"
#include "ptoc/runtime/HostTensor.h"
#include "ptoc/runtime/TensorRef.h"
#include "ptoc/session/CompileStats.h"
#include "ptoc/passes/PassKnobs.h"
#include "ptoc/session/Session.h"
#include "ptoc/session/Version.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc {

// The names an embedder uses most, without their layer's namespace.
using session::CompileOptions;
using session::CompileStats;
using session::Kernel;
using passes::PassKnobs;
using session::RunOptions;
using session::RunReport;
using session::Session;
using session::Stage;
using session::version;
using runtime::ConstTensorRef;
using runtime::HostTensor;
using runtime::TensorRef;

/// The caller's source position as an IR location, for GraphBuilder::setLocation:
/// an op built after `b.setLocation(ptoc::callerLocation(ctx))` reports its errors at
/// the embedder's file:line instead of "<unknown>".
#if defined(__cpp_lib_source_location)
inline ir::Location callerLocation(ir::Context &ctx,
                                   std::source_location where = std::source_location::current()) {
  return ctx.loc(where.file_name(), where.line(), where.column());
}
#else
// clang 14 with libstdc++ 12 has no std::source_location (libstdc++ needs
// __builtin_source_location, which clang 14 lacks); clang's builtins give the same.
inline ir::Location callerLocation(ir::Context &ctx, const char *file = __builtin_FILE(),
                                   unsigned line = __builtin_LINE(),
                                   unsigned column = __builtin_COLUMN()) {
  return ctx.loc(file, line, column);
}
#endif

} // namespace ptoc
