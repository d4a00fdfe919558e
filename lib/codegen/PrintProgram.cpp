// The text form of a Program (docs/codegen.md): tensors, leaves with their ops, buffer
// slots and pipe instructions, then the execute graph, one line per call.
#include <array>
#include <charconv>
#include <string>

#include "ptoc/codegen/Codegen.h"
#include "ptoc/ir/OpDef.h"

namespace ptoc::codegen {
namespace {

constexpr std::array<ir::MemSpace, 5> kLocalSpaces = {ir::MemSpace::UB, ir::MemSpace::L1,
                                                      ir::MemSpace::L0A, ir::MemSpace::L0B,
                                                      ir::MemSpace::L0C};

llvm::StringRef str(std::string_view s) { return {s.data(), s.size()}; }

void printList(llvm::raw_ostream &os, llvm::ArrayRef<int64_t> values) {
  os << '[';
  for (size_t i = 0; i < values.size(); ++i) os << (i ? ", " : "") << values[i];
  os << ']';
}

void printType(llvm::raw_ostream &os, const LeafOp &op) {
  os << "tile<";
  for (int64_t d : op.shape) os << d << 'x';
  os << str(ir::dtypeName(op.dtype)) << ", " << str(ir::memSpaceName(op.space)) << '>';
}

void printSlot(llvm::raw_ostream &os, const BufferSlot &slot) {
  os << '@' << str(ir::memSpaceName(slot.space)) << '[' << slot.offset << ", "
     << slot.offset + slot.bytes << ')';
}

/// The shortest decimal form that reads back to the same double.
void printNumber(llvm::raw_ostream &os, double v) {
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  os << llvm::StringRef(buf, res.ptr - buf);
}

void printAttrs(llvm::raw_ostream &os, const LeafOp &op) {
  std::string text;
  llvm::raw_string_ostream s(text);
  bool any = false;
  auto sep = [&] {
    s << (any ? ", " : "");
    any = true;
  };
  switch (op.code) {
  case ir::OpCode::Sum:
  case ir::OpCode::Amax:
  case ir::OpCode::Amin:
  case ir::OpCode::Mean:
    sep();
    s << "axes = ";
    printList(s, op.axes);
    sep();
    s << "keepdim = " << (op.keepdim ? "true" : "false");
    break;
  case ir::OpCode::Transpose:
    sep();
    s << "perm = ";
    printList(s, op.perm);
    break;
  case ir::OpCode::Full:
    sep();
    s << "value = ";
    printNumber(s, op.value);
    break;
  case ir::OpCode::Matmul:
    if (op.transposeA) sep(), s << "transpose_a = true";
    if (op.transposeB) sep(), s << "transpose_b = true";
    break;
  case ir::OpCode::Cast:
    // As the IR op: defaults left out.
    if (op.castModeWritten) sep(), s << "mode = \"" << ir::castModeName(op.castMode) << '"';
    if (!op.saturate) sep(), s << "saturate = false";
    break;
  case ir::OpCode::Div:
    if (op.divIntrinsic) sep(), s << "precision = \"intrinsic\"";
    break;
  case ir::OpCode::CopyOut:
    if (op.epilogue.relu) sep(), s << "relu = true";
    if (op.epilogue.scale) {
      sep();
      s << "scale = ";
      printNumber(s, *op.epilogue.scale);
    }
    break;
  default: break;
  }
  if (any) os << " {" << s.str() << '}';
}

void printOp(llvm::raw_ostream &os, int index, const LeafOp &op, const BufferSlot &slot) {
  os << "  #" << index << " = " << ir::OpRegistry::get().def(op.code).name;
  if (op.code == ir::OpCode::CopyIn) {
    os << " r" << op.region;
    if (!op.operands.empty()) {
      os << " after";
      for (size_t i = 0; i < op.operands.size(); ++i)
        os << (i ? ", #" : " #") << op.operands[i];
    }
  } else {
    for (size_t i = 0; i < op.operands.size(); ++i) os << (i ? ", #" : " #") << op.operands[i];
    if (op.code == ir::OpCode::CopyOut) os << " -> r" << op.region;
  }
  printAttrs(os, op);
  os << " : ";
  printType(os, op);
  if (slot.space != ir::MemSpace::GM) {
    os << ' ';
    printSlot(os, slot);
  }
  os << " bytes " << op.bytes << " cycles " << op.cycles << '\n';
}

void printInstr(llvm::raw_ostream &os, int index, const PipeInstr &in) {
  os << "  i" << index << ' ' << pipeName(in.pipe) << " #" << in.op;
  if (isTransferPipe(in.pipe))
    os << " bytes " << in.bytes;
  else
    os << " cycles " << in.cycles;
  if (in.pipe == Pipe::Mte2) os << " r" << in.region;
  if (in.dst.space != ir::MemSpace::GM) {
    os << " -> ";
    printSlot(os, in.dst);
  } else if (in.region >= 0 && in.pipe != Pipe::Mte2) {
    os << " -> r" << in.region;
  }
  os << " deps [";
  for (size_t i = 0; i < in.deps.size(); ++i) os << (i ? ", i" : "i") << in.deps[i];
  os << "]\n";
}

void printLeaf(llvm::raw_ostream &os, const Leaf &leaf) {
  os << "leaf " << leaf.id << ": core " << str(target::coreKindName(leaf.core)) << ", hash "
     << leaf.hash << ", hash_order " << leaf.hashOrder << ", group_size " << leaf.groupSize
     << ", double_buffered " << (leaf.doubleBuffered ? "true" : "false")
     << (leaf.noRoomToDoubleBuffer ? " (no room for a second buffer)" : "") << '\n';
  os << "  peak";
  bool any = false;
  for (ir::MemSpace s : kLocalSpaces) {
    int64_t bytes = leaf.peakBytes[static_cast<unsigned>(s)];
    if (bytes == 0) continue;
    os << ' ' << str(ir::memSpaceName(s)) << ' ' << bytes;
    any = true;
  }
  if (!any) os << " none";
  os << ", cycles " << leaf.cycles << ", copy_in_bytes " << leaf.copyInBytes
     << ", copy_out_bytes " << leaf.copyOutBytes << ", flops " << leaf.flops
     << ", vector_bytes " << leaf.vectorBytes << '\n';
  for (size_t i = 0; i < leaf.ops.size(); ++i)
    printOp(os, static_cast<int>(i), leaf.ops[i],
            i < leaf.slots.size() ? leaf.slots[i] : BufferSlot{});
  for (size_t i = 0; i < leaf.instrs.size(); ++i)
    printInstr(os, static_cast<int>(i), leaf.instrs[i]);
}

llvm::StringRef kindName(GmTensor::Kind k) {
  switch (k) {
  case GmTensor::Kind::Argument: return "argument";
  case GmTensor::Kind::Intermediate: return "intermediate";
  case GmTensor::Kind::Alias: return "alias";
  }
  return "?";
}

void printTensorList(llvm::raw_ostream &os, const Program &p, llvm::ArrayRef<int> list) {
  os << '[';
  for (size_t i = 0; i < list.size(); ++i) os << (i ? ", %" : "%") << p.tensors[list[i]].name;
  os << "]\n";
}

} // namespace

void printProgram(const Program &program, llvm::raw_ostream &os) {
  os << "program @" << program.funcName << '\n';
  for (const GmTensor &t : program.tensors) {
    os << "tensor %" << t.name << " : tensor<";
    for (int64_t d : t.shape) os << d << 'x';
    os << str(ir::dtypeName(t.dtype)) << "> " << kindName(t.kind);
    if (t.kind == GmTensor::Kind::Argument) os << ' ' << t.argIndex;
    if (t.kind == GmTensor::Kind::Alias) {
      os << " of %" << program.tensors[t.base].name << " offset " << t.baseOffset << " strides ";
      printList(os, t.strides);
    }
    os << '\n';
  }
  os << "arguments ";
  printTensorList(os, program, program.arguments);
  os << "results ";
  printTensorList(os, program, program.results);
  for (const Leaf &leaf : program.leaves) printLeaf(os, leaf);
  os << "execute " << program.calls.size() << " calls\n";
  for (size_t c = 0; c < program.calls.size(); ++c) {
    const Call &call = program.calls[c];
    os << "call " << c << " = leaf " << call.leaf << " sg " << call.subgraph << " regions [";
    for (size_t r = 0; r < call.regions.size(); ++r) {
      const Region &region = call.regions[r];
      os << (r ? ", %" : "%") << program.tensors[region.tensor].name;
      printList(os, region.offsets);
    }
    os << "] preds [";
    for (size_t i = 0; i < call.preds.size(); ++i) os << (i ? ", " : "") << call.preds[i];
    os << "]";
    if (!call.writeOrderPreds.empty()) {
      os << " write-order [";
      for (size_t i = 0; i < call.writeOrderPreds.size(); ++i)
        os << (i ? ", " : "") << call.writeOrderPreds[i];
      os << "]";
    }
    os << "\n";
  }
}

} // namespace ptoc::codegen

namespace ptoc::codegen {

void printLoopProgram(const LoopProgram &lp, llvm::raw_ostream &os) {
  for (size_t p = 0; p < lp.programs.size(); ++p) {
    os << "root function " << p << ": @" << lp.programs[p].funcName << "\n";
    printProgram(lp.programs[p], os);
    os << "\n";
  }
  auto windows = [&](const ControlFunc &c, const char *what, llvm::ArrayRef<StepWindow> ws) {
    os << "  " << what << " [";
    for (size_t i = 0; i < ws.size(); ++i) {
      const StepWindow &w = ws[i];
      os << (i ? ", %" : "%") << c.tensors[w.tensor].name << "[";
      for (size_t d = 0; d < w.offsets.size(); ++d)
        os << (d ? ", " : "") << w.offsets[d].str() << " +" << w.sizes[d];
      os << "]";
    }
    os << "]\n";
  };
  for (size_t i = 0; i < lp.controls.size(); ++i) {
    const ControlFunc &c = lp.controls[i];
    os << "control " << i << ": @" << c.name << (int(i) == lp.entry ? " (entry)" : "") << "\n";
    for (const ControlTensor &t : c.tensors) {
      os << "  tensor %" << t.name << " : tensor<";
      for (int64_t d : t.shape) os << (d == ir::kDynamicDim ? std::string("?") : std::to_string(d)) << "x";
      os << ir::dtypeName(t.dtype) << ">"
         << (t.kind == ControlTensor::Kind::Argument ? " argument" : " workspace") << "\n";
    }
    for (const LoopStep &s : c.steps) {
      os << "  loop '" << s.name << "' " << s.index << " in range(" << s.start.str() << ", "
         << s.stop.str() << ", " << s.step.str() << ")" << (s.parallel ? " parallel" : "")
         << " runs ";
      if (s.program >= 0) os << "root function " << s.program << " (@" << lp.programs[s.program].funcName << ")";
      else os << "control " << s.control;
      os << "\n";
      windows(c, "ins", s.ins);
      windows(c, "outs", s.outs);
    }
    os << "  returns [";
    for (size_t r = 0; r < c.results.size(); ++r) os << (r ? ", %" : "%") << c.tensors[c.results[r]].name;
    os << "]\n";
  }
}

} // namespace ptoc::codegen
