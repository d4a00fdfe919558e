// The tuner from Python: searches with the GIL released; the progress callback takes
// the GIL back for each report.
#include "TuneBindings.h"

#include <optional>
#include <string>

#include <pybind11/stl.h>

#include "Conversions.h"
#include "Defaults.h"
#include "Errors.h"
#include "KernelBindings.h"
#include "llvm/Support/raw_ostream.h"
#include "ptoc/tune/TuneProgress.h"
#include "ptoc/session/Tuner.h"

namespace py = pybind11;

namespace ptoc::python {

namespace {

/// tune::TuneProgress drawing into text the caller writes (Python writes it to its
/// own sys.stderr, which tests and notebooks may have replaced).
class TuneProgressText {
public:
  TuneProgressText(std::string label, bool interactive)
      : os_(text_), bar_(os_, interactive, std::move(label)) {}

  std::string report(uint64_t used, uint64_t planned, std::optional<double> best,
                     uint64_t pruned) {
    tune::SearchProgress p;
    p.evaluationsUsed = used;
    p.evaluationsPlanned = planned;
    p.bestMicros = best;
    p.pruned = pruned;
    bar_.report(p);
    return take();
  }
  std::string finish() {
    bar_.finish();
    return take();
  }

private:
  std::string take() {
    std::string out;
    out.swap(text_);
    return out;
  }
  std::string text_;
  llvm::raw_string_ostream os_; // unbuffered: every write lands in text_
  tune::TuneProgress bar_;
};

} // namespace

void bindTune(py::module_ &m) {
  py::class_<TuneProgressText>(m, "TuneProgress",
                               "A search's progress bar (tune::TuneProgress): report() and "
                               "finish() return the text to write.")
      .def(py::init<std::string, bool>(), py::arg("label"), py::arg("interactive"))
      .def("report", &TuneProgressText::report, py::arg("used"), py::arg("planned"),
           py::arg("best"), py::arg("pruned"))
      .def("finish", &TuneProgressText::finish);

  m.def(
      "tune_text",
      [](const py::object &sessionObj, const std::string &text, const std::string &strategy,
         uint64_t budget, uint64_t seed, unsigned threads, const std::string &bankPath,
         bool useBank, const std::string &resultDir, const py::dict &knobs,
         const py::object &progress, const std::string &spaceJson,
         const std::vector<std::vector<int64_t>> &argShapes, const py::list &argData,
         int schedMode, int64_t stitchMaxNum, int schedParallelism) {
        const session::Session &s = sessionObj.cast<const session::Session &>();
        session::TuneOptions opts;
        opts.search.strategy = valueOrThrow(ErrorStage::Option, tune::parseStrategy(strategy));
        opts.search.budget = budget;
        opts.search.seed = seed;
        opts.threads = threads;
        opts.bankPath = bankPath;
        opts.useBank = useBank;
        opts.resultDir = resultDir;
        opts.baseKnobs = knobsFromPython(knobs);
        opts.argShapes = argShapes;
        // The arrays stay referenced by `argData` for the whole (synchronous) tuning.
        for (const py::handle &a : argData) {
          py::array array = py::reinterpret_borrow<py::array>(a);
          if (!(array.flags() & py::array::c_style))
            throw StatusError(ErrorStage::Input,
                              absl::InvalidArgumentError("tune_text: arg_data arrays must be "
                                                         "C-contiguous (the kernel's layout)"));
          opts.argData.push_back(array.data());
        }
        opts.schedMode = schedMode;
        opts.stitchMaxNum = stitchMaxNum;
        opts.schedParallelism = schedParallelism;
        if (!progress.is_none())
          opts.progress = [progress](const tune::SearchProgress &p) {
            py::gil_scoped_acquire gil;
            progress(p.evaluationsUsed, p.evaluationsPlanned,
                     p.bestMicros ? py::cast(*p.bestMicros) : py::none(), p.pruned);
          };
        std::optional<tune::SearchSpace> space;
        if (!spaceJson.empty())
          space = valueOrThrow(ErrorStage::Option, tune::parseSearchSpace(spaceJson));
        absl::StatusOr<session::TuneReport> report;
        {
          py::gil_scoped_release release;
          report = session::tuneModule(s, text, opts, space ? &*space : nullptr);
        }
        session::TuneReport r = valueOrThrow(ErrorStage::Compile, std::move(report));
        py::dict d;
        d["bank_hit"] = r.bankHit;
        d["evaluations"] = r.result.evaluationsUsed();
        d["compiles"] = r.compiles;
        d["pruned"] = r.result.prunedCount();
        d["strategy"] = r.result.strategy;
        d["baseline_us"] = r.baselineUs;
        d["written_config"] = r.writtenConfigJson;
        d["best_us"] = r.best ? py::cast(r.bestUs) : py::none();
        d["result_path"] = r.resultPath;
        d["space_size"] = r.space.size();
        py::list invalid;
        for (const tune::Evaluation &e : r.result.evaluations)
          if (!e.micros)
            invalid.append(py::make_tuple(r.space.configToString(e.config), e.invalidReason));
        for (const tune::PrunedConfig &p : r.result.prunedConfigs)
          invalid.append(py::make_tuple(r.space.configToString(p.config), p.reason));
        d["invalid"] = invalid;
        if (r.best) {
          d["config"] = r.best->configJson;
          d["module_text"] = r.best->moduleText;
          py::dict k;
          for (const auto &[name, value] : r.best->knobs.values())
            k[py::str(name)] = optionValueToPython(value);
          d["knobs"] = k;
          d["sched_mode"] = r.best->schedMode;
          d["sched_parallelism"] =
              r.best->schedParallelism ? py::cast(*r.best->schedParallelism) : py::none();
        }
        return d;
      },
      py::arg("session"), py::arg("text"),
      py::arg("strategy") = tune::strategyName(kTuneDefaults.search.strategy).str(),
      py::arg("budget") = kTuneDefaults.search.budget, py::arg("seed") = kTuneDefaults.search.seed,
      py::arg("threads") = kTuneDefaults.threads, py::arg("bank_path") = kTuneDefaults.bankPath,
      py::arg("use_bank") = kTuneDefaults.useBank, py::arg("result_dir") = kTuneDefaults.resultDir,
      py::arg("knobs") = py::dict(),
      py::arg("progress") = py::none(), py::arg("space_json") = "",
      py::arg("arg_shapes") = std::vector<std::vector<int64_t>>(),
      py::arg("arg_data") = py::list(), py::arg("sched_mode") = kTuneDefaults.schedMode,
      py::arg("stitch_max_num") = kTuneDefaults.stitchMaxNum,
      py::arg("sched_parallelism") = kTuneDefaults.schedParallelism,
      "Tunes the knobs of a tensor-level module on the simulator (session::tuneModule).");
}

} // namespace ptoc::python
