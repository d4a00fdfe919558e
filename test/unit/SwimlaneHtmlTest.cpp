// Unit tests for swimlane.html (lib/profile/SwimlaneHtml.cpp): the page is
// self-contained, its embedded JSON cannot end a <script> element early and parses
// back to the same values, bad inputs are errors, and a debug run writes the page
// beside its trace with the data of every task. (test/html checks it in Chromium.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "ptoc/profile/SwimlaneHtml.h"
#include "ptoc/runtime/Reference.h"
#include "ptoc/session/Session.h"

using namespace ptoc;

namespace {

// A hand-written two-task trace whose strings contain what could break out of a
// <script> element: "</script>", "<!--" and "<script".
const char *kTrace = R"({"traceEvents":[
{"ph":"M","name":"process_name","pid":3,"args":{"name":"AIV"}},
{"ph":"M","name":"thread_name","pid":3,"tid":0,"args":{"name":"AIV_0"}},
{"ph":"X","name":"func0_0 sg0","cat":"task","pid":3,"tid":0,"ts":20.000,"dur":1.000,"args":{"call":0,"subgraph":0,"leaf":0,"leaf_hash":"ab","hash_order":0,"group_size":1,"regions":["x</script><script>alert(1)</script>[0,0]"],"bytes_in":64,"bytes_out":64,"l2_hit_bytes":0,"ready_us":20.000,"dispatch_us":20.000,"thread":0,"preds":0}},
{"ph":"X","name":"func0_1 sg1","cat":"task","pid":3,"tid":0,"ts":21.000,"dur":2.000,"args":{"call":1,"subgraph":1,"leaf":1,"leaf_hash":"cd","hash_order":1,"group_size":1,"regions":["y<!--<script>[0,8]"],"bytes_in":32,"bytes_out":16,"l2_hit_bytes":0,"ready_us":21.000,"dispatch_us":21.000,"thread":0,"preds":1}},
{"ph":"s","id":1,"cat":"dep","name":"dep","pid":3,"tid":0,"ts":20.999},
{"ph":"f","id":1,"cat":"dep","name":"dep","bp":"e","pid":3,"tid":0,"ts":21.001}
],
"displayTimeUnit":"ns",
"otherData":{"func":"f</script>","tasks":2,"simulated_us":23.000}}
)";
const char *kSummary = R"({"simulated_us": 23.0, "verdicts": [{"rule": "x", "finding": "a</script>b"}]})";

std::string page(const profile::SwimlaneHtmlInputs &inputs) {
  std::string text;
  llvm::raw_string_ostream os(text);
  absl::Status st = profile::writeSwimlaneHtml(os, inputs);
  INFO(st.message());
  REQUIRE(st.ok());
  return os.str();
}

size_t occurrences(llvm::StringRef haystack, llvm::StringRef needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + 1))
    ++n;
  return n;
}

/// The text of the <script type="application/json" id="ID"> element.
std::string dataScript(llvm::StringRef html, llvm::StringRef id) {
  std::string open = ("<script type=\"application/json\" id=\"" + id + "\">").str();
  // (Tests compare positions with std::string::npos: Catch would ODR-use
  // llvm::StringRef::npos, which libLLVMSupport also defines.)
  std::string text = html.str();
  size_t begin = text.find(open);
  REQUIRE(begin != std::string::npos);
  begin += open.size();
  size_t end = text.find("</script>", begin);
  REQUIRE(end != std::string::npos);
  return text.substr(begin, end - begin);
}

std::string readFile(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  REQUIRE(buf);
  return (*buf)->getBuffer().str();
}

} // namespace

TEST_CASE("swimlane.html is self-contained", "[swimlane-html]") {
  std::string html = page({kTrace, kSummary, ""});
  llvm::StringRef h(html);
  CHECK(h.startswith("<!DOCTYPE html>"));
  // Nothing fetched: no URLs, no external scripts, styles or images.
  CHECK(!h.contains("http://"));
  CHECK(!h.contains("https://"));
  CHECK(!h.contains("src="));
  CHECK(!h.contains("<link"));
  CHECK(!h.contains("@import"));
  CHECK(!h.contains("fetch("));
  // The script and style are inline and the page's fixed elements are there.
  CHECK(h.contains("<style>"));
  CHECK(h.contains("function parseTrace"));
  for (const char *id : {"id=\"summary\"", "id=\"verdicts\"", "id=\"legend\"", "id=\"lanes\"",
                         "id=\"tooltip\"", "id=\"zoom-in\"", "id=\"zoom-reset\""})
    CHECK(h.contains(id));
}

TEST_CASE("swimlane.html embeds JSON that cannot close its script element",
          "[swimlane-html]") {
  std::string html = page({kTrace, kSummary, R"({"verdicts": [], "note": "</SCRIPT >"})"});
  llvm::StringRef h(html);
  // Exactly the page's own four script elements end: three data, one code.
  CHECK(occurrences(h, "</script>") == 4);
  CHECK(occurrences(h, "<script") == 4);
  CHECK(!h.contains("<!--<script"));
  CHECK(!h.contains("</SCRIPT"));
  // Each embedded text parses back to exactly the input's value.
  for (auto [id, input] : std::vector<std::pair<const char *, const char *>>{
           {"ptoc-trace", kTrace},
           {"ptoc-summary", kSummary},
           {"ptoc-analysis", R"({"verdicts": [], "note": "</SCRIPT >"})"}}) {
    INFO(id);
    llvm::Expected<llvm::json::Value> embedded = llvm::json::parse(dataScript(h, id));
    REQUIRE(static_cast<bool>(embedded));
    llvm::Expected<llvm::json::Value> original = llvm::json::parse(input);
    REQUIRE(static_cast<bool>(original));
    CHECK(*embedded == *original);
  }
}

TEST_CASE("swimlane.html without analysis embeds null for it", "[swimlane-html]") {
  std::string html = page({kTrace, kSummary, ""});
  CHECK(dataScript(html, "ptoc-analysis") == "null");
  std::string noSummary = page({kTrace, "", ""});
  CHECK(dataScript(noSummary, "ptoc-summary") == "{}");
}

TEST_CASE("swimlane.html rejects inputs it cannot embed", "[swimlane-html]") {
  std::string sink;
  llvm::raw_string_ostream os(sink);
  absl::Status empty = profile::writeSwimlaneHtml(os, {"", kSummary, ""});
  CHECK(empty.code() == absl::StatusCode::kInvalidArgument);
  CHECK(llvm::StringRef(std::string(empty.message())).contains("trace"));
  absl::Status notObject = profile::writeSwimlaneHtml(os, {"[1,2]", kSummary, ""});
  CHECK(notObject.code() == absl::StatusCode::kInvalidArgument);
  absl::Status badSummary = profile::writeSwimlaneHtml(os, {kTrace, "{\"a\":", ""});
  CHECK(badSummary.code() == absl::StatusCode::kInvalidArgument);
  CHECK(llvm::StringRef(std::string(badSummary.message())).contains("summary"));
  absl::Status badAnalysis = profile::writeSwimlaneHtml(os, {kTrace, kSummary, "nope"});
  CHECK(badAnalysis.code() == absl::StatusCode::kInvalidArgument);
  CHECK(llvm::StringRef(std::string(badAnalysis.message())).contains("analysis"));
  // A folder without a trace names the missing file.
  absl::Status missing = profile::writeSwimlaneHtmlFile("/nonexistent/ptoc-run-folder");
  CHECK(missing.code() == absl::StatusCode::kNotFound);
  CHECK(llvm::StringRef(std::string(missing.message())).contains("merged_swimlane.json"));
}

TEST_CASE("a debug run writes swimlane.html with every task's data", "[swimlane-html]") {
  absl::StatusOr<session::Session> s = session::Session::create("a2");
  REQUIRE(s.ok());
  std::string text = readFile(std::string(PTOC_SOURCE_DIR) + "/examples/softmax.pto");
  absl::StatusOr<session::Kernel> k = s->compileText(text, "softmax.pto", {});
  INFO(k.status().message());
  REQUIRE(k.ok());
  std::vector<runtime::HostTensor> args, results;
  for (size_t i = 0; i < k->args.size(); ++i)
    args.push_back(runtime::randomTensor(k->args[i].dtype, k->args[i].shape, 7 + i));
  llvm::SmallString<128> base;
  REQUIRE(!llvm::sys::fs::createUniqueDirectory("ptoc-swimlane-html", base));
  for (int debug = 1; debug <= 2; ++debug) {
    INFO("debug mode " << debug);
    session::RunOptions opts;
    opts.debugMode = debug;
    opts.outputDir = std::string(base);
    opts.numerics = false;
    absl::StatusOr<session::RunReport> r = s->run(*k, args, results, opts);
    INFO(r.status().message());
    REQUIRE(r.ok());
    std::string html = readFile(r->outputFolder + "/" + profile::kSwimlaneHtmlFile);
    // The embedded trace is the run's trace, so it holds every task's event.
    llvm::Expected<llvm::json::Value> embedded = llvm::json::parse(dataScript(html, "ptoc-trace"));
    REQUIRE(static_cast<bool>(embedded));
    llvm::Expected<llvm::json::Value> trace = llvm::json::parse(readFile(r->swimlanePath));
    REQUIRE(static_cast<bool>(trace));
    CHECK(*embedded == *trace);
    std::vector<bool> seen(k->program.calls.size(), false);
    for (const llvm::json::Value &e : *embedded->getAsObject()->getArray("traceEvents")) {
      const llvm::json::Object *o = e.getAsObject();
      if (o->getString("cat") != llvm::StringRef("task")) continue;
      int64_t call = *o->getObject("args")->getInteger("call");
      REQUIRE(call >= 0);
      REQUIRE(call < static_cast<int64_t>(seen.size()));
      seen[call] = true;
    }
    CHECK(std::count(seen.begin(), seen.end(), false) == 0);
    llvm::Expected<llvm::json::Value> summary = llvm::json::parse(dataScript(html, "ptoc-summary"));
    REQUIRE(static_cast<bool>(summary));
    llvm::Expected<llvm::json::Value> summaryFile =
        llvm::json::parse(readFile(r->outputFolder + "/summary.json"));
    REQUIRE(static_cast<bool>(summaryFile));
    CHECK(*summary == *summaryFile);
  }
  llvm::sys::fs::remove_directories(base);
}
