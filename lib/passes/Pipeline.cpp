// Pipeline strings: parsing `canonicalize,partition{pg-lower-bound=256}` against a
// registry (expanding named pipelines) and writing pipelines back as text.
#include "ptoc/passes/Pipeline.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/StringExtras.h"

namespace ptoc::passes {

std::string PipelineElement::str() const {
  return info ? info->argument + options.str() : "<null>";
}

std::string pipelineToString(const std::vector<PipelineElement> &pipeline) {
  std::vector<std::string> parts;
  for (const PipelineElement &e : pipeline) parts.push_back(e.str());
  return absl::StrJoin(parts, ",");
}

namespace {

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool isNameChar(char c) { return llvm::isAlnum(c) || c == '-' || c == '_' || c == '.'; }

/// Recursive-descent parser over one pipeline text. Named pipelines are parsed by a
/// nested parser; `expanding` is the chain of names being expanded (recursion guard).
class PipelineParser {
public:
  PipelineParser(llvm::StringRef text, const PassRegistry &registry,
                 std::vector<std::string> &expanding, std::vector<PipelineElement> &out)
      : text_(text), registry_(registry), expanding_(expanding), out_(out) {}

  absl::Status parse() {
    skipSpaces();
    if (atEnd()) return absl::OkStatus(); // an empty pipeline runs nothing
    while (true) {
      if (absl::Status s = parseElement(); !s.ok()) return s;
      skipSpaces();
      if (atEnd()) return absl::OkStatus();
      if (peek() != ',') return error(absl::StrCat("expected ',' between pipeline elements at column ",
                                                   column(), ", got '", restWord(), "'"));
      ++pos_;
    }
  }

private:
  bool atEnd() const { return pos_ >= text_.size(); }
  char peek() const { return text_[pos_]; }
  size_t column() const { return pos_ + 1; }
  void skipSpaces() {
    while (!atEnd() && isSpace(peek())) ++pos_;
  }
  /// The text from the current position up to the next separator (for messages).
  std::string restWord() const {
    llvm::StringRef rest = text_.substr(pos_);
    size_t n = rest.find_first_of(" \t\n,{}");
    if (n == 0) n = 1;
    return rest.take_front(n).str();
  }
  absl::Status error(const std::string &message) const {
    return absl::InvalidArgumentError(message);
  }

  absl::Status parseElement() {
    skipSpaces();
    size_t start = pos_;
    if (atEnd() || peek() == ',')
      return error(absl::StrCat("empty pipeline element at column ", column()));
    while (!atEnd() && isNameChar(peek())) ++pos_;
    llvm::StringRef name = text_.slice(start, pos_);
    if (name.empty())
      return error(absl::StrCat("expected a pass name at column ", column(), ", got '",
                                restWord(), "'"));
    size_t nameColumn = start + 1;
    skipSpaces();
    bool hasOptions = !atEnd() && peek() == '{';

    if (const PipelineInfo *named = registry_.lookupPipeline(name)) {
      if (hasOptions)
        return error(absl::StrCat("named pipeline '", name.str(), "' at column ", nameColumn,
                                  " takes no options; spell out its passes (",
                                  named->pipeline, ") to give them options"));
      return expand(*named, nameColumn);
    }
    const PassInfo *info = registry_.lookup(name);
    if (!info) return unknownPass(name, nameColumn);

    PipelineElement element;
    element.info = info;
    element.options = PassOptionValues(info->options, info->argument);
    if (hasOptions)
      if (absl::Status s = parseOptions(element); !s.ok()) return s;
    out_.push_back(std::move(element));
    return absl::OkStatus();
  }

  absl::Status expand(const PipelineInfo &named, size_t nameColumn) {
    if (llvm::is_contained(expanding_, named.name)) {
      std::vector<std::string> chain = expanding_;
      chain.push_back(named.name);
      return error(absl::StrCat("named pipeline '", named.name, "' expands to itself (",
                                absl::StrJoin(chain, " -> "), "); this is a bug in its registration"));
    }
    expanding_.push_back(named.name);
    PipelineParser inner(named.pipeline, registry_, expanding_, out_);
    absl::Status s = inner.parse();
    expanding_.pop_back();
    if (!s.ok())
      return error(absl::StrCat("in named pipeline '", named.name, "' (used at column ",
                                nameColumn, "): ", s.message()));
    return absl::OkStatus();
  }

  absl::Status unknownPass(llvm::StringRef name, size_t nameColumn) const {
    // Suggest the closest pass or pipeline name when it is plausibly a typo.
    std::string best;
    unsigned bestDistance = ~0u;
    auto consider = [&](llvm::StringRef candidate) {
      unsigned d = name.edit_distance(candidate, /*AllowReplacements=*/true, bestDistance);
      if (d < bestDistance) {
        bestDistance = d;
        best = candidate.str();
      }
    };
    for (const PassInfo &p : registry_.passes()) consider(p.argument);
    for (const PipelineInfo &p : registry_.pipelines()) consider(p.name);
    unsigned threshold = std::max<unsigned>(2, name.size() / 3);
    std::string message = absl::StrCat("unknown pass '", name.str(), "' in pipeline at column ", nameColumn);
    if (!best.empty() && bestDistance <= threshold)
      absl::StrAppend(&message, "; did you mean '", best, "'?");
    absl::StrAppend(&message, " (--list-passes shows all)");
    return error(message);
  }

  /// Parses `{name=value name=value}` (spaces or commas between options) into
  /// `element.options`. The current position is at the '{'.
  absl::Status parseOptions(PipelineElement &element) {
    const std::string &pass = element.info->argument;
    size_t openColumn = column();
    ++pos_; // '{'
    auto unclosed = [&] {
      return error(absl::StrCat("expected '}' to close options of '", pass, "' (opened at column ",
                                openColumn, ")"));
    };
    while (true) {
      while (!atEnd() && (isSpace(peek()) || peek() == ',')) ++pos_;
      if (atEnd()) return unclosed();
      if (peek() == '}') {
        ++pos_;
        return absl::OkStatus();
      }
      size_t nameStart = pos_;
      while (!atEnd() && isNameChar(peek())) ++pos_;
      llvm::StringRef optionName = text_.slice(nameStart, pos_);
      if (optionName.empty() || atEnd() || peek() != '=') {
        if (atEnd()) return unclosed();
        pos_ = nameStart;
        return error(absl::StrCat("expected 'name=value' in options of '", pass, "' at column ",
                                  column(), ", got '", restWord(), "'"));
      }
      ++pos_; // '='
      size_t valueStart = pos_;
      if (absl::Status s = skipValue(pass); !s.ok()) return s;
      llvm::StringRef valueText = text_.slice(valueStart, pos_);
      if (element.options.isExplicit(optionName))
        return error(absl::StrCat("option '", optionName.str(), "' of pass '", pass,
                                  "' is given twice (at column ", nameStart + 1, ")"));
      if (absl::Status s = element.options.set(optionName, valueText); !s.ok()) return s;
      if (!atEnd() && !isSpace(peek()) && peek() != ',' && peek() != '}')
        return error(absl::StrCat("unexpected '", restWord(), "' after the value of option '",
                                  optionName.str(), "' of pass '", pass, "' at column ", column(),
                                  "; separate options with spaces"));
    }
  }

  /// Moves past one option value: a braced map (tracking nesting), a quoted string,
  /// or a bare word ending at a space, ',' or '}'.
  absl::Status skipValue(const std::string &pass) {
    if (atEnd()) return absl::OkStatus();
    if (peek() == '{') {
      size_t openColumn = column();
      int depth = 0;
      for (; !atEnd(); ++pos_) {
        if (peek() == '{') ++depth;
        if (peek() == '}' && --depth == 0) {
          ++pos_;
          return absl::OkStatus();
        }
      }
      return error(absl::StrCat("expected '}' to close the map value opened at column ", openColumn,
                                " in options of '", pass, "'"));
    }
    if (peek() == '"') {
      size_t openColumn = column();
      for (++pos_; !atEnd(); ++pos_) {
        if (peek() == '\\') {
          ++pos_;
          continue;
        }
        if (peek() == '"') {
          ++pos_;
          return absl::OkStatus();
        }
      }
      return error(absl::StrCat("unterminated string opened at column ", openColumn,
                                " in options of '", pass, "'; close it with '\"'"));
    }
    while (!atEnd() && !isSpace(peek()) && peek() != ',' && peek() != '}') ++pos_;
    return absl::OkStatus();
  }

  llvm::StringRef text_;
  const PassRegistry &registry_;
  std::vector<std::string> &expanding_;
  std::vector<PipelineElement> &out_;
  size_t pos_ = 0;
};

} // namespace

absl::StatusOr<std::vector<PipelineElement>> parsePipeline(llvm::StringRef text,
                                                          const PassRegistry &registry) {
  std::vector<PipelineElement> out;
  std::vector<std::string> expanding;
  PipelineParser parser(text, registry, expanding, out);
  if (absl::Status s = parser.parse(); !s.ok()) return s;
  return out;
}

} // namespace ptoc::passes
