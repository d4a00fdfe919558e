// Unit tests for the pass manager: ordering, disabling, IR printing, change-claim
// checks, verification after each pass, failure dumps, timing and statistics
// tables, dump files, and per-pass debug streams.
#include <catch2/catch.hpp>

#include <regex>

#include <unistd.h>

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "ptoc/ir/Context.h"
#include "ptoc/ir/Diagnostics.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/ir/Printer.h"
#include "ptoc/passes/PassManager.h"
#include "ptoc/passes/PassRegistry.h"
#include "ptoc/target/DeviceSpec.h"

using namespace ptoc;
using namespace ptoc::passes;

namespace {

constexpr const char *kModuleText = R"(func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = exp %x : tensor<4x8xf32>
  return %0
}
)";

/// Does nothing and says so.
class NoopPass : public Pass {
public:
  explicit NoopPass(std::string argument = "noop") : argument_(std::move(argument)) {}
  llvm::StringRef argument() const override { return argument_; }
  PassResult run(ir::Module &, PassContext &) override { return PassResult::unchanged(); }

private:
  std::string argument_;
};

/// Sets `sg_scope = <scope>` on every compute op; reports a change only when it made
/// one (so a second run reports none).
class TagPass : public Pass {
public:
  explicit TagPass(std::string argument = "tag", int64_t scope = 7, bool honest = true)
      : argument_(std::move(argument)), scope_(scope), honest_(honest) {}
  llvm::StringRef argument() const override { return argument_; }
  PassResult run(ir::Module &m, PassContext &) override {
    bool changed = false;
    ir::Attribute value = m.context().intAttr(scope_);
    for (ir::Func &f : m.funcs())
      for (ir::Operation &op : f.ops()) {
        if (op.code() == ir::OpCode::Return || op.attr("sg_scope") == value) continue;
        op.setAttr("sg_scope", value);
        changed = true;
      }
    // A dishonest tagger claims it changed nothing: the bug change-claim checks catch.
    return PassResult::changed(changed && honest_);
  }

private:
  std::string argument_;
  int64_t scope_;
  bool honest_;
};

/// Puts an attribute no op accepts on every compute op: the verifier must object.
class BreakPass : public Pass {
public:
  llvm::StringRef argument() const override { return "break"; }
  PassResult run(ir::Module &m, PassContext &) override {
    for (ir::Func &f : m.funcs())
      for (ir::Operation &op : f.ops())
        if (op.code() != ir::OpCode::Return) op.setAttr("bogus_attr", m.context().intAttr(1));
    return PassResult::changed();
  }
};

/// Fails with a diagnostic on the first op.
class FailPass : public Pass {
public:
  llvm::StringRef argument() const override { return "fail"; }
  PassResult run(ir::Module &m, PassContext &) override {
    m.context().emitError(m.func(0).ops().front().loc()) << "the test pass failed on purpose";
    return PassResult::failure();
  }
};

/// Counts ops and functions into statistics.
class CountPass : public Pass {
public:
  llvm::StringRef argument() const override { return "count"; }
  PassResult run(ir::Module &m, PassContext &) override {
    ops_ += m.numOps();
    ++funcs_;
    return PassResult::unchanged();
  }

private:
  PassStatistic ops_{this, "ops", "Number of operations seen"};
  PassStatistic funcs_{this, "funcs", "Number of functions seen"};
};

/// Writes to its debug stream when debugging is enabled for it.
class ChattyPass : public Pass {
public:
  llvm::StringRef argument() const override { return "chatty"; }
  PassResult run(ir::Module &, PassContext &ctx) override {
    if (llvm::raw_ostream *os = ctx.debugStream(argument())) *os << "chatty: deciding things\n";
    return PassResult::unchanged();
  }
};

/// One compilation's worth of state: context, device, module, captured output and
/// diagnostics.
struct Harness {
  ir::Context ctx;
  target::DeviceSpec device;
  std::unique_ptr<ir::Module> module;
  std::string out;
  llvm::raw_string_ostream os{out};
  std::unique_ptr<ir::DiagnosticCollector> diags;

  Harness() {
    module = ir::parseModule(kModuleText, "test.pto", ctx);
    REQUIRE(module);
    diags = std::make_unique<ir::DiagnosticCollector>(ctx.diag());
  }
  PassManagerOptions options() {
    PassManagerOptions o;
    o.dumpStream = &os;
    return o;
  }
  std::string text() const { return ir::toString(*module); }
  const std::string &output() {
    os.flush();
    return out;
  }
  std::string errors() const { return diags->errorText(); }
};

bool contains(const std::string &haystack, const std::string &needle) {
  return haystack.find(needle) != std::string::npos;
}
size_t count(const std::string &haystack, const std::string &needle) {
  size_t n = 0;
  for (size_t pos = haystack.find(needle); pos != std::string::npos; pos = haystack.find(needle, pos + 1)) ++n;
  return n;
}

std::string readFile(const llvm::Twine &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) return "<cannot read " + path.str() + ">";
  return (*buffer)->getBuffer().str();
}

} // namespace

TEST_CASE("passes run in order and record timings", "[passmanager]") {
  Harness h;
  PassManager pm(h.device, h.options());
  pm.addPass(std::make_unique<NoopPass>());
  pm.addPass(std::make_unique<TagPass>());
  pm.addPass(std::make_unique<TagPass>("tag-again"));
  CHECK(pm.size() == 3);
  REQUIRE(succeeded(pm.run(*h.module)));
  CHECK(contains(h.text(), "sg_scope"));
  REQUIRE(pm.timings().size() == 3);
  CHECK(pm.timings()[0].pass == "noop");
  CHECK_FALSE(pm.timings()[0].changed);
  CHECK(pm.timings()[1].pass == "tag");
  CHECK(pm.timings()[1].changed);
  CHECK_FALSE(pm.timings()[2].changed); // already tagged
  for (const PassTiming &t : pm.timings()) {
    CHECK_FALSE(t.skipped);
    CHECK(t.seconds >= 0);
  }
  CHECK(h.output().empty()); // no instrumentation asked for, nothing printed
  CHECK(h.errors().empty());
}

TEST_CASE("disabled passes are skipped", "[passmanager]") {
  Harness h;
  PassManagerOptions o = h.options();
  o.disabledPasses = {"tag"};
  PassManager pm(h.device, o);
  pm.addPass(std::make_unique<TagPass>());
  pm.addPass(std::make_unique<NoopPass>());
  std::string before = h.text();
  REQUIRE(succeeded(pm.run(*h.module)));
  CHECK(h.text() == before);
  REQUIRE(pm.timings().size() == 2);
  CHECK(pm.timings()[0].skipped);
  CHECK_FALSE(pm.timings()[1].skipped);
  CHECK(h.output().empty()); // skipping is only announced when IR printing is on

  SECTION("announced when printing") {
    Harness h2;
    PassManagerOptions o2 = h2.options();
    o2.disabledPasses = {"tag"};
    o2.printIRAfterAll = true;
    PassManager pm2(h2.device, o2);
    pm2.addPass(std::make_unique<TagPass>());
    pm2.addPass(std::make_unique<NoopPass>());
    REQUIRE(succeeded(pm2.run(*h2.module)));
    const std::string &out = h2.output();
    CHECK(contains(out, "// -----// IR Dump: pass 'tag' skipped (--disable-passes) //----- //\n"));
    CHECK_FALSE(contains(out, "IR Dump After tag"));
    CHECK(contains(out, "// -----// IR Dump After noop //----- //\n"));
  }
}

TEST_CASE("print-ir-before prints the IR the pass receives", "[passmanager]") {
  Harness h;
  std::string original = h.text();
  PassManagerOptions o = h.options();
  o.printIRBefore = {"tag"};
  PassManager pm(h.device, o);
  pm.addPass(std::make_unique<NoopPass>());
  pm.addPass(std::make_unique<TagPass>());
  REQUIRE(succeeded(pm.run(*h.module)));
  CHECK(h.output() == "// -----// IR Dump Before tag //----- //\n" + original);

  SECTION("before all") {
    Harness h2;
    PassManagerOptions o2 = h2.options();
    o2.printIRBeforeAll = true;
    PassManager pm2(h2.device, o2);
    pm2.addPass(std::make_unique<NoopPass>());
    pm2.addPass(std::make_unique<TagPass>());
    REQUIRE(succeeded(pm2.run(*h2.module)));
    CHECK(h2.output() == "// -----// IR Dump Before noop //----- //\n" + original +
                             "// -----// IR Dump Before tag //----- //\n" + original);
  }
}

TEST_CASE("print-ir-after and after-all print the IR each pass leaves", "[passmanager]") {
  Harness h;
  std::string original = h.text();
  PassManagerOptions o = h.options();
  o.printIRAfterAll = true;
  PassManager pm(h.device, o);
  pm.addPass(std::make_unique<NoopPass>());
  pm.addPass(std::make_unique<TagPass>());
  REQUIRE(succeeded(pm.run(*h.module)));
  std::string tagged = h.text();
  CHECK(tagged != original);
  CHECK(h.output() == "// -----// IR Dump After noop //----- //\n" + original +
                          "// -----// IR Dump After tag //----- //\n" + tagged);

  SECTION("only the listed passes") {
    Harness h2;
    PassManagerOptions o2 = h2.options();
    o2.printIRAfter = {"tag"};
    PassManager pm2(h2.device, o2);
    pm2.addPass(std::make_unique<NoopPass>());
    pm2.addPass(std::make_unique<TagPass>());
    REQUIRE(succeeded(pm2.run(*h2.module)));
    CHECK(h2.output() == "// -----// IR Dump After tag //----- //\n" + tagged);
  }
}

TEST_CASE("print-ir-after-change prints only after passes that changed the IR", "[passmanager]") {
  Harness h;
  PassManagerOptions o = h.options();
  o.printIRAfterChange = true;
  PassManager pm(h.device, o);
  pm.addPass(std::make_unique<NoopPass>());
  pm.addPass(std::make_unique<TagPass>());
  pm.addPass(std::make_unique<TagPass>("tag-again")); // a no-op the second time
  pm.addPass(std::make_unique<TagPass>("retag", 8));
  REQUIRE(succeeded(pm.run(*h.module)));
  const std::string &out = h.output();
  CHECK_FALSE(contains(out, "After noop"));
  CHECK(contains(out, "// -----// IR Dump After tag //----- //\n"));
  CHECK_FALSE(contains(out, "After tag-again"));
  CHECK(contains(out, "// -----// IR Dump After retag //----- //\n"));
  CHECK(count(out, "IR Dump") == 2);
}

TEST_CASE("print-ir-after-change notices changes a pass did not claim", "[passmanager]") {
  Harness h;
  PassManagerOptions o = h.options();
  o.printIRAfterChange = true;
  PassManager pm(h.device, o);
  pm.addPass(std::make_unique<TagPass>("liar", 9, /*honest=*/false));
  REQUIRE(succeeded(pm.run(*h.module))); // claims are not checked
  CHECK(contains(h.output(), "// -----// IR Dump After liar //----- //\n"));
}

TEST_CASE("check-change-claims catches a pass that lies about changing the IR", "[passmanager]") {
  Harness h;
  PassManagerOptions o = h.options();
  o.checkChangeClaims = true;
  PassManager pm(h.device, o);
  pm.addPass(std::make_unique<NoopPass>()); // honest "unchanged": fine
  pm.addPass(std::make_unique<TagPass>());  // honest "changed": fine
  pm.addPass(std::make_unique<TagPass>("liar", 9, /*honest=*/false));
  pm.addPass(std::make_unique<NoopPass>("after-liar"));
  CHECK(failed(pm.run(*h.module)));
  CHECK(contains(h.errors(), "error: pass 'liar' changed the IR but reported no change; this is a "
                             "bug in the pass"));
  CHECK(pm.timings().size() == 3); // stopped at the liar
  CHECK(h.diags->diagnostics().size() == 1);
  // The lie is a bug in ptoc, never the user's mistake: the status says so.
  absl::Status status = h.diags->toStatus();
  CHECK(ir::categoryOf(status) == ir::DiagCategory::Internal);
  CHECK(status.code() == absl::StatusCode::kInternal);

  SECTION("unchecked, the lie goes unnoticed") {
    Harness h2;
    PassManager pm2(h2.device, h2.options());
    pm2.addPass(std::make_unique<TagPass>("liar", 9, /*honest=*/false));
    CHECK(succeeded(pm2.run(*h2.module)));
    CHECK(h2.errors().empty());
  }
}

TEST_CASE("verify-each names the pass that broke the IR", "[passmanager]") {
  Harness h;
  PassManager pm(h.device, h.options()); // verifyEach is on by default
  pm.addPass(std::make_unique<TagPass>());
  pm.addPass(std::make_unique<BreakPass>());
  pm.addPass(std::make_unique<NoopPass>());
  CHECK(failed(pm.run(*h.module)));
  CHECK(pm.timings().size() == 2);
  const std::vector<ir::Diagnostic> &diags = h.diags->diagnostics();
  REQUIRE_FALSE(diags.empty());
  for (const ir::Diagnostic &d : diags) CHECK(llvm::StringRef(d.message).startswith("after pass 'break': "));
  CHECK(contains(h.errors(), "bogus_attr"));
  CHECK(diags[0].loc.isKnown()); // re-emitted at the op's location
  CHECK(diags[0].loc.line == 2);
  CHECK(h.output().empty());
  // Invalid IR after a pass is the pass's bug, whatever the verifier's own category.
  absl::Status status = h.diags->toStatus();
  CHECK(ir::categoryOf(status) == ir::DiagCategory::Internal);
  CHECK(status.code() == absl::StatusCode::kInternal);

  SECTION("without verify-each the broken IR passes through") {
    Harness h2;
    PassManagerOptions o = h2.options();
    o.verifyEach = false;
    PassManager pm2(h2.device, o);
    pm2.addPass(std::make_unique<BreakPass>());
    CHECK(succeeded(pm2.run(*h2.module)));
    CHECK(h2.errors().empty());
  }
  SECTION("print-ir-after-failure shows the broken IR") {
    Harness h2;
    PassManagerOptions o = h2.options();
    o.printIRAfterFailure = true;
    PassManager pm2(h2.device, o);
    pm2.addPass(std::make_unique<BreakPass>());
    CHECK(failed(pm2.run(*h2.module)));
    CHECK(h2.output() == "// -----// IR Dump After break Failed //----- //\n" + h2.text());
    CHECK(contains(h2.output(), "bogus_attr"));
  }
}

TEST_CASE("a failing pass stops the pipeline", "[passmanager]") {
  Harness h;
  PassManagerOptions o = h.options();
  PassManager pm(h.device, o);
  pm.addPass(std::make_unique<NoopPass>());
  pm.addPass(std::make_unique<FailPass>());
  pm.addPass(std::make_unique<TagPass>());
  std::string before = h.text();
  CHECK(failed(pm.run(*h.module)));
  CHECK(h.text() == before); // tag never ran
  CHECK(pm.timings().size() == 2);
  CHECK(llvm::StringRef(h.errors()).startswith("test.pto:2:"));
  CHECK(llvm::StringRef(h.errors()).endswith(": error: the test pass failed on purpose"));
  CHECK(h.output().empty());

  SECTION("print-ir-after-failure") {
    Harness h2;
    PassManagerOptions o2 = h2.options();
    o2.printIRAfterFailure = true;
    PassManager pm2(h2.device, o2);
    pm2.addPass(std::make_unique<FailPass>());
    CHECK(failed(pm2.run(*h2.module)));
    CHECK(h2.output() == "// -----// IR Dump After fail Failed //----- //\n" + before);
  }
}

TEST_CASE("the statistics table lists each pass's counters", "[passmanager]") {
  Harness h;
  PassManager pm(h.device, h.options());
  pm.addPass(std::make_unique<NoopPass>());
  auto countPass = std::make_unique<CountPass>();
  REQUIRE(countPass->statistics().size() == 2);
  CHECK(llvm::StringRef(countPass->statistics()[0]->name()) == "ops");
  pm.addPass(std::move(countPass));
  REQUIRE(succeeded(pm.run(*h.module)));
  std::string table;
  llvm::raw_string_ostream os(table);
  pm.printStatistics(os);
  os.flush();
  CHECK(table ==
        "===-------------------------------------------------------------------------===\n"
        "                         ... Pass statistics report ...\n"
        "===-------------------------------------------------------------------------===\n"
        "count\n"
        "  (S) 2 ops - Number of operations seen\n"
        "  (S) 1 funcs - Number of functions seen\n");
}

TEST_CASE("the timing table has one row per pass and a total", "[passmanager]") {
  Harness h;
  PassManagerOptions o = h.options();
  o.timing = true;
  o.disabledPasses = {"noop"};
  PassManager pm(h.device, o);
  pm.addPass(std::make_unique<TagPass>());
  pm.addPass(std::make_unique<NoopPass>());
  pm.addPass(std::make_unique<CountPass>());
  REQUIRE(succeeded(pm.run(*h.module)));
  std::string table;
  llvm::raw_string_ostream os(table);
  pm.printTiming(os);
  os.flush();
  // Replace the numbers, which vary, by placeholders.
  std::string shape = std::regex_replace(table, std::regex(R"(\d+\.\d{4})"), "T");
  shape = std::regex_replace(shape, std::regex(R"(\(\s*\d+\.\d%\))"), "(P)");
  CHECK(shape == "===-------------------------------------------------------------------------===\n"
                 "                         ... Execution time report ...\n"
                 "===-------------------------------------------------------------------------===\n"
                 "  Total Execution Time: T seconds\n"
                 "\n"
                 "  ----Wall Time----  ----Name----\n"
                 "  T (P)  tag\n"
                 "  T (P)  noop (skipped)\n"
                 "  T (P)  count\n"
                 "  T (P)  Total\n");
  CHECK(contains(table, "  0.0000 (  0.0%)  noop (skipped)\n"));
}

TEST_CASE("a dump directory receives one file per pass", "[passmanager]") {
  llvm::SmallString<128> dir;
  REQUIRE_FALSE(llvm::sys::fs::createUniqueDirectory("ptoc-passmanager-test", dir));
  llvm::SmallString<128> dumpPath(dir);
  llvm::sys::path::append(dumpPath, "nested", "dumps"); // created on demand
  std::string dumps(dumpPath);

  Harness h;
  std::string original = h.text();
  PassManagerOptions o = h.options();
  o.dumpDirectory = dumps;
  o.disabledPasses = {"count"};
  PassManager pm(h.device, o);
  pm.addPass(std::make_unique<NoopPass>());
  pm.addPass(std::make_unique<CountPass>());
  pm.addPass(std::make_unique<TagPass>());
  REQUIRE(succeeded(pm.run(*h.module)));
  CHECK(readFile(dumps + "/01_noop.pto") == "// -----// IR Dump After noop //----- //\n" + original);
  CHECK_FALSE(llvm::sys::fs::exists(dumps + "/02_count.pto")); // skipped: numbering keeps its slot
  CHECK(readFile(dumps + "/03_tag.pto") == "// -----// IR Dump After tag //----- //\n" + h.text());
  CHECK(h.output().empty()); // files only; the stream was not asked for
  CHECK(h.errors().empty());

  SECTION("a failing pass leaves a dump marked as failed") {
    Harness h2;
    PassManagerOptions o2 = h2.options();
    o2.dumpDirectory = dumps;
    PassManager pm2(h2.device, o2);
    pm2.addPass(std::make_unique<NoopPass>());
    pm2.addPass(std::make_unique<FailPass>());
    CHECK(failed(pm2.run(*h2.module)));
    CHECK(readFile(dumps + "/02_fail.pto") ==
          "// -----// IR Dump After fail Failed //----- //\n" + original);
  }
  SECTION("the dumped IR parses back") {
    ir::Context ctx2;
    auto reparsed = ir::parseModule(readFile(dumps + "/03_tag.pto"), "03_tag.pto", ctx2);
    REQUIRE(reparsed);
    CHECK(ir::toString(*reparsed) == h.text());
  }
  llvm::sys::fs::remove_directories(dir);
}

TEST_CASE("an unwritable dump directory is an error, not a crash", "[passmanager]") {
  int fd;
  llvm::SmallString<128> file;
  REQUIRE_FALSE(llvm::sys::fs::createTemporaryFile("ptoc-passmanager-test", "txt", fd, file));
  ::close(fd);
  Harness h;
  PassManagerOptions o = h.options();
  o.dumpDirectory = std::string(file) + "/sub"; // a directory inside a regular file
  PassManager pm(h.device, o);
  pm.addPass(std::make_unique<NoopPass>());
  CHECK(failed(pm.run(*h.module)));
  CHECK(contains(h.errors(), "error: cannot create the IR dump directory '" + o.dumpDirectory + "'"));
  llvm::sys::fs::remove(file);
}

TEST_CASE("debug streams are enabled per pass", "[passmanager]") {
  target::DeviceSpec device;
  std::string log;
  llvm::raw_string_ostream os(log);
  PassContext ctx{device, &os, {"chatty"}};
  CHECK(ctx.debugStream("chatty") == &os);
  CHECK(ctx.debugStream("other") == nullptr);
  ctx.debugPasses = {"all"};
  CHECK(ctx.debugStream("other") == &os);
  ctx.debugPasses = {};
  CHECK(ctx.debugStream("chatty") == nullptr);

  Harness h;
  PassManagerOptions o = h.options();
  o.debugPasses = {"chatty"};
  PassManager pm(h.device, o);
  pm.addPass(std::make_unique<ChattyPass>());
  pm.addPass(std::make_unique<NoopPass>());
  REQUIRE(succeeded(pm.run(*h.module)));
  CHECK(h.output() == "chatty: deciding things\n");

  Harness quiet;
  PassManager pm2(quiet.device, quiet.options());
  pm2.addPass(std::make_unique<ChattyPass>());
  REQUIRE(succeeded(pm2.run(*quiet.module)));
  CHECK(quiet.output().empty());
}

TEST_CASE("pipelines are added through the registry", "[passmanager]") {
  PassRegistry registry;
  registry.add({"tag", "Tag every op", {{"scope", OptionKind::Int, int64_t(7), "The scope id", 0, 100}},
                [](const PassOptionValues &o) { return std::make_unique<TagPass>("tag", o.getInt("scope")); }});
  registry.add({"noop", "Nothing", {}, [](const PassOptionValues &) { return std::make_unique<NoopPass>(); }});

  Harness h;
  PassManager pm(h.device, h.options());
  REQUIRE(pm.addPipeline("noop,tag{scope=42}", registry).ok());
  CHECK(pm.size() == 2);
  absl::Status bad = pm.addPipeline("noop,tga", registry);
  CHECK(bad.message() == "unknown pass 'tga' in pipeline at column 6; did you mean 'tag'? "
                         "(--list-passes shows all)");
  CHECK(pm.size() == 2); // nothing added on error
  REQUIRE(succeeded(pm.run(*h.module)));
  CHECK(h.module->func(0).ops().front().attr("sg_scope") == h.ctx.intAttr(42));
}
