// Reading measurement files (see Measurements.h; the form is documented in
// docs/fidelity.md). Every error names the file and the field and says what fits.
#include "ptoc/calibrate/Measurements.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "ptoc/calibrate/KernelTemplates.h"
#include "ptoc/calibrate/MeasuredPipes.h"
#include "ptoc/support/BoundedJson.h"
#include "ptoc/support/ReadFile.h"

namespace ptoc::calibrate {
namespace {

using llvm::json::Array;
using llvm::json::Object;
using llvm::json::Value;

/// Largest tensor dimension a template accepts (the compiler has its own budget; this
/// only keeps the generated text sane).
constexpr int64_t kMaxDim = int64_t(1) << 31;

std::string describe(const Value &v) { return support::jsonPreview(v); }

/// Reads one file: every accessor reports "<file>: <field>: <problem>".
class Reader {
public:
  Reader(llvm::StringRef path) : path_(path.str()) {}

  absl::Status error(const std::string &field, const std::string &problem) const {
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ": ", field.empty() ? "" : absl::StrCat("field '", field, "': "),
                     problem));
  }

  /// A field that must be a string (nullopt when absent).
  absl::StatusOr<std::optional<std::string>> string(const Object &o, llvm::StringRef key,
                                                    const std::string &field) const {
    const Value *v = o.get(key);
    if (!v) return std::optional<std::string>();
    if (auto s = v->getAsString()) return std::optional<std::string>(s->str());
    return error(field, absl::StrCat("expected a string, got ", describe(*v)));
  }

  /// A positive number (nullopt when absent).
  absl::StatusOr<std::optional<double>> positive(const Object &o, llvm::StringRef key,
                                                 const std::string &field) const {
    const Value *v = o.get(key);
    if (!v) return std::optional<double>();
    auto d = v->getAsNumber();
    if (!d || !std::isfinite(*d) || *d <= 0)
      return error(field, absl::StrCat("expected a positive number, got ", describe(*v)));
    return std::optional<double>(*d);
  }

  /// A positive integer no larger than kMaxDim.
  absl::StatusOr<int64_t> dim(const Value &v, const std::string &field) const {
    std::optional<int64_t> i = support::jsonInteger(v);
    if (!i || *i <= 0 || *i > kMaxDim)
      return error(field, absl::StrCat("expected a positive integer (at most ", kMaxDim,
                                        "), got ", describe(v)));
    return *i;
  }

  /// An array of positive integers of length in [minLen, maxLen].
  absl::StatusOr<std::vector<int64_t>> dims(const Value &v, const std::string &field,
                                            size_t minLen, size_t maxLen) const {
    const Array *a = v.getAsArray();
    if (!a || a->size() < minLen || a->size() > maxLen)
      return error(field, absl::StrCat("expected an array of ", minLen,
                                       minLen == maxLen ? "" : absl::StrCat(" to ", maxLen),
                                       " positive integers, got ", describe(v)));
    std::vector<int64_t> out;
    for (size_t i = 0; i < a->size(); ++i) {
      absl::StatusOr<int64_t> d = dim((*a)[i], absl::StrCat(field, "[", i, "]"));
      if (!d.ok()) return d.status();
      out.push_back(*d);
    }
    return out;
  }

  /// A cube tile [[mL0, mL1], [kL0, kL1], [nL0, nL1]].
  absl::StatusOr<std::array<std::array<int64_t, 2>, 3>> cubeTile(const Value &v,
                                                                 const std::string &field) const {
    const Array *a = v.getAsArray();
    if (!a || a->size() != 3)
      return error(field, absl::StrCat("expected [[mL0, mL1], [kL0, kL1], [nL0, nL1]], got ",
                                       describe(v)));
    std::array<std::array<int64_t, 2>, 3> tile{};
    for (size_t i = 0; i < 3; ++i) {
      absl::StatusOr<std::vector<int64_t>> p = dims((*a)[i], absl::StrCat(field, "[", i, "]"), 2, 2);
      if (!p.ok()) return p.status();
      tile[i] = {(*p)[0], (*p)[1]};
    }
    return tile;
  }

  /// `v` as a dtype name ptoc knows for the kernels' tensors.
  absl::StatusOr<std::string> dtype(const Value &v, const std::string &field) const {
    auto s = v.getAsString();
    if (!s) return error(field, absl::StrCat("expected a dtype name, got ", describe(v)));
    for (const char *known : {"f16", "bf16", "f32", "i8"})
      if (*s == known) return s->str();
    return error(field, absl::StrCat("unknown dtype '", s->str(), "' (known: f16, bf16, f32, i8)"));
  }

  const std::string &path() const { return path_; }

private:
  std::string path_;
};

/// Where a kernel parameter is looked up: the point, then the file's top level, then
/// the top level's "shape" object (as in the ranking file).
struct Scope {
  const Object *point;
  const Object *top;
  const Object *topShape;
  std::string pointField; ///< "points[3]"

  /// The value of `key` and its field path for messages; nullptr when absent.
  const Value *find(llvm::StringRef key, std::string &field) const {
    if (const Value *v = point->get(key)) {
      field = absl::StrCat(pointField, ".", key.str());
      return v;
    }
    if (const Value *v = top->get(key)) {
      field = key.str();
      return v;
    }
    if (topShape)
      if (const Value *v = topShape->get(key)) {
        field = absl::StrCat("shape.", key.str());
        return v;
      }
    field = absl::StrCat(pointField, ".", key.str());
    return nullptr;
  }
};

absl::Status matmulPoint(const Reader &r, const Scope &s, MeasuredKernel &out) {
  MatmulKernel k;
  std::string field;
  if (const Value *mkn = s.find("mkn", field)) {
    absl::StatusOr<int64_t> d = r.dim(*mkn, field);
    if (!d.ok()) return d.status();
    k.m = k.n = k.k = *d;
    out.label = absl::StrCat("mkn=", *d);
  } else {
    int64_t *dims[] = {&k.m, &k.n, &k.k};
    const char *names[] = {"m", "n", "k"};
    for (int i = 0; i < 3; ++i) {
      const Value *v = s.find(names[i], field);
      if (!v)
        return r.error(field, "missing: a matmul point needs its size, as \"mkn\" (square) or "
                              "\"m\", \"n\" and \"k\"");
      absl::StatusOr<int64_t> d = r.dim(*v, field);
      if (!d.ok()) return d.status();
      *dims[i] = *d;
    }
    out.label = absl::StrCat(k.m, "x", k.n, "x", k.k);
  }
  const Value *tile = s.find("cube_tile", field);
  if (!tile)
    return r.error(field, "missing: a matmul point needs its cube tile [[mL0, mL1], [kL0, kL1], "
                          "[nL0, nL1]] (on the point or at the top level)");
  absl::StatusOr<std::array<std::array<int64_t, 2>, 3>> ct = r.cubeTile(*tile, field);
  if (!ct.ok()) return ct.status();
  k.cubeTile = *ct;
  std::string gridField;
  if (const Value *grid = s.find("core_grid", gridField)) {
    absl::StatusOr<std::vector<int64_t>> g = r.dims(*grid, gridField, 2, 2);
    if (!g.ok()) return g.status();
    k.coreGrid = {(*g)[0], (*g)[1]};
  }
  // dtypes: the point, the top level, or the top level's shape object.
  for (auto [key, dest] : {std::pair{"dtype", &k.dtype}, {"out_dtype", &k.outDtype}}) {
    const Value *v = s.find(key, field);
    if (!v) continue;
    absl::StatusOr<std::string> t = r.dtype(*v, field);
    if (!t.ok()) return t.status();
    *dest = *t;
  }
  std::string why;
  out.ptoText = matmulText(k, &why);
  if (out.ptoText.empty())
    return r.error(gridField,
                   absl::StrCat("the core grid does not cut C into whole tiles: ", why));
  out.funcName = "matmul";
  return absl::OkStatus();
}

absl::Status rmsNormPoint(const Reader &r, const Scope &s, MeasuredKernel &out) {
  RmsNormKernel k;
  std::string field;
  const Value *shape = s.find("shape", field);
  if (!shape || shape->getAsObject())
    return r.error(absl::StrCat(s.pointField, ".shape"),
                   "missing: an rmsnorm point needs the shape of x, e.g. [2, 64, 256]");
  absl::StatusOr<std::vector<int64_t>> sh = r.dims(*shape, field, 2, 6);
  if (!sh.ok()) return sh.status();
  k.shape = *sh;
  const Value *tile = s.find("vec_tile", field);
  if (!tile)
    return r.error(field, "missing: an rmsnorm point needs its vector tile (rows per step "
                          "and the whole last dimension), e.g. [1, 8, 256]");
  absl::StatusOr<std::vector<int64_t>> vt = r.dims(*tile, field, k.shape.size(), k.shape.size());
  if (!vt.ok()) return vt.status();
  if (vt->back() != k.shape.back())
    return r.error(field, absl::StrCat("the vector tile must cover the whole normalised "
                                       "dimension (", k.shape.back(), "), got ",
                                       vt->back()));
  k.vecTile = *vt;
  if (const Value *v = s.find("dtype", field)) {
    absl::StatusOr<std::string> t = r.dtype(*v, field);
    if (!t.ok()) return t.status();
    k.dtype = *t;
  }
  if (const Value *eps = s.find("eps", field)) {
    auto e = eps->getAsNumber();
    if (!e || !(*e > 0) || *e > 1)
      return r.error(field, absl::StrCat("expected a small positive number, got ", describe(*eps)));
    k.eps = *e;
  }
  out.label = absl::StrCat("shape=[", absl::StrJoin(k.shape, ","), "]");
  out.ptoText = rmsNormText(k);
  out.funcName = "rmsnorm";
  return absl::OkStatus();
}

absl::Status ptoPoint(const Reader &r, const Scope &s, MeasuredKernel &out, size_t index) {
  std::string field;
  const Value *file = s.find("pto", field);
  if (!file || !file->getAsString())
    return r.error(field, "missing: a \"pto\" kernel names its .pto file (relative to the "
                          "measurement file)");
  std::string name = file->getAsString()->str();
  llvm::SmallString<256> full(name);
  if (!llvm::sys::path::is_absolute(full)) {
    full = llvm::sys::path::parent_path(r.path());
    llvm::sys::path::append(full, name);
  }
  absl::StatusOr<std::string> text = support::readFileBounded(full, support::kMaxSourceBytes);
  if (!text.ok())
    return r.error(field, absl::StrCat("cannot read '", std::string(full), "': ",
                                       text.status().message()));
  out.ptoText = *text;
  if (const Value *func = s.find("func", field)) {
    if (!func->getAsString()) return r.error(field, "expected a function name");
    out.funcName = func->getAsString()->str();
  }
  out.label = absl::StrCat(name, "#", index);
  return absl::OkStatus();
}

/// The keys a point may hold: its time and how it is named and compiled, then the
/// parameters of its kernel family (the same names may stand at the top level as
/// defaults for every point).
std::vector<std::string> pointKeys(llvm::StringRef kernel) {
  std::vector<std::string> keys = {"us", "busy", "label", "no", "pass_options"};
  if (kernel == "matmul")
    keys.insert(keys.end(), {"mkn", "m", "n", "k", "cube_tile", "core_grid", "dtype", "out_dtype"});
  else if (kernel == "rmsnorm")
    keys.insert(keys.end(), {"shape", "vec_tile", "dtype", "eps"});
  else
    keys.insert(keys.end(), {"pto", "func"});
  return keys;
}

/// A point holds only keys its kernel family reads: a misspelt parameter would
/// otherwise be ignored and the kernel simulated with the file's default instead.
absl::Status checkPointKeys(const Reader &r, const Object &point, const std::string &field,
                            llvm::StringRef kernel) {
  std::vector<std::string> known = pointKeys(kernel);
  std::vector<std::string> names;
  for (const auto &kv : point) names.push_back(kv.first.str());
  std::sort(names.begin(), names.end());
  for (const std::string &name : names)
    if (std::find(known.begin(), known.end(), name) == known.end())
      return r.error(absl::StrCat(field, ".", name),
                     absl::StrCat("unknown key for a point of kernel '", kernel.str(),
                                  "' (known: ", absl::StrJoin(known, ", "), ")"));
  return absl::OkStatus();
}

} // namespace

absl::StatusOr<MeasurementSet> parseMeasurements(llvm::StringRef text, llvm::StringRef path) {
  Reader r(path);
  absl::StatusOr<Value> parsed = support::parseJson(text, path);
  if (!parsed.ok()) return parsed.status();
  const Object *top = parsed->getAsObject();
  if (!top) return r.error("", absl::StrCat("expected a JSON object, got ", describe(*parsed)));

  MeasurementSet set;
  set.path = path.str();
  set.name = llvm::sys::path::stem(path).str();
  for (auto [key, dest] : {std::pair{"what", &set.what}, {"source", &set.source}}) {
    absl::StatusOr<std::optional<std::string>> s = r.string(*top, key, key);
    if (!s.ok()) return s.status();
    *dest = s->value_or("");
  }
  const Value *pointsValue = top->get("points");
  const char *pointsKey = "points";
  if (!pointsValue) {
    pointsValue = top->get("configs");
    pointsKey = "configs";
    set.alternatives = pointsValue != nullptr;
  }
  if (!pointsValue)
    return r.error("", "no \"points\" or \"configs\": not a file of measured kernels (each "
                       "point is a kernel and its measured time \"us\"; see docs/fidelity.md)");
  const Array *points = pointsValue->getAsArray();
  if (!points || points->empty())
    return r.error(pointsKey, "expected a non-empty array of measured kernels");

  absl::StatusOr<std::optional<std::string>> device = r.string(*top, "device", "device");
  if (!device.ok()) return device.status();
  if (!*device || (*device)->empty())
    return r.error("device", "missing: name the device the kernels ran on (a preset such as "
                             "b3, or a device file)");
  set.device = (*device)->substr(0, (*device)->find(' '));

  absl::StatusOr<std::optional<std::string>> kind = r.string(*top, "kernel_kind", "kernel_kind");
  if (!kind.ok()) return kind.status();
  if (*kind && **kind != "plain" && **kind != "aicpu")
    return r.error("kernel_kind", absl::StrCat("unknown kernel kind '", **kind,
                                               "' (known: plain, aicpu)"));
  set.plainKernel = !*kind || **kind == "plain";

  const Object *topShape = top->getObject("shape");
  // The kernel: named, or a matmul when the sizes say so.
  absl::StatusOr<std::optional<std::string>> kernelName = r.string(*top, "kernel", "kernel");
  if (!kernelName.ok()) return kernelName.status();
  std::string kernel;
  if (*kernelName) {
    kernel = **kernelName;
  } else {
    bool matmulSizes = (topShape && topShape->get("m") && topShape->get("n") && topShape->get("k")) ||
                       top->get("mkn");
    if (const Object *first = (*points)[0].getAsObject())
      matmulSizes |= first->get("mkn") != nullptr ||
                     (first->get("m") && first->get("n") && first->get("k"));
    if (!matmulSizes)
      return r.error("kernel", "missing: name the kernel family (matmul, rmsnorm, or pto with "
                               "a .pto file)");
    kernel = "matmul";
  }
  if (kernel != "matmul" && kernel != "rmsnorm" && kernel != "pto")
    return r.error("kernel", absl::StrCat("unknown kernel '", kernel,
                                          "' (known: matmul, rmsnorm, pto)"));

  for (size_t i = 0; i < points->size(); ++i) {
    std::string field = absl::StrCat(pointsKey, "[", i, "]");
    const Object *point = (*points)[i].getAsObject();
    if (!point) return r.error(field, absl::StrCat("expected an object, got ", describe((*points)[i])));
    if (absl::Status st = checkPointKeys(r, *point, field, kernel); !st.ok()) return st;
    MeasuredKernel m;
    absl::StatusOr<std::optional<double>> us = r.positive(*point, "us", field + ".us");
    if (!us.ok()) return us.status();
    if (!*us)
      return r.error(field + ".us", "missing: the measured kernel time in microseconds");
    m.measuredUs = **us;
    if (const Value *busy = point->get("busy")) {
      const Object *b = busy->getAsObject();
      if (!b) return r.error(field + ".busy", "expected an object of pipe shares");
      for (const auto &kv : *b) {
        std::string bf = absl::StrCat(field, ".busy.", kv.first.str());
        if (!findMeasuredPipe(kv.first))
          return r.error(bf, absl::StrCat("unknown pipe '", kv.first.str(), "' (known: ",
                                          measuredPipeList(), ")"));
        auto share = kv.second.getAsNumber();
        if (!share || !(*share >= 0 && *share <= 1))
          return r.error(bf, absl::StrCat("expected a share between 0 and 1, got ",
                                          describe(kv.second)));
        m.measuredBusy[kv.first.str()] = *share;
      }
    }
    Scope scope{point, top, topShape, field};
    // Pass options: the top level's, then the point's (which win).
    for (const Object *holder : {top, point}) {
      const Value *opts = holder->get("pass_options");
      if (!opts) continue;
      std::string of = holder == top ? "pass_options" : field + ".pass_options";
      const Object *o = opts->getAsObject();
      if (!o) return r.error(of, absl::StrCat("expected an object {\"name\": value}, got ",
                                              describe(*opts)));
      std::vector<std::string> names;
      for (const auto &kv : *o) names.push_back(kv.first.str());
      std::sort(names.begin(), names.end());
      for (const std::string &name : names) {
        const Value &v = *o->get(name);
        std::string text;
        if (auto str = v.getAsString()) text = str->str();
        else if (std::optional<int64_t> i = support::jsonInteger(v)) text = std::to_string(*i);
        else if (auto b = v.getAsBoolean()) text = *b ? "true" : "false";
        else
          return r.error(absl::StrCat(of, ".", name),
                         absl::StrCat("expected an integer, a boolean or text such as "
                                      "\"{-1: 4}\", got ", describe(v)));
        auto it = std::find_if(m.passOptions.begin(), m.passOptions.end(),
                               [&](const auto &p) { return p.first == name; });
        if (it != m.passOptions.end()) it->second = text;
        else m.passOptions.push_back({name, text});
      }
    }
    absl::Status st = kernel == "matmul"    ? matmulPoint(r, scope, m)
                      : kernel == "rmsnorm" ? rmsNormPoint(r, scope, m)
                                            : ptoPoint(r, scope, m, i);
    if (!st.ok()) return st;
    if (const Value *no = point->get("no")) {
      std::optional<int64_t> n = support::jsonInteger(*no);
      if (!n)
        return r.error(field + ".no", absl::StrCat("expected the config's number, got ",
                                                   describe(*no)));
      m.label = absl::StrCat("No.", *n);
    } else {
      absl::StatusOr<std::optional<std::string>> label =
          r.string(*point, "label", field + ".label");
      if (!label.ok()) return label.status();
      if (*label) m.label = **label;
    }
    set.points.push_back(std::move(m));
  }
  return set;
}

absl::StatusOr<MeasurementSet> readMeasurements(llvm::StringRef path) {
  absl::StatusOr<std::string> text = support::readFileBounded(path, support::kMaxJsonBytes);
  if (!text.ok())
    return absl::InvalidArgumentError(absl::StrCat("cannot read measurement file '", path.str(),
                                                   "': ", text.status().message()));
  return parseMeasurements(*text, path);
}

absl::StatusOr<target::DeviceSpec> loadMeasuredDevice(const MeasurementSet &set) {
  llvm::StringRef given = set.device;
  bool pathLike = given.endswith(".json") || given.contains('/');
  std::vector<std::string> presets = target::DeviceSpec::presetNames();
  bool preset = !pathLike && std::find(presets.begin(), presets.end(), given) != presets.end();
  std::string name = given.str();
  if (!preset && !llvm::sys::path::is_absolute(given)) {
    llvm::SmallString<256> beside = llvm::sys::path::parent_path(set.path);
    llvm::sys::path::append(beside, given);
    // A bare name is a file only when there is one (otherwise it is an unknown device).
    if (pathLike || llvm::sys::fs::exists(beside)) name = std::string(beside);
  }
  absl::StatusOr<target::DeviceSpec> device = target::DeviceSpec::load(name);
  if (!device.ok())
    return absl::InvalidArgumentError(
        absl::StrCat(set.path, ": field 'device': ", device.status().message()));
  return device;
}

bool holdsMeasuredKernels(llvm::StringRef path) {
  absl::StatusOr<std::string> text = support::readFileBounded(path, support::kMaxJsonBytes);
  if (!text.ok()) return false;
  absl::StatusOr<Value> parsed = support::parseJson(*text, path);
  if (!parsed.ok() || !parsed->getAsObject()) return false;
  const Object &o = *parsed->getAsObject();
  return o.get("points") || o.get("configs");
}

} // namespace ptoc::calibrate
