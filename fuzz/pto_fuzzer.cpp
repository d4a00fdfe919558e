// Fuzz target: the .pto text form through what `ptoc-opt --canonicalize --cse --dce
// --verify-roundtrip` does: parse, verify against the a2 device, run the clean-up
// passes (with the verifier after each and their change claims checked), print, and
// parse the printed text back. Findings: crashes and sanitizer reports, a clean-up
// pass failing on verified IR (they have no user errors: the verifier after a pass
// or the change-claim check failed), printed IR that does not parse back, prints
// differently or does not verify. (Parse and verify errors are the input's.)
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "FuzzCheck.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Diagnostics.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/ir/Printer.h"
#include "ptoc/ir/Verifier.h"
#include "ptoc/passes/PassManager.h"
#include "ptoc/passes/Passes.h"
#include "ptoc/target/DeviceSpec.h"

using namespace ptoc;

namespace {

const target::DeviceSpec &device() {
  static const target::DeviceSpec a2 = *target::DeviceSpec::preset("a2");
  return a2;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  ir::Context ctx;
  ir::DiagnosticCollector diags(ctx.diag());
  std::unique_ptr<ir::Module> module = ir::parseModule(text, "fuzz.pto", ctx);
  if (!module) return 0;
  ir::VerifyOptions verifyOptions{&device()};
  bool verified = succeeded(ir::verify(*module, verifyOptions));
  if (!verified) return 0;

  passes::PassManagerOptions options;
  options.verifyEach = true;
  options.checkChangeClaims = true;
  passes::PassManager pm(device(), options);
  pm.addPass(passes::createCanonicalizePass());
  pm.addPass(passes::createCSEPass());
  pm.addPass(passes::createDCEPass());
  // The clean-up passes have no user errors: on verified IR any failure is a bug.
  if (failed(pm.run(*module))) fuzz::finding("clean-up passes failed:\n" + diags.errorText());

  std::string printed = ir::toString(*module);
  ir::Context again;
  ir::DiagnosticCollector againDiags(again.diag());
  std::unique_ptr<ir::Module> reparsed = ir::parseModule(printed, "printed.pto", again);
  if (!reparsed)
    fuzz::finding("printed IR does not parse back:\n" + againDiags.errorText() + "\n" + printed);
  if (ir::toString(*reparsed) != printed)
    fuzz::finding("printed IR prints differently after parsing:\n" + printed);
  if (failed(ir::verify(*reparsed, verifyOptions)))
    fuzz::finding("printed IR does not verify after parsing:\n" + againDiags.errorText() +
                  "\n" + printed);
  return 0;
}
