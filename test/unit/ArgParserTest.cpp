// The `ptoc` commands' argument parser (tools/ArgParser.h): values into the fields a
// table names, defaults shown from those fields, and usage errors that name the flag
// and what it accepts.
#include <catch2/catch.hpp>

#include "ptoc/tools/ArgParser.h"

using namespace ptoc::tools;

namespace {

enum class Shape { Round, Square };

/// The fields of a made-up command, with their defaults.
struct Fields {
  std::string file;
  int mode = 1;
  unsigned threads = 0;
  uint64_t budget = 64;
  double factor = 4;
  std::string device = "a2";
  std::string out;
  std::vector<std::string> tags;
  bool check = false;
  bool numerics = true;
  bool bank = false;
  std::string bankDir;
  Shape shape = Shape::Square;
};

CommandSpec spec(Fields &f) {
  return CommandSpec{
      "tool cmd",
      "Does things.",
      ArgPositional{"FILE", &f.file, "input file", 1, 1, "no input file"},
      {
          {"mode", &f.mode, "N", "the mode", Bounds::between(0, 3)},
          {"threads", &f.threads, "N", "host threads", Bounds::atMost(16)},
          {"budget", &f.budget, "N", "evaluations", Bounds::atLeast(1)},
          {"factor", &f.factor, "F", "a factor", Bounds::above(1, 1000)},
          {"device", &f.device, "NAME", "the device"},
          {"output", &f.out, "OUT", "where it goes", {}, "", 'o', true},
          {"tag", &f.tags, "T", "a tag"},
          {"check", &f.check, "", "check it"},
          {"no-numerics", Negated{&f.numerics}, "", "timing only"},
          {"bank", OptionalValue{&f.bank, &f.bankDir}, "DIR", "use the bank"},
          {"shape", choiceOf(&f.shape, {{"round", Shape::Round}, {"square", Shape::Square}}),
           "round|square", "the shape"},
      }};
}

/// Parses `args` into fresh fields; returns the error text ("" when it parsed).
std::string parseError(std::vector<std::string> args, Fields &f) {
  ArgParser parser(spec(f));
  std::string out, err;
  llvm::raw_string_ostream os(out), es(err);
  std::optional<int> status = parser.parse(args, os, es);
  if (!status) return "";
  CHECK(*status == kExitUsage);
  return es.str();
}

} // namespace

TEST_CASE("ArgParser sets the fields the table names", "[args]") {
  Fields f;
  ArgParser parser(spec(f));
  std::string out, err;
  llvm::raw_string_ostream os(out), es(err);
  REQUIRE_FALSE(parser.parse({"in.pto", "--mode", "2", "--threads=3", "-o", "x.json",
                              "--tag", "a", "--tag=b", "--check", "--no-numerics", "--bank",
                              "--shape", "round", "--factor", "1.5", "--budget", "7"},
                             os, es));
  CHECK(es.str().empty());
  CHECK(f.file == "in.pto");
  CHECK(f.mode == 2);
  CHECK(f.threads == 3);
  CHECK(f.out == "x.json");
  CHECK(f.tags == std::vector<std::string>{"a", "b"});
  CHECK(f.check);
  CHECK_FALSE(f.numerics);
  CHECK(f.bank);
  CHECK(f.bankDir.empty());
  CHECK(f.shape == Shape::Round);
  CHECK(f.factor == 1.5);
  CHECK(f.budget == 7);
  CHECK(f.device == "a2"); // untouched
  CHECK(parser.given("mode"));
  CHECK(parser.given("output")); // given by its short name
  CHECK_FALSE(parser.given("device"));

  Fields g;
  ArgParser withDir(spec(g));
  REQUIRE_FALSE(withDir.parse({"--bank=/tmp/b", "-o", "-", "--", "--odd-name"}, os, es));
  CHECK(g.bank);
  CHECK(g.bankDir == "/tmp/b");
  CHECK(g.out == "-");
  CHECK(g.file == "--odd-name"); // after "--" everything is positional
}

TEST_CASE("ArgParser help comes from the table and the fields' defaults", "[args]") {
  Fields f;
  f.mode = 2; // a default the struct declares shows as such
  ArgParser parser(spec(f));
  std::string out, err;
  llvm::raw_string_ostream os(out), es(err);
  REQUIRE(parser.parse({"x", "--help"}, os, es) == kExitOk);
  std::string help = os.str();
  CHECK(help.rfind("usage: tool cmd FILE -o OUT [options]\n\nDoes things.\n", 0) == 0);
  CHECK(help.find("--mode N") != std::string::npos);
  CHECK(help.find("the mode [2]") != std::string::npos);
  CHECK(help.find("evaluations [64]") != std::string::npos);
  CHECK(help.find("a factor [4]") != std::string::npos);
  CHECK(help.find("the device [a2]") != std::string::npos);
  CHECK(help.find("the shape [square]") != std::string::npos);
  CHECK(help.find("-o, --output OUT") != std::string::npos);
  CHECK(help.find("where it goes (required)") != std::string::npos);
  CHECK(help.find("a tag (repeatable)") != std::string::npos);
  CHECK(help.find("--bank[=DIR]") != std::string::npos);
  CHECK(help.find("check it [") == std::string::npos); // a flag shows no default
  // Help was asked for: nothing was parsed.
  CHECK(f.file.empty());
}

TEST_CASE("ArgParser usage errors name the flag and the fix", "[args]") {
  auto error = [](std::vector<std::string> args) {
    Fields f;
    return parseError(std::move(args), f);
  };
  std::string see = "; see 'tool cmd --help'\n";
  CHECK(error({"x", "-o", "o", "--mdoe", "1"}) ==
        "tool cmd: unknown option '--mdoe' (did you mean '--mode'?)" + see);
  CHECK(error({"x", "-o", "o", "--frobnicate"}) == "tool cmd: unknown option '--frobnicate'" + see);
  CHECK(error({"x", "-o", "o", "--mode"}) == "tool cmd: --mode needs a value (N)" + see);
  CHECK(error({"x", "-o", "o", "--mode", "9"}) ==
        "tool cmd: --mode must be an integer in [0, 3], got '9'" + see);
  CHECK(error({"x", "-o", "o", "--mode=two"}) ==
        "tool cmd: --mode must be an integer in [0, 3], got 'two'" + see);
  CHECK(error({"x", "-o", "o", "--threads", "-1"}) ==
        "tool cmd: --threads must be an integer in [0, 16], got '-1'" + see);
  CHECK(error({"x", "-o", "o", "--budget", "0"}) ==
        "tool cmd: --budget must be an integer in [1, 18446744073709551615], got '0'" + see);
  CHECK(error({"x", "-o", "o", "--factor", "1"}) ==
        "tool cmd: --factor must be a number above 1 (at most 1000), got '1'" + see);
  CHECK(error({"x", "-o", "o", "--check=yes"}) == "tool cmd: --check takes no value" + see);
  CHECK(error({"x", "-o", "o", "--bank="}) ==
        "tool cmd: --bank= needs a DIR (or no '=' for the default)" + see);
  CHECK(error({"x", "-o", "o", "--shape", "oval"}) ==
        "tool cmd: --shape must be one of round, square, got 'oval'" + see);
  CHECK(error({"x"}) == "tool cmd: -o OUT is required" + see);
  CHECK(error({"-o", "o"}) == "tool cmd: no input file" + see);
  CHECK(error({"x", "y", "-o", "o"}) == "tool cmd: more than one input file ('x' and 'y')" + see);
}

TEST_CASE("ArgParser checks integers against the field's range and the bounds", "[args]") {
  int64_t scope = -1;
  auto parse = [&](const std::string &text, Bounds bounds) {
    ArgParser parser(CommandSpec{"cmd", "", std::nullopt, {{"scope", &scope, "N", "", bounds}}});
    std::string out, err;
    llvm::raw_string_ostream os(out), es(err);
    std::optional<int> status = parser.parse({"--scope", text}, os, es);
    return status ? es.str() : std::string();
  };
  CHECK(parse("-1", Bounds::between(-1, 5)).empty());
  CHECK(scope == -1);
  CHECK(parse("-2", Bounds::between(-1, 5)) ==
        "cmd: --scope must be an integer in [-1, 5], got '-2'; see 'cmd --help'\n");
  CHECK(parse("-7", Bounds::atMost(-3)).empty());
  CHECK(scope == -7);
  CHECK(parse("-2", Bounds::atMost(-3)) ==
        "cmd: --scope must be an integer in [-9223372036854775808, -3], got '-2'; see 'cmd "
        "--help'\n");
  CHECK(parse("9223372036854775808", {}) ==
        "cmd: --scope must be an integer in [-9223372036854775808, 9223372036854775807], got "
        "'9223372036854775808'; see 'cmd --help'\n");
  CHECK(parse("4x", {}).find("got '4x'") != std::string::npos);
}

TEST_CASE("ArgParser counts positionals", "[args]") {
  std::vector<std::string> files;
  auto parse = [&](std::vector<std::string> args) {
    files.clear();
    ArgParser parser(CommandSpec{"cmp", "", ArgPositional{"A B", &files, "reports", 2, 2}});
    std::string out, err;
    llvm::raw_string_ostream os(out), es(err);
    std::optional<int> status = parser.parse(args, os, es);
    return status ? es.str() : std::string();
  };
  CHECK(parse({"a"}) == "cmp: expected two reports (A B), got 1; see 'cmp --help'\n");
  CHECK(parse({"a", "b", "c"}) == "cmp: expected two reports (A B), got 3; see 'cmp --help'\n");
  CHECK(parse({"a", "b"}).empty());
  CHECK(files == std::vector<std::string>{"a", "b"});

  ArgParser none(CommandSpec{"show"});
  std::string out, err;
  llvm::raw_string_ostream os(out), es(err);
  CHECK(none.parse({"extra"}, os, es) == kExitUsage);
  CHECK(es.str() == "show: unexpected argument 'extra'; see 'show --help'\n");
  CHECK(none.usageLine() == "usage: show");
}
