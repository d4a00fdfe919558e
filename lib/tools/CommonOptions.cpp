// Options several `ptoc` commands share (see CommonOptions.h).
#include "CommonOptions.h"

#include <cstdlib>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ptoc/session/OptionTable.h"
#include "ptoc/target/DeviceSpec.h"

namespace ptoc::tools {
namespace {

const session::SessionOption &tableRow(llvm::StringRef name) {
  const session::SessionOption *row = session::findSessionOption(name);
  // The commands name rows of the table that have flags: a unit test runs every
  // command's --help, so a wrong name fails there.
  if (!row || !*row->flag) {
    llvm::errs() << "internal error in ptoc (a bug; please report it): no session option '"
                 << name << "' with a flag\n";
    std::abort();
  }
  return *row;
}

} // namespace

ArgOption tableOption(llvm::StringRef name, ArgTarget target) {
  const session::SessionOption &row = tableRow(name);
  llvm::StringRef flag = row.flag;
  bool clears = flag.startswith("no-");
  if (clears)
    if (bool **field = std::get_if<bool *>(&target)) target = Negated{*field};
  Bounds bounds;
  bounds.min = row.min;
  bounds.max = row.max;
  return {flag.str(), target, row.valueName,
          absl::StrCat(clears ? "clears " : "", row.name, ": ", row.help), bounds,
          row.shownDefault};
}

ArgOption tableOption(llvm::StringRef name, session::CompileOptions &compile,
                      session::RunOptions &run) {
  session::OptionField field = tableRow(name).field(compile, run);
  std::optional<ArgTarget> target;
  if (bool **p = std::get_if<bool *>(&field)) target = *p;
  else if (int **p = std::get_if<int *>(&field)) target = *p;
  else if (unsigned **p = std::get_if<unsigned *>(&field)) target = *p;
  else if (int64_t **p = std::get_if<int64_t *>(&field)) target = *p;
  else if (std::string **p = std::get_if<std::string *>(&field)) target = *p;
  if (!target) {
    llvm::errs() << "internal error in ptoc (a bug; please report it): session option '" << name
                 << "' has no field a flag can set\n";
    std::abort();
  }
  return tableOption(name, *target);
}

ArgOption deviceOption(std::string *device) {
  return {"device", device, "NAME|FILE.json",
          absl::StrCat("device preset (", absl::StrJoin(target::DeviceSpec::presetNames(), ", "),
                       ") or device file")};
}

ArgOption schedModeOption(int *mode) { return tableOption("device_sched_mode", mode); }

ArgOption schedParallelismOption(int *parallelism) {
  return tableOption("device_sched_parallelism", parallelism);
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
          "vec_nbuffer_setting={0:4}, vec_nbuffer_setting={func2_0:4}); repeatable"};
}

ArgOption noDoubleBufferOption(bool *doubleBuffer) {
  return tableOption("double_buffer", doubleBuffer);
}

absl::Status setPassOptions(const PassOptionTexts &options, passes::PassKnobs &knobs) {
  for (const auto &[name, value] : options)
    if (absl::Status st = knobs.setText(name, value); !st.ok())
      return absl::Status(st.code(), absl::StrCat("--pass-option ", name, "=", value, ": ",
                                                  std::string(st.message())));
  return absl::OkStatus();
}

} // namespace ptoc::tools
