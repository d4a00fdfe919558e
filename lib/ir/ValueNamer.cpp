// ValueNamer: how the printer names values (see ValueNamer.h).
#include "ptoc/ir/ValueNamer.h"

#include <charconv>

#include "Lexer.h"
#include "ptoc/ir/Operation.h"

namespace ptoc::ir {

void ValueNamer::append(std::string &out, const Value *v) const {
    out += '%';
    if (!v) {
      out += "<<null>>";
      return;
    }
    auto it = names_.find(v);
    if (it == names_.end()) {
      out += "<<unknown>>";
      return;
    }
    uint64_t slot = it->second;
    if (slot & kNumericTag)
      appendUInt(out, slot & ~kNumericTag);
    else
      out += texts_[slot];
  }

std::string ValueNamer::name(const Value *v) const {
  std::string out;
  append(out, v);
  if (out.find("<<") != std::string::npos) return {};
  return out.substr(1);
}

/// A printable form of `hint`: itself when it is a valid name, otherwise a copy with
/// invalid characters replaced by '_'. Empty (no hint) for numeric or empty hints,
/// which the parser would not keep.
llvm::StringRef ValueNamer::sanitize(Identifier hint) {
    llvm::StringRef h = hint.str();
    if (h.empty()) return {};
    if (isIdStart(h[0])) {
      bool valid = true;
      for (char c : h.drop_front()) valid &= isIdChar(c);
      if (valid) return h;
    } else if (isNumericName(h)) {
      return {};
    }
    std::string s;
    if (isDigit(h[0])) s += '_';
    for (char c : h) s += isIdChar(c) ? c : '_';
    return llvm::StringRef(s).copy(alloc_);
  }

/// Takes `entry`'s name when it is free (a generated name also yields to a hint),
/// otherwise the first `name_N` that is neither used nor a hint.
llvm::StringRef ValueNamer::claim(llvm::StringMapEntry<NameState> &entry, bool generated) {
    NameState &state = entry.second;
    if (!state.used && !(generated && state.isHint)) {
      state.used = true;
      return entry.first();
    }
    llvm::StringRef base = entry.first(); // entries are stable across rehashing
    std::string cand;
    while (true) {
      cand = base.str();
      cand += '_';
      appendUInt(cand, ++state.nextSuffix);
      auto [it, inserted] = table_.try_emplace(cand);
      if (!it->second.isHint && !it->second.used) {
        it->second.used = true;
        return it->first();
      }
    }
  }

void ValueNamer::setName(const Value *v, llvm::StringRef name) {
    names_[v] = texts_.size();
    texts_.push_back(name);
  }

void ValueNamer::nameFunc(const Func &f) {
    // Hints first, so a generated name never takes a name some value asked for.
    for (const Value &a : f.args())
      if (llvm::StringRef h = sanitize(a.nameHint()); !h.empty())
        table_[h].isHint = true;
    for (const Operation &op : f.ops())
      for (const Value &r : op.results())
        if (r.nameHint())
          if (llvm::StringRef h = sanitize(r.nameHint()); !h.empty()) table_[h].isHint = true;

    names_.reserve(f.numArgs() + f.numOps());
    for (const Value &a : f.args()) {
      llvm::StringRef h = sanitize(a.nameHint());
      if (!h.empty()) {
        setName(&a, claim(*table_.find(h), /*generated=*/false));
        continue;
      }
      std::string gen = "arg";
      appendUInt(gen, a.index());
      setName(&a, claim(*table_.try_emplace(gen).first, /*generated=*/true));
    }
    uint64_t counter = 0;
    for (const Operation &op : f.ops())
      for (const Value &r : op.results()) {
        llvm::StringRef h = r.nameHint() ? sanitize(r.nameHint()) : llvm::StringRef();
        if (h.empty())
          names_[&r] = kNumericTag | counter++;
        else
          setName(&r, claim(*table_.find(h), /*generated=*/false));
      }
  }

} // namespace ptoc::ir
