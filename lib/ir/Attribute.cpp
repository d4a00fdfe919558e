// Attribute accessors and text form.
#include "ptoc/ir/Attribute.h"

#include <charconv>
#include <cctype>
#include <cmath>

#include "AttrStorage.h"
#include "Lexer.h"

namespace ptoc::ir {

AttrKind Attribute::kind() const { return storage_->kind; }
int64_t Attribute::getInt() const { return storage_->i; }
double Attribute::getFloat() const { return storage_->f; }
double Attribute::getNumber() const {
  return kind() == AttrKind::Int ? static_cast<double>(storage_->i) : storage_->f;
}
bool Attribute::getBool() const { return storage_->b; }
llvm::StringRef Attribute::getString() const { return {storage_->str, storage_->size}; }
DType Attribute::getDType() const { return storage_->dt; }
llvm::ArrayRef<int64_t> Attribute::getIntArray() const {
  return {storage_->ints, storage_->size};
}
llvm::ArrayRef<Attribute> Attribute::getArray() const {
  return {storage_->elems, storage_->size};
}
llvm::ArrayRef<NamedAttr> Attribute::getDict() const {
  return {storage_->entries, storage_->size};
}
Attribute Attribute::lookup(llvm::StringRef key) const {
  if (!isDict()) return {};
  for (const NamedAttr &e : getDict())
    if (e.name.str() == key) return e.value;
  return {};
}
uint64_t Attribute::contentHash() const { return storage_ ? storage_->hash : 0; }

namespace {

void appendFloat(std::string &out, double v) {
  if (std::isnan(v)) {
    out += "nan";
    return;
  }
  if (std::isinf(v)) {
    out += v < 0 ? "-inf" : "inf";
    return;
  }
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v); // shortest round-trip form
  std::string_view s(buf, res.ptr - buf);
  out += s;
  if (s.find_first_of(".e") == std::string_view::npos) out += ".0";
}


} // namespace

bool isBareIdentifier(llvm::StringRef s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  return true;
}

namespace {

void append(std::string &out, Attribute a) {
  if (!a) {
    out += "<null>";
    return;
  }
  switch (a.kind()) {
  case AttrKind::Int: out += std::to_string(a.getInt()); return;
  case AttrKind::Float: appendFloat(out, a.getFloat()); return;
  case AttrKind::Bool: out += a.getBool() ? "true" : "false"; return;
  case AttrKind::String: appendQuotedString(out, a.getString()); return;
  case AttrKind::DType: out += dtypeName(a.getDType()); return;
  case AttrKind::IntArray: {
    out += '[';
    bool first = true;
    for (int64_t v : a.getIntArray()) {
      if (!first) out += ", ";
      first = false;
      out += std::to_string(v);
    }
    out += ']';
    return;
  }
  case AttrKind::Array: {
    out += '[';
    bool first = true;
    for (Attribute e : a.getArray()) {
      if (!first) out += ", ";
      first = false;
      append(out, e);
    }
    out += ']';
    return;
  }
  case AttrKind::Dict: {
    out += '{';
    bool first = true;
    for (const NamedAttr &e : a.getDict()) {
      if (!first) out += ", ";
      first = false;
      if (isBareIdentifier(e.name.str()))
        out += e.name.str();
      else
        appendQuotedString(out, e.name.str());
      out += " = ";
      append(out, e.value);
    }
    out += '}';
    return;
  }
  }
}

} // namespace

std::string Attribute::str() const {
  std::string s;
  append(s, *this);
  return s;
}

} // namespace ptoc::ir
