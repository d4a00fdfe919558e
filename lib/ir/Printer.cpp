// Printer for the ptoc IR text form (docs/ir.md). Names every value of a function
// once, then writes lines into a buffer flushed to the stream in large chunks.
#include "ptoc/ir/Printer.h"

#include <charconv>
#include <string>
#include <vector>

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Allocator.h"

#include "Lexer.h"
#include "ptoc/ir/Context.h"

namespace ptoc::ir {

namespace {

void appendUInt(std::string &out, uint64_t v) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}

bool isNumericName(llvm::StringRef s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!isDigit(c)) return false;
  return true;
}

/// The names printed for the values of one function (see docs/ir.md: hints first,
/// then %argN for unnamed arguments and %0, %1, ... for unnamed results).
class ValueNamer {
public:
  ValueNamer() = default;
  explicit ValueNamer(const Func &f) { nameFunc(f); }

  /// Appends "%name" for `v` (a placeholder for values this function does not own).
  void append(std::string &out, const Value *v) const {
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

private:
  static constexpr uint64_t kNumericTag = uint64_t(1) << 63;

  /// What is known about one textual name in this function.
  struct NameState {
    bool isHint = false;  ///< some value asked for this name
    bool used = false;    ///< some value prints with this name
    unsigned nextSuffix = 0; ///< last suffix tried for this base name
  };
  using NameTable = llvm::StringMap<NameState, llvm::BumpPtrAllocator &>;

  /// A printable form of `hint`: itself when it is a valid name, otherwise a copy with
  /// invalid characters replaced by '_'. Empty (no hint) for numeric or empty hints,
  /// which the parser would not keep.
  llvm::StringRef sanitize(Identifier hint) {
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
  llvm::StringRef claim(llvm::StringMapEntry<NameState> &entry, bool generated) {
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

  void setName(const Value *v, llvm::StringRef name) {
    names_[v] = texts_.size();
    texts_.push_back(name);
  }

  void nameFunc(const Func &f) {
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

  llvm::BumpPtrAllocator alloc_;
  NameTable table_{alloc_};
  llvm::DenseMap<const Value *, uint64_t> names_;
  std::vector<llvm::StringRef> texts_;
};

/// Writes IR text into `out`, flushing to `os` (when given) in large chunks.
class Printer {
public:
  Printer(std::string &out, llvm::raw_ostream *os, const PrintOptions &opts)
      : out_(out), os_(os), opts_(opts) {}
  ~Printer() { flush(); }

  void printModule(const Module &m) {
    bool first = true;
    for (const Func &f : m.funcs()) {
      if (!first) out_ += '\n';
      first = false;
      printFunc(f);
    }
  }

  void printFunc(const Func &f) {
    ValueNamer names(f);
    out_ += "func @";
    llvm::StringRef name = f.name();
    if (isBareIdentifier(name) || isNumericName(name))
      out_ += name;
    else
      appendQuotedString(out_, name);
    out_ += '(';
    for (const Value &a : f.args()) {
      if (a.index()) out_ += ", ";
      names.append(out_, &a);
      out_ += ": ";
      appendType(a.type());
    }
    out_ += ')';
    llvm::ArrayRef<Type> results = f.resultTypes();
    if (results.size() == 1) {
      out_ += " -> ";
      appendType(results[0]);
    } else if (results.size() > 1) {
      out_ += " -> (";
      for (size_t i = 0; i < results.size(); ++i) {
        if (i) out_ += ", ";
        appendType(results[i]);
      }
      out_ += ')';
    }
    appendLoc(f.loc());
    out_ += " {\n";
    for (const Operation &op : f.ops()) {
      out_ += "  ";
      printOp(op, names);
      out_ += '\n';
      if (os_ && out_.size() >= kFlushBytes) flush();
    }
    out_ += "}\n";
  }

  void printOp(const Operation &op, const ValueNamer &names) {
    unsigned numResults = op.numResults();
    for (unsigned i = 0; i < numResults; ++i) {
      if (i) out_ += ", ";
      names.append(out_, op.result(i));
    }
    if (numResults) out_ += " = ";
    out_ += op.name();
    for (unsigned i = 0, e = op.numOperands(); i < e; ++i) {
      out_ += i ? ", " : " ";
      names.append(out_, op.operand(i));
    }
    appendAttrs(op);
    for (unsigned i = 0; i < numResults; ++i) {
      out_ += i ? ", " : " : ";
      appendType(op.resultType(i));
    }
    appendLoc(op.loc());
  }

private:
  static constexpr size_t kFlushBytes = size_t(1) << 20;

  void flush() {
    if (!os_ || out_.empty()) return;
    os_->write(out_.data(), out_.size());
    out_.clear();
  }

  /// The dictionary's text, cached by its storage, split where `sg` goes.
  struct DictText {
    std::string text; ///< "{...}" without `sg`
    size_t split;     ///< where ", sg = N" / "sg = N, " goes (after '{' or an entry)
    bool hasBefore;   ///< entries before the split
    bool hasAfter;    ///< entries after it
  };

  /// " {attrs}" for `op` (nothing when it has none): its dictionary with the
  /// subgraph id merged in sorted key position.
  void appendAttrs(const Operation &op) {
    Attribute dict = op.attrDict();
    int64_t sg = op.subgraphId();
    bool hasDict = dict && dict.isDict() && !dict.getDict().empty();
    if (!hasDict && sg < 0) return;
    out_ += ' ';
    if (!hasDict) {
      out_ += "{sg = ";
      appendInt(sg);
      out_ += '}';
      return;
    }
    auto [it, inserted] = attrText_.try_emplace(dict.storage());
    DictText &t = it->second;
    if (inserted) {
      t.text = "{";
      t.split = 0;
      bool first = true;
      for (const NamedAttr &e : dict.getDict()) {
        if (!t.split && llvm::StringRef("sg") < e.name.str()) {
          t.split = t.text.size();
          t.hasBefore = !first;
        }
        if (!first) t.text += ", ";
        first = false;
        if (isBareIdentifier(e.name.str()))
          t.text += e.name.str();
        else
          appendQuotedString(t.text, e.name.str());
        t.text += " = ";
        t.text += e.value.str();
      }
      if (!t.split) {
        t.split = t.text.size();
        t.hasBefore = true;
      }
      t.hasAfter = t.split != t.text.size();
      t.text += '}';
    }
    if (sg < 0) {
      out_ += t.text;
      return;
    }
    // Entries after the split start with ", " (unless none come before it).
    out_.append(t.text, 0, t.split);
    if (t.hasBefore) out_ += ", ";
    out_ += "sg = ";
    appendInt(sg);
    if (!t.hasBefore && t.hasAfter) out_ += ", ";
    out_.append(t.text, t.split, std::string::npos);
  }

  void appendInt(int64_t v) {
    char buf[24];
    auto res = std::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, res.ptr);
  }

  void appendType(Type t) {
    auto [it, inserted] = typeText_.try_emplace(t.storage());
    if (inserted) it->second = t.str();
    out_ += it->second;
  }

  void appendLoc(Location loc) {
    if (!opts_.printLocations || !loc.isKnown()) return;
    auto [it, inserted] = fileText_.try_emplace(loc.file);
    if (inserted) appendQuotedString(it->second, loc.fileName());
    out_ += " loc(";
    out_ += it->second;
    out_ += ':';
    appendUInt(out_, loc.line);
    out_ += ':';
    appendUInt(out_, loc.col);
    out_ += ')';
  }

  std::string &out_;
  llvm::raw_ostream *os_;
  PrintOptions opts_;
  llvm::DenseMap<const void *, std::string> typeText_;
  llvm::DenseMap<const void *, DictText> attrText_;
  llvm::DenseMap<const char *, std::string> fileText_;
};

} // namespace

void printModule(const Module &m, llvm::raw_ostream &os, const PrintOptions &opts) {
  std::string buffer;
  Printer(buffer, &os, opts).printModule(m);
}

void printFunc(const Func &f, llvm::raw_ostream &os, const PrintOptions &opts) {
  std::string buffer;
  Printer(buffer, &os, opts).printFunc(f);
}

std::string toString(const Module &m, const PrintOptions &opts) {
  std::string out;
  Printer(out, nullptr, opts).printModule(m);
  return out;
}

std::string toString(const Func &f, const PrintOptions &opts) {
  std::string out;
  Printer(out, nullptr, opts).printFunc(f);
  return out;
}

std::string opToString(const Operation &op) {
  std::string out;
  Printer printer(out, nullptr, PrintOptions{});
  if (const Func *f = op.parentFunc()) {
    printer.printOp(op, ValueNamer(*f));
  } else {
    printer.printOp(op, ValueNamer());
  }
  return out;
}

} // namespace ptoc::ir
