// Reading and writing numpy .npy files (format versions 1.0, 2.0 and 3.0), so inputs
// and goldens can come from numpy and results go back to it.
//
// Supported: little-endian, C-order arrays of '<f4' (f32), '<f2' (f16), '|i1' or
// '<i1' (i8) and '<i4' (i32), any rank (rank 0 included). bf16 has no numpy dtype:
// a bf16 tensor is written as '<f4' (each value widened exactly), and reading a bf16
// tensor reads '<f4' data and rounds each value to bf16 (nearest-even). Everything
// else (fortran_order True, big-endian, other dtypes, object arrays) is rejected
// with a message naming the file and what to change. Truncated or corrupt files
// give an error, never a crash.
#pragma once

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "ptoc/ir/DType.h"
#include "ptoc/runtime/HostTensor.h"

namespace ptoc::runtime {

/// The numpy dtype string a tensor of `dtype` is stored as: '<f4', '<f2', '|i1',
/// '<i2', '<i4', '<i8', '|u1', '<u2', '<u4', '<u8', '|b1'; '<f4' for bf16.
llvm::StringRef npyDescr(ir::DType dtype);

/// Parses the bytes of a .npy file; `name` is the file name used in errors. Without
/// `dtype` the tensor gets the file's dtype ('<f4' gives f32); with it, the file must
/// hold that dtype's storage (npyDescr: '<f4' rounded for bf16), any shape.
absl::StatusOr<HostTensor> parseNpy(llvm::StringRef bytes, llvm::StringRef name,
                                    std::optional<ir::DType> dtype = std::nullopt);

/// Parses the bytes of a .npy file that must hold a tensor of `dtype` and `shape`
/// (for bf16: '<f4' data, rounded). Errors name the file and both the expected and
/// the actual dtype or shape.
absl::StatusOr<HostTensor> parseNpyAs(llvm::StringRef bytes, llvm::StringRef name,
                                      ir::DType dtype, llvm::ArrayRef<int64_t> shape);

/// The bytes of a .npy file (version 1.0, or 2.0 when the header needs it) holding
/// `tensor`; its header is padded so the data starts at a multiple of 64 bytes.
std::string serializeNpy(const HostTensor &tensor);

/// Reads a .npy file (see parseNpy). A file that cannot be read is an io error
/// (support::readFile: NotFound when it is missing) naming it.
absl::StatusOr<HostTensor> readNpy(llvm::StringRef path,
                                   std::optional<ir::DType> dtype = std::nullopt);
/// Reads a .npy file that must hold a tensor of `dtype` and `shape` (see parseNpyAs).
absl::StatusOr<HostTensor> readNpyAs(llvm::StringRef path, ir::DType dtype,
                                     llvm::ArrayRef<int64_t> shape);

/// Writes `tensor` to `path` atomically: into a temporary file in the same folder,
/// then renamed over `path`, so readers never see a half-written file.
absl::Status writeNpy(llvm::StringRef path, const HostTensor &tensor);

} // namespace ptoc::runtime
