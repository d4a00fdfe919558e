// Matching of emitted diagnostics against expected-* comments.
#include "DiagnosticVerifier.h"

#include "llvm/ADT/StringExtras.h"

namespace ptoc::tools {

DiagnosticVerifier::DiagnosticVerifier(llvm::StringRef text, llvm::StringRef fileName,
                                       unsigned firstLine)
    : fileName_(fileName.str()) {
  static const std::pair<llvm::StringRef, ir::Severity> kKinds[] = {
      {"expected-error", ir::Severity::Error},
      {"expected-warning", ir::Severity::Warning},
      {"expected-note", ir::Severity::Note},
      {"expected-remark", ir::Severity::Remark},
  };
  unsigned line = firstLine;
  while (!text.empty()) {
    auto [cur, rest] = text.split('\n');
    text = rest;
    unsigned thisLine = line++;
    size_t comment = cur.find("//");
    if (comment == llvm::StringRef::npos) continue;
    llvm::StringRef body = cur.drop_front(comment + 2).ltrim();
    for (auto [prefix, sev] : kKinds) {
      if (!body.consume_front(prefix)) continue;
      unsigned target = thisLine;
      if (body.consume_front("@")) {
        bool plus = body.consume_front("+"), minus = !plus && body.consume_front("-");
        unsigned n = 0;
        if (body.consumeInteger(10, n)) {
          scanErrors_.push_back(fileName_ + ":" + std::to_string(thisLine) +
                                ": malformed line offset after '@' in " + prefix.str());
          break;
        }
        target = plus ? thisLine + n : minus ? thisLine - n : n;
      }
      body = body.ltrim();
      size_t open = body.find("{{"), close = body.rfind("}}");
      if (open != 0 || close == llvm::StringRef::npos || close < 2) {
        scanErrors_.push_back(fileName_ + ":" + std::to_string(thisLine) + ": " +
                              prefix.str() + " needs its text in {{...}}");
        break;
      }
      expected_.push_back({sev, target, thisLine, body.slice(2, close).str()});
      break;
    }
  }
}

static const char *severityWord(ir::Severity s) {
  switch (s) {
  case ir::Severity::Error: return "error";
  case ir::Severity::Warning: return "warning";
  case ir::Severity::Note: return "note";
  case ir::Severity::Remark: return "remark";
  }
  return "error";
}

bool DiagnosticVerifier::verify(llvm::raw_ostream &os) {
  bool ok = scanErrors_.empty();
  for (const std::string &e : scanErrors_) os << e << "\n";
  for (const ir::Diagnostic &d : seen_) {
    bool matched = false;
    for (Expected &e : expected_) {
      if (e.matched || e.severity != d.severity || e.line != d.loc.line ||
          d.loc.fileName() != fileName_ || d.message.find(e.text) == std::string::npos)
        continue;
      e.matched = matched = true;
      break;
    }
    if (!matched) {
      ok = false;
      os << d.loc.str() << ": unexpected " << severityWord(d.severity) << ": " << d.message
         << "\n";
    }
  }
  for (const Expected &e : expected_)
    if (!e.matched) {
      ok = false;
      os << fileName_ << ":" << e.commentLine << ": expected " << severityWord(e.severity)
         << " on line " << e.line << " was not produced: \"" << e.text << "\"\n";
    }
  return ok;
}

} // namespace ptoc::tools
