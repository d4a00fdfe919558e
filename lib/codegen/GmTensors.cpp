// Collects a function's GM tensors (arguments, workspaces, aliases) with the names the
// IR printer gives them, and resolves aliases to strided windows of their base memory.
#include "GmTensors.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "ptoc/ir/ValueNamer.h"

namespace ptoc::codegen {
namespace {

using ir::OpCode;

llvm::SmallVector<int64_t, 4> rowMajorStrides(llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t, 4> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

/// Whether a window is one contiguous run of memory (dims of size 1 may have any stride).
bool isContiguous(const GmTensor &t) {
  int64_t expected = 1;
  for (size_t d = t.shape.size(); d-- > 0;) {
    if (t.shape[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.shape[d];
  }
  return true;
}

std::string listText(llvm::ArrayRef<int64_t> v) { return "[" + absl::StrJoin(v, ", ") + "]"; }

} // namespace

absl::StatusOr<GmTensorTable> collectGmTensors(const ir::Func &func) {
  GmTensorTable table;
  ir::ValueNamer namer(func);
  auto add = [&](const ir::Value *v, GmTensor t) {
    t.name = namer.name(v);
    t.dtype = v->type().dtype();
    t.shape.assign(v->type().shape().begin(), v->type().shape().end());
    int index = static_cast<int>(table.tensors.size());
    if (t.kind != GmTensor::Kind::Alias) {
      t.base = index;
      t.baseOffset = 0;
      t.strides = rowMajorStrides(t.shape);
    }
    table.index[v] = index;
    table.tensors.push_back(std::move(t));
    return index;
  };

  for (const ir::Value &a : func.args()) {
    GmTensor t;
    t.kind = GmTensor::Kind::Argument;
    t.argIndex = static_cast<int>(a.index());
    table.arguments.push_back(add(&a, std::move(t)));
  }
  for (const ir::Operation &op : func.ops()) {
    OpCode code = op.code();
    if (code == OpCode::GmTensor) {
      GmTensor t;
      t.kind = GmTensor::Kind::Intermediate;
      add(op.result(), std::move(t));
      continue;
    }
    if ((code != OpCode::View && code != OpCode::Reshape) || !op.resultType().isTensor())
      continue;
    auto src = table.index.find(op.operand(0));
    if (src == table.index.end())
      return absl::InvalidArgumentError(absl::StrCat(
          "'", op.name().str(), "' op at ", op.loc().str(),
          ": its source is not a GM tensor of the function (an argument, a gm_tensor or "
          "an alias of one); codegen needs the tile level produced by expand-tiles"));
    const GmTensor source = table.tensors[src->second];
    GmTensor t;
    t.kind = GmTensor::Kind::Alias;
    t.base = source.base;
    if (code == OpCode::View) {
      ir::Attribute offsetsAttr = op.attr("offsets");
      llvm::ArrayRef<int64_t> offsets;
      if (offsetsAttr && offsetsAttr.isIntArray()) offsets = offsetsAttr.getIntArray();
      if (offsets.size() != source.shape.size())
        return absl::InvalidArgumentError(absl::StrCat(
            "'view' op at ", op.loc().str(), ": needs one offset per dimension of its source %",
            source.name, " (rank ", source.shape.size(), "), got ", listText(offsets)));
      t.strides = source.strides;
      t.baseOffset = source.baseOffset;
      for (size_t d = 0; d < offsets.size(); ++d) t.baseOffset += offsets[d] * source.strides[d];
      if (op.resultType().rank() != source.shape.size())
        return absl::InvalidArgumentError(absl::StrCat(
            "'view' op at ", op.loc().str(), ": a view of a GM tensor keeps its rank (",
            source.shape.size(), "); reshape the view to change the rank"));
    } else {
      if (!isContiguous(source))
        return absl::InvalidArgumentError(absl::StrCat(
            "'reshape' op at ", op.loc().str(), ": its source %", source.name,
            " is a non-contiguous window (shape ", listText(source.shape), ", strides ",
            listText(source.strides), ") of %", table.tensors[source.base].name,
            ", so it cannot be reshaped in place; reshape before taking the view, or view "
            "whole rows so the window is contiguous"));
      t.baseOffset = source.baseOffset;
      t.strides = rowMajorStrides(op.resultType().shape());
    }
    add(op.result(), std::move(t));
  }
  if (const ir::Operation *ret = func.returnOp()) {
    for (const ir::Value *v : ret->operands()) {
      auto it = table.index.find(v);
      if (it == table.index.end())
        return absl::InvalidArgumentError(absl::StrCat(
            "'return' op at ", ret->loc().str(), ": returns a value that is not a GM tensor of the "
                              "function; codegen needs the tile level produced by expand-tiles"));
      table.results.push_back(it->second);
    }
  }
  return table;
}

} // namespace ptoc::codegen
