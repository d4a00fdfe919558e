// Parser for the ptoc IR text form (docs/ir.md): a recursive-descent parser over
// the hand-written Lexer, with caches for repeated type and attribute-dict text.
#include "ptoc/ir/Parser.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include "Lexer.h"
#include "ptoc/ir/Context.h"

namespace ptoc::ir {

namespace {

/// Arrays and dictionaries may nest this deep; deeper input is rejected (so the
/// recursive descent never runs out of stack).
constexpr unsigned kMaxAttrDepth = 64;
/// Numeric value names below this index live in a vector instead of a hash map.
constexpr uint64_t kMaxDenseValueNumber = uint64_t(1) << 21;
/// Longest type spelling probed in the type cache.
constexpr size_t kMaxCachedTypeSpan = 256;

/// Where a value name was defined. `defined` is set as soon as the name is seen
/// (function arguments get their Value once the function exists).
struct ValueDef {
  Value *value = nullptr;
  uint32_t line = 0;
  uint32_t col = 0;
  bool defined = false;
};

/// A use of a name not defined yet: patched after the function's closing '}'.
struct Fixup {
  Operation *op;
  unsigned operand;
  Token use;
};

bool isNumericName(llvm::StringRef name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!isDigit(c)) return false;
  return true;
}

/// The vector index for a numeric name without leading zeros below the dense limit.
bool denseIndex(llvm::StringRef name, uint64_t &index) {
  if (name.empty() || name.size() > 7 || (name.size() > 1 && name[0] == '0')) return false;
  uint64_t v = 0;
  for (char c : name) {
    if (!isDigit(c)) return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v >= kMaxDenseValueNumber) return false;
  index = v;
  return true;
}

/// Parses an Integer token's spelling; false when it does not fit in int64_t.
bool parseInt64(llvm::StringRef text, int64_t &out) {
  bool neg = !text.empty() && text[0] == '-';
  if (neg) text = text.drop_front();
  if (text.empty()) return false;
  uint64_t limit = neg ? uint64_t(std::numeric_limits<int64_t>::max()) + 1
                       : uint64_t(std::numeric_limits<int64_t>::max());
  uint64_t v = 0;
  for (char c : text) {
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (limit - d) / 10) return false;
    v = v * 10 + d;
  }
  out = neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return true;
}

class Parser {
public:
  Parser(llvm::StringRef text, llvm::StringRef fileName, Context &ctx, const ParseOptions &opts)
      : ctx_(ctx), lexer_(text), file_(ctx.id(fileName).data()),
        lineOffset_(opts.firstLine ? opts.firstLine - 1 : 0), emptyDict_(ctx.emptyDict()) {
    for (const OpDef &def : ctx.ops().all()) opsByName_[def.name] = &def;
  }

  std::unique_ptr<Module> parseModule();

private:
  // ------------------------------------------------------------- tokens, errors
  void consume() { tok_ = lexer_.lex(); }
  Location locOf(const Token &t) const { return Location{file_, t.line + lineOffset_, t.col}; }

  /// Emits the parse's one diagnostic (later calls are ignored) and returns false.
  bool error(const Token &at, const llvm::Twine &message) {
    if (!failed_) {
      failed_ = true;
      ctx_.emitError(locOf(at)) << message.str();
    }
    return false;
  }
  static std::string describe(const Token &t) {
    if (t.is(TokKind::Eof)) return "end of file";
    llvm::StringRef s = t.text;
    if (s.size() > 40) return "'" + s.take_front(40).str() + "...'";
    return "'" + s.str() + "'";
  }
  /// "expected <what>, found <tok>" (or the lexer's message for a bad token).
  bool errorExpected(const Token &at, const llvm::Twine &what) {
    if (at.is(TokKind::Error)) return error(at, lexer_.errorMessage());
    return error(at, "expected " + what + ", found " + describe(at));
  }

  // ------------------------------------------------------------- grammar
  bool parseFunc(Module &module);
  bool parseOp(Func &f);
  bool parseType(Type &out);
  bool parseTypeSlow(Type &out, const char *&closeAngle);
  bool parseTypeList(llvm::SmallVectorImpl<Type> &types);
  /// An op's attribute dictionary; an Int `sg` goes to `sg` (else -1), not `out`.
  bool parseOpAttrDict(Attribute &out, int64_t &sg);
  bool parseDictEntries(llvm::SmallVectorImpl<NamedAttr> &entries, unsigned depth,
                        const char *&closeBrace);
  bool parseAttr(Attribute &out, unsigned depth);
  bool parseLoc(Location &out);
  bool parseIntToken(const Token &t, int64_t &out) {
    if (!parseInt64(t.text, out)) return error(t, "integer out of range");
    return true;
  }

  // ------------------------------------------------------------- value names
  ValueDef *findDef(llvm::StringRef name);
  ValueDef &insertDef(llvm::StringRef name);
  /// Errors if `nameTok` is already defined (or in `pending`).
  bool checkUndefined(const Token &nameTok, llvm::ArrayRef<Token> pending);
  void defineName(const Token &nameTok, Value *v);
  void resetValueNames();

  const OpDef *lookupOp(llvm::StringRef name) const {
    auto it = opsByName_.find(name);
    if (it != opsByName_.end()) return it->second;
    return ctx_.ops().lookup(name);
  }

  Context &ctx_;
  Lexer lexer_;
  Token tok_;
  const char *file_;
  uint32_t lineOffset_;
  bool failed_ = false;
  Attribute emptyDict_;
  llvm::StringMap<const OpDef *> opsByName_;

  // Per-function SSA name tables.
  std::vector<ValueDef> denseDefs_;
  std::vector<uint32_t> denseTouched_;
  llvm::StringMap<ValueDef> namedDefs_;
  std::vector<Fixup> fixups_;

  // Function names of the module: name -> location of the definition.
  llvm::StringMap<Location> funcs_;

  // Caches: exact source spelling -> uniqued object.
  llvm::StringMap<Type> typeCache_;
  struct OpDictEntry {
    Attribute dict;
    int64_t sg;
  };
  llvm::StringMap<OpDictEntry> dictCache_;

  // Scratch reused across ops (no allocation per op in steady state).
  llvm::SmallVector<Token, 4> resultNames_;
  llvm::SmallVector<Value *, 4> operands_;
  llvm::SmallVector<Type, 4> types_;
  std::string stringScratch_;
};

// ---------------------------------------------------------------- value names

ValueDef *Parser::findDef(llvm::StringRef name) {
  uint64_t index;
  if (denseIndex(name, index)) {
    if (index < denseDefs_.size() && denseDefs_[index].defined) return &denseDefs_[index];
    return nullptr;
  }
  auto it = namedDefs_.find(name);
  return it == namedDefs_.end() ? nullptr : &it->second;
}

ValueDef &Parser::insertDef(llvm::StringRef name) {
  uint64_t index;
  if (denseIndex(name, index)) {
    if (index >= denseDefs_.size()) denseDefs_.resize(index + 1);
    denseTouched_.push_back(static_cast<uint32_t>(index));
    return denseDefs_[index];
  }
  return namedDefs_[name];
}

bool Parser::checkUndefined(const Token &nameTok, llvm::ArrayRef<Token> pending) {
  llvm::StringRef name = nameTok.sigilName();
  Location first;
  if (const ValueDef *d = findDef(name)) {
    first = Location{file_, d->line + lineOffset_, d->col};
  } else {
    bool dup = false;
    for (const Token &p : pending)
      if (p.sigilName() == name) {
        first = locOf(p);
        dup = true;
        break;
      }
    if (!dup) return true;
  }
  return error(nameTok, "redefinition of value '" + nameTok.text + "' (first defined at " +
                            first.str() + ")");
}

void Parser::defineName(const Token &nameTok, Value *v) {
  llvm::StringRef name = nameTok.sigilName();
  ValueDef &d = insertDef(name);
  d.value = v;
  d.line = nameTok.line;
  d.col = nameTok.col;
  d.defined = true;
  if (v && !isNumericName(name)) v->setNameHint(ctx_.id(name));
}

void Parser::resetValueNames() {
  for (uint32_t i : denseTouched_) denseDefs_[i] = ValueDef();
  denseTouched_.clear();
  // A fresh map: clear() would cost the bucket count of the largest function so far.
  if (!namedDefs_.empty()) namedDefs_ = llvm::StringMap<ValueDef>();
  fixups_.clear();
}

// ---------------------------------------------------------------- module, func

std::unique_ptr<Module> Parser::parseModule() {
  auto module = std::make_unique<Module>(ctx_);
  consume();
  while (!tok_.is(TokKind::Eof)) {
    if (!tok_.isKeyword("func")) {
      errorExpected(tok_, "'func'");
      return nullptr;
    }
    if (!parseFunc(*module)) {
      // Every failing path reports; this guards the one-diagnostic contract.
      if (!failed_) error(tok_, "invalid input");
      return nullptr;
    }
  }
  return module;
}

bool Parser::parseFunc(Module &module) {
  Token funcTok = tok_;
  Location funcLoc = locOf(funcTok);
  consume();
  if (!tok_.is(TokKind::AtId)) return errorExpected(tok_, "function name after 'func'");
  Token nameTok = tok_;
  std::string name;
  if (nameTok.text.size() > 1 && nameTok.text[1] == '"')
    unescapeString(nameTok.text.drop_front(), name);
  else
    name = nameTok.sigilName().str();
  auto [it, inserted] = funcs_.try_emplace(name, locOf(nameTok));
  if (!inserted)
    return error(nameTok, "redefinition of function '" + nameTok.text + "' (first defined at " +
                              it->second.str() + ")");
  consume();

  // Arguments: names go into the value table now; their Values exist once the
  // function does.
  if (!tok_.is(TokKind::LParen)) return errorExpected(tok_, "'(' after function name");
  consume();
  llvm::SmallVector<Token, 8> argNames;
  llvm::SmallVector<Type, 8> argTypes;
  if (!tok_.is(TokKind::RParen)) {
    while (true) {
      if (!tok_.is(TokKind::PercentId)) return errorExpected(tok_, "argument name");
      if (!checkUndefined(tok_, {})) return false;
      argNames.push_back(tok_);
      defineName(tok_, nullptr);
      consume();
      if (!tok_.is(TokKind::Colon)) return errorExpected(tok_, "':' after argument name");
      consume();
      Type t;
      if (!parseType(t)) return false;
      argTypes.push_back(t);
      if (tok_.is(TokKind::Comma)) {
        consume();
        continue;
      }
      if (!tok_.is(TokKind::RParen)) return errorExpected(tok_, "',' or ')' in argument list");
      break;
    }
  }
  consume(); // ')'

  llvm::SmallVector<Type, 4> resultTypes;
  if (tok_.is(TokKind::Arrow)) {
    consume();
    if (tok_.is(TokKind::LParen)) {
      consume();
      if (!tok_.is(TokKind::RParen)) {
        while (true) {
          Type t;
          if (!parseType(t)) return false;
          resultTypes.push_back(t);
          if (tok_.is(TokKind::Comma)) {
            consume();
            continue;
          }
          if (!tok_.is(TokKind::RParen))
            return errorExpected(tok_, "',' or ')' in result type list");
          break;
        }
      }
      consume(); // ')'
    } else {
      Type t;
      if (!parseType(t)) return false;
      resultTypes.push_back(t);
    }
  }
  if (tok_.isKeyword("loc") && !parseLoc(funcLoc)) return false;
  if (!tok_.is(TokKind::LBrace))
    return errorExpected(tok_, "'{' to begin the body of function '" + nameTok.text + "'");
  consume();

  Func &f = module.addFunc(name, argTypes, resultTypes, funcLoc);
  for (unsigned i = 0; i < argNames.size(); ++i) {
    llvm::StringRef argName = argNames[i].sigilName();
    findDef(argName)->value = f.arg(i);
    if (!isNumericName(argName)) f.arg(i)->setNameHint(ctx_.id(argName));
  }

  while (!tok_.is(TokKind::RBrace)) {
    if (tok_.is(TokKind::Eof))
      return error(tok_, "unexpected end of file: expected '}' to close function '" +
                             nameTok.text + "'");
    if (tok_.isKeyword("func"))
      return error(tok_, "expected '}' to close function '" + nameTok.text +
                             "' before the next 'func'");
    if (!parseOp(f)) return false;
  }
  consume(); // '}'

  // Forward references: every name is known now.
  for (const Fixup &fix : fixups_) {
    ValueDef *d = findDef(fix.use.sigilName());
    if (!d) return error(fix.use, "use of undefined value '" + fix.use.text + "'");
    fix.op->setOperand(fix.operand, d->value);
  }
  resetValueNames();
  return true;
}

// ---------------------------------------------------------------- operations

bool Parser::parseOp(Func &f) {
  Location loc = locOf(tok_);
  resultNames_.clear();
  if (tok_.is(TokKind::PercentId)) {
    while (true) {
      if (!tok_.is(TokKind::PercentId)) return errorExpected(tok_, "result name after ','");
      if (!checkUndefined(tok_, resultNames_)) return false;
      resultNames_.push_back(tok_);
      consume();
      if (!tok_.is(TokKind::Comma)) break;
      consume();
    }
    if (!tok_.is(TokKind::Equal)) return errorExpected(tok_, "'=' after result names");
    consume();
  }

  if (!tok_.is(TokKind::BareId)) return errorExpected(tok_, "operation name");
  Token opTok = tok_;
  const OpDef *def = lookupOp(opTok.text);
  if (!def) {
    llvm::StringRef best;
    unsigned bestDist = ~0u;
    for (const OpDef &d : ctx_.ops().all()) {
      unsigned dist = opTok.text.edit_distance(d.name, true, 3);
      if (dist < bestDist) {
        bestDist = dist;
        best = d.name;
      }
    }
    if (bestDist <= 2)
      return error(opTok, "unknown operation '" + opTok.text + "'; did you mean '" + best + "'?");
    return error(opTok, "unknown operation '" + opTok.text +
                            "' (see docs/ir.md for the list of operations)");
  }
  consume();

  operands_.clear();
  size_t firstFixup = fixups_.size();
  if (tok_.is(TokKind::PercentId)) {
    while (true) {
      if (!tok_.is(TokKind::PercentId)) return errorExpected(tok_, "operand name after ','");
      if (ValueDef *d = findDef(tok_.sigilName())) {
        operands_.push_back(d->value);
      } else {
        fixups_.push_back({nullptr, static_cast<unsigned>(operands_.size()), tok_});
        operands_.push_back(nullptr);
      }
      consume();
      if (!tok_.is(TokKind::Comma)) break;
      consume();
    }
  }

  Attribute attrs = emptyDict_;
  int64_t sg = -1;
  if (tok_.is(TokKind::LBrace) && !parseOpAttrDict(attrs, sg)) return false;

  types_.clear();
  if (tok_.is(TokKind::Colon)) {
    Token colon = tok_;
    consume();
    if (!parseTypeList(types_)) return false;
    if (types_.size() != resultNames_.size())
      return error(colon, "operation '" + opTok.text + "' names " +
                              llvm::Twine(resultNames_.size()) + " result(s) but lists " +
                              llvm::Twine(types_.size()) + " result type(s)");
  } else if (!resultNames_.empty()) {
    return errorExpected(tok_, "':' and the result type(s) of '" + opTok.text + "'");
  }

  if (tok_.isKeyword("loc") && !parseLoc(loc)) return false;

  Operation *op = f.createOp(*def, operands_, types_, attrs, loc);
  if (sg >= 0) op->setSubgraphId(sg);
  for (size_t i = firstFixup; i < fixups_.size(); ++i) fixups_[i].op = op;
  for (unsigned i = 0; i < resultNames_.size(); ++i) defineName(resultNames_[i], op->result(i));
  return true;
}

bool Parser::parseTypeList(llvm::SmallVectorImpl<Type> &types) {
  while (true) {
    Type t;
    if (!parseType(t)) return false;
    types.push_back(t);
    if (!tok_.is(TokKind::Comma)) return true;
    consume();
  }
}

// ---------------------------------------------------------------- types

bool Parser::parseType(Type &out) {
  if (!tok_.is(TokKind::BareId) || (tok_.text != "tensor" && tok_.text != "tile"))
    return errorExpected(tok_, "type");
  // Fast path: the exact spelling up to the first '>' on this line was seen before.
  const char *start = tok_.text.begin();
  const char *p = lexer_.cursor();
  const char *limit = lexer_.bufferEnd();
  if (static_cast<size_t>(limit - p) > kMaxCachedTypeSpan) limit = p + kMaxCachedTypeSpan;
  const char *close = nullptr;
  for (; p != limit; ++p) {
    char c = *p;
    if (c == '>') {
      close = p;
      break;
    }
    if (c == '\n' || c == '/') break;
  }
  if (close) {
    auto it = typeCache_.find(llvm::StringRef(start, close + 1 - start));
    if (it != typeCache_.end()) {
      lexer_.skipTo(close + 1);
      consume();
      out = it->second;
      return true;
    }
  }
  const char *parsedClose = nullptr;
  if (!parseTypeSlow(out, parsedClose)) return false;
  if (close && parsedClose == close)
    typeCache_.try_emplace(llvm::StringRef(start, close + 1 - start), out);
  return true;
}

bool Parser::parseTypeSlow(Type &out, const char *&closeAngle) {
  Token kw = tok_;
  bool isTile = kw.text == "tile";
  consume();
  if (!tok_.is(TokKind::Less)) return errorExpected(tok_, "'<' after '" + kw.text + "'");

  llvm::SmallVector<int64_t, 4> dims;
  DType dtype;
  while (true) {
    Token t = lexer_.lexShapeElement();
    if (t.is(TokKind::Question)) { // a dynamic dimension (control-function arguments)
      if (isTile) return error(t, "a tile's dimensions are static: '?' is allowed only in tensor types");
      dims.push_back(kDynamicDim);
      if (!lexer_.consumeDimSeparator())
        return error(lexer_.cursorToken(), "expected 'x' after dimension ?, found " +
                                               lexer_.describeCurrentChar());
      continue;
    }
    if (t.is(TokKind::Integer)) {
      int64_t d;
      if (!parseIntToken(t, d)) return false;
      if (d <= 0) return error(t, "dimension must be positive, found " + t.text);
      dims.push_back(d);
      if (!lexer_.consumeDimSeparator())
        return error(lexer_.cursorToken(), "expected 'x' after dimension " + t.text +
                                               ", found " + lexer_.describeCurrentChar());
      continue;
    }
    if (t.is(TokKind::BareId)) {
      std::optional<DType> dt = parseDType(std::string_view(t.text.data(), t.text.size()));
      if (!dt)
        return error(t, "unknown element type '" + t.text + "' (expected one of " +
                            std::string(dtypeNamesText()) + ")");
      dtype = *dt;
      break;
    }
    return errorExpected(t, "dimension or element type");
  }
  consume();

  MemSpace space = MemSpace::GM;
  if (isTile) {
    if (!tok_.is(TokKind::Comma))
      return errorExpected(tok_, "',' and a memory space after the element type");
    consume();
    if (!tok_.is(TokKind::BareId)) return errorExpected(tok_, "memory space");
    std::optional<MemSpace> s =
        parseMemSpace(std::string_view(tok_.text.data(), tok_.text.size()));
    if (!s)
      return error(tok_, "unknown memory space '" + tok_.text +
                             "' (expected gm, ub, l1, l0a, l0b or l0c)");
    space = *s;
    consume();
  }
  if (!tok_.is(TokKind::Greater))
    return errorExpected(tok_, isTile ? "'>' to close the tile type" : "'>' to close the tensor type");
  closeAngle = tok_.text.begin();

  // Sizes must fit in 64 bits (so numElements and sizeInBytes are well defined).
  int64_t bytes = elementSize(dtype);
  for (int64_t d : dims)
    if (d != kDynamicDim && __builtin_mul_overflow(bytes, d, &bytes))
      return error(kw, "type is too large: its size in bytes does not fit in 64 bits");
  consume();

  out = isTile ? ctx_.tileType(dtype, dims, space) : ctx_.tensorType(dtype, dims);
  return true;
}

// ---------------------------------------------------------------- attributes

/// The end (one past the matching '}') of the single-line, comment-free dict
/// spelling starting at `open`, or null.
static const char *scanDictSpan(const char *open, const char *end) {
  int depth = 0;
  for (const char *p = open; p != end; ++p) {
    switch (*p) {
    case '{':
    case '[': ++depth; break;
    case '}':
    case ']':
      if (--depth == 0) return *p == '}' ? p + 1 : nullptr;
      break;
    case '"':
      for (++p; p != end && *p != '"'; ++p) {
        if (*p == '\n') return nullptr;
        if (*p == '\\' && p + 1 != end) ++p;
      }
      if (p == end) return nullptr;
      break;
    case '\n':
    case '/': return nullptr;
    default: break;
    }
  }
  return nullptr;
}

bool Parser::parseOpAttrDict(Attribute &out, int64_t &sg) {
  const char *open = tok_.text.begin();
  const char *spanEnd = scanDictSpan(open, lexer_.bufferEnd());
  if (spanEnd) {
    auto it = dictCache_.find(llvm::StringRef(open, spanEnd - open));
    if (it != dictCache_.end()) {
      lexer_.skipTo(spanEnd);
      consume();
      out = it->second.dict;
      sg = it->second.sg;
      return true;
    }
  }
  consume(); // '{'
  llvm::SmallVector<NamedAttr, 8> entries;
  const char *closeBrace = nullptr;
  if (!parseDictEntries(entries, 1, closeBrace)) return false;
  // The subgraph id is a field of the op, not a dictionary entry (a non-Int or
  // negative `sg` stays for the verifier to report).
  sg = -1;
  Identifier sgKey = ctx_.sgKey();
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].name == sgKey && entries[i].value.isInt() &&
        entries[i].value.getInt() >= 0) {
      sg = entries[i].value.getInt();
      entries.erase(entries.begin() + i);
      break;
    }
  }
  out = ctx_.dictAttr(entries, /*sortByName=*/true);
  if (spanEnd && closeBrace + 1 == spanEnd)
    dictCache_.try_emplace(llvm::StringRef(open, spanEnd - open), OpDictEntry{out, sg});
  return true;
}

bool Parser::parseDictEntries(llvm::SmallVectorImpl<NamedAttr> &entries, unsigned depth,
                              const char *&closeBrace) {
  // Duplicate keys: a linear scan for small dictionaries, a set for large ones.
  llvm::DenseSet<const char *> seen;
  size_t firstEntry = entries.size();
  auto isDuplicate = [&](Identifier key) {
    llvm::ArrayRef<NamedAttr> mine = llvm::makeArrayRef(entries).drop_front(firstEntry);
    if (mine.size() < 16 && seen.empty()) {
      for (const NamedAttr &e : mine)
        if (e.name == key) return true;
      return false;
    }
    if (seen.empty())
      for (const NamedAttr &e : mine) seen.insert(e.name.data());
    return !seen.insert(key.data()).second;
  };
  if (!tok_.is(TokKind::RBrace)) {
    while (true) {
      Token keyTok = tok_;
      Identifier key;
      if (tok_.is(TokKind::BareId)) {
        key = ctx_.id(tok_.text);
      } else if (tok_.is(TokKind::String)) {
        unescapeString(tok_.text, stringScratch_);
        key = ctx_.id(stringScratch_);
      } else {
        return errorExpected(tok_, "attribute name");
      }
      if (isDuplicate(key))
        return error(keyTok, "duplicate attribute '" + key.str() + "'");
      consume();
      if (!tok_.is(TokKind::Equal))
        return errorExpected(tok_, "'=' after attribute name '" + key.str() + "'");
      consume();
      Attribute value;
      if (!parseAttr(value, depth)) return false;
      entries.push_back({key, value});
      if (tok_.is(TokKind::Comma)) {
        consume();
        continue;
      }
      if (!tok_.is(TokKind::RBrace))
        return errorExpected(tok_, "',' or '}' in attribute dictionary");
      break;
    }
  }
  closeBrace = tok_.text.begin();
  consume(); // '}'
  return true;
}

bool Parser::parseAttr(Attribute &out, unsigned depth) {
  switch (tok_.kind) {
  case TokKind::Integer: {
    int64_t v;
    if (!parseIntToken(tok_, v)) return false;
    out = ctx_.intAttr(v);
    consume();
    return true;
  }
  case TokKind::Float: {
    double v;
    if (tok_.text == "-inf") {
      v = -std::numeric_limits<double>::infinity();
    } else {
      auto res = std::from_chars(tok_.text.begin(), tok_.text.end(), v);
      if (res.ec != std::errc() || res.ptr != tok_.text.end())
        return error(tok_, "floating-point literal out of range");
    }
    out = ctx_.floatAttr(v);
    consume();
    return true;
  }
  case TokKind::String:
    unescapeString(tok_.text, stringScratch_);
    out = ctx_.stringAttr(stringScratch_);
    consume();
    return true;
  case TokKind::BareId: {
    llvm::StringRef s = tok_.text;
    if (s == "true" || s == "false") {
      out = ctx_.boolAttr(s == "true");
    } else if (s == "inf") {
      out = ctx_.floatAttr(std::numeric_limits<double>::infinity());
    } else if (s == "nan") {
      out = ctx_.floatAttr(std::numeric_limits<double>::quiet_NaN());
    } else if (std::optional<DType> dt = parseDType(std::string_view(s.data(), s.size()))) {
      out = ctx_.dtypeAttr(*dt);
    } else {
      return error(tok_, "expected attribute value, found '" + s +
                             "' (strings need quotes; element types are " +
                             std::string(dtypeNamesText()) + ")");
    }
    consume();
    return true;
  }
  case TokKind::LSquare: {
    if (depth >= kMaxAttrDepth)
      return error(tok_, "attributes nest too deeply (more than " + llvm::Twine(kMaxAttrDepth) +
                             " levels)");
    consume();
    llvm::SmallVector<Attribute, 8> elems;
    if (!tok_.is(TokKind::RSquare)) {
      while (true) {
        Attribute e;
        if (!parseAttr(e, depth + 1)) return false;
        elems.push_back(e);
        if (tok_.is(TokKind::Comma)) {
          consume();
          continue;
        }
        if (!tok_.is(TokKind::RSquare)) return errorExpected(tok_, "',' or ']' in array");
        break;
      }
    }
    consume(); // ']'
    out = elems.empty() ? ctx_.intArrayAttr({}) : ctx_.arrayAttr(elems);
    return true;
  }
  case TokKind::LBrace: {
    if (depth >= kMaxAttrDepth)
      return error(tok_, "attributes nest too deeply (more than " + llvm::Twine(kMaxAttrDepth) +
                             " levels)");
    consume();
    llvm::SmallVector<NamedAttr, 8> entries;
    const char *closeBrace;
    if (!parseDictEntries(entries, depth + 1, closeBrace)) return false;
    out = ctx_.dictAttr(entries, /*sortByName=*/false);
    return true;
  }
  default: return errorExpected(tok_, "attribute value");
  }
}

// ---------------------------------------------------------------- locations

bool Parser::parseLoc(Location &out) {
  consume(); // 'loc'
  if (!tok_.is(TokKind::LParen)) return errorExpected(tok_, "'(' after 'loc'");
  consume();
  if (!tok_.is(TokKind::String)) return errorExpected(tok_, "file name string in loc(...)");
  unescapeString(tok_.text, stringScratch_);
  const char *file = ctx_.id(stringScratch_).data();
  consume();
  uint32_t lineCol[2];
  for (uint32_t &v : lineCol) {
    if (!tok_.is(TokKind::Colon)) return errorExpected(tok_, "':' in loc(\"file\":line:col)");
    consume();
    if (!tok_.is(TokKind::Integer) || tok_.text[0] == '-')
      return errorExpected(tok_, &v == lineCol ? "line number" : "column number");
    int64_t n;
    if (!parseInt64(tok_.text, n) || n > std::numeric_limits<uint32_t>::max())
      return error(tok_, "integer out of range");
    v = static_cast<uint32_t>(n);
    consume();
  }
  if (!tok_.is(TokKind::RParen)) return errorExpected(tok_, "')' to close loc(...)");
  consume();
  out = Location{file, lineCol[0], lineCol[1]};
  return true;
}

} // namespace

std::unique_ptr<Module> parseModule(llvm::StringRef text, llvm::StringRef fileName, Context &ctx,
                                    const ParseOptions &opts) {
  Parser parser(text, fileName, ctx, opts);
  return parser.parseModule();
}

absl::StatusOr<std::unique_ptr<Module>> parseModuleOrError(llvm::StringRef text,
                                                           llvm::StringRef fileName,
                                                           Context &ctx,
                                                           const ParseOptions &opts) {
  DiagnosticCollector collector(ctx.diag());
  std::unique_ptr<Module> module = parseModule(text, fileName, ctx, opts);
  if (module) return module;
  absl::Status status = collector.toStatus();
  if (status.ok()) return absl::InvalidArgumentError("failed to parse '" + fileName.str() + "'");
  return status;
}

} // namespace ptoc::ir
