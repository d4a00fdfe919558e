// The check of a merge pass's `*_setting` against the module (see SettingKeys.h).
#include "SettingKeys.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ptoc/analysis/Subgraphs.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/Level.h"
#include "ptoc/ir/Operation.h"

namespace ptoc::passes {
namespace {

/// Keys listed in a diagnostic before "and N more".
constexpr size_t kKeysListed = 24;

/// "AIV" / "AIC", as the summary names core kinds.
std::string kindName(target::CoreKind core) {
  std::string kind(target::coreKindName(core));
  for (char &c : kind) c = char(std::toupper(static_cast<unsigned char>(c)));
  return kind;
}

/// The groups of one core kind per function of a module, from the subgraph tables.
struct ModuleGroups {
  /// [function position] -> hash orders of its groups of the core kind (empty for a
  /// function without a table).
  std::vector<std::set<int64_t>> orders;
  std::vector<bool> control; ///< [function position] runs loops (not a root function)
  size_t rootFunctions = 0;

  ModuleGroups(ir::Module &m, target::CoreKind core)
      : orders(m.numFuncs()), control(m.numFuncs(), false) {
    for (size_t f = 0; f < m.numFuncs(); ++f) {
      ir::Func &func = m.func(f);
      control[f] = ir::levelOf(func) == ir::Level::Control;
      if (!control[f]) ++rootFunctions;
      for (const ir::Operation &op : func.ops()) {
        if (op.code() != ir::OpCode::Subgraph) continue;
        ir::Attribute kind = op.attr("core"), order = op.attr("hash_order");
        if (!kind || !order || !kind.isString() || !order.isInt()) continue;
        if (target::parseCoreKind(kind.getString().str()) == core)
          orders[f].insert(order.getInt());
      }
    }
  }

  bool hasPlain(int64_t order) const {
    for (const std::set<int64_t> &o : orders)
      if (o.count(order)) return true;
    return false;
  }

  /// "valid keys (the AIV groups): func1_0, func2_0; a plain hash order (0) sets that
  /// group in every root function, -1 is the default"; with one root function the
  /// plain orders come first ("0, 1 (or func0_0, func0_1), and -1 for the default").
  std::string validKeys(target::CoreKind core) const {
    std::vector<std::string> perFunction;
    std::set<int64_t> plain;
    for (size_t f = 0; f < orders.size(); ++f)
      for (int64_t order : orders[f]) {
        perFunction.push_back(analysis::hashOrderKey(unsigned(f), order));
        plain.insert(order);
      }
    std::string kind = kindName(core);
    if (perFunction.empty())
      return absl::StrCat("the module has no ", kind, " groups, so no key but -1 (the default) "
                          "applies");
    auto listed = [](const std::vector<std::string> &keys) {
      std::vector<std::string> shown(keys.begin(),
                                     keys.begin() + std::min(keys.size(), kKeysListed));
      std::string text = absl::StrJoin(shown, ", ");
      if (keys.size() > kKeysListed)
        absl::StrAppend(&text, " and ", keys.size() - kKeysListed, " more");
      return text;
    };
    std::vector<std::string> plainKeys;
    for (int64_t order : plain) plainKeys.push_back(absl::StrCat(order));
    if (rootFunctions <= 1)
      return absl::StrCat("valid keys (the ", kind, " groups): ", listed(plainKeys), " (or ",
                          listed(perFunction), "), and -1 for the default");
    return absl::StrCat("valid keys (the ", kind, " groups): ", listed(perFunction),
                        "; a plain hash order (", listed(plainKeys),
                        ") sets that group in every root function, -1 is the default");
  }
};

} // namespace

bool checkGroupSetting(ir::Module &m, const GroupSetting &setting, int64_t mode,
                       const SettingOwner &owner) {
  ir::Context &ctx = m.context();
  ir::Location where = m.numFuncs() ? m.func(0).loc() : ir::Location();
  auto prefix = [&] {
    return absl::StrCat("'", owner.pass.str(), "': ", owner.option.str());
  };
  bool failed = false;
  for (const auto &[key, n] : setting)
    if (!key.valid() || (n < 1 && n != kAutomaticCount)) {
      ctx.emitError(where, ir::DiagCategory::Option)
          << prefix() << " entry {" << groupKeyToString(key) << ": " << n
          << "} is invalid; a key is " << kGroupKeyForms << "; a value is "
          << owner.countMeaning << " (>= 1; 1 = no merge; 0 = the automatic count)";
      failed = true;
    }
  if (failed || mode != 2) return !failed;

  ModuleGroups groups(m, owner.core);
  std::string kind = kindName(owner.core);
  for (const auto &[key, n] : setting) {
    if (key.isDefault()) continue;
    std::string keyText = groupKeyToString(key);
    if (!key.perFunction()) {
      if (!groups.hasPlain(key.order))
        ctx.emitWarning(where).in(ir::DiagCategory::Option)
            << prefix() << " key " << keyText << " names no " << kind
            << " group (no root function has one of hash order " << key.order
            << "), so the entry is unused; " << groups.validKeys(owner.core);
      continue;
    }
    size_t f = static_cast<size_t>(key.func);
    if (f >= m.numFuncs() || groups.control[f]) {
      std::string what =
          f >= m.numFuncs()
              ? absl::StrCat("function ", f, ", but the module has ", m.numFuncs(), " function",
                             m.numFuncs() == 1 ? "" : "s", " (F counts from 0)")
              : absl::StrCat("function ", f, ", @", m.func(f).name().str(),
                             ", which runs loops: its work is in the root functions its "
                             "loops run (the bodies and the segments between loops)");
      ctx.emitError(where, ir::DiagCategory::Option)
          << prefix() << " key " << keyText << " names " << what << "; "
          << groups.validKeys(owner.core);
      failed = true;
      continue;
    }
    if (!groups.orders[f].count(key.order))
      ctx.emitWarning(m.func(f).loc()).in(ir::DiagCategory::Option)
          << prefix() << " key " << keyText << " names no " << kind << " group of @"
          << m.func(f).name() << " (function " << f << "), so the entry is unused; "
          << groups.validKeys(owner.core);
  }
  return !failed;
}

} // namespace ptoc::passes
