// Success/failure of an operation whose details were reported as diagnostics.
#pragma once

namespace ptoc {

/// The outcome of something that reports its errors as diagnostics.
class [[nodiscard]] LogicalResult {
public:
  static LogicalResult success(bool ok = true) { return LogicalResult(ok); }
  static LogicalResult failure(bool failed = true) { return LogicalResult(!failed); }
  bool succeeded() const { return ok_; }
  bool failed() const { return !ok_; }

private:
  explicit LogicalResult(bool ok) : ok_(ok) {}
  bool ok_;
};

inline LogicalResult success(bool ok = true) { return LogicalResult::success(ok); }
inline LogicalResult failure(bool failed = true) { return LogicalResult::failure(failed); }
inline bool succeeded(LogicalResult r) { return r.succeeded(); }
inline bool failed(LogicalResult r) { return r.failed(); }

} // namespace ptoc
