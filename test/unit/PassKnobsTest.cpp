// PassKnobs: user knob names validated against the passes' declarations and applied
// to the default pipeline.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ptoc/passes/MergeOptions.h"
#include "ptoc/passes/Passes.h"
#include "ptoc/passes/PassKnobs.h"

using namespace ptoc;
using passes::PassKnobs;

TEST_CASE("knob names cover the documented pass options", "[knobs]") {
  std::vector<std::string> names = PassKnobs::names();
  for (const char *knob :
       {"pg_skip_partition", "pg_lower_bound", "pg_upper_bound", "pg_parallel_lower_bound",
        "mg_vec_parallel_lb", "vec_nbuffer_mode", "vec_nbuffer_setting", "cube_l1_reuse_mode",
        "cube_l1_reuse_setting", "cube_nbuffer_mode", "cube_nbuffer_setting",
        "mg_copyin_upper_bound", "sg_set_scope"})
    CHECK(std::find(names.begin(), names.end(), knob) != names.end());
  CHECK(std::is_sorted(names.begin(), names.end()));
}

TEST_CASE("an unknown knob lists the valid names", "[knobs]") {
  PassKnobs knobs;
  absl::Status st = knobs.set("pg_lower_bund", int64_t(4));
  REQUIRE_FALSE(st.ok());
  std::string msg(st.message());
  CHECK_THAT(msg, Catch::Contains("unknown pass option 'pg_lower_bund'"));
  CHECK_THAT(msg, Catch::Contains("pg_lower_bound"));
  CHECK(knobs.empty());
}

TEST_CASE("knob values are checked for kind and range", "[knobs]") {
  PassKnobs knobs;
  CHECK_FALSE(knobs.set("vec_nbuffer_mode", int64_t(7)).ok());
  CHECK_FALSE(knobs.set("pg_skip_partition", std::string("yes")).ok());
  CHECK_FALSE(knobs.setText("cube_l1_reuse_setting", "{0: -1}").ok());
  CHECK(knobs.empty());
  // Python's natural spellings: 0/1 for a bool, dashes or underscores.
  CHECK(knobs.set("pg_skip_partition", int64_t(1)).ok());
  CHECK(knobs.setText("vec-nbuffer-setting", "{0: 4, -1: 2}").ok());
  CHECK(knobs.values().count("vec_nbuffer_setting") == 1);
}

TEST_CASE("sg_set_scope is a builder setting, not a pipeline knob", "[knobs]") {
  PassKnobs knobs;
  absl::Status st = knobs.set("sg_set_scope", int64_t(1));
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(std::string(st.message()), Catch::Contains("setScope"));
}

TEST_CASE("the pipeline carries each knob into every pass declaring it", "[knobs]") {
  PassKnobs none;
  CHECK(none.pipeline() == passes::defaultPipelineText().str());

  PassKnobs knobs;
  REQUIRE(knobs.set("pg_lower_bound", int64_t(2048)).ok());
  REQUIRE(knobs.set("vec_nbuffer_mode", int64_t(0)).ok());
  REQUIRE(knobs.set("mg_copyin_upper_bound", int64_t(65536)).ok());
  std::string p = knobs.pipeline();
  CHECK_THAT(p, Catch::Contains("partition{pg-lower-bound=2048 mg-copyin-upper-bound=65536}") ||
                    Catch::Contains("partition{mg-copyin-upper-bound=65536 pg-lower-bound=2048}"));
  CHECK_THAT(p, Catch::Contains("vec-nbuffer-mode=0"));
  CHECK_THAT(p, Catch::Contains("l1-reuse-merge{cube-l1-reuse-mode=1 mg-copyin-upper-bound=65536}"));
  // cube-nbuffer-merge is in the pipeline at its default mode (automatic in loop
  // bodies only), carrying the shared knob.
  CHECK_THAT(p, Catch::Contains("cube-nbuffer-merge{mg-copyin-upper-bound=65536}"));

  REQUIRE(knobs.set("cube_nbuffer_mode", int64_t(1)).ok());
  p = knobs.pipeline();
  size_t cube = p.find("cube-nbuffer-merge{cube-nbuffer-mode=1");
  REQUIRE(cube != std::string::npos);
  CHECK(cube < p.find("l1-reuse-merge"));
  CHECK(cube > p.find("nbuffer-merge{"));

  std::string tile = knobs.pipeline(/*throughExpandTiles=*/true);
  CHECK_THAT(tile, Catch::EndsWith("expand-tiles"));
  CHECK_THAT(tile, !Catch::Contains("partition"));
}

TEST_CASE("a knob shared by the merge passes reports each pass's default", "[knobs]") {
  // mg_copyin_upper_bound is capped by default in l1-reuse-merge only (MergeOptions.h).
  std::vector<std::pair<std::string, passes::OptionValue>> caps = PassKnobs::defaults("mg_copyin_upper_bound");
  std::map<std::string, int64_t> byPass;
  for (const auto &[pass, value] : caps) byPass[pass] = std::get<int64_t>(value);
  CHECK(byPass == std::map<std::string, int64_t>{{"partition", passes::kNoCopyInCap},
                                                  {"nbuffer-merge", passes::kNoCopyInCap},
                                                  {"cube-nbuffer-merge", passes::kNoCopyInCap},
                                                  {"l1-reuse-merge", int64_t(1) << 20}});
  CHECK(caps.front().first == "partition"); // pipeline order
  for (const auto &[pass, value] : PassKnobs::defaults("merge-fuel"))
    CHECK(std::get<int64_t>(value) == -1);
  CHECK(PassKnobs::defaults("merge_fuel").size() == 4);
  CHECK(PassKnobs::defaults("pg_lower_bound").size() == 1);
  CHECK(PassKnobs::defaults("no_such_knob").empty());
}

TEST_CASE("a shared merge option has one name, help and bounds in every pass", "[knobs]") {
  passes::PassRegistry registry;
  passes::registerAllPasses(registry);
  for (llvm::StringRef name : {"mg-copyin-upper-bound", "merge-fuel"}) {
    std::vector<const passes::PassOptionDecl *> rows;
    for (llvm::StringRef pass : {"partition", "nbuffer-merge", "cube-nbuffer-merge", "l1-reuse-merge"}) {
      const passes::PassInfo *info = registry.lookup(pass);
      REQUIRE(info);
      for (const passes::PassOptionDecl &d : info->options)
        if (d.name == name) rows.push_back(&d);
    }
    REQUIRE(rows.size() == 4);
    for (const passes::PassOptionDecl *d : rows) {
      CHECK(d->help == rows[0]->help);
      CHECK(d->min == rows[0]->min);
      CHECK(d->max == rows[0]->max);
      CHECK(d->kind == passes::OptionKind::Int);
    }
    CHECK(rows[0]->min == -1);
  }
}
