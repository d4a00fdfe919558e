// ValueNamer: the names the printer gives the values of one function (docs/ir.md
// "Values and names"). Public so other layers (codegen's tensor table) name values
// exactly as the printed IR does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Allocator.h"
#include "ptoc/ir/Func.h"

namespace ptoc::ir {

/// The names printed for the values of one function: hints first (made valid, `_N`
/// on a clash), then argN for unnamed arguments and 0, 1, ... for unnamed results.
class ValueNamer {
public:
  ValueNamer() = default;
  explicit ValueNamer(const Func &f) { nameFunc(f); }

  /// Appends "%name" for `v` (a placeholder for values this function does not own).
  void append(std::string &out, const Value *v) const;
  /// The name of `v` without '%'; empty for values this function does not own.
  std::string name(const Value *v) const;

private:
  static constexpr uint64_t kNumericTag = uint64_t(1) << 63;

  /// What is known about one textual name in this function.
  struct NameState {
    bool isHint = false;     ///< some value asked for this name
    bool used = false;       ///< some value prints with this name
    unsigned nextSuffix = 0; ///< last suffix tried for this base name
  };
  using NameTable = llvm::StringMap<NameState, llvm::BumpPtrAllocator &>;

  llvm::StringRef sanitize(Identifier hint);
  llvm::StringRef claim(llvm::StringMapEntry<NameState> &entry, bool generated);
  void setName(const Value *v, llvm::StringRef name);
  void nameFunc(const Func &f);

  llvm::BumpPtrAllocator alloc_;
  NameTable table_{alloc_};
  llvm::DenseMap<const Value *, uint64_t> names_;
  std::vector<llvm::StringRef> texts_;
};

} // namespace ptoc::ir
