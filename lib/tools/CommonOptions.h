// Options several `ptoc` commands share (run, prof report, tune), declared once: the
// device, the scheduler mode, device_sched_parallelism, the function, the pipeline, pass
// options and double buffering; and the flags of the session's option table
// (session/OptionTable.h), whose names, bounds and help come from there. Internal to
// lib/tools.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "llvm/ADT/StringRef.h"
#include "ptoc/passes/PassKnobs.h"
#include "ptoc/session/Session.h"
#include "ptoc/tools/ArgParser.h"

namespace ptoc::tools {

/// `--pass-option NAME=VALUE` values, in the order given.
using PassOptionTexts = std::vector<std::pair<std::string, std::string>>;

/// The flag of the session option `name` (session::sessionOptions(), which must give
/// it one) setting its field in `compile` / `run`: the table's flag, placeholder,
/// bounds and help ("<name>: <help>"; a "no-" flag "clears <name>: <help>").
ArgOption tableOption(llvm::StringRef name, session::CompileOptions &compile,
                      session::RunOptions &run);
/// The same flag setting `target` instead, a field of the same kind elsewhere (the
/// tuner's default device_sched_parallelism).
ArgOption tableOption(llvm::StringRef name, ArgTarget target);

/// --device NAME|FILE.json (its default is `*device`'s value).
ArgOption deviceOption(std::string *device);
/// --sched-mode N, the AICPU scheduler mode.
ArgOption schedModeOption(int *mode);
/// --device-sched-parallelism P, iterations of a parallel loop in flight.
ArgOption schedParallelismOption(int *parallelism);
/// --func NAME, the function of a file with several.
ArgOption funcOption(std::string *name);
/// --pipeline TEXT (default: the default pipeline).
ArgOption pipelineOption(std::string *pipeline);
/// --pass-option NAME=VALUE, repeatable; a value without '=' is a usage error.
ArgOption passOptionOption(PassOptionTexts *options);
/// --no-double-buffer, clearing codegen's double buffering.
ArgOption noDoubleBufferOption(bool *doubleBuffer);

/// Sets every --pass-option on `knobs`; the error names the option as given
/// ("--pass-option pg_lower_bnd=3: unknown pass option ...").
absl::Status setPassOptions(const PassOptionTexts &options, passes::PassKnobs &knobs);

} // namespace ptoc::tools
