// Unit tests for pass options (every kind, bounds, errors, printing), pipeline text
// (parsing, named pipelines, every error, round trip) and the registry's help text.
#include <catch2/catch.hpp>

#include "llvm/Support/raw_ostream.h"

#include "ptoc/passes/Pass.h"
#include "ptoc/passes/PassOptions.h"
#include "ptoc/passes/PassRegistry.h"
#include "ptoc/passes/Pipeline.h"

using namespace ptoc;
using namespace ptoc::passes;

namespace {

class DoNothingPass : public Pass {
public:
  explicit DoNothingPass(std::string argument) : argument_(std::move(argument)) {}
  llvm::StringRef argument() const override { return argument_; }
  PassResult run(ir::Module &, PassContext &) override { return PassResult::unchanged(); }

private:
  std::string argument_;
};

/// A pass with one option of every kind, shaped like the real partition pass.
std::vector<PassOptionDecl> partitionOptions() {
  return {
      {"pg-lower-bound", OptionKind::Int, int64_t(0), "Merge subgraphs under this many cycles", 0, 1000000},
      {"pg-upper-bound", OptionKind::Int, int64_t(0), "Cycle cap of a merged subgraph (0 = automatic)"},
      {"pg-skip-partition", OptionKind::Bool, false, "One subgraph per core kind and region"},
      {"ratio", OptionKind::Float, 0.5, "A fraction", 0.0, 1.0},
      {"label", OptionKind::String, std::string(), "A name"},
      {"vec-nbuffer-setting", OptionKind::GroupSetting, GroupSetting{}, "Per-group N (hash order -> N)", 1, 64},
  };
}

PassOptionValues partitionValues() { return PassOptionValues(partitionOptions(), "partition"); }

void addSimplePass(PassRegistry &r, const std::string &argument, const std::string &summary,
                   std::vector<PassOptionDecl> options = {}) {
  r.add({argument, summary, std::move(options),
         [argument](const PassOptionValues &) { return std::make_unique<DoNothingPass>(argument); }});
}

PassRegistry makeRegistry() {
  PassRegistry r;
  addSimplePass(r, "canonicalize", "Fold things");
  addSimplePass(r, "cse", "Eliminate common subexpressions");
  addSimplePass(r, "dce", "Eliminate dead code");
  addSimplePass(r, "partition", "Partition into subgraphs", partitionOptions());
  r.addPipeline({"cleanup", "Clean-up passes", "canonicalize,cse,dce"});
  r.addPipeline({"default", "Everything", "cleanup, partition{pg-lower-bound=7}"});
  r.addPipeline({"loop-a", "Recursive (broken on purpose)", "cse,loop-b"});
  r.addPipeline({"loop-b", "Recursive (broken on purpose)", "loop-a"});
  r.addPipeline({"broken", "Names a pass that does not exist", "cse,nope"});
  return r;
}

std::string errorOf(llvm::StringRef pipeline) {
  PassRegistry r = makeRegistry();
  absl::StatusOr<std::vector<PipelineElement>> p = parsePipeline(pipeline, r);
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(p.status().message());
}

std::vector<std::string> argumentsOf(const std::vector<PipelineElement> &p) {
  std::vector<std::string> out;
  for (const PipelineElement &e : p) out.push_back(e.info->argument);
  return out;
}

} // namespace

// ------------------------------------------------------------------ options

TEST_CASE("options start at their defaults", "[pipeline]") {
  PassOptionValues v = partitionValues();
  CHECK(v.getInt("pg-lower-bound") == 0);
  CHECK(v.getBool("pg-skip-partition") == false);
  CHECK(v.getFloat("ratio") == 0.5);
  CHECK(v.getString("label").empty());
  CHECK(v.getGroupSetting("vec-nbuffer-setting").empty());
  CHECK_FALSE(v.isExplicit("pg-lower-bound"));
  CHECK(v.str().empty());
}

TEST_CASE("bool options accept true/false/1/0", "[pipeline]") {
  PassOptionValues v = partitionValues();
  using Case = std::pair<const char *, bool>;
  for (auto [text, expected] : {Case{"true", true}, Case{"false", false}, Case{"1", true}, Case{"0", false}}) {
    REQUIRE(v.set("pg-skip-partition", text).ok());
    CHECK(v.getBool("pg-skip-partition") == expected);
  }
  absl::Status s = v.set("pg-skip-partition", "yes");
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(s.message() == "option 'pg-skip-partition' of pass 'partition': expected true or false "
                       "(or 1/0), got 'yes'");
}

TEST_CASE("int options parse decimals and check bounds", "[pipeline]") {
  PassOptionValues v = partitionValues();
  REQUIRE(v.set("pg-lower-bound", "256").ok());
  CHECK(v.getInt("pg-lower-bound") == 256);
  REQUIRE(v.set("pg-upper-bound", "-5").ok()); // no bounds declared: negatives are fine
  CHECK(v.getInt("pg-upper-bound") == -5);

  CHECK(v.set("pg-lower-bound", "abc").message() ==
        "option 'pg-lower-bound' of pass 'partition': expected an integer, got 'abc'");
  CHECK(v.set("pg-lower-bound", "-3").message() ==
        "option 'pg-lower-bound' of pass 'partition': must be between 0 and 1000000, got -3");
  CHECK(v.set("pg-lower-bound", "1000001").message() ==
        "option 'pg-lower-bound' of pass 'partition': must be between 0 and 1000000, got 1000001");
  CHECK_FALSE(v.set("pg-lower-bound", "1.5").ok());
  CHECK_FALSE(v.set("pg-lower-bound", "").ok());
  CHECK_FALSE(v.set("pg-upper-bound", "99999999999999999999").ok());
  // A failed set leaves the previous value.
  CHECK(v.getInt("pg-lower-bound") == 256);
}

TEST_CASE("float options parse numbers and check bounds", "[pipeline]") {
  PassOptionValues v = partitionValues();
  REQUIRE(v.set("ratio", "0.25").ok());
  CHECK(v.getFloat("ratio") == 0.25);
  REQUIRE(v.set("ratio", "1").ok());
  CHECK(v.getFloat("ratio") == 1.0);
  CHECK(v.set("ratio", "half").message() ==
        "option 'ratio' of pass 'partition': expected a number, got 'half'");
  CHECK(v.set("ratio", "2").message() ==
        "option 'ratio' of pass 'partition': must be between 0 and 1, got 2");
}

TEST_CASE("string options are bare words or quoted", "[pipeline]") {
  PassOptionValues v = partitionValues();
  REQUIRE(v.set("label", "softmax_v2").ok());
  CHECK(v.getString("label") == "softmax_v2");
  REQUIRE(v.set("label", R"("two words, \"quoted\"")").ok());
  CHECK(v.getString("label") == R"(two words, "quoted")");
  CHECK(v.set("label", R"("open)").message() ==
        R"(option 'label' of pass 'partition': unterminated string "open; close it with '"')");

  CHECK(optionValueToString(std::string("plain-word_1.5")) == "plain-word_1.5");
  CHECK(optionValueToString(std::string("two words")) == R"("two words")");
  CHECK(optionValueToString(std::string("")) == R"("")");
  CHECK(optionValueToString(std::string(R"(a"b\c)")) == R"("a\"b\\c")");
  PassOptionDecl decl{"label", OptionKind::String, std::string(), ""};
  for (std::string s : {"x", "two words", "", R"(a"b\c)", "{braces}", "a,b"}) {
    absl::StatusOr<OptionValue> back = parseOptionValue(decl, optionValueToString(s));
    REQUIRE(back.ok());
    CHECK(std::get<std::string>(*back) == s);
  }
}

TEST_CASE("settings parse {key:value} entries", "[pipeline]") {
  PassOptionValues v = partitionValues();
  GroupSetting expected{{0, 4}, {-1, 2}};
  for (const char *text : {"{0:4,-1:2}", "{0: 4, -1: 2}", "{0:4 -1:2}", " { -1 : 2 , 0 : 4 } "}) {
    INFO(text);
    REQUIRE(v.set("vec-nbuffer-setting", text).ok());
    CHECK(v.getGroupSetting("vec-nbuffer-setting") == expected);
  }
  REQUIRE(v.set("vec-nbuffer-setting", "{}").ok());
  CHECK(v.getGroupSetting("vec-nbuffer-setting").empty());

  auto error = [&](const char *text) {
    return std::string(v.set("vec-nbuffer-setting", text).message());
  };
  CHECK(error("0:4") == "option 'vec-nbuffer-setting' of pass 'partition': expected a map in "
                       "braces like {0:4,func1_2:8,-1:2}, got '0:4'");
  CHECK(error("{0:4,0:5}") ==
        "option 'vec-nbuffer-setting' of pass 'partition': duplicate key 0 in map '{0:4,0:5}'");
  CHECK(error("{a:1}") ==
        "option 'vec-nbuffer-setting' of pass 'partition': expected 'key:count' entries in map "
        "'{a:1}', got 'a:1'; a key is a hash order (an integer; -1 = the default for groups "
        "without an entry) or func<F>_<order> (one root function's group, as the compile "
        "statistics and the summary print it), a count an integer");
  CHECK_FALSE(v.set("vec-nbuffer-setting", "{0:}").ok());
  CHECK_FALSE(v.set("vec-nbuffer-setting", "{0}").ok());
  CHECK_FALSE(v.set("vec-nbuffer-setting", "{0:4:5}").ok());
  CHECK_FALSE(v.set("vec-nbuffer-setting", "{0:4").ok());
  CHECK(error("{0:65}") == "option 'vec-nbuffer-setting' of pass 'partition': value for key 0 "
                          "must be between 1 and 64, got 65");
}

TEST_CASE("settings key groups by func<F>_<order> as well as by hash order", "[pipeline]") {
  PassOptionValues v = partitionValues();
  GroupSetting expected{{GroupKey::inFunc(1, 0), 4}, {0, 2}, {GroupKey::inFunc(12, 3), 8}};
  // Bare, double- or single-quoted keys (as Python and JSON write them), any spacing.
  for (const char *text : {"{func1_0:4,0:2,func12_3:8}", "{\"func1_0\": 4, 0: 2, 'func12_3': 8}",
                           " { func12_3 : 8 0:2 func1_0:4 } "}) {
    INFO(text);
    REQUIRE(v.set("vec-nbuffer-setting", text).ok());
    CHECK(v.getGroupSetting("vec-nbuffer-setting") == expected);
  }
  auto error = [&](const char *text) {
    return std::string(v.set("vec-nbuffer-setting", text).message());
  };
  // A per-function key names one group: no per-function default, no signs, both parts.
  for (const char *bad : {"{func1_-1:2}", "{func1:2}", "{func_0:2}", "{func1_0x:2}",
                          "{funcA_0:2}", "{fun1_0:2}", "{\"func1_0:2}"}) {
    INFO(bad);
    CHECK_THAT(error(bad), Catch::Contains("expected 'key:count' entries"));
    CHECK_THAT(error(bad), Catch::Contains("func<F>_<order>"));
  }
  CHECK(error("{func1_0:4,'func1_0':2}") ==
        "option 'vec-nbuffer-setting' of pass 'partition': duplicate key func1_0 in map "
        "'{func1_0:4,'func1_0':2}'");
  CHECK(error("{func1_0:0}") == "option 'vec-nbuffer-setting' of pass 'partition': value for "
                                "key func1_0 must be between 1 and 64, got 0");
}

TEST_CASE("group keys print and parse back, and the lookup prefers func<F>_<order>",
          "[pipeline]") {
  CHECK(groupKeyToString(GroupKey(3)) == "3");
  CHECK(groupKeyToString(GroupKey(-1)) == "-1");
  CHECK(groupKeyToString(GroupKey::inFunc(2, 0)) == "func2_0");
  for (GroupKey key : {GroupKey(0), GroupKey(-1), GroupKey(17), GroupKey::inFunc(0, 0),
                       GroupKey::inFunc(9, 41)})
    CHECK(parseGroupKey(groupKeyToString(key)) == key);
  CHECK(parseGroupKey("'func3_1'") == GroupKey::inFunc(3, 1));
  CHECK_FALSE(parseGroupKey("func3_").has_value());
  CHECK_FALSE(parseGroupKey("").has_value());
  CHECK_FALSE(GroupKey::inFunc(1, -1).valid());
  CHECK_FALSE(GroupKey(-2).valid());
  CHECK(GroupKey(-1).valid());

  GroupSetting s{{0, 4}, {GroupKey::inFunc(2, 0), 8}, {-1, 2}};
  // Function 2's group 0 has a key of its own; function 1's group 0 takes the plain key;
  // group 5 of either takes the default.
  CHECK(lookupGroupSetting(s, 2, 0)->second == 8);
  CHECK(lookupGroupSetting(s, 2, 0)->first == GroupKey::inFunc(2, 0));
  CHECK(lookupGroupSetting(s, 1, 0)->second == 4);
  CHECK(lookupGroupSetting(s, 1, 0)->first == GroupKey(0));
  CHECK(lookupGroupSetting(s, 2, 5)->second == 2);
  CHECK_FALSE(lookupGroupSetting(GroupSetting{{GroupKey::inFunc(2, 0), 8}}, 1, 0).has_value());
}

TEST_CASE("settings print with plain keys, then per-function keys, then -1, and parse back",
          "[pipeline]") {
  GroupSetting m{{0, 4}, {-1, 2}, {3, 8}};
  CHECK(optionValueToString(m) == "{0:4,3:8,-1:2}");
  m[GroupKey::inFunc(2, 1)] = 16;
  m[GroupKey::inFunc(1, 7)] = 1;
  CHECK(optionValueToString(m) == "{0:4,3:8,func1_7:1,func2_1:16,-1:2}");
  CHECK(optionValueToString(GroupSetting{}) == "{}");
  PassOptionDecl decl{"m", OptionKind::GroupSetting, GroupSetting{}, ""};
  absl::StatusOr<OptionValue> back = parseOptionValue(decl, optionValueToString(m));
  REQUIRE(back.ok());
  CHECK(std::get<GroupSetting>(*back) == m);
}

TEST_CASE("option names accept underscores for dashes", "[pipeline]") {
  PassOptionValues v = partitionValues();
  REQUIRE(v.set("pg_lower_bound", "12").ok());
  CHECK(v.getInt("pg-lower-bound") == 12);
  CHECK(v.getInt("pg_lower_bound") == 12);
  CHECK(v.isExplicit("pg-lower-bound"));
  CHECK(v.str() == "{pg-lower-bound=12}");
  // Errors name the declared (dashed) spelling.
  CHECK(v.set("pg_lower_bound", "x").message() ==
        "option 'pg-lower-bound' of pass 'partition': expected an integer, got 'x'");
}

TEST_CASE("unknown option names list the valid ones", "[pipeline]") {
  PassOptionValues v = partitionValues();
  CHECK(v.set("pg-lowr-bound", "1").message() ==
        "unknown option 'pg-lowr-bound' for pass 'partition'; valid options: pg-lower-bound, "
        "pg-upper-bound, pg-skip-partition, ratio, label, vec-nbuffer-setting");
  CHECK(v.set("pg-lowr-bound", OptionValue(int64_t(1))).code() == absl::StatusCode::kInvalidArgument);
  PassOptionValues none({}, "cse");
  CHECK(none.set("x", "1").message() == "unknown option 'x' for pass 'cse'; it takes no options");
}

TEST_CASE("typed option values are checked like text", "[pipeline]") {
  PassOptionValues v = partitionValues();
  REQUIRE(v.set("pg-lower-bound", OptionValue(int64_t(42))).ok());
  CHECK(v.getInt("pg-lower-bound") == 42);
  REQUIRE(v.set("ratio", OptionValue(int64_t(1))).ok()); // an int where a float is wanted
  CHECK(v.getFloat("ratio") == 1.0);
  REQUIRE(v.set("pg_skip_partition", OptionValue(true)).ok());
  CHECK(v.getBool("pg-skip-partition"));
  REQUIRE(v.set("vec-nbuffer-setting", OptionValue(GroupSetting{{-1, 2}})).ok());
  CHECK(v.getGroupSetting("vec-nbuffer-setting") == GroupSetting{{-1, 2}});

  CHECK(v.set("pg-lower-bound", OptionValue(std::string("x"))).message() ==
        "option 'pg-lower-bound' of pass 'partition': expected a value of kind int, got a string (x)");
  CHECK(v.set("pg-lower-bound", OptionValue(int64_t(-1))).message() ==
        "option 'pg-lower-bound' of pass 'partition': must be between 0 and 1000000, got -1");
  CHECK_FALSE(v.set("ratio", OptionValue(3.0)).ok());
  CHECK_FALSE(v.set("vec-nbuffer-setting", OptionValue(GroupSetting{{0, 0}})).ok());
}

TEST_CASE("parseOptionValue names the option", "[pipeline]") {
  PassOptionDecl decl{"pg-lower-bound", OptionKind::Int, int64_t(0), "", 0, 10};
  absl::StatusOr<OptionValue> ok = parseOptionValue(decl, "7");
  REQUIRE(ok.ok());
  CHECK(std::get<int64_t>(*ok) == 7);
  CHECK(parseOptionValue(decl, "11").status().message() ==
        "option 'pg-lower-bound': must be between 0 and 10, got 11");
  CHECK(optionKindName(OptionKind::GroupSetting) == "group-setting");
}

TEST_CASE("str() lists explicit options in declaration order and parses back", "[pipeline]") {
  PassOptionValues v = partitionValues();
  REQUIRE(v.set("vec_nbuffer_setting", "{-1:2, 0:4}").ok());
  REQUIRE(v.set("pg-skip-partition", "1").ok());
  REQUIRE(v.set("label", "\"a b\"").ok());
  REQUIRE(v.set("ratio", "0.1").ok());
  REQUIRE(v.set("pg-lower-bound", "256").ok());
  std::string text = v.str();
  CHECK(text == R"({pg-lower-bound=256 pg-skip-partition=true ratio=0.1 label="a b" )"
                R"(vec-nbuffer-setting={0:4,-1:2}})");

  PassRegistry r = makeRegistry();
  absl::StatusOr<std::vector<PipelineElement>> p = parsePipeline("partition" + text, r);
  REQUIRE(p.ok());
  REQUIRE(p->size() == 1);
  const PassOptionValues &back = (*p)[0].options;
  CHECK(back.getInt("pg-lower-bound") == 256);
  CHECK(back.getBool("pg-skip-partition"));
  CHECK(back.getFloat("ratio") == 0.1);
  CHECK(back.getString("label") == "a b");
  CHECK(back.getGroupSetting("vec-nbuffer-setting") == GroupSetting{{0, 4}, {-1, 2}});
  CHECK_FALSE(back.isExplicit("pg-upper-bound"));
  CHECK(back.str() == text);
}

// ------------------------------------------------------------------ pipelines

TEST_CASE("pipelines parse passes and their options", "[pipeline]") {
  PassRegistry r = makeRegistry();
  auto p = parsePipeline("canonicalize,cse,partition{pg-lower-bound=256 pg-skip-partition=true}", r);
  REQUIRE(p.ok());
  CHECK(argumentsOf(*p) == std::vector<std::string>{"canonicalize", "cse", "partition"});
  CHECK((*p)[0].info == r.lookup("canonicalize"));
  const PassOptionValues &o = (*p)[2].options;
  CHECK(o.getInt("pg-lower-bound") == 256);
  CHECK(o.getBool("pg-skip-partition"));
  CHECK(o.getInt("pg-upper-bound") == 0);
}

TEST_CASE("pipeline whitespace and separators are flexible", "[pipeline]") {
  PassRegistry r = makeRegistry();
  auto p = parsePipeline("  canonicalize ,\n cse  , partition {pg_lower_bound=3,pg-skip-partition=1 ,  ratio=0.5 }  ", r);
  REQUIRE(p.ok());
  CHECK(argumentsOf(*p) == std::vector<std::string>{"canonicalize", "cse", "partition"});
  CHECK((*p)[2].options.getInt("pg-lower-bound") == 3);
  CHECK((*p)[2].options.getBool("pg-skip-partition"));

  auto empty = parsePipeline("", r);
  REQUIRE(empty.ok());
  CHECK(empty->empty());
  auto blank = parsePipeline("   ", r);
  REQUIRE(blank.ok());
  CHECK(blank->empty());
  auto noOptions = parsePipeline("partition{}", r);
  REQUIRE(noOptions.ok());
  CHECK((*noOptions)[0].options.str().empty());
}

TEST_CASE("pipeline option values may be braced maps and quoted strings", "[pipeline]") {
  PassRegistry r = makeRegistry();
  auto p = parsePipeline(
      "partition{vec-nbuffer-setting={0: 4, -1: 2} label=\"x, y} z\" pg-lower-bound=9},cse", r);
  REQUIRE(p.ok());
  CHECK(argumentsOf(*p) == std::vector<std::string>{"partition", "cse"});
  const PassOptionValues &o = (*p)[0].options;
  CHECK(o.getGroupSetting("vec-nbuffer-setting") == GroupSetting{{0, 4}, {-1, 2}});
  CHECK(o.getString("label") == "x, y} z");
  CHECK(o.getInt("pg-lower-bound") == 9);
}

TEST_CASE("named pipelines expand in place", "[pipeline]") {
  PassRegistry r = makeRegistry();
  auto p = parsePipeline("dce,cleanup,partition", r);
  REQUIRE(p.ok());
  CHECK(argumentsOf(*p) ==
        std::vector<std::string>{"dce", "canonicalize", "cse", "dce", "partition"});

  // A named pipeline may use another, and carry options.
  auto d = parsePipeline("default", r);
  REQUIRE(d.ok());
  CHECK(argumentsOf(*d) == std::vector<std::string>{"canonicalize", "cse", "dce", "partition"});
  CHECK((*d)[3].options.getInt("pg-lower-bound") == 7);
}

TEST_CASE("pipeline errors name the text, the position and the fix", "[pipeline]") {
  CHECK(errorOf("canonicalise") == "unknown pass 'canonicalise' in pipeline at column 1; did you "
                                   "mean 'canonicalize'? (--list-passes shows all)");
  CHECK(errorOf("cse,zzzzzzzz") ==
        "unknown pass 'zzzzzzzz' in pipeline at column 5 (--list-passes shows all)");
  CHECK(errorOf("cse, partiton{pg-lower-bound=1}") ==
        "unknown pass 'partiton' in pipeline at column 6; did you mean 'partition'? "
        "(--list-passes shows all)");
  CHECK(errorOf("partition{pg-lower-bound=256") ==
        "expected '}' to close options of 'partition' (opened at column 10)");
  CHECK(errorOf("partition{pg-lower-bound=256 ") ==
        "expected '}' to close options of 'partition' (opened at column 10)");
  CHECK(errorOf("partition{vec-nbuffer-setting={0:4}") ==
        "expected '}' to close options of 'partition' (opened at column 10)");
  CHECK(errorOf("partition{vec-nbuffer-setting={0:4") ==
        "expected '}' to close the map value opened at column 31 in options of 'partition'");
  CHECK(errorOf("partition{label=\"abc}") ==
        "unterminated string opened at column 17 in options of 'partition'; close it with '\"'");
  CHECK(errorOf("canonicalize,,cse") == "empty pipeline element at column 14");
  CHECK(errorOf("cse,") == "empty pipeline element at column 5");
  CHECK(errorOf(",cse") == "empty pipeline element at column 1");
  CHECK(errorOf("cse cse") == "expected ',' between pipeline elements at column 5, got 'cse'");
  CHECK(errorOf("partition{}x") == "expected ',' between pipeline elements at column 12, got 'x'");
  CHECK(errorOf("cse}") == "expected ',' between pipeline elements at column 4, got '}'");
  CHECK(errorOf("{x=1}") == "expected a pass name at column 1, got '{'");
  CHECK(errorOf("partition{pg-lower-bound}") ==
        "expected 'name=value' in options of 'partition' at column 11, got 'pg-lower-bound'");
  CHECK(errorOf("partition{pg-lower-bound=1 pg_lower_bound=2}") ==
        "option 'pg_lower_bound' of pass 'partition' is given twice (at column 28)");
  CHECK(errorOf("partition{pg-lower-bound=abc}") ==
        "option 'pg-lower-bound' of pass 'partition': expected an integer, got 'abc'");
  CHECK(errorOf("partition{pg-lower-bound=-3}") ==
        "option 'pg-lower-bound' of pass 'partition': must be between 0 and 1000000, got -3");
  CHECK(errorOf("partition{pg-lowr-bound=1}") ==
        "unknown option 'pg-lowr-bound' for pass 'partition'; valid options: pg-lower-bound, "
        "pg-upper-bound, pg-skip-partition, ratio, label, vec-nbuffer-setting");
  CHECK(errorOf("cse{x=1}") == "unknown option 'x' for pass 'cse'; it takes no options");
  CHECK(errorOf("cleanup{x=1}") ==
        "named pipeline 'cleanup' at column 1 takes no options; spell out its passes "
        "(canonicalize,cse,dce) to give them options");
  CHECK(errorOf("dce,broken") ==
        "in named pipeline 'broken' (used at column 5): unknown pass 'nope' in pipeline at column "
        "5 (--list-passes shows all)");
  CHECK(errorOf("loop-a") ==
        "in named pipeline 'loop-a' (used at column 1): in named pipeline 'loop-b' (used at "
        "column 5): named pipeline 'loop-a' expands to itself (loop-a -> loop-b -> loop-a); this "
        "is a bug in its registration");
}

TEST_CASE("pipelineToString round-trips", "[pipeline]") {
  PassRegistry r = makeRegistry();
  auto p = parsePipeline("canonicalize , partition{pg_skip_partition=1 vec-nbuffer-setting={-1:2, "
                         "0:4} pg-lower-bound=256 label=\"a b\" ratio=0.3}, cleanup",
                         r);
  REQUIRE(p.ok());
  std::string text = pipelineToString(*p);
  CHECK(text == "canonicalize,partition{pg-lower-bound=256 pg-skip-partition=true ratio=0.3 "
                "label=\"a b\" vec-nbuffer-setting={0:4,-1:2}},canonicalize,cse,dce");
  auto again = parsePipeline(text, r);
  REQUIRE(again.ok());
  CHECK(pipelineToString(*again) == text);
  CHECK((*again)[1].options.getFloat("ratio") == 0.3);
  CHECK((*p)[1].str() == "partition{pg-lower-bound=256 pg-skip-partition=true ratio=0.3 "
                         "label=\"a b\" vec-nbuffer-setting={0:4,-1:2}}");
  CHECK(pipelineToString({}).empty());
}

// ------------------------------------------------------------------ registry

TEST_CASE("the registry looks up passes and pipelines", "[pipeline]") {
  PassRegistry r = makeRegistry();
  REQUIRE(r.lookup("cse") != nullptr);
  CHECK(r.lookup("cse")->summary == "Eliminate common subexpressions");
  CHECK(r.lookup("cleanup") == nullptr);
  REQUIRE(r.lookupPipeline("cleanup") != nullptr);
  CHECK(r.lookupPipeline("cse") == nullptr);
  CHECK(r.passes().size() == 4);
  CHECK(r.pipelines().size() == 5);
  std::unique_ptr<Pass> pass = r.lookup("dce")->factory(PassOptionValues());
  CHECK(pass->argument() == "dce");
}

TEST_CASE("printHelp lists passes, their options and pipelines", "[pipeline]") {
  PassRegistry r;
  addSimplePass(r, "cse", "Eliminate common subexpressions");
  addSimplePass(r, "partition", "Partition into subgraphs",
                {{"pg-lower-bound", OptionKind::Int, int64_t(0), "Merge small subgraphs", 0, 100},
                 {"pg-skip-partition", OptionKind::Bool, false, "Skip partitioning"},
                 {"label", OptionKind::String, std::string(), "A name"},
                 {"setting", OptionKind::GroupSetting, GroupSetting{{-1, 2}}, "Per-group N"}});
  r.addPipeline({"cleanup", "Clean-up passes", "cse"});
  std::string help;
  llvm::raw_string_ostream os(help);
  r.printHelp(os);
  os.flush();
  CHECK(help == "Passes:\n"
                "  cse  Eliminate common subexpressions\n"
                "  partition  Partition into subgraphs\n"
                "    pg-lower-bound=int  Merge small subgraphs (default 0)\n"
                "    pg-skip-partition=bool  Skip partitioning (default false)\n"
                "    label=string  A name (default \"\")\n"
                "    setting=group-setting  Per-group N (default {-1:2})\n"
                "Pipelines:\n"
                "  cleanup  Clean-up passes\n"
                "    = cse\n");
}
