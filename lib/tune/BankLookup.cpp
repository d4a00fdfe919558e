// The bank's answer for one function (see BankLookup.h).
#include "ptoc/tune/BankLookup.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "llvm/Support/JSON.h"
#include "ptoc/ir/Context.h"
#include "ptoc/support/BoundedJson.h"

namespace ptoc::tune {
namespace {

/// The knob values of a bank record's config (a JSON object of knob -> value).
absl::StatusOr<std::map<std::string, KnobValue>> configValues(llvm::StringRef text) {
  absl::StatusOr<llvm::json::Value> json = support::parseJson(text, "");
  if (!json.ok()) return json.status();
  const llvm::json::Object *object = json->getAsObject();
  if (!object) return absl::InvalidArgumentError("a config must be a JSON object");
  std::map<std::string, KnobValue> values;
  for (const auto &[name, value] : *object) {
    absl::StatusOr<KnobValue> v = knobValueFromJson(value, name.str());
    if (!v.ok()) return v.status();
    values[name.str()] = *std::move(v);
  }
  return values;
}

} // namespace

absl::StatusOr<BankKey> bankKeyOf(llvm::StringRef moduleText, const target::DeviceSpec &device,
                                  llvm::StringRef ptocVersion) {
  absl::StatusOr<ParsedFunc> parsed = parseFunc(moduleText);
  if (!parsed.ok()) return parsed.status();
  ir::Func *func = parsed->func;
  BankKey key;
  key.ptocVersion = ptocVersion.str();
  key.deviceHash = device.contentHash();
  key.deviceName = device.name;
  key.graphHash = graphHash(*func);
  key.signature = signatureOf(*func);
  return key;
}

absl::StatusOr<std::optional<BankAnswer>> answerFromBank(Bank &bank, const BankKey &key,
                                                         llvm::StringRef moduleText,
                                                         const passes::PassKnobs &baseKnobs,
                                                         std::vector<std::string> &warnings) {
  absl::StatusOr<std::optional<BankRecord>> best = bank.lookupBest(key);
  warnings.insert(warnings.end(), bank.warnings().begin(), bank.warnings().end());
  if (!best.ok()) return best.status();
  if (!*best) return std::optional<BankAnswer>();
  absl::StatusOr<std::map<std::string, KnobValue>> values = configValues((*best)->config);
  absl::StatusOr<TunedConfig> applied = values.ok()
                                            ? applyConfigValues(*values, moduleText, baseKnobs)
                                            : absl::StatusOr<TunedConfig>(values.status());
  if (!applied.ok()) {
    warnings.push_back(absl::StrCat("bank record ", (*best)->config,
                                    " does not apply to this function (",
                                    std::string(applied.status().message()), "); ignoring it"));
    return std::optional<BankAnswer>();
  }
  applied->configJson = (*best)->config;
  return std::optional<BankAnswer>(
      BankAnswer{*std::move(applied), (*best)->simulatedUs, (*best)->strategy});
}

} // namespace ptoc::tune
