// The bank's keys from a function: graphHash (structure without tile shapes) and
// signatureOf (concrete dtypes and shapes).
#include <algorithm>
#include <string>

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include "ptoc/ir/DType.h"
#include "ptoc/ir/Func.h"
#include "ptoc/ir/Operation.h"
#include "ptoc/ir/StableHash.h"
#include "ptoc/tune/Bank.h"

namespace ptoc::tune {
namespace {

// Seeds that keep the parts of the hash apart (an op signature, an argument
// reference, the whole function).
constexpr uint64_t kOpSeed = 0x7b9a3c11ULL;
constexpr uint64_t kArgRefSeed = 0x4a5267ULL;
constexpr uint64_t kFuncSeed = 0x67a7b4a5ULL;

// Tuning rewrites these, so a record must survive their change.
bool isTileShapeAttr(llvm::StringRef name) { return name == "vec_tile" || name == "cube_tile"; }

std::string typeSignature(ir::Type t) {
  std::string s(ir::dtypeName(t.dtype()));
  s += '[';
  for (unsigned i = 0; i < t.rank(); ++i) {
    if (i) s += ',';
    s += std::to_string(t.dim(i));
  }
  s += ']';
  return s;
}

} // namespace

// Each op's signature is a Merkle hash of what it computes and its operands'
// definers, as in analysis::structuralHash, and the body hashes as the sorted multiset
// of signatures: so the hash does not depend on the order independent ops were
// built in, only on the graph.
uint64_t graphHash(const ir::Func &f) {
  llvm::DenseMap<const ir::Operation *, uint64_t> sigOf;
  llvm::SmallVector<uint64_t, 32> sigs;
  for (const ir::Operation &op : f.ops()) {
    uint64_t h = ir::hashMix(kOpSeed, ir::hashBytes(op.name()));
    for (const ir::NamedAttr &a : op.attrs()) {
      llvm::StringRef name = a.name.str();
      if (isTileShapeAttr(name)) continue;
      h = ir::hashMix(h, ir::hashBytes(name));
      h = ir::hashMix(h, a.value.contentHash());
    }
    for (const ir::Value &r : op.results()) h = ir::hashMix(h, r.type().contentHash());
    h = ir::hashMix(h, op.numOperands());
    for (unsigned i = 0; i < op.numOperands(); ++i) {
      const ir::Value *v = op.operand(i);
      if (const ir::Operation *def = v->definingOp()) {
        auto it = sigOf.find(def);
        // A use before its definition (invalid IR) still hashes deterministically.
        h = ir::hashMix(h, it == sigOf.end() ? 0 : it->second);
      } else {
        h = ir::hashMix(h, ir::hashMix(kArgRefSeed, v->index()));
      }
      h = ir::hashMix(h, v->index());
      h = ir::hashMix(h, v->type().contentHash());
    }
    sigOf[&op] = h;
    sigs.push_back(h);
  }
  std::sort(sigs.begin(), sigs.end());
  uint64_t h = ir::hashMix(kFuncSeed, f.numArgs());
  for (const ir::Value &arg : f.args()) h = ir::hashMix(h, arg.type().contentHash());
  h = ir::hashMix(h, f.resultTypes().size());
  for (ir::Type t : f.resultTypes()) h = ir::hashMix(h, t.contentHash());
  h = ir::hashMix(h, sigs.size());
  for (uint64_t sig : sigs) h = ir::hashMix(h, sig);
  return h;
}

std::string signatureOf(const ir::Func &f) {
  std::string s;
  for (const ir::Value &arg : f.args()) {
    if (!s.empty()) s += ',';
    s += typeSignature(arg.type());
  }
  s += "->";
  bool first = true;
  for (ir::Type t : f.resultTypes()) {
    if (!first) s += ',';
    first = false;
    s += typeSignature(t);
  }
  return s;
}

} // namespace ptoc::tune
