// ptoc-opt's driver: parse a .pto file, verify it, run a pass pipeline with the pass
// manager's instrumentation, print the result; plus the test-harness modes
// (--split-input-file, --verify-diagnostics, --verify-roundtrip).
//
// Unlike the `ptoc` commands (ArgParser.h), ptoc-opt parses with llvm::cl, as mlir-opt
// does: its driver flags are llvm::cl options, and every pass of the pass registry is
// a flag of its own (`--cse`, `--partition=pg-lower-bound=256`; extractPassFlags turns
// them into a pipeline), whose options, defaults and help are the registry's
// declarations (--list-passes prints them).
#include "ptoc/tools/OptMain.h"

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include "DiagnosticVerifier.h"
#include "OutOfMemory.h"
#include "absl/strings/str_cat.h"
#include "llvm/ADT/StringSet.h"
#include "ptoc/codegen/BuildLoopProgram.h"
#include "ptoc/codegen/Codegen.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Level.h"
#include "ptoc/ir/LoopView.h"
#include "ptoc/ir/Operation.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/ir/Printer.h"
#include "ptoc/ir/Verifier.h"
#include "ptoc/passes/PassManager.h"
#include "ptoc/passes/Passes.h"
#include "ptoc/passes/Pipeline.h"
#include "ptoc/session/Version.h"
#include "ptoc/target/DeviceSpec.h"

namespace cl = llvm::cl;

namespace ptoc::tools {
namespace {

/// What ptoc-opt prints after the pipeline: the IR, or the compiled program.
enum class OutputStage { IR, Codegen };

/// Everything the command line says, gathered in one place.
struct OptConfig {
  std::string inputFile;
  std::string outputFile;
  std::string pipelineText;
  std::string device;
  bool splitInputFile = false;
  bool verifyDiagnostics = false;
  bool verifyRoundtrip = false;
  bool printLocations = false;
  passes::PassManagerOptions pm;
  bool timing = false;
  bool statistics = false;
  OutputStage stage = OutputStage::IR;
  codegen::CodegenOptions codegen;
};

/// A piece of the input file: its text and the line it starts on.
struct Chunk {
  llvm::StringRef text;
  unsigned firstLine;
};

constexpr llvm::StringLiteral kSplitMarker = "// -----";

std::vector<Chunk> splitInput(llvm::StringRef text, bool split) {
  if (!split) return {{text, 1}};
  std::vector<Chunk> chunks;
  unsigned line = 1, chunkLine = 1;
  size_t chunkStart = 0, pos = 0;
  while (pos <= text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == llvm::StringRef::npos) eol = text.size();
    llvm::StringRef cur = text.slice(pos, eol);
    if (cur.rtrim().startswith(kSplitMarker) && cur.trim() == kSplitMarker) {
      chunks.push_back({text.slice(chunkStart, pos), chunkLine});
      chunkStart = eol + 1;
      chunkLine = line + 1;
    }
    pos = eol + 1;
    ++line;
  }
  chunks.push_back({text.slice(std::min(chunkStart, text.size()), text.size()), chunkLine});
  return chunks;
}

/// Prints a diagnostic with the source line and a caret when it points into `chunk`.
void printDiagnostic(const ir::Diagnostic &d, const Chunk &chunk, llvm::StringRef fileName,
                     llvm::raw_ostream &os) {
  os << d.str() << "\n";
  if (d.loc.fileName() != fileName || d.loc.line < chunk.firstLine) return;
  llvm::StringRef text = chunk.text;
  for (unsigned l = chunk.firstLine; l < d.loc.line && !text.empty(); ++l)
    text = text.split('\n').second;
  llvm::StringRef line = text.split('\n').first;
  if (line.empty() || d.loc.col == 0 || d.loc.col > line.size() + 1) return;
  os << line << "\n" << std::string(d.loc.col - 1, ' ') << "^\n";
}

/// Finds the first differing line of two texts, for round-trip failures.
std::string firstDifference(llvm::StringRef a, llvm::StringRef b) {
  unsigned line = 1;
  while (!a.empty() || !b.empty()) {
    auto [la, ra] = a.split('\n');
    auto [lb, rb] = b.split('\n');
    if (la != lb)
      return "line " + std::to_string(line) + ": '" + la.str() + "' became '" + lb.str() + "'";
    a = ra;
    b = rb;
    ++line;
  }
  return "no line differs (trailing newline)";
}

class OptDriver {
public:
  OptDriver(const OptConfig &config, const passes::PassRegistry &registry,
            const target::DeviceSpec &device, llvm::raw_ostream &out)
      : config_(config), registry_(registry), device_(device), out_(out) {}

  /// Processes one chunk; returns whether it succeeded (for --verify-diagnostics:
  /// whether the diagnostics matched the expectations).
  bool processChunk(const Chunk &chunk, size_t index, llvm::StringRef fileName, bool last) {
    chunkIndex_ = index;
    ir::Context ctx;
    std::unique_ptr<DiagnosticVerifier> verifier;
    if (config_.verifyDiagnostics) {
      verifier = std::make_unique<DiagnosticVerifier>(chunk.text, fileName, chunk.firstLine);
      ctx.diag().pushHandler([&](const ir::Diagnostic &d) { verifier->record(d); });
    } else {
      ctx.diag().pushHandler(
          [&](const ir::Diagnostic &d) { printDiagnostic(d, chunk, fileName, llvm::errs()); });
    }
    std::string output;
    bool ok = compile(ctx, chunk, fileName, output);
    if (verifier) ok = verifier->verify(llvm::errs());
    out_ << output;
    // Every chunk keeps its separator, so a failed chunk shows as an empty one.
    if (!last) out_ << kSplitMarker << "\n";
    return ok;
  }

private:
  // Parse, verify, run the pipeline, print (and round-trip). Fills `output` with the
  // printed IR on success.
  bool compile(ir::Context &ctx, const Chunk &chunk, llvm::StringRef fileName,
               std::string &output) {
    ir::ParseOptions parseOpts;
    parseOpts.firstLine = chunk.firstLine;
    std::unique_ptr<ir::Module> module = ir::parseModule(chunk.text, fileName, ctx, parseOpts);
    if (!module) return false;
    if (failed(ir::verify(*module, ir::VerifyOptions{&device_}))) return false;

    passes::PassManagerOptions pmOpts = config_.pm;
    pmOpts.printOptions.printLocations = config_.printLocations;
    // With --split-input-file each chunk dumps into its own sub-folder.
    if (!pmOpts.dumpDirectory.empty() && config_.splitInputFile)
      pmOpts.dumpDirectory += "/chunk" + std::to_string(chunkIndex_ + 1);
    passes::PassManager pm(device_, pmOpts);
    if (!config_.pipelineText.empty()) {
      absl::Status st = pm.addPipeline(config_.pipelineText, registry_);
      if (!st.ok()) {
        ctx.emitError(ir::Location()) << ir::messageOf(st);
        return false;
      }
    }
    bool ok = succeeded(pm.run(*module));
    if (config_.timing) pm.printTiming(llvm::errs());
    if (config_.statistics) pm.printStatistics(llvm::errs());
    if (!ok) return false;

    ir::PrintOptions printOpts;
    printOpts.printLocations = config_.printLocations;
    // The IR text is the output, or (--stage=codegen) only what the round trip checks.
    if (config_.stage == OutputStage::IR || config_.verifyRoundtrip)
      output = ir::toString(*module, printOpts);
    if (config_.verifyRoundtrip && !roundTrips(output, fileName, printOpts, ctx)) {
      output.clear();
      return false;
    }
    if (config_.stage == OutputStage::Codegen) return printPrograms(*module, ctx, output);
    return true;
  }

  // --stage=codegen: the compiled program of every function replaces the IR text
  // (the round trip above still checked the IR). A control function no loop runs
  // prints as its loop program, with each root function its loops run compiled once;
  // those root functions are not printed again on their own.
  bool printPrograms(const ir::Module &module, ir::Context &ctx, std::string &output) {
    std::string text;
    llvm::raw_string_ostream os(text);
    llvm::StringSet<> bodies;
    for (const ir::Func &f : module.funcs())
      for (const ir::Operation &op : f.ops())
        if (op.code() == ir::OpCode::Loop)
          if (absl::StatusOr<ir::LoopView> v = ir::LoopView::of(op); v.ok()) bodies.insert(v->body);
    auto fail = [&](const ir::Func &f, const absl::Status &st) {
      ctx.emitError(f.loc()) << "codegen of @" << f.name() << ": " << ir::messageOf(st);
      output.clear();
      return false;
    };
    unsigned funcIndex = 0;
    for (const ir::Func &f : module.funcs()) {
      unsigned index = funcIndex++;
      if (bodies.contains(f.name())) continue;
      if (!text.empty()) os << "\n";
      if (ir::levelOf(f) == ir::Level::Control) {
        for (const ir::Func &g : module.funcs())
          if (ir::levelOf(g) == ir::Level::Control)
            for (const ir::Operation &op : g.ops())
              if (op.code() != ir::OpCode::Loop && op.code() != ir::OpCode::GmTensor &&
                  op.code() != ir::OpCode::Return)
                return fail(f, absl::InvalidArgumentError(absl::StrCat(
                                   "the control function @", g.name().str(), " still computes ('",
                                   op.name().str(), "' at ", op.loc().str(),
                                   "); run outline-segments before the pipeline, e.g. "
                                   "--pass-pipeline=outline-segments,default")));
        absl::StatusOr<codegen::LoopProgram> lp =
            codegen::buildLoopProgram(module, f, device_, config_.codegen);
        if (!lp.ok()) return fail(f, lp.status());
        codegen::printLoopProgram(*lp, os);
        continue;
      }
      absl::StatusOr<codegen::Program> program =
          codegen::buildProgram(f, device_, config_.codegen, index);
      if (!program.ok()) return fail(f, program.status());
      codegen::printProgram(*program, os);
    }
    output = std::move(os.str());
    return true;
  }

  bool roundTrips(const std::string &printed, llvm::StringRef fileName,
                  const ir::PrintOptions &printOpts, ir::Context &errorCtx) {
    ir::Context ctx;
    ir::DiagnosticCollector diags(ctx.diag());
    std::unique_ptr<ir::Module> again = ir::parseModule(printed, fileName, ctx);
    if (!again) {
      errorCtx.emitError(ir::Location())
          << "--verify-roundtrip: the printed IR does not parse back: " << diags.errorText();
      return false;
    }
    std::string reprinted = ir::toString(*again, printOpts);
    if (reprinted != printed) {
      errorCtx.emitError(ir::Location())
          << "--verify-roundtrip: printing the parsed output differs at "
          << firstDifference(printed, reprinted);
      return false;
    }
    return true;
  }

  const OptConfig &config_;
  const passes::PassRegistry &registry_;
  const target::DeviceSpec &device_;
  llvm::raw_ostream &out_;
  size_t chunkIndex_ = 0;
};

/// Moves `--<pass>` and `--<pass>=<options>` flags out of argv into a pipeline
/// string (in order), so each registered pass is also a flag, as in mlir-opt.
std::string extractPassFlags(std::vector<const char *> &args,
                             const passes::PassRegistry &registry) {
  std::string pipeline;
  std::vector<const char *> rest;
  for (const char *arg : args) {
    llvm::StringRef a(arg);
    llvm::StringRef name = a;
    if (!name.consume_front("--") && !name.consume_front("-")) {
      rest.push_back(arg);
      continue;
    }
    auto [flag, value] = name.split('=');
    if (!registry.lookup(flag)) {
      rest.push_back(arg);
      continue;
    }
    if (!pipeline.empty()) pipeline += ",";
    pipeline += flag.str();
    if (name.contains('=')) pipeline += "{" + value.str() + "}";
  }
  args = rest;
  return pipeline;
}

} // namespace

int optMain(int argc, char **argv) {
  exitOnOutOfMemory("ptoc-opt", "starting");
  passes::PassRegistry registry;
  passes::registerAllPasses(registry);

  // Options live for the process (ptoc-opt calls this once); the category hides
  // LLVM's own options from --help.
  static cl::OptionCategory category("ptoc-opt options");
  static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .pto file>"),
                                        cl::init("-"), cl::cat(category));
  static cl::opt<std::string> outputFile("o", cl::desc("Output file (default: stdout)"),
                                         cl::value_desc("filename"), cl::init("-"),
                                         cl::cat(category));
  static cl::opt<std::string> passPipeline(
      "pass-pipeline",
      cl::desc("Passes to run, e.g. 'canonicalize,cse' or 'partition{pg-lower-bound=256}'"),
      cl::cat(category));
  static cl::opt<std::string> namedPipeline(
      "pipeline", cl::desc("Run a named pipeline (see --list-passes)"), cl::cat(category));
  static cl::opt<bool> listPasses("list-passes",
                                  cl::desc("List passes, their options and named pipelines"),
                                  cl::cat(category));
  static cl::opt<std::string> device(
      "device", cl::desc("Device preset (a2, b3, a3, tiny) or device JSON file"),
      cl::init(target::kDefaultPreset), cl::cat(category));
  static cl::opt<bool> splitInputFile(
      "split-input-file", cl::desc("Process each '// -----'-separated chunk separately"),
      cl::cat(category));
  static cl::opt<bool> verifyDiagnostics(
      "verify-diagnostics",
      cl::desc("Check diagnostics against expected-error@+N {{...}} comments"),
      cl::cat(category));
  static cl::opt<bool> verifyRoundtrip(
      "verify-roundtrip", cl::desc("Check that the output parses and prints back identically"),
      cl::cat(category));
  static cl::opt<bool> verifyEach("verify-each",
                                  cl::desc("Verify the IR after every pass that changed it"),
                                  cl::init(true), cl::cat(category));
  static const std::string maxTileOpsHelp = absl::StrCat(
      "Stop a compile past this many tile ops per function (about ",
      passes::CompileBudget::kBytesPerTileOp,
      " bytes of host memory each; a compile also stops where the host's free memory ends)");
  static cl::opt<int64_t> maxTileOps(
      "max-tile-ops", cl::desc(maxTileOpsHelp),
      cl::init(passes::CompileBudget::kDefaultMaxTileOps), cl::cat(category));
  static cl::opt<bool> checkChangeClaims(
      "check-change-claims",
      cl::desc("Check that passes reporting 'unchanged' did not change the IR"),
      cl::cat(category));
  static cl::list<std::string> printBefore("print-ir-before",
                                           cl::desc("Print the IR before these passes"),
                                           cl::CommaSeparated, cl::cat(category));
  static cl::list<std::string> printAfter("print-ir-after",
                                          cl::desc("Print the IR after these passes"),
                                          cl::CommaSeparated, cl::cat(category));
  static cl::opt<bool> printBeforeAll("print-ir-before-all",
                                      cl::desc("Print the IR before every pass"),
                                      cl::cat(category));
  static cl::opt<bool> printAfterAll("print-ir-after-all",
                                     cl::desc("Print the IR after every pass"),
                                     cl::cat(category));
  static cl::opt<bool> printAfterChange(
      "print-ir-after-change", cl::desc("Print the IR after every pass that changed it"),
      cl::cat(category));
  static cl::opt<bool> printAfterFailure("print-ir-after-failure",
                                         cl::desc("Print the IR after a pass fails"),
                                         cl::cat(category));
  static cl::opt<std::string> irDumpDir(
      "ir-dump-dir", cl::desc("Also write each IR dump to <dir>/<NN>_<pass>.pto"),
      cl::cat(category));
  static cl::opt<bool> timing("timing", cl::desc("Print a per-pass wall-time table"),
                              cl::cat(category));
  static cl::opt<bool> passStatistics("pass-statistics",
                                      cl::desc("Print each pass's statistics"),
                                      cl::cat(category));
  static cl::list<std::string> disablePasses(
      "disable-passes", cl::desc("Skip these passes (for bisection)"), cl::CommaSeparated,
      cl::cat(category));
  static cl::list<std::string> debugOnly(
      "debug-only", cl::desc("Print the decision log of these passes ('all' for every pass)"),
      cl::CommaSeparated, cl::cat(category));
  static cl::opt<OutputStage> stage(
      "stage", cl::desc("What to print after the pipeline"),
      cl::values(clEnumValN(OutputStage::IR, "ir", "the IR (default)"),
                 clEnumValN(OutputStage::Codegen, "codegen",
                            "the compiled program: leaves, pipe programs, execute graph "
                            "(needs a partitioned function, e.g. --pipeline=default)")),
      cl::init(OutputStage::IR), cl::cat(category));
  static cl::opt<bool> noDoubleBuffer(
      "no-double-buffer",
      cl::desc("With --stage=codegen: no ping-pong local buffers (each tile reuses the most "
               "recently freed space, serialising transfers and compute)"),
      cl::cat(category));
  static cl::opt<bool> printDebugInfo("print-debuginfo",
                                      cl::desc("Print loc(\"file\":line:col) on every op"),
                                      cl::cat(category));

  std::vector<const char *> args(argv, argv + argc);
  std::string passFlags = extractPassFlags(args, registry);
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter([](llvm::raw_ostream &os) { os << "ptoc-opt " << session::version() << "\n"; });
  std::string overview =
      "ptoc-opt: run ptoc passes over .pto files\n\n"
      "Each pass is also a flag (--cse), run in command-line order; docs/ptoc-opt.md.\n\n";
  llvm::raw_string_ostream overviewStream(overview);
  registry.printHelp(overviewStream);
  std::string cmdErrors;
  llvm::raw_string_ostream cmdErrorStream(cmdErrors);
  if (!cl::ParseCommandLineOptions(static_cast<int>(args.size()), args.data(),
                                   overviewStream.str(),
                                   &cmdErrorStream)) {
    llvm::errs() << cmdErrorStream.str() << "see 'ptoc-opt --help'\n";
    return 1;
  }

  if (listPasses) {
    registry.printHelp(llvm::outs());
    return 0;
  }

  OptConfig config;
  config.inputFile = inputFile;
  config.outputFile = outputFile;
  int pipelineSources = !passFlags.empty() + !passPipeline.empty() + !namedPipeline.empty();
  if (pipelineSources > 1) {
    llvm::errs() << "ptoc-opt: give passes one way only: pass flags, --pass-pipeline or "
                    "--pipeline\n";
    return 1;
  }
  config.pipelineText = !passPipeline.empty() ? passPipeline.getValue()
                        : !namedPipeline.empty() ? namedPipeline.getValue()
                                                 : passFlags;
  if (!namedPipeline.empty() && !registry.lookupPipeline(namedPipeline)) {
    std::string names;
    for (const auto &p : registry.pipelines()) names += (names.empty() ? "" : ", ") + p.name;
    llvm::errs() << "ptoc-opt: unknown pipeline '" << namedPipeline << "' (known: " << names
                 << ")\n";
    return 1;
  }
  // Validate the pipeline once, before reading input, so a typo fails fast.
  if (!config.pipelineText.empty()) {
    auto parsed = passes::parsePipeline(config.pipelineText, registry);
    if (!parsed.ok()) {
      llvm::errs() << "ptoc-opt: " << ir::messageOf(parsed.status()) << "\n";
      return 1;
    }
  }
  // Lists of pass names must name real passes: a typo would silently do nothing.
  for (auto [flag, names, allowAll] :
       {std::tuple{"disable-passes", &disablePasses, false},
        std::tuple{"print-ir-before", &printBefore, false},
        std::tuple{"print-ir-after", &printAfter, false},
        std::tuple{"debug-only", &debugOnly, true}}) {
    for (const std::string &name : *names) {
      if (registry.lookup(name) || (allowAll && name == "all")) continue;
      llvm::errs() << "ptoc-opt: --" << flag << ": unknown pass '" << name
                   << "' (--list-passes shows all)\n";
      return 1;
    }
  }
  config.splitInputFile = splitInputFile;
  config.verifyDiagnostics = verifyDiagnostics;
  config.verifyRoundtrip = verifyRoundtrip;
  config.printLocations = printDebugInfo;
  config.timing = timing;
  config.statistics = passStatistics;
  config.stage = stage;
  config.codegen.doubleBuffer = !noDoubleBuffer;
  // The IR was verified after parsing and, with --verify-each, after every pass.
  config.codegen.verify = !verifyEach;
  config.pm.verifyEach = verifyEach;
  if (maxTileOps < passes::CompileBudget::kMinMaxTileOps ||
      maxTileOps > passes::CompileBudget::kMaxMaxTileOps) {
    llvm::errs() << "ptoc-opt: --max-tile-ops must be an integer in ["
                 << passes::CompileBudget::kMinMaxTileOps << ", "
                 << passes::CompileBudget::kMaxMaxTileOps << "], got " << maxTileOps << "\n";
    return 1;
  }
  config.pm.budget.maxTileOps = maxTileOps;
  config.pm.checkChangeClaims = checkChangeClaims;
  config.pm.printIRBefore.assign(printBefore.begin(), printBefore.end());
  config.pm.printIRAfter.assign(printAfter.begin(), printAfter.end());
  config.pm.printIRBeforeAll = printBeforeAll;
  config.pm.printIRAfterAll = printAfterAll;
  config.pm.printIRAfterChange = printAfterChange;
  config.pm.printIRAfterFailure = printAfterFailure;
  config.pm.timing = timing;
  config.pm.disabledPasses.assign(disablePasses.begin(), disablePasses.end());
  config.pm.debugPasses.assign(debugOnly.begin(), debugOnly.end());
  config.pm.dumpDirectory = irDumpDir;

  absl::StatusOr<target::DeviceSpec> spec = target::DeviceSpec::load(device);
  if (!spec.ok()) {
    llvm::errs() << "ptoc-opt: " << ir::messageOf(spec.status()) << "\n";
    return 1;
  }

  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(config.inputFile, /*IsText=*/true);
  if (!buffer) {
    llvm::errs() << "ptoc-opt: cannot read '" << config.inputFile
                 << "': " << buffer.getError().message() << "\n";
    return 1;
  }
  std::string fileName = config.inputFile == "-" ? "<stdin>" : config.inputFile;

  std::error_code ec;
  llvm::ToolOutputFile output(config.outputFile, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    llvm::errs() << "ptoc-opt: cannot write '" << config.outputFile << "': " << ec.message()
                 << "\n";
    return 1;
  }

  setOutOfMemoryDoing(absl::StrCat("processing ", fileName));
  OptDriver driver(config, registry, *spec, output.os());
  std::vector<Chunk> chunks = splitInput((*buffer)->getBuffer(), config.splitInputFile);
  bool ok = true;
  for (size_t i = 0; i < chunks.size(); ++i)
    ok &= driver.processChunk(chunks[i], i, fileName, i + 1 == chunks.size());
  // Keep the output on failure: it holds the chunks that did succeed.
  output.keep();
  return ok ? 0 : 1;
}

} // namespace ptoc::tools
