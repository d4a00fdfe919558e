// The pass manager: runs passes in order with the instrumentation every pass gets
// for free (IR dumps, change-claim checks, verification, timing, statistics).
#include "ptoc/passes/PassManager.h"

#include <chrono>

#include "absl/strings/str_format.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "ptoc/ir/Context.h"
#include "ptoc/ir/Diagnostics.h"
#include "ptoc/ir/StableHash.h"
#include "ptoc/ir/Verifier.h"

namespace ptoc::passes {

namespace {

/// The banner LLVM tools put above their reports, with `title` centred.
void printBanner(llvm::raw_ostream &os, llvm::StringRef title) {
  std::string rule = "===" + std::string(73, '-') + "===\n";
  size_t pad = title.size() < 80 ? (80 - title.size()) / 2 : 0;
  os << rule << std::string(pad, ' ') << title << "\n" << rule;
}

/// A fingerprint of the module's text: equal text, equal fingerprint.
uint64_t fingerprint(const ir::Module &m) { return ir::hashBytes(ir::toString(m)); }

/// Where diagnostics about a whole pass or the driver's files go: no source line.
ir::Location moduleLocation(const ir::Module &) { return ir::Location{}; }

} // namespace

PassManager::PassManager(const target::DeviceSpec &device, PassManagerOptions options)
    : device_(device), options_(std::move(options)) {}

PassManager::~PassManager() = default;

void PassManager::addPass(std::unique_ptr<Pass> pass) {
  if (!pass) llvm::report_fatal_error("ptoc bug: PassManager::addPass given a null pass");
  passes_.push_back(std::move(pass));
}

void PassManager::addPipeline(const std::vector<PipelineElement> &pipeline) {
  for (const PipelineElement &e : pipeline) {
    if (!e.info) llvm::report_fatal_error("ptoc bug: pipeline element without a pass");
    addPass(e.info->factory(e.options));
  }
}

absl::Status PassManager::addPipeline(llvm::StringRef text, const PassRegistry &registry) {
  absl::StatusOr<std::vector<PipelineElement>> pipeline = parsePipeline(text, registry);
  if (!pipeline.ok()) return pipeline.status();
  addPipeline(*pipeline);
  return absl::OkStatus();
}

LogicalResult PassManager::run(ir::Module &m) {
  timings_.clear();
  ir::Context &ctx = m.context();
  llvm::raw_ostream &dump = options_.dumpStream ? *options_.dumpStream : llvm::errs();
  const PassManagerOptions &o = options_;
  bool anyPrinting = o.printIRBeforeAll || o.printIRAfterAll || o.printIRAfterChange ||
                     o.printIRAfterFailure || !o.printIRBefore.empty() || !o.printIRAfter.empty();
  bool needFingerprint = o.checkChangeClaims || o.printIRAfterChange;

  if (!o.dumpDirectory.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(o.dumpDirectory)) {
      ctx.emitError(moduleLocation(m), ir::DiagCategory::IO)
          << "cannot create the IR dump directory '"
                                       << o.dumpDirectory << "': " << ec.message();
      return failure();
    }
  }

  auto printDump = [&](llvm::StringRef header) {
    dump << "// -----// " << header << " //----- //\n";
    ir::printModule(m, dump, o.printOptions);
    dump.flush();
  };
  // Writes `<dir>/<NN>_<pass>.pto`; false (after a diagnostic) when it cannot.
  auto writeDumpFile = [&](size_t index, llvm::StringRef pass, llvm::StringRef header) {
    if (o.dumpDirectory.empty()) return true;
    llvm::SmallString<128> path(o.dumpDirectory);
    llvm::sys::path::append(path, absl::StrFormat("%02u_%s.pto", index + 1, pass.str()));
    std::error_code ec;
    llvm::raw_fd_ostream file(path, ec, llvm::sys::fs::OF_Text);
    if (!ec) {
      file << "// -----// " << header << " //----- //\n";
      ir::printModule(m, file, o.printOptions);
      file.close();
      ec = file.error();
    }
    if (ec) {
      ctx.emitError(moduleLocation(m), ir::DiagCategory::IO)
          << "cannot write the IR dump '" << path.str()
                                       << "': " << ec.message();
      file.clear_error();
      return false;
    }
    return true;
  };
  auto listed = [](const std::vector<std::string> &names, llvm::StringRef pass) {
    return llvm::is_contained(names, pass.str());
  };

  for (size_t index = 0; index < passes_.size(); ++index) {
    Pass &pass = *passes_[index];
    std::string arg = pass.argument().str();
    PassTiming timing;
    timing.pass = arg;

    if (listed(o.disabledPasses, arg)) {
      timing.skipped = true;
      timings_.push_back(timing);
      if (anyPrinting) dump << "// -----// IR Dump: pass '" << arg << "' skipped (--disable-passes) //----- //\n";
      continue;
    }

    if (o.printIRBeforeAll || listed(o.printIRBefore, arg)) printDump("IR Dump Before " + arg);
    uint64_t before = needFingerprint ? fingerprint(m) : 0;

    PassContext passCtx{device_, &dump, o.debugPasses, o.budget, &derivedTiles_};
    auto start = std::chrono::steady_clock::now();
    PassResult result = pass.run(m, passCtx);
    timing.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    timing.changed = result.didChange();
    timings_.push_back(timing);

    auto failWithDump = [&] {
      std::string header = "IR Dump After " + arg + " Failed";
      if (o.printIRAfterFailure) printDump(header);
      writeDumpFile(index, arg, header);
      return failure();
    };
    if (result.failed()) return failWithDump();

    bool changed = result.didChange();
    if (needFingerprint) {
      bool textChanged = fingerprint(m) != before;
      if (o.checkChangeClaims && !changed && textChanged) {
        ctx.emitError(moduleLocation(m), ir::DiagCategory::Internal) << "pass '" << arg
                                         << "' changed the IR but reported no change; this is a bug in the pass";
        return failWithDump();
      }
      changed = changed || textChanged;
      timings_.back().changed = changed;
    }

    std::string afterHeader = "IR Dump After " + arg;
    bool printedAfter = false;
    if (o.printIRAfterAll || listed(o.printIRAfter, arg) || (o.printIRAfterChange && changed)) {
      printDump(afterHeader);
      printedAfter = true;
    }
    if (!writeDumpFile(index, arg, afterHeader)) return failure();

    if (o.verifyEach && changed) {
      std::vector<ir::Diagnostic> diags;
      LogicalResult verified = success();
      {
        ir::DiagnosticCollector collector(ctx.diag());
        verified = ir::verify(m, ir::VerifyOptions{&device_});
        diags = collector.diagnostics();
      }
      // Re-emit with the pass named, so the reader knows which pass broke the IR: a
      // pass that leaves invalid IR is a bug in the pass, whatever the rule broken.
      for (ir::Diagnostic &d : diags) {
        d.message = "after pass '" + arg + "': " + d.message;
        if (d.severity == ir::Severity::Error) d.category = ir::DiagCategory::Internal;
        ctx.diag().emit(std::move(d));
      }
      if (failed(verified)) {
        if (o.printIRAfterFailure && !printedAfter) printDump("IR Dump After " + arg + " Failed");
        return failure();
      }
    }
    if (o.afterPass) o.afterPass(arg, m);
  }
  return success();
}

std::vector<PassStatisticValue> PassManager::statistics() const {
  std::vector<PassStatisticValue> out;
  for (const std::unique_ptr<Pass> &pass : passes_)
    for (const PassStatistic *s : pass->statistics())
      out.push_back({pass->argument().str(), s->name(), s->value()});
  return out;
}

void PassManager::printTiming(llvm::raw_ostream &os) const {
  double total = 0;
  for (const PassTiming &t : timings_) total += t.seconds;
  printBanner(os, "... Execution time report ...");
  os << absl::StrFormat("  Total Execution Time: %.4f seconds\n\n", total);
  os << "  ----Wall Time----  ----Name----\n";
  for (const PassTiming &t : timings_) {
    double share = total > 0 ? 100.0 * t.seconds / total : 0.0;
    os << absl::StrFormat("  %.4f (%5.1f%%)  %s%s\n", t.seconds, share, t.pass,
                          t.skipped ? " (skipped)" : "");
  }
  os << absl::StrFormat("  %.4f (%5.1f%%)  Total\n", total, total > 0 ? 100.0 : 0.0);
}

void PassManager::printStatistics(llvm::raw_ostream &os) const {
  printBanner(os, "... Pass statistics report ...");
  for (const std::unique_ptr<Pass> &pass : passes_) {
    if (pass->statistics().empty()) continue;
    os << pass->argument() << "\n";
    for (const PassStatistic *s : pass->statistics())
      os << "  (S) " << s->value() << " " << s->name() << " - " << s->description() << "\n";
  }
}

} // namespace ptoc::passes
