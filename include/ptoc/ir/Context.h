// The Context owns everything uniqued for one compilation: types, attributes,
// identifiers, and the diagnostic engine. One per compilation; not thread-safe;
// separate compilations (and tuning candidates) use separate Contexts.
#pragma once

#include <memory>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include "ptoc/ir/Attribute.h"
#include "ptoc/ir/Diagnostics.h"
#include "ptoc/ir/Location.h"
#include "ptoc/ir/OpDef.h"
#include "ptoc/ir/Type.h"

namespace ptoc::ir {

class Context {
public:
  Context();
  ~Context();
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  // --- types ---
  Type tensorType(DType dtype, llvm::ArrayRef<int64_t> shape);
  Type tileType(DType dtype, llvm::ArrayRef<int64_t> shape, MemSpace space);
  /// The same kind/space as `t` with another shape or dtype.
  Type withShape(Type t, llvm::ArrayRef<int64_t> shape);
  Type withDType(Type t, DType dtype);

  // --- identifiers and locations ---
  Identifier id(llvm::StringRef s);
  /// The identifier `sg` (the subgraph id key), looked up once.
  Identifier sgKey() const { return sgKey_; }
  Location loc(llvm::StringRef file, uint32_t line, uint32_t col);

  // --- attributes ---
  Attribute intAttr(int64_t v);
  Attribute floatAttr(double v);
  Attribute boolAttr(bool v);
  Attribute stringAttr(llvm::StringRef v);
  Attribute dtypeAttr(DType v);
  Attribute intArrayAttr(llvm::ArrayRef<int64_t> v);
  /// An array; becomes an IntArray when every element is an Int.
  Attribute arrayAttr(llvm::ArrayRef<Attribute> v);
  /// A dictionary. Keys must be unique. `sortByName` sorts the entries (operation
  /// attribute dictionaries are always sorted); otherwise the given order is kept.
  Attribute dictAttr(llvm::ArrayRef<NamedAttr> entries, bool sortByName);
  Attribute emptyDict() { return dictAttr({}, true); }

  // --- ops and diagnostics ---
  const OpRegistry &ops() const { return OpRegistry::get(); }
  const OpDef &opDef(OpCode code) const { return ops().def(code); }
  DiagnosticEngine &diag() { return diag_; }
  InFlightDiagnostic emitError(Location loc) { return {diag_, Severity::Error, loc}; }
  /// An error filed under `category` (an Internal one is a bug in ptoc).
  InFlightDiagnostic emitError(Location loc, DiagCategory category) {
    InFlightDiagnostic d(diag_, Severity::Error, loc);
    d.in(category);
    return d;
  }
  InFlightDiagnostic emitWarning(Location loc) { return {diag_, Severity::Warning, loc}; }
  InFlightDiagnostic emitNote(Location loc) { return {diag_, Severity::Note, loc}; }
  InFlightDiagnostic emitRemark(Location loc) { return {diag_, Severity::Remark, loc}; }

  /// Storage behind the uniquers (defined in Context.cpp).
  struct Impl;

private:
  std::unique_ptr<Impl> impl_;
  DiagnosticEngine diag_;
  Identifier sgKey_;
};

} // namespace ptoc::ir
