// MeasuredPipes: the pipes whose busy share a measurement file may give ("busy":
// {"cube": 0.867}), each a pipe of one core kind in ptoc's programs. Declared once:
// the reader accepts only these names and the simulator measures these pipes.
#pragma once

#include <string>

#include "llvm/ADT/StringRef.h"
#include "ptoc/codegen/Program.h"
#include "ptoc/target/CoreKind.h"

namespace ptoc::calibrate {

/// A measured pipe: its name in measurement files, and the pipe and core kind it is.
struct MeasuredPipe {
  const char *name;
  codegen::Pipe pipe;
  target::CoreKind core;
};

/// Every pipe a measurement may give a busy share for (msprof's pipe utilisation:
/// cube = MMAD, l1_to_l0 = MTE1, gm_to_l1 = a cube core's MTE2, l0c_to_gm = FIXPIPE,
/// vec = VEC, gm_to_ub = a vector core's MTE2, ub_to_gm = MTE3).
inline constexpr MeasuredPipe kMeasuredPipes[] = {
    {"cube", codegen::Pipe::Cube, target::CoreKind::AIC},
    {"l1_to_l0", codegen::Pipe::Mte1, target::CoreKind::AIC},
    {"gm_to_l1", codegen::Pipe::Mte2, target::CoreKind::AIC},
    {"l0c_to_gm", codegen::Pipe::Fixpipe, target::CoreKind::AIC},
    {"vec", codegen::Pipe::Vec, target::CoreKind::AIV},
    {"gm_to_ub", codegen::Pipe::Mte2, target::CoreKind::AIV},
    {"ub_to_gm", codegen::Pipe::Mte3, target::CoreKind::AIV},
};

/// The measured pipe named `name`, or nullptr.
inline const MeasuredPipe *findMeasuredPipe(llvm::StringRef name) {
  for (const MeasuredPipe &p : kMeasuredPipes)
    if (name == p.name) return &p;
  return nullptr;
}

/// "cube, l1_to_l0, ...": the names, for messages.
inline std::string measuredPipeList() {
  std::string out;
  for (const MeasuredPipe &p : kMeasuredPipes) {
    if (!out.empty()) out += ", ";
    out += p.name;
  }
  return out;
}

} // namespace ptoc::calibrate
