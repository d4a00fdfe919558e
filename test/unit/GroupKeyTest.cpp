// Group keys come from one place: the program carries its function's index, so the
// summary, the trace and the compile statistics all spell the groups of a module's
// second function func1_<order>. (Before, profile wrote func0_ for every function.)
#include <catch2/catch.hpp>

#include "llvm/Support/JSON.h"
#include "ptoc/profile/Summary.h"
#include "ptoc/profile/Swimlane.h"
#include "ptoc/runtime/Reference.h"
#include "ptoc/session/Session.h"

using namespace ptoc;

namespace {

// Two functions; the second is compiled.
constexpr const char *kModule = R"(
func @first(%x: tensor<16x256xf32>) -> tensor<16x256xf32> {
  %e = exp %x {vec_tile = [8, 256]} : tensor<16x256xf32>
  return %e
}

func @second(%x: tensor<32x256xf32>) -> tensor<32x256xf32> {
  %e = exp %x {vec_tile = [8, 256]} : tensor<32x256xf32>
  %y = add %e, %x {vec_tile = [8, 256]} : tensor<32x256xf32>
  return %y
}
)";

} // namespace

TEST_CASE("group keys name the function: func1_ for a module's second function",
          "[group-key]") {
  absl::StatusOr<session::Session> s = session::Session::create("tiny");
  REQUIRE(s.ok());
  session::CompileOptions options;
  options.funcName = "second";
  absl::StatusOr<session::Kernel> k = s->compileText(kModule, "two.pto", options);
  INFO(k.status().message());
  REQUIRE(k.ok());
  CHECK(k->program.funcIndex == 1);
  REQUIRE_FALSE(k->stats.groups.empty());
  std::vector<std::string> statsKeys;
  for (const session::GroupStats &g : k->stats.groups)
    if (g.hashOrder >= 0) statsKeys.push_back(g.key);
  for (const std::string &key : statsKeys) CHECK_THAT(key, Catch::StartsWith("func1_"));

  std::vector<runtime::HostTensor> results;
  session::RunOptions run;
  run.numerics = false;
  std::vector<runtime::HostTensor> args;
  args.push_back(runtime::randomTensor(ir::DType::F32, {32, 256}, 1));
  absl::StatusOr<session::RunReport> report = s->run(*k, args, results, run);
  INFO(report.status().message());
  REQUIRE(report.ok());
  absl::StatusOr<profile::Summary> summary = profile::summarize(k->program, report->record);
  REQUIRE(summary.ok());
  std::vector<std::string> summaryKeys;
  for (const profile::GroupSummary &g : summary->groups) summaryKeys.push_back(g.key);
  CHECK(summaryKeys == statsKeys);
  CHECK_THAT(profile::summaryText(*summary), Catch::Contains("func1_0"));
  CHECK_THAT(profile::summaryText(*summary), !Catch::Contains("func0_"));

  // The trace names each task's group the same way (args.group and the task name).
  absl::StatusOr<std::string> trace = profile::swimlaneJson(k->program, report->record);
  REQUIRE(trace.ok());
  llvm::Expected<llvm::json::Value> root = llvm::json::parse(*trace);
  REQUIRE(bool(root));
  int tasks = 0;
  for (const llvm::json::Value &e : *root->getAsObject()->getArray("traceEvents")) {
    const llvm::json::Object &o = *e.getAsObject();
    if (o.getString("cat") != llvm::Optional<llvm::StringRef>("task")) continue;
    ++tasks;
    llvm::Optional<llvm::StringRef> group = o.getObject("args")->getString("group");
    REQUIRE(group);
    CHECK(std::find(statsKeys.begin(), statsKeys.end(), group->str()) != statsKeys.end());
    CHECK(o.getString("name")->startswith(*group));
  }
  CHECK(tasks == int(k->program.calls.size()));
}
