// SymExpr: parsing (recursive descent over the text form), printing, evaluation
// with overflow checks, and interval bounds.
#include "ptoc/ir/SymExpr.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/str_cat.h"

namespace ptoc::ir {

class SymParser {
public:
  explicit SymParser(llvm::StringRef text) : text_(text) {}

  absl::StatusOr<SymExpr> run() {
    int root = expr();
    skipSpace();
    if (error_.empty() && pos_ != text_.size()) fail("an operator or the end");
    if (!error_.empty())
      return absl::InvalidArgumentError(absl::StrCat("bad expression '", text_.str(), "': ", error_));
    (void)root;
    return std::move(out_);
  }

private:
  using Kind = SymExpr::Kind;

  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool eat(llvm::StringRef token) {
    skipSpace();
    if (!text_.substr(pos_).startswith(token)) return false;
    pos_ += token.size();
    return true;
  }
  /// The name at the cursor (letters, digits, '_', and '.' after its first character),
  /// consumed; empty when there is none or it starts with a digit (the cursor then
  /// stands after what was scanned, where the error points).
  llvm::StringRef scanName() {
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
            (pos_ > start && text_[pos_] == '.')))
      ++pos_;
    if (pos_ == start || std::isdigit(static_cast<unsigned char>(text_[start]))) return {};
    return text_.slice(start, pos_);
  }
  void fail(llvm::StringRef expected) {
    if (!error_.empty()) return;
    error_ = absl::StrCat("expected ", expected.str(), " at column ", pos_ + 1);
  }
  int add(SymExpr::Node n) {
    out_.nodes_.push_back(std::move(n));
    return static_cast<int>(out_.nodes_.size()) - 1;
  }
  int binary(Kind k, int lhs, int rhs) {
    SymExpr::Node n;
    n.kind = k;
    n.lhs = lhs;
    n.rhs = rhs;
    return add(std::move(n));
  }

  int expr() {
    int lhs = term();
    while (error_.empty()) {
      if (eat("+")) lhs = binary(Kind::Add, lhs, term());
      else if (eat("-")) lhs = binary(Kind::Sub, lhs, term());
      else break;
    }
    return lhs;
  }
  int term() {
    int lhs = factor();
    while (error_.empty()) {
      if (eat("*")) lhs = binary(Kind::Mul, lhs, factor());
      else if (eat("//")) lhs = binary(Kind::FloorDiv, lhs, factor());
      else if (eat("%")) lhs = binary(Kind::Mod, lhs, factor());
      else break;
    }
    return lhs;
  }
  int factor() {
    if (!error_.empty()) return -1;
    skipSpace();
    if (eat("-")) {
      SymExpr::Node n;
      n.kind = Kind::Neg;
      n.lhs = factor();
      return add(std::move(n));
    }
    if (eat("(")) {
      int e = expr();
      if (!eat(")")) fail("')'");
      return e;
    }
    if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      int64_t v = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        int digit = text_[pos_++] - '0';
        if (v > (INT64_MAX - digit) / 10) {
          error_ = absl::StrCat("the number at column ", pos_, " does not fit in 64 bits");
          return -1;
        }
        v = v * 10 + digit;
      }
      SymExpr::Node n;
      n.value = v;
      return add(std::move(n));
    }
    llvm::StringRef name = scanName();
    if (name.empty()) {
      fail("a number, a name, '(', '-', min(...) or max(...)");
      return -1;
    }
    if (name == "dim" && eat("(")) { // the size of a dynamic axis: dim(tensor, axis)
      skipSpace();
      llvm::StringRef tensor = scanName();
      if (tensor.empty()) {
        fail("a tensor name as the first argument of dim");
        return -1;
      }
      SymExpr::Node n;
      n.kind = Kind::Dim;
      n.name = tensor.str();
      if (!eat(",")) fail("',' between the tensor and the axis of dim");
      skipSpace();
      size_t a0 = pos_;
      while (pos_ < text_.size() && pos_ - a0 < 4 &&
             std::isdigit(static_cast<unsigned char>(text_[pos_])))
        n.value = n.value * 10 + (text_[pos_++] - '0');
      if (pos_ == a0) fail("an axis number as the second argument of dim");
      if (!eat(")")) fail("')' closing dim(...)");
      return add(std::move(n));
    }
    if ((name == "min" || name == "max") && eat("(")) {
      int a = expr();
      if (!eat(",")) fail("',' between the two arguments of " + name.str());
      int b = expr();
      if (!eat(")")) fail("')'");
      return binary(name == "min" ? Kind::Min : Kind::Max, a, b);
    }
    if (eat("[")) { // an element of a tensor: name[e0, e1, ...]
      SymExpr::Node n;
      n.kind = Kind::Element;
      n.name = name.str();
      do {
        n.args.push_back(expr());
      } while (error_.empty() && eat(","));
      if (!eat("]")) fail("']' closing the index of " + name.str());
      return add(std::move(n));
    }
    SymExpr::Node n;
    n.kind = Kind::Name;
    n.name = name.str();
    return add(std::move(n));
  }

  llvm::StringRef text_;
  size_t pos_ = 0;
  std::string error_;
  SymExpr out_;
};

namespace {

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t floorMod(int64_t a, int64_t b) { return a - floorDiv(a, b) * b; }
__int128 floorDiv128(__int128 a, __int128 b) {
  __int128 q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

bool lookup(llvm::ArrayRef<SymBinding> bindings, llvm::StringRef name, int64_t &lo, int64_t &hi) {
  for (const SymBinding &b : bindings)
    if (b.name == name) {
      lo = b.lo;
      hi = b.hi;
      return true;
    }
  return false;
}

} // namespace

SymExpr SymExpr::constant(int64_t v) {
  SymExpr e;
  Node n;
  n.value = v;
  e.nodes_.push_back(std::move(n));
  return e;
}

absl::StatusOr<SymExpr> SymExpr::parse(llvm::StringRef text) { return SymParser(text).run(); }

std::vector<std::string> SymExpr::names() const {
  std::vector<std::string> out;
  for (const Node &n : nodes_)
    if (n.kind == Kind::Name && std::find(out.begin(), out.end(), n.name) == out.end())
      out.push_back(n.name);
  return out;
}

std::vector<std::pair<std::string, size_t>> SymExpr::tensorReads() const {
  std::vector<std::pair<std::string, size_t>> out;
  for (const Node &n : nodes_)
    if (n.kind == Kind::Element &&
        std::find(out.begin(), out.end(), std::make_pair(n.name, n.args.size())) == out.end())
      out.emplace_back(n.name, n.args.size());
  return out;
}

std::vector<std::pair<std::string, int64_t>> SymExpr::dims() const {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const Node &n : nodes_)
    if (n.kind == Kind::Dim &&
        std::find(out.begin(), out.end(), std::make_pair(n.name, n.value)) == out.end())
      out.emplace_back(n.name, n.value);
  return out;
}

std::string SymExpr::dimKey(llvm::StringRef tensor, int64_t axis) {
  return absl::StrCat("dim(", tensor.str(), ", ", axis, ")");
}

std::string SymExpr::str() const {
  // Precedence: 1 additive, 2 multiplicative, 3 atoms (names, numbers, calls, negation).
  struct Printed {
    std::string text;
    int prec;
  };
  std::vector<Printed> done(nodes_.size());
  auto wrap = [](const Printed &p, int need) {
    return p.prec < need ? absl::StrCat("(", p.text, ")") : p.text;
  };
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node &n = nodes_[i];
    switch (n.kind) {
    case Kind::Const:
      done[i] = {n.value < 0 ? absl::StrCat("(", n.value, ")") : absl::StrCat(n.value), 3};
      break;
    case Kind::Name: done[i] = {n.name, 3}; break;
    case Kind::Dim: done[i] = {dimKey(n.name, n.value), 3}; break;
    case Kind::Element: {
      std::string text = n.name + "[";
      for (size_t a = 0; a < n.args.size(); ++a)
        text += (a ? ", " : "") + done[n.args[a]].text;
      done[i] = {text + "]", 3};
      break;
    }
    case Kind::Neg: done[i] = {absl::StrCat("-", wrap(done[n.lhs], 3)), 3}; break;
    case Kind::Add: done[i] = {absl::StrCat(wrap(done[n.lhs], 1), " + ", wrap(done[n.rhs], 2)), 1}; break;
    case Kind::Sub: done[i] = {absl::StrCat(wrap(done[n.lhs], 1), " - ", wrap(done[n.rhs], 2)), 1}; break;
    case Kind::Mul: done[i] = {absl::StrCat(wrap(done[n.lhs], 2), " * ", wrap(done[n.rhs], 3)), 2}; break;
    case Kind::FloorDiv: done[i] = {absl::StrCat(wrap(done[n.lhs], 2), " // ", wrap(done[n.rhs], 3)), 2}; break;
    case Kind::Mod: done[i] = {absl::StrCat(wrap(done[n.lhs], 2), " % ", wrap(done[n.rhs], 3)), 2}; break;
    case Kind::Min: done[i] = {absl::StrCat("min(", done[n.lhs].text, ", ", done[n.rhs].text, ")"), 3}; break;
    case Kind::Max: done[i] = {absl::StrCat("max(", done[n.lhs].text, ", ", done[n.rhs].text, ")"), 3}; break;
    }
  }
  return nodes_.empty() ? "0" : done.back().text;
}

absl::StatusOr<int64_t> SymExpr::evaluate(llvm::ArrayRef<SymBinding> bindings,
                                          const ElementReader &reader) const {
  std::vector<int64_t> v(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node &n = nodes_[i];
    int64_t a = n.lhs >= 0 ? v[n.lhs] : 0, b = n.rhs >= 0 ? v[n.rhs] : 0;
    bool overflow = false;
    switch (n.kind) {
    case Kind::Const: v[i] = n.value; break;
    case Kind::Name: {
      int64_t lo, hi;
      if (!lookup(bindings, n.name, lo, hi))
        return absl::InvalidArgumentError(
            absl::StrCat("'", str(), "' names '", n.name, "', which is not a loop index in scope"));
      v[i] = lo;
      break;
    }
    case Kind::Dim: {
      int64_t lo, hi;
      if (!lookup(bindings, dimKey(n.name, n.value), lo, hi))
        return absl::InvalidArgumentError(absl::StrCat(
            "'", str(), "' uses the size of axis ", n.value, " of '", n.name,
            "', which is not a dynamic axis of the kernel's arguments"));
      v[i] = lo;
      break;
    }
    case Kind::Neg: overflow = __builtin_sub_overflow(int64_t(0), a, &v[i]); break;
    case Kind::Add: overflow = __builtin_add_overflow(a, b, &v[i]); break;
    case Kind::Sub: overflow = __builtin_sub_overflow(a, b, &v[i]); break;
    case Kind::Mul: overflow = __builtin_mul_overflow(a, b, &v[i]); break;
    case Kind::FloorDiv:
    case Kind::Mod:
      if (b == 0)
        return absl::InvalidArgumentError(absl::StrCat("'", str(), "' divides by zero"));
      if (a == INT64_MIN && b == -1) overflow = true;
      else v[i] = n.kind == Kind::FloorDiv ? floorDiv(a, b) : floorMod(a, b);
      break;
    case Kind::Min: v[i] = std::min(a, b); break;
    case Kind::Max: v[i] = std::max(a, b); break;
    case Kind::Element: {
      if (!reader)
        return absl::InvalidArgumentError(absl::StrCat(
            "'", str(), "' reads tensor '", n.name,
            "', whose values are known only when the kernel runs with its inputs"));
      llvm::SmallVector<int64_t, 4> index;
      for (int arg : n.args) index.push_back(v[arg]);
      absl::StatusOr<int64_t> e = reader(n.name, index);
      if (!e.ok())
        return absl::InvalidArgumentError(absl::StrCat("'", str(), "': ", e.status().message()));
      v[i] = *e;
      break;
    }
    }
    if (overflow)
      return absl::InvalidArgumentError(absl::StrCat("'", str(), "' overflows 64 bits"));
  }
  return nodes_.empty() ? 0 : v.back();
}

bool SymExpr::boundsAreExact() const {
  std::vector<bool> hasName(nodes_.size(), false);
  size_t nameNodes = 0;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node &n = nodes_[i];
    bool l = n.lhs >= 0 && hasName[n.lhs], r = n.rhs >= 0 && hasName[n.rhs];
    if (n.kind == Kind::Name || n.kind == Kind::Dim) ++nameNodes;
    if (n.kind == Kind::Element) return false; // a value read when the kernel runs
    if (n.kind == Kind::Mod && (l || r)) return false;
    if (n.kind == Kind::FloorDiv && r) return false;
    // A product is monotonic in each factor only while the other keeps one sign:
    // with names on both sides, leave it to the enclosure.
    if (n.kind == Kind::Mul && l && r) return false;
    hasName[i] = n.kind == Kind::Name || n.kind == Kind::Dim || l || r;
  }
  return nameNodes == names().size() + dims().size();
}

std::optional<std::pair<int64_t, int64_t>>
SymExpr::bounds(llvm::ArrayRef<SymBinding> bindings) const {
  using Range = std::pair<int64_t, int64_t>;
  std::vector<Range> r(nodes_.size());
  // Interval endpoints in wide arithmetic; a result beyond 64 bits gives up.
  auto fits = [](__int128 x) { return x >= INT64_MIN && x <= INT64_MAX; };
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node &n = nodes_[i];
    Range a = n.lhs >= 0 ? r[n.lhs] : Range{0, 0}, b = n.rhs >= 0 ? r[n.rhs] : Range{0, 0};
    __int128 lo = 0, hi = 0;
    switch (n.kind) {
    case Kind::Const: lo = hi = n.value; break;
    case Kind::Name: {
      int64_t l, h;
      if (!lookup(bindings, n.name, l, h)) return std::nullopt;
      lo = l;
      hi = h;
      break;
    }
    case Kind::Dim: {
      int64_t l, h;
      if (!lookup(bindings, dimKey(n.name, n.value), l, h)) return std::nullopt;
      lo = l;
      hi = h;
      break;
    }
    case Kind::Element: return std::nullopt; // known when the kernel runs
    case Kind::Neg: lo = -__int128(a.second); hi = -__int128(a.first); break;
    case Kind::Add: lo = __int128(a.first) + b.first; hi = __int128(a.second) + b.second; break;
    case Kind::Sub: lo = __int128(a.first) - b.second; hi = __int128(a.second) - b.first; break;
    case Kind::Mul: {
      __int128 c[4] = {__int128(a.first) * b.first, __int128(a.first) * b.second,
                       __int128(a.second) * b.first, __int128(a.second) * b.second};
      lo = *std::min_element(c, c + 4);
      hi = *std::max_element(c, c + 4);
      break;
    }
    case Kind::FloorDiv: {
      if (b.first <= 0 && b.second >= 0) return std::nullopt;
      // Wide: INT64_MIN // -1 does not fit (and traps in 64 bits).
      __int128 c[4] = {floorDiv128(a.first, b.first), floorDiv128(a.first, b.second),
                       floorDiv128(a.second, b.first), floorDiv128(a.second, b.second)};
      lo = *std::min_element(c, c + 4);
      hi = *std::max_element(c, c + 4);
      break;
    }
    case Kind::Mod: {
      if (b.first <= 0 && b.second >= 0) return std::nullopt;
      // Python's modulo takes the divisor's sign: [0, |b|-1] or [-(|b|-1), 0]. The
      // divisor's range has one sign; wide, as |INT64_MIN| does not fit.
      __int128 m = (b.first > 0 ? __int128(b.second) : -__int128(b.first)) - 1;
      if (a.first == a.second && b.first == b.second) {
        lo = hi = __int128(a.first) - floorDiv128(a.first, b.first) * b.first; // one value
      } else if (b.first > 0 && a.first >= 0 && a.second < b.first) {
        lo = a.first;  // already reduced
        hi = a.second;
      } else if (b.first > 0) {
        lo = 0;
        hi = m;
      } else {
        lo = -m;
        hi = 0;
      }
      break;
    }
    case Kind::Min: lo = std::min(a.first, b.first); hi = std::min(a.second, b.second); break;
    case Kind::Max: lo = std::max(a.first, b.first); hi = std::max(a.second, b.second); break;
    }
    if (!fits(lo) || !fits(hi)) return std::nullopt;
    r[i] = {int64_t(lo), int64_t(hi)};
  }
  if (nodes_.empty()) return Range{0, 0};
  return r.back();
}

} // namespace ptoc::ir
