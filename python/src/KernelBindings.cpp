// Session / Kernel / RunReport bindings.
#include "KernelBindings.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <memory>

#include "Builder.h"
#include "Conversions.h"
#include "Defaults.h"
#include "Errors.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_format.h"
#include "ptoc/session/Session.h"

namespace py = pybind11;

namespace ptoc::python {
namespace {

using session::Kernel;
using session::Session;

/// A compiled kernel shared by the Python objects that refer to it.
struct PyKernel {
  std::shared_ptr<const Kernel> kernel;
};

/// The numpy dtype that holds `t`'s storage (bf16 as uint16 bit patterns).
py::dtype storageDType(ir::DType t) {
  switch (t) {
  case ir::DType::F32: return py::dtype::of<float>();
  case ir::DType::F16: return py::dtype("float16");
  case ir::DType::BF16: return py::dtype::of<uint16_t>();
  case ir::DType::I8: return py::dtype::of<int8_t>();
  case ir::DType::I32: return py::dtype::of<int32_t>();
  case ir::DType::I64: return py::dtype::of<int64_t>();
  case ir::DType::Bool: return py::dtype("bool");
  case ir::DType::I16: return py::dtype::of<int16_t>();
  case ir::DType::U8: return py::dtype::of<uint8_t>();
  case ir::DType::U16: return py::dtype::of<uint16_t>();
  case ir::DType::U32: return py::dtype::of<uint32_t>();
  case ir::DType::U64: return py::dtype::of<uint64_t>();
  }
  return py::dtype::of<float>();
}

/// Checks that `a` holds `spec` densely in its storage dtype; `what` names it.
void checkArray(const py::array &a, const session::TensorSpec &spec, const std::string &what,
                bool writable) {
  auto fail = [&](const std::string &problem) {
    throw StatusError(ErrorStage::Input, absl::InvalidArgumentError(absl::StrCat(what, " ('",
                                                                                 spec.name, "'): ",
                                                                                 problem)));
  };
  if (!a.dtype().is(storageDType(spec.dtype)))
    fail(absl::StrCat("expected numpy dtype ", py::str(storageDType(spec.dtype)).cast<std::string>(),
                      " for ", dtypeToName(spec.dtype), ", got ",
                      py::str(a.dtype()).cast<std::string>()));
  std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim());
  bool fits = shape.size() == spec.shape.size();
  for (size_t d = 0; fits && d < shape.size(); ++d)
    fits = spec.shape[d] == ir::kDynamicDim || spec.shape[d] == shape[d];
  if (!fits)
    fail(absl::StrCat("expected shape [", absl::StrJoin(spec.shape, ", ", [](std::string *out, int64_t d) {
                        absl::StrAppend(out, d == ir::kDynamicDim ? std::string("?") : std::to_string(d));
                      }), "] ('?': any size), got [", absl::StrJoin(shape, ", "), "]"));
  if (!(a.flags() & py::array::c_style)) fail("the array is not C-contiguous");
  if (writable && !a.writeable()) fail("the array is read-only");
}

py::dict statsToPython(const Kernel &k) {
  const session::CompileStats &s = k.stats;
  py::dict d;
  py::dict subgraphs;
  subgraphs["AIC"] = s.aicSubgraphs;
  subgraphs["AIV"] = s.aivSubgraphs;
  subgraphs["total"] = s.subgraphs;
  d["subgraphs"] = subgraphs;
  d["tile_ops"] = s.tileOps;
  py::list groups;
  for (const session::GroupStats &g : s.groups) {
    py::dict gd;
    gd["key"] = g.key;
    gd["hash_order"] = g.hashOrder;
    gd["func"] = g.funcIndex;
    gd["core"] = g.core == target::CoreKind::AIC ? "AIC" : g.core == target::CoreKind::AIV ? "AIV" : "none";
    gd["size"] = g.size;
    gd["cycles"] = g.cycles;
    gd["copy_in_bytes"] = g.copyInBytes;
    groups.append(gd);
  }
  d["groups"] = groups;
  py::dict passes, merges;
  for (const passes::PassStatisticValue &v : s.passStatistics) {
    if (!passes.contains(v.pass)) passes[py::str(v.pass)] = py::dict();
    py::dict p = passes[py::str(v.pass)];
    p[py::str(v.name)] = p.contains(v.name) ? p[py::str(v.name)].cast<uint64_t>() + v.value
                                            : v.value;
  }
  // Merge decisions: merges done and refusals by reason, per merge pass.
  for (const char *pass : {"partition", "nbuffer-merge", "cube-nbuffer-merge", "l1-reuse-merge"}) {
    if (!passes.contains(pass)) continue;
    py::dict p = passes[pass];
    py::dict md, refused;
    md["merged"] = p.contains("merged") ? p["merged"] : p.contains("merges") ? p["merges"] : py::int_(0);
    for (auto [name, value] : p) {
      std::string n = name.cast<std::string>();
      if (n.rfind("refused-", 0) == 0) refused[py::str(n.substr(8))] = value;
    }
    md["refused"] = refused;
    merges[pass] = md;
  }
  d["passes"] = passes;
  d["merges"] = merges;
  // With loops: the tasks of every iteration (instantiated on first use, as a run
  // would); the leaves of every root function.
  const codegen::Program *program = &k.program;
  if (k.loops && k.stage == session::Stage::Codegen) {
    absl::StatusOr<std::shared_ptr<const codegen::Program>> runnable = k.runnable();
    if (runnable.ok()) program = runnable->get();
  }
  d["tasks"] = program->calls.size();
  d["root_functions"] = s.rootFunctions;
  d["leaves"] = program->leaves.size();
  return d;
}

/// The compile options the Python layer passes (knobs, host and debug options).
session::CompileOptions compileOptions(const py::dict &knobs, const std::string &stage,
                                       bool doubleBuffer, const std::string &irDumpDir,
                                       bool verifyEach, int64_t maxTileOps, bool consultBank,
                                       const std::string &bankPath) {
  session::CompileOptions opts;
  opts.consultBank = consultBank;
  opts.bankPath = bankPath;
  opts.knobs = knobsFromPython(knobs);
  opts.stopAt = valueOrThrow(ErrorStage::Option, session::parseStage(stage));
  opts.codegen.doubleBuffer = doubleBuffer;
  opts.irDumpDir = irDumpDir;
  opts.verifyEach = verifyEach;
  opts.budget.maxTileOps = maxTileOps;
  return opts;
}

py::dict reportUtilization(const session::RunReport &r) {
  py::dict d;
  d["AIC"] = r.aicUtilization;
  d["AIV"] = r.aivUtilization;
  return d;
}

} // namespace

const target::DeviceSpec &deviceOf(const py::object &session) {
  return session.cast<const Session &>().device();
}

void bindKernels(py::module_ &m) {
  // The compile options compile() and compile_text() share, with the C++ defaults.
  const py::arg_v stageArg = py::arg("stage") = session::stageName(kCompileDefaults.stopAt).str();
  const py::arg_v doubleBufferArg =
      py::arg("double_buffer") = kCompileDefaults.codegen.doubleBuffer;
  const py::arg_v irDumpDirArg = py::arg("ir_dump_dir") = kCompileDefaults.irDumpDir;
  const py::arg_v verifyEachArg = py::arg("verify_each") = kCompileDefaults.verifyEach;
  const py::arg_v maxTileOpsArg = py::arg("max_tile_ops") = kCompileDefaults.budget.maxTileOps;
  py::class_<Session>(m, "Session")
      .def(py::init([](const std::string &device) {
             return valueOrThrow(ErrorStage::Option, Session::create(device));
           }),
           py::arg("device") = target::kDefaultPreset)
      .def_property_readonly("device_name", [](const Session &s) { return s.device().name; })
      .def_property_readonly("aic_cores", [](const Session &s) { return s.device().aicCores; })
      .def_property_readonly("aiv_cores", [](const Session &s) { return s.device().aivCores; })
      .def_property_readonly("device_json", [](const Session &s) { return s.device().toJson(); })
      .def_property_readonly("device_hash",
                             [](const Session &s) { return s.device().contentHash(); })
      .def(
          "compile",
          [](const Session &s, Builder &builder, const py::dict &knobs, const std::string &stage,
             bool doubleBuffer, const std::string &irDumpDir, bool verifyEach,
             int64_t maxTileOps, bool consultBank, const std::string &bankPath) {
            session::CompileOptions opts =
                compileOptions(knobs, stage, doubleBuffer, irDumpDir, verifyEach, maxTileOps,
                               consultBank, bankPath);
            ir::Module &module = builder.takeModuleForCompile();
            absl::StatusOr<Kernel> kernel;
            {
              py::gil_scoped_release release;
              kernel = s.compile(module, opts);
            }
            return PyKernel{std::make_shared<const Kernel>(
                valueOrThrow(ErrorStage::Compile, std::move(kernel)))};
          },
          py::arg("builder"), py::arg("knobs"), stageArg, doubleBufferArg, irDumpDirArg,
          verifyEachArg, maxTileOpsArg, py::arg("consult_bank") = kCompileDefaults.consultBank,
          py::arg("bank_path") = kCompileDefaults.bankPath)
      .def(
          "compile_text",
          [](const Session &s, const std::string &text, const py::dict &knobs,
             const std::string &stage, bool doubleBuffer, const std::string &irDumpDir,
             bool verifyEach, int64_t maxTileOps) {
            session::CompileOptions opts = compileOptions(knobs, stage, doubleBuffer, irDumpDir,
                                                          verifyEach, maxTileOps, false, "");
            absl::StatusOr<Kernel> kernel;
            {
              py::gil_scoped_release release;
              kernel = s.compileText(text, "<tuned>", opts);
            }
            return PyKernel{std::make_shared<const Kernel>(
                valueOrThrow(ErrorStage::Compile, std::move(kernel)))};
          },
          py::arg("text"), py::arg("knobs"), stageArg, doubleBufferArg, irDumpDirArg,
          verifyEachArg, maxTileOpsArg,
          "Compiles tensor-level text (a tuned module) like compile() does a builder.")
      .def(
          "run",
          [](const Session &s, const PyKernel &pk, const py::list &args, const py::list &results,
             int schedMode, int debugMode, const std::string &outputDir, bool numerics,
             unsigned hostThreads, int stitchMaxNum, int schedParallelism) {
            const Kernel &k = *pk.kernel;
            if (args.size() != k.args.size() || results.size() != k.results.size())
              throw StatusError(ErrorStage::Input,
                                absl::InvalidArgumentError(absl::StrCat(
                                    "kernel '", k.funcName, "' takes ", k.args.size(),
                                    " arguments and ", k.results.size(), " results, got ",
                                    args.size(), " and ", results.size())));
            std::vector<py::array> argArrays, resultArrays;
            std::vector<runtime::ConstTensorRef> in;
            std::vector<runtime::TensorRef> out;
            // The arrays' own shapes (a dynamic axis takes the array's size).
            std::vector<std::vector<int64_t>> shapes;
            shapes.reserve(args.size() + results.size());
            auto shapeOf = [&](const py::array &a) -> const std::vector<int64_t> & {
              return shapes.emplace_back(a.shape(), a.shape() + a.ndim());
            };
            for (size_t i = 0; i < args.size(); ++i) {
              argArrays.push_back(args[i].cast<py::array>());
              checkArray(argArrays.back(), k.args[i], absl::StrCat("argument ", i), false);
              in.emplace_back(k.args[i].dtype, shapeOf(argArrays.back()), argArrays.back().data());
            }
            for (size_t i = 0; i < results.size(); ++i) {
              resultArrays.push_back(results[i].cast<py::array>());
              checkArray(resultArrays.back(), k.results[i], absl::StrCat("result ", i), true);
              out.emplace_back(k.results[i].dtype, shapeOf(resultArrays.back()),
                               resultArrays.back().mutable_data());
            }
            session::RunOptions opts;
            opts.schedMode = schedMode;
            opts.debugMode = debugMode;
            opts.outputDir = outputDir;
            opts.numerics = numerics;
            opts.hostThreads = hostThreads;
            opts.stitchMaxNum = stitchMaxNum;
            opts.schedParallelism = schedParallelism;
            absl::StatusOr<session::RunReport> report;
            {
              py::gil_scoped_release release;
              report = s.run(k, in, out, opts);
            }
            return valueOrThrow(ErrorStage::Run, std::move(report));
          },
          py::arg("kernel"), py::arg("args"), py::arg("results"),
          py::arg("sched_mode") = kRunDefaults.schedMode,
          py::arg("debug_mode") = kRunDefaults.debugMode,
          py::arg("output_dir") = kRunDefaults.outputDir,
          py::arg("numerics") = kRunDefaults.numerics,
          py::arg("host_threads") = kRunDefaults.hostThreads,
          py::arg("stitch_function_max_num") = kRunDefaults.stitchMaxNum,
          py::arg("device_sched_parallelism") = kRunDefaults.schedParallelism);

  py::class_<PyKernel>(m, "Kernel")
      .def_property_readonly("func_name", [](const PyKernel &k) { return k.kernel->funcName; })
      .def_property_readonly("stage",
                             [](const PyKernel &k) { return session::stageName(k.kernel->stage).str(); })
      .def_property_readonly("pipeline", [](const PyKernel &k) { return k.kernel->pipeline; })
      .def_property_readonly("compile_seconds",
                             [](const PyKernel &k) { return k.kernel->compileSeconds; })
      .def_property_readonly("args",
                             [](const PyKernel &k) {
                               py::list l;
                               for (const auto &a : k.kernel->args) l.append(specToPython(a));
                               return l;
                             })
      .def_property_readonly("results",
                             [](const PyKernel &k) {
                               py::list l;
                               for (const auto &r : k.kernel->results) l.append(specToPython(r));
                               return l;
                             })
      .def("ir",
           [](const PyKernel &k, const std::string &stage) {
             session::Stage s = valueOrThrow(ErrorStage::Option, session::parseStage(stage));
             return valueOrThrow(ErrorStage::Option, k.kernel->irAt(s));
           })
      .def_property_readonly("stats", [](const PyKernel &k) { return statsToPython(*k.kernel); })
      .def_property_readonly("bank_config", [](const PyKernel &k) { return k.kernel->bankConfig; })
      .def_property_readonly("bank_sched_mode",
                             [](const PyKernel &k) -> py::object {
                               if (!k.kernel->bankSchedMode) return py::none();
                               return py::int_(*k.kernel->bankSchedMode);
                             })
      .def_property_readonly("warnings", [](const PyKernel &k) { return k.kernel->warnings; })
      .def_property_readonly("remarks", [](const PyKernel &k) { return k.kernel->remarks; })
      .def_property_readonly("derived_tiles",
                             [](const PyKernel &k) {
                               py::list l;
                               for (const passes::DerivedTile &t : k.kernel->derivedTiles) {
                                 py::dict d;
                                 d["kind"] = passes::derivedTileKindName(t.kind);
                                 d["tile"] = t.tile;
                                 d["ops"] = t.ops;
                                 d["first_op"] = t.firstOp;
                                 d["func"] = t.func;
                                 d["tiles"] = t.tiles;
                                 d["rule"] = t.rule;
                                 l.append(d);
                               }
                               return l;
                             })
      .def_property_readonly("knobs", [](const PyKernel &k) {
        py::dict d;
        for (const auto &[name, value] : k.kernel->knobs.values())
          d[py::str(name)] = optionValueToPython(value);
        return d;
      });

  py::class_<session::RunReport>(m, "RunReport")
      .def_readonly("simulated_us", &session::RunReport::simulatedUs)
      .def_readonly("bound_us", &session::RunReport::boundUs)
      .def_readonly("bound_ratio", &session::RunReport::boundRatio)
      .def_readonly("summary", &session::RunReport::summary)
      .def_readonly("output_folder", &session::RunReport::outputFolder)
      .def_readonly("swimlane_path", &session::RunReport::swimlanePath)
      .def_readonly("sched_parallelism", &session::RunReport::schedParallelism)
      .def_readonly("simulate_seconds", &session::RunReport::simulateSeconds)
      .def_readonly("execute_seconds", &session::RunReport::executeSeconds)
      .def_property_readonly("utilization", &reportUtilization)
      .def_property_readonly("tasks",
                             [](const session::RunReport &r) { return r.record.tasks.size(); })
      .def("__repr__", [](const session::RunReport &r) {
        return absl::StrFormat("<ptoc.RunReport simulated %.2f us, bound %.2f us (%.0f%%), "
                               "AIC %.0f%%, AIV %.0f%%>",
                               r.simulatedUs, r.boundUs, 100 * r.boundRatio,
                               100 * r.aicUtilization, 100 * r.aivUtilization);
      });
}

} // namespace ptoc::python
