// GroupSetting: the keys of `*_setting` options, their text form and the lookup.
#include "ptoc/passes/GroupSetting.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/StringExtras.h"

namespace ptoc::passes {

namespace {
/// A non-empty run of decimal digits as a non-negative integer.
std::optional<int64_t> parseUnsigned(llvm::StringRef digits) {
  if (digits.empty() || !llvm::all_of(digits, llvm::isDigit)) return std::nullopt;
  int64_t v;
  if (digits.getAsInteger(10, v)) return std::nullopt;
  return v;
}
} // namespace

std::string groupKeyToString(const GroupKey &key) {
  if (key.perFunction()) return absl::StrCat("func", key.func, "_", key.order);
  return absl::StrCat(key.order);
}

std::optional<GroupKey> parseGroupKey(llvm::StringRef text) {
  llvm::StringRef t = text.trim();
  for (char quote : {'"', '\''})
    if (t.size() >= 2 && t.front() == quote && t.back() == quote) {
      t = t.drop_front().drop_back().trim();
      break;
    }
  if (t.consume_front("func")) {
    auto [funcText, orderText] = t.split('_');
    std::optional<int64_t> func = parseUnsigned(funcText), order = parseUnsigned(orderText);
    if (!func || !order) return std::nullopt;
    return GroupKey::inFunc(*func, *order);
  }
  int64_t order;
  if (t.empty() || t.getAsInteger(10, order)) return std::nullopt;
  return GroupKey(order);
}

std::string groupSettingToString(const GroupSetting &setting) {
  std::vector<std::string> plain, perFunction, defaults;
  for (const auto &[key, n] : setting) {
    std::string entry = absl::StrCat(groupKeyToString(key), ":", n);
    if (key.perFunction()) perFunction.push_back(std::move(entry));
    else if (key.order < 0) defaults.push_back(std::move(entry));
    else plain.push_back(std::move(entry));
  }
  plain.insert(plain.end(), perFunction.begin(), perFunction.end());
  plain.insert(plain.end(), defaults.begin(), defaults.end());
  return absl::StrCat("{", absl::StrJoin(plain, ","), "}");
}

std::optional<std::pair<GroupKey, int64_t>> lookupGroupSetting(const GroupSetting &setting,
                                                               unsigned func, int64_t order) {
  for (GroupKey key : {GroupKey::inFunc(func, order), GroupKey(order), GroupKey(-1)})
    if (auto it = setting.find(key); it != setting.end()) return *it;
  return std::nullopt;
}

} // namespace ptoc::passes
