// StatusError -> the exception ptoc.errors.from_status builds.
#include "Errors.h"

#include <pybind11/pybind11.h>

#include "ptoc/ir/Diagnostics.h"

namespace py = pybind11;

namespace ptoc::python {
namespace {

const char *stageName(ErrorStage s) {
  switch (s) {
  case ErrorStage::Build: return "build";
  case ErrorStage::Option: return "option";
  case ErrorStage::Compile: return "compile";
  case ErrorStage::Run: return "run";
  case ErrorStage::Input: return "input";
  }
  return "?";
}

const char *codeName(absl::StatusCode c) {
  switch (c) {
  case absl::StatusCode::kInvalidArgument: return "invalid_argument";
  case absl::StatusCode::kInternal: return "internal";
  case absl::StatusCode::kResourceExhausted: return "resource_exhausted";
  case absl::StatusCode::kNotFound: return "not_found";
  case absl::StatusCode::kFailedPrecondition: return "failed_precondition";
  case absl::StatusCode::kOutOfRange: return "out_of_range";
  case absl::StatusCode::kUnimplemented: return "unimplemented";
  default: return "unknown";
  }
}

} // namespace

void registerErrorTranslator() {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError &e) {
      py::object errors = py::module_::import("ptoc.errors");
      py::object exc = errors.attr("from_status")(
          stageName(e.stage()), codeName(e.status().code()), std::string(e.status().message()),
          ir::diagCategoryName(ir::categoryOf(e.status())).str());
      PyErr_SetObject(reinterpret_cast<PyObject *>(Py_TYPE(exc.ptr())), exc.ptr());
    }
  });
}

} // namespace ptoc::python
