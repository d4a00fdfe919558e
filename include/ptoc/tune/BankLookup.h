// What the knowledge bank knows of one function, applied to it: the function's bank
// key, and the best record of that key rewritten into the function's tile shapes and
// pass knobs (session::lookupTuned and tuneModule answer from it without searching).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"
#include "ptoc/passes/PassKnobs.h"
#include "ptoc/target/DeviceSpec.h"
#include "ptoc/tune/Bank.h"
#include "ptoc/tune/TuneSpace.h"

namespace ptoc::tune {

/// The bank key of the (only) function of `moduleText` on `device`, for this
/// `ptocVersion`.
absl::StatusOr<BankKey> bankKeyOf(llvm::StringRef moduleText, const target::DeviceSpec &device,
                                  llvm::StringRef ptocVersion);

/// A config the knowledge bank knows for a function, applied to it.
struct BankAnswer {
  TunedConfig config;
  double simulatedUs = 0;
  std::string strategy;
};

/// The bank's best record of `key`, applied to `moduleText` (with `baseKnobs` under
/// its knobs); nullopt on a miss. A record that no longer applies (its tile count
/// differs from the function's) is a miss, with a warning appended to `warnings`, as
/// are the bank's own.
absl::StatusOr<std::optional<BankAnswer>> answerFromBank(Bank &bank, const BankKey &key,
                                                         llvm::StringRef moduleText,
                                                         const passes::PassKnobs &baseKnobs,
                                                         std::vector<std::string> &warnings);

} // namespace ptoc::tune
