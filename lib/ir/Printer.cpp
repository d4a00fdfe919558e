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
#include "llvm/ADT/STLExtras.h"
#include "ptoc/ir/Context.h"
#include "ptoc/ir/OpDef.h"
#include "ptoc/ir/ValueNamer.h"

namespace ptoc::ir {

namespace {

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

  /// Whether `op`'s attribute `name` is debug info (source locations) left out
  /// unless locations are printed.
  bool hidden(const Operation &op, llvm::StringRef name) const {
    if (opts_.printLocations) return false;
    const AttrSpec *spec = op.def().findAttr(name);
    return spec && spec->shape == AttrShape::Locations;
  }

  /// " {attrs}" for `op` (nothing when it has none): its dictionary with the
  /// subgraph id merged in sorted key position (debug-info attributes only with
  /// locations).
  void appendAttrs(const Operation &op) {
    Attribute dict = op.attrDict();
    int64_t sg = op.subgraphId();
    bool hasDict = dict && dict.isDict() &&
                   llvm::any_of(dict.getDict(),
                                [&](const NamedAttr &e) { return !hidden(op, e.name.str()); });
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
        if (hidden(op, e.name.str())) continue;
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
