// numpy .npy reading and writing: header parsing with precise errors, atomic writes
// (support/AtomicWrite.h).
#include "ptoc/runtime/Npy.h"

#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "ptoc/support/AtomicWrite.h"
#include "ptoc/support/ReadFile.h"

namespace ptoc::runtime {

using ir::DType;

namespace {

/// "\x93NUMPY": the magic string every .npy file starts with.
constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
/// numpy pads the header so the data starts on this boundary (numpy >= 1.14).
constexpr size_t kHeaderAlign = 64;
/// Version 1.0 stores the header length in 2 bytes; larger headers need 2.0.
constexpr size_t kMaxV1HeaderLen = 0xFFFF;
constexpr llvm::StringLiteral kSupported =
    "'<f4', '<f2', '|i1', '<i2', '<i4', '<i8', '|u1', '<u2', '<u4', '<u8' or '|b1'";

absl::Status bad(llvm::StringRef name, const std::string &what) {
  return absl::InvalidArgumentError(absl::StrCat(name.str(), ": ", what));
}

/// What the header dictionary says.
struct Header {
  std::string descr;
  bool fortranOrder = false;
  llvm::SmallVector<int64_t, 4> shape;
  size_t dataOffset = 0;
};

/// A cursor over the header's Python-literal dictionary.
class HeaderParser {
public:
  HeaderParser(llvm::StringRef text, llvm::StringRef name) : text_(text), name_(name) {}

  absl::Status parse(Header &h) {
    bool haveDescr = false, haveOrder = false, haveShape = false;
    skipSpace();
    if (!eat('{')) return error("expected '{' at the start of the header dictionary");
    while (true) {
      skipSpace();
      if (eat('}')) break;
      std::string key;
      if (absl::Status st = parseString(key); !st.ok()) return st;
      skipSpace();
      if (!eat(':')) return error(absl::StrCat("expected ':' after key '", key, "'"));
      skipSpace();
      if (key == "descr") {
        if (absl::Status st = parseString(h.descr); !st.ok()) return st;
        haveDescr = true;
      } else if (key == "fortran_order") {
        if (text_.consume_front("True"))
          h.fortranOrder = true;
        else if (text_.consume_front("False"))
          h.fortranOrder = false;
        else
          return error("'fortran_order' must be True or False");
        haveOrder = true;
      } else if (key == "shape") {
        if (absl::Status st = parseShape(h.shape); !st.ok()) return st;
        haveShape = true;
      } else {
        return error(absl::StrCat("unexpected key '", key,
                                  "' (a .npy header has 'descr', 'fortran_order' and "
                                  "'shape' only)"));
      }
      skipSpace();
      if (eat(',')) continue;
      skipSpace();
      if (eat('}')) break;
      return error("expected ',' or '}' in the header dictionary");
    }
    skipSpace();
    if (!text_.empty()) return error("unexpected text after the header dictionary");
    if (!haveDescr || !haveOrder || !haveShape)
      return error(absl::StrCat("the header lacks ", !haveDescr ? "'descr'"
                                                     : !haveOrder ? "'fortran_order'"
                                                                  : "'shape'"));
    return absl::OkStatus();
  }

private:
  absl::Status error(const std::string &what) {
    return bad(name_, absl::StrCat("corrupt .npy header: ", what));
  }
  void skipSpace() { text_ = text_.ltrim(" \t\r\n"); }
  bool eat(char c) { return text_.consume_front(llvm::StringRef(&c, 1)); }

  absl::Status parseString(std::string &out) {
    if (text_.empty() || (text_[0] != '\'' && text_[0] != '"'))
      return error("expected a quoted string");
    char quote = text_[0];
    size_t end = text_.find(quote, 1);
    if (end == llvm::StringRef::npos) return error("unterminated string");
    out = text_.slice(1, end).str();
    text_ = text_.drop_front(end + 1);
    return absl::OkStatus();
  }

  absl::Status parseShape(llvm::SmallVector<int64_t, 4> &shape) {
    if (!eat('(')) return error("'shape' must be a tuple such as (3, 4)");
    while (true) {
      skipSpace();
      if (eat(')')) return absl::OkStatus();
      size_t digits = 0;
      while (digits < text_.size() && text_[digits] >= '0' && text_[digits] <= '9') ++digits;
      // 18 digits always fit int64_t; larger dimensions cannot be real anyway.
      constexpr size_t kMaxDigits = 18;
      if (digits == 0) return error("'shape' must hold non-negative integers");
      if (digits > kMaxDigits) return error("a dimension in 'shape' is too large");
      int64_t dim = 0;
      for (char c : text_.take_front(digits)) dim = dim * 10 + (c - '0');
      text_ = text_.drop_front(digits);
      text_.consume_front("L"); // Python 2 long literals
      shape.push_back(dim);
      skipSpace();
      if (eat(',')) continue;
      skipSpace();
      if (eat(')')) return absl::OkStatus();
      return error("expected ',' or ')' in 'shape'");
    }
  }

  llvm::StringRef text_;
  llvm::StringRef name_;
};

std::optional<DType> dtypeOfDescr(llvm::StringRef descr) {
  // One-byte types may be written with either byte-order mark.
  if (descr == "<i1") return DType::I8;
  if (descr == "<u1") return DType::U8;
  if (descr == "<b1") return DType::Bool;
  for (DType t : ir::kAllDTypes)
    if (t != DType::BF16 && npyDescr(t) == descr) return t; // bf16 files are '<f4'
  return std::nullopt;
}

std::string describeUnsupported(llvm::StringRef descr) {
  std::string fix = absl::StrCat("; ptoc reads ", kSupported.str(),
                                 " (bf16 tensors are stored as '<f4')");
  if (descr.startswith(">"))
    return absl::StrCat("big-endian data ('", descr.str(),
                        "') is not supported; save it as little-endian (a.astype(a.dtype."
                        "newbyteorder('<')))",
                        fix);
  if (descr == "<f8")
    return absl::StrCat("float64 data ('<f8') is not supported; convert it with "
                        "a.astype(numpy.float32)",
                        fix);
  return absl::StrCat("dtype '", descr.str(), "' is not supported", fix);
}

std::string shapeText(llvm::ArrayRef<int64_t> shape) {
  if (shape.size() == 1) return absl::StrCat("(", shape[0], ",)");
  return absl::StrCat("(", absl::StrJoin(shape, ", "), ")");
}

/// Reads magic, version and header; fills `h` (dataOffset included).
absl::Status parseHeader(llvm::StringRef bytes, llvm::StringRef name, Header &h) {
  if (bytes.size() < kMagicSize || bytes.take_front(kMagicSize) != llvm::StringRef(kMagic, kMagicSize))
    return bad(name, "not a .npy file (it does not start with the magic string "
                     "\"\\x93NUMPY\")");
  constexpr size_t kVersionEnd = kMagicSize + 2;
  if (bytes.size() < kVersionEnd) return bad(name, "truncated .npy file: it ends inside the version");
  unsigned major = uint8_t(bytes[kMagicSize]), minor = uint8_t(bytes[kMagicSize + 1]);
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    return bad(name, absl::StrFormat(".npy format version %d.%d is not supported (1.0, 2.0 "
                                     "and 3.0 are)",
                                     major, minor));
  size_t lenBytes = major == 1 ? 2 : 4;
  if (bytes.size() < kVersionEnd + lenBytes)
    return bad(name, "truncated .npy file: it ends inside the header length");
  size_t headerLen = 0;
  for (size_t i = 0; i < lenBytes; ++i)
    headerLen |= size_t(uint8_t(bytes[kVersionEnd + i])) << (8 * i);
  size_t headerStart = kVersionEnd + lenBytes;
  if (bytes.size() - headerStart < headerLen)
    return bad(name, absl::StrFormat("truncated .npy file: the header is %d bytes but only %d "
                                     "follow the header length",
                                     headerLen, bytes.size() - headerStart));
  h.dataOffset = headerStart + headerLen;
  HeaderParser parser(bytes.substr(headerStart, headerLen), name);
  return parser.parse(h);
}

/// Checks the header against the supported subset and the data size; returns the
/// file's dtype.
absl::StatusOr<DType> checkHeader(const Header &h, llvm::StringRef bytes, llvm::StringRef name) {
  if (h.fortranOrder)
    return bad(name, "the array is in Fortran (column-major) order, which is not supported; "
                     "save a C-order copy (numpy.ascontiguousarray(a))");
  std::optional<DType> dtype = dtypeOfDescr(h.descr);
  if (!dtype) return bad(name, describeUnsupported(h.descr));
  size_t available = bytes.size() - h.dataOffset;
  // Counts elements without overflow: anything beyond the file's size is an error.
  uint64_t elems = 1;
  bool tooBig = false;
  for (int64_t d : h.shape) {
    if (d != 0 && elems > available / uint64_t(d)) tooBig = true;
    elems *= uint64_t(d);
    if (d == 0) tooBig = false, elems = 0;
  }
  uint64_t need = elems * ir::elementSize(*dtype);
  if (tooBig || need > available)
    return bad(name, absl::StrFormat("truncated .npy file: shape %s of '%s' needs %s bytes of "
                                     "data but only %d follow the header",
                                     shapeText(h.shape), h.descr,
                                     tooBig ? std::string("more than the file's")
                                            : std::to_string(need),
                                     available));
  if (need < available)
    return bad(name, absl::StrFormat("corrupt .npy file: shape %s of '%s' needs %d bytes of "
                                     "data but %d follow the header",
                                     shapeText(h.shape), h.descr, need, available));
  return *dtype;
}

} // namespace

llvm::StringRef npyDescr(DType dtype) {
  switch (dtype) {
  case DType::F32:
  case DType::BF16: return "<f4";
  case DType::F16: return "<f2";
  case DType::I8: return "|i1";
  case DType::I32: return "<i4";
  case DType::I64: return "<i8";
  case DType::Bool: return "|b1";
  case DType::I16: return "<i2";
  case DType::U8: return "|u1";
  case DType::U16: return "<u2";
  case DType::U32: return "<u4";
  case DType::U64: return "<u8";
  }
  return "?";
}

namespace {

/// The file's tensor, in the file's dtype.
absl::StatusOr<HostTensor> parseRaw(llvm::StringRef bytes, llvm::StringRef name) {
  Header h;
  if (absl::Status st = parseHeader(bytes, name, h); !st.ok()) return st;
  absl::StatusOr<DType> dtype = checkHeader(h, bytes, name);
  if (!dtype.ok()) return dtype.status();
  HostTensor t(*dtype, h.shape);
  if (t.sizeInBytes()) std::memcpy(t.data(), bytes.data() + h.dataOffset, t.sizeInBytes());
  return t;
}

/// Converts the file's tensor to `dtype`: the file must hold npyDescr(dtype).
absl::StatusOr<HostTensor> asDType(HostTensor file, llvm::StringRef name, DType dtype) {
  DType stored = dtype == DType::BF16 ? DType::F32 : dtype;
  if (file.dtype() != stored)
    return bad(name, absl::StrFormat("holds '%s' data but a %s tensor was expected, stored as "
                                     "'%s'%s",
                                     npyDescr(file.dtype()).str(), ir::dtypeName(dtype),
                                     npyDescr(dtype).str(),
                                     dtype == DType::BF16 ? " (bf16 has no numpy dtype)" : ""));
  if (dtype != DType::BF16) return file;
  HostTensor t(DType::BF16, file.shape());
  for (int64_t i = 0; i < t.numElements(); ++i) t.set(i, file.get(i));
  return t;
}

} // namespace

absl::StatusOr<HostTensor> parseNpy(llvm::StringRef bytes, llvm::StringRef name,
                                    std::optional<DType> dtype) {
  absl::StatusOr<HostTensor> file = parseRaw(bytes, name);
  if (!file.ok() || !dtype) return file;
  return asDType(*std::move(file), name, *dtype);
}

absl::StatusOr<HostTensor> parseNpyAs(llvm::StringRef bytes, llvm::StringRef name,
                                      DType dtype, llvm::ArrayRef<int64_t> shape) {
  absl::StatusOr<HostTensor> file = parseRaw(bytes, name);
  if (!file.ok()) return file.status();
  if (file->shape() != shape)
    return bad(name, absl::StrFormat("has shape %s but shape %s was expected",
                                     shapeText(file->shape()), shapeText(shape)));
  return asDType(*std::move(file), name, dtype);
}

std::string serializeNpy(const HostTensor &tensor) {
  std::string dict = absl::StrCat("{'descr': '", npyDescr(tensor.dtype()).str(),
                                  "', 'fortran_order': False, 'shape': ",
                                  shapeText(tensor.shape()), ", }");
  // Pad with spaces and end with '\n' so the data starts on a kHeaderAlign boundary.
  auto padded = [&](size_t lenBytes) {
    size_t prefix = kMagicSize + 2 + lenBytes;
    size_t total = prefix + dict.size() + 1;
    size_t pad = (kHeaderAlign - total % kHeaderAlign) % kHeaderAlign;
    return dict + std::string(pad, ' ') + "\n";
  };
  std::string header = padded(2);
  unsigned major = 1;
  if (header.size() > kMaxV1HeaderLen) {
    header = padded(4);
    major = 2;
  }
  std::string out(kMagic, kMagicSize);
  out.push_back(char(major));
  out.push_back(0);
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i) out.push_back(char((header.size() >> (8 * i)) & 0xFF));
  out += header;
  if (tensor.dtype() == DType::BF16) {
    // Widen to f32: every bf16 value is exactly representable.
    for (int64_t i = 0; i < tensor.numElements(); ++i) {
      float f = float(tensor.get(i));
      char b[4];
      std::memcpy(b, &f, 4);
      out.append(b, 4);
    }
  } else {
    out.append(reinterpret_cast<const char *>(tensor.data()), tensor.sizeInBytes());
  }
  return out;
}

absl::StatusOr<HostTensor> readNpy(llvm::StringRef path, std::optional<DType> dtype) {
  absl::StatusOr<std::string> bytes = support::readFile(path, support::kNoLimit);
  if (!bytes.ok()) return bytes.status();
  return parseNpy(*bytes, path, dtype);
}

absl::StatusOr<HostTensor> readNpyAs(llvm::StringRef path, DType dtype,
                                     llvm::ArrayRef<int64_t> shape) {
  absl::StatusOr<std::string> bytes = support::readFile(path, support::kNoLimit);
  if (!bytes.ok()) return bytes.status();
  return parseNpyAs(*bytes, path, dtype, shape);
}

absl::Status writeNpy(llvm::StringRef path, const HostTensor &tensor) {
  return support::writeFileAtomically(path, serializeNpy(tensor));
}

} // namespace ptoc::runtime
