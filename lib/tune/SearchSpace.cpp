// The search space: dimensions, config ordinals, and the JSON of configs and spaces.
#include "ptoc/tune/SearchSpace.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "llvm/Support/raw_ostream.h"

#include "ptoc/support/BoundedJson.h"

namespace ptoc::tune {

llvm::json::Value knobValueToJson(const KnobValue &value) {
  return std::visit(
      [](const auto &v) -> llvm::json::Value {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          llvm::json::Array array;
          for (int64_t x : v) array.push_back(x);
          return array;
        } else {
          return v;
        }
      },
      value);
}

absl::StatusOr<KnobValue> knobValueFromJson(const llvm::json::Value &json,
                                            llvm::StringRef where) {
  if (auto b = json.getAsBoolean()) return KnobValue(*b);
  if (auto i = support::jsonInteger(json)) return KnobValue(*i);
  if (auto s = json.getAsString()) return KnobValue(s->str());
  if (const llvm::json::Array *array = json.getAsArray()) {
    std::vector<int64_t> list;
    for (const llvm::json::Value &element : *array) {
      std::optional<int64_t> i = support::jsonInteger(element);
      if (!i)
        return absl::InvalidArgumentError(
            absl::StrCat(where.str(), ": a list value may hold only integers; write e.g. [64, 512]"));
      list.push_back(*i);
    }
    return KnobValue(std::move(list));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      where.str(), ": a knob value must be an integer, a bool, a string or a list of integers"));
}

std::string knobValueToString(const KnobValue &value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << knobValueToJson(value);
  return os.str();
}

llvm::StringRef dimensionKindName(DimensionKind kind) {
  switch (kind) {
  case DimensionKind::Cube: return "cube";
  case DimensionKind::Vector: return "vector";
  case DimensionKind::Other: break;
  }
  return "other";
}

absl::Status SearchSpace::addDimension(Dimension dimension) {
  if (dimension.name.empty())
    return absl::InvalidArgumentError("a search dimension needs a name (e.g. \"vec_tile[0]\")");
  if (findDimension(dimension.name) >= 0)
    return absl::InvalidArgumentError(absl::StrCat("search dimension '", dimension.name,
                                                   "' is defined twice; give each knob once"));
  if (dimension.values.empty())
    return absl::InvalidArgumentError(absl::StrCat("search dimension '", dimension.name,
                                                   "' has no values; list at least one"));
  for (std::size_t i = 0; i < dimension.values.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (dimension.values[i] == dimension.values[j])
        return absl::InvalidArgumentError(absl::StrCat(
            "search dimension '", dimension.name, "' lists the value ",
            knobValueToString(dimension.values[i]), " twice (positions ", j, " and ", i,
            "); list each value once"));
  dimensions_.push_back(std::move(dimension));
  return absl::OkStatus();
}

int SearchSpace::findDimension(llvm::StringRef name) const {
  for (std::size_t i = 0; i < dimensions_.size(); ++i)
    if (dimensions_[i].name == name) return static_cast<int>(i);
  return -1;
}

bool SearchSpace::hasCubeDimension() const {
  for (const Dimension &d : dimensions_)
    if (d.kind == DimensionKind::Cube) return true;
  return false;
}

uint64_t SearchSpace::size() const {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  uint64_t product = 1;
  for (const Dimension &d : dimensions_) {
    uint64_t n = d.values.size();
    if (product > kMax / n) return kMax;
    product *= n;
  }
  return product;
}

bool SearchSpace::isEnumerable() const {
  return size() != std::numeric_limits<uint64_t>::max();
}

Config SearchSpace::configAt(uint64_t ordinal) const {
  Config config(dimensions_.size(), 0);
  for (std::size_t i = dimensions_.size(); i-- > 0;) {
    uint64_t n = dimensions_[i].values.size();
    config[i] = static_cast<std::size_t>(ordinal % n);
    ordinal /= n;
  }
  return config;
}

uint64_t SearchSpace::ordinalOf(const Config &config) const {
  uint64_t ordinal = 0;
  for (std::size_t i = 0; i < dimensions_.size(); ++i)
    ordinal = ordinal * dimensions_[i].values.size() + config[i];
  return ordinal;
}

bool SearchSpace::isValid(const Config &config) const {
  if (config.size() != dimensions_.size()) return false;
  for (std::size_t i = 0; i < config.size(); ++i)
    if (config[i] >= dimensions_[i].values.size()) return false;
  return true;
}

void SearchSpace::enumerate(const std::function<bool(const Config &)> &visit) const {
  Config config(dimensions_.size(), 0);
  while (true) {
    if (!visit(config)) return;
    // Odometer step, last dimension fastest (the same order as configAt).
    std::size_t i = dimensions_.size();
    while (i > 0) {
      --i;
      if (++config[i] < dimensions_[i].values.size()) break;
      config[i] = 0;
      if (i == 0) return;
    }
    if (dimensions_.empty()) return;
  }
}

llvm::json::Object SearchSpace::configToJson(const Config &config) const {
  llvm::json::Object object;
  for (std::size_t i = 0; i < dimensions_.size(); ++i)
    object[dimensions_[i].name] = knobValueToJson(dimensions_[i].values[config[i]]);
  return object;
}

absl::StatusOr<Config> SearchSpace::configFromJson(const llvm::json::Value &json) const {
  const llvm::json::Object *object = json.getAsObject();
  if (!object)
    return absl::InvalidArgumentError(
        "a tuning config must be a JSON object {\"knob\": value, ...}");
  for (const auto &entry : *object)
    if (findDimension(entry.first) < 0)
      return absl::InvalidArgumentError(
          absl::StrCat("tuning config has unknown knob '", entry.first.str(),
                       "'; it is not a dimension of the search space"));
  Config config(dimensions_.size(), 0);
  for (std::size_t i = 0; i < dimensions_.size(); ++i) {
    const Dimension &d = dimensions_[i];
    const llvm::json::Value *field = object->get(d.name);
    if (!field)
      return absl::InvalidArgumentError(
          absl::StrCat("tuning config lacks knob '", d.name, "'; every dimension needs a value"));
    auto value = knobValueFromJson(*field, absl::StrCat("knob '", d.name, "'"));
    if (!value.ok()) return value.status();
    std::size_t index = 0;
    while (index < d.values.size() && !(d.values[index] == *value)) ++index;
    if (index == d.values.size())
      return absl::InvalidArgumentError(
          absl::StrCat("knob '", d.name, "' has value ", knobValueToString(*value),
                       ", which is not one of its ", d.values.size(), " candidate values"));
    config[i] = index;
  }
  return config;
}

std::string SearchSpace::configToString(const Config &config) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(configToJson(config));
  return os.str();
}

llvm::json::Array SearchSpace::toJson() const {
  llvm::json::Array array;
  for (const Dimension &d : dimensions_) {
    llvm::json::Array values;
    for (const KnobValue &v : d.values) values.push_back(knobValueToJson(v));
    array.push_back(llvm::json::Object{{"name", d.name},
                                       {"kind", dimensionKindName(d.kind)},
                                       {"values", std::move(values)}});
  }
  return array;
}

absl::StatusOr<SearchSpace> SearchSpace::fromJson(const llvm::json::Value &json) {
  const llvm::json::Array *array = json.getAsArray();
  if (!array)
    return absl::InvalidArgumentError(
        "a search space must be a JSON array of {\"name\", \"kind\", \"values\"} objects");
  SearchSpace space;
  for (std::size_t i = 0; i < array->size(); ++i) {
    const llvm::json::Object *object = (*array)[i].getAsObject();
    std::string where = absl::StrCat("search space dimension #", i);
    if (!object) return absl::InvalidArgumentError(absl::StrCat(where, " is not an object"));
    Dimension d;
    if (auto name = object->getString("name")) d.name = name->str();
    llvm::StringRef kind = object->getString("kind").getValueOr("other");
    if (kind == "cube") d.kind = DimensionKind::Cube;
    else if (kind == "vector") d.kind = DimensionKind::Vector;
    else if (kind != "other")
      return absl::InvalidArgumentError(absl::StrCat(
          where, " has kind '", kind.str(), "'; use \"cube\", \"vector\" or \"other\""));
    const llvm::json::Array *values = object->getArray("values");
    if (!values)
      return absl::InvalidArgumentError(absl::StrCat(where, " lacks its \"values\" array"));
    for (const llvm::json::Value &v : *values) {
      auto value = knobValueFromJson(v, absl::StrCat(where, " ('", d.name, "')"));
      if (!value.ok()) return value.status();
      d.values.push_back(std::move(*value));
    }
    if (absl::Status added = space.addDimension(std::move(d)); !added.ok()) return added;
  }
  return space;
}

} // namespace ptoc::tune
