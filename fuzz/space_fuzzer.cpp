// Fuzz target: the search-space files of `ptoc tune FILE.pto --space SPACE.json` and
// Python's `ptoc.tune(space=)`: parseSearchSpace, then what the tuner does with a
// space before it compiles anything: its own JSON form read back, configs picked by
// ordinal and read back from their JSON, and configs applied to the tile shapes of
// examples/softmax.pto and examples/matmul.pto, whose text must then parse and verify
// or fail with a user error. Findings: crashes and sanitizer reports, an internal
// error, a space or config whose JSON reads back different.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "FuzzCheck.h"
#include "llvm/Support/MemoryBuffer.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Diagnostics.h"
#include "ptoc/ir/Parser.h"
#include "ptoc/ir/Verifier.h"
#include "ptoc/session/Tuner.h"
#include "ptoc/target/DeviceSpec.h"
#include "ptoc/tune/SearchSpace.h"

using namespace ptoc;

namespace {

// The functions configs are applied to: a vector-only and a cube operator.
const std::vector<std::string> &modules() {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> out;
    for (const char *name : {"softmax.pto", "matmul.pto"}) {
      std::string path = std::string(PTOC_SOURCE_DIR) + "/examples/" + name;
      llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text = llvm::MemoryBuffer::getFile(path);
      if (!text) {
        std::fprintf(stderr, "space_fuzzer: cannot read %s\n", path.c_str());
        std::exit(1);
      }
      out.push_back((*text)->getBuffer().str());
    }
    return out;
  }();
  return texts;
}

const target::DeviceSpec &device() {
  static const target::DeviceSpec a2 = *target::DeviceSpec::preset("a2");
  return a2;
}

bool sameSpace(const tune::SearchSpace &a, const tune::SearchSpace &b) {
  if (a.numDimensions() != b.numDimensions()) return false;
  for (size_t d = 0; d < a.numDimensions(); ++d) {
    const tune::Dimension &x = a.dimensions()[d], &y = b.dimensions()[d];
    if (x.name != y.name || x.kind != y.kind || x.values != y.values) return false;
  }
  return true;
}

void checkConfig(const tune::SearchSpace &space, uint64_t ordinal) {
  tune::Config config = space.configAt(ordinal);
  if (space.ordinalOf(config) != ordinal) fuzz::finding("ordinalOf(configAt(n)) != n");
  std::string text = space.configToString(config);
  absl::StatusOr<tune::Config> again =
      space.configFromJson(llvm::json::Value(space.configToJson(config)));
  if (!again.ok() || *again != config)
    fuzz::finding("config " + text + " does not read back from its JSON");
  for (const std::string &module : modules()) {
    absl::StatusOr<session::TunedConfig> applied =
        tune::applyConfig(space, config, module, session::PassKnobs{});
    if (!applied.ok()) {
      fuzz::checkNotABug(applied.status(), "applyConfig");
      continue;
    }
    ir::Context ctx;
    ir::DiagnosticCollector diags(ctx.diag());
    std::unique_ptr<ir::Module> m = ir::parseModule(applied->moduleText, "tuned.pto", ctx);
    if (!m) fuzz::finding("a config applied to a module does not parse:\n" + diags.errorText());
    // A tile value may not fit the op: a user error, reported by the verifier.
    (void)ir::verify(*m, ir::VerifyOptions{&device()});
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef json(reinterpret_cast<const char *>(data), size);
  absl::StatusOr<tune::SearchSpace> space = tune::parseSearchSpace(json);
  if (!space.ok()) {
    fuzz::checkNotABug(space.status(), "parseSearchSpace");
    return 0;
  }
  absl::StatusOr<tune::SearchSpace> again =
      tune::SearchSpace::fromJson(llvm::json::Value(space->toJson()));
  if (!again.ok() || !sameSpace(*space, *again))
    fuzz::finding("the space's JSON form does not read back as the same space");

  if (space->isEnumerable() && space->size() > 0) {
    uint64_t n = space->size();
    for (uint64_t ordinal : {uint64_t(0), n / 2, n - 1}) checkConfig(*space, ordinal);
  }
  for (const std::string &module : modules())
    (void)tune::writtenConfig(*space, module, session::PassKnobs{});
  return 0;
}
