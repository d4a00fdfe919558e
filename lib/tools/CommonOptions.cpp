// Options several `ptoc` commands share (see CommonOptions.h).
#include "CommonOptions.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ptoc/runtime/ExpandLoops.h"
#include "ptoc/runtime/Simulator.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::tools {

ArgOption deviceOption(std::string *device) {
  return {"device", device, "NAME|FILE.json",
          absl::StrCat("device preset (", absl::StrJoin(target::DeviceSpec::presetNames(), ", "),
                       ") or device file")};
}

ArgOption schedModeOption(int *mode) {
  return {"sched-mode", mode, "N", "AICPU scheduler: 0 FIFO, 1 L2 affinity, 2 fair, 3 both",
          Bounds::between(runtime::kMinSchedMode, runtime::kMaxSchedMode)};
}

ArgOption schedParallelismOption(int *parallelism) {
  return {"device-sched-parallelism", parallelism, "P",
          "device_sched_parallelism: iterations of a parallel loop that may run at once "
          "(modules with parallel loops); 0 derives it from the kernel and the device",
          Bounds::between(runtime::kAutoSchedParallelism, runtime::kMaxSchedParallelism)};
}

ArgOption funcOption(std::string *name) {
  return {"func", name, "NAME", "the function to compile (when the file has several)"};
}

ArgOption pipelineOption(std::string *pipeline) {
  return {"pipeline", pipeline, "TEXT", "pass pipeline", {}, "the default pipeline"};
}

ArgOption passOptionOption(PassOptionTexts *options) {
  CustomValue collect{[options](llvm::StringRef flag, const std::string &text) {
                        size_t eq = text.find('=');
                        if (eq == std::string::npos || eq == 0)
                          return absl::StrCat(flag.str(),
                                              " takes NAME=VALUE (e.g. pg_lower_bound=1024), got '",
                                              text, "'");
                        options->emplace_back(text.substr(0, eq), text.substr(eq + 1));
                        return std::string();
                      },
                      ""};
  return {"pass-option", collect, "NAME=VALUE",
          "a pass option of the default pipeline, by its Python name (pg_lower_bound=1024, "
          "vec_nbuffer_setting={0:4}); repeatable"};
}

ArgOption noDoubleBufferOption(bool *doubleBuffer) {
  return {"no-double-buffer", Negated{doubleBuffer}, "", "codegen without ping-pong buffers"};
}

absl::Status setPassOptions(const PassOptionTexts &options, passes::PassKnobs &knobs) {
  for (const auto &[name, value] : options)
    if (absl::Status st = knobs.setText(name, value); !st.ok())
      return absl::Status(st.code(), absl::StrCat("--pass-option ", name, "=", value, ": ",
                                                  std::string(st.message())));
  return absl::OkStatus();
}

} // namespace ptoc::tools
