// aic_onnx._core: the C++ library as a Python extension. It calls the same
// library functions as the command line (session/load_model.h,
// session/optimize_and_verify.h, session/session.h, session/compare.h,
// analysis/analyze.h), never the CLI. The package's __init__.py turns
// ModelProtos into bytes and gives the API its Python shape; this file only
// converts between numpy arrays and tensors and Status and exceptions.
//
// Errors: a Status from the input (InvalidArgument, NotFound, Unimplemented,
// FailedPrecondition, OutOfRange, ResourceExhausted) is a ValueError, any other
// a RuntimeError, each with the CLI's one-line message. The GIL is released
// while loading, optimizing, analysing and running.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/approximate.h"
#include "analysis/analyze.h"
#include "analysis/calibration_sources.h"
#include "analysis/render.h"
#include "analysis/render_opt_html.h"
#include "cli/version.h"
#include "onnx_io/model_bytes.h"
#include "onnx_io/save.h"
#include "rewrite/optimize.h"
#include "session/compare.h"
#include "session/load_model.h"
#include "session/optimize_and_verify.h"
#include "session/session.h"
#include "session/test_inputs.h"

namespace py = pybind11;

namespace aic::python {

namespace {

bool IsInputError(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kAlreadyExists:
      return true;
    default:
      return false;
  }
}

[[noreturn]] void Raise(const absl::Status& s) {
  std::string message(s.message());
  if (IsInputError(s.code())) throw py::value_error(message);
  throw std::runtime_error(message);
}

void Check(const absl::Status& s) {
  if (!s.ok()) Raise(s);
}

template <typename T>
T Take(absl::StatusOr<T> v) {
  if (!v.ok()) Raise(v.status());
  return *std::move(v);
}

// Where a model comes from: a file, or serialized bytes (with the folder its
// external data, if any, lives in).
struct ModelSource {
  std::optional<std::string> path;
  // Serialized bytes, read in place: `owner` (a Python bytes object, never
  // changed) keeps them alive, also while the GIL is released.
  py::object owner;
  std::string_view bytes;
  std::string name;      // for messages
  std::string base_dir;  // external data of bytes

  absl::StatusOr<std::unique_ptr<Model>> Load(bool infer_shapes) const {
    session::LoadOptions options{.infer_shapes = infer_shapes};
    if (path) return session::LoadVerifiedModel(*path, options);
    return session::LoadVerifiedModelFromBytes(bytes, name, base_dir, options);
  }
};

ModelSource SourceOf(const py::object& model, const std::string& name, const std::string& base_dir) {
  ModelSource source;
  source.base_dir = base_dir;
  if (py::isinstance<py::bytes>(model)) {
    source.owner = model;
    char* data = nullptr;
    Py_ssize_t size = 0;
    if (PyBytes_AsStringAndSize(model.ptr(), &data, &size) != 0) throw py::error_already_set();
    source.bytes = std::string_view(data, static_cast<size_t>(size));
    source.name = name.empty() ? "<model bytes>" : name;
  } else if (py::isinstance<py::str>(model)) {
    source.path = model.cast<std::string>();
    source.name = *source.path;
  } else {
    throw py::type_error("a model is an onnx.ModelProto, its serialized bytes or a path");
  }
  return source;
}

// numpy <-> DType, one table for both directions (numpy's kind character and
// item size). bfloat16, float8 and 4-bit types have no numpy dtype.
struct NumpyKind {
  DType dtype;
  char kind;
  int size;
};
constexpr NumpyKind kNumpyKinds[] = {
    {DType::kFloat, 'f', 4},   {DType::kDouble, 'f', 8},     {DType::kFloat16, 'f', 2},
    {DType::kInt8, 'i', 1},    {DType::kInt16, 'i', 2},      {DType::kInt32, 'i', 4},
    {DType::kInt64, 'i', 8},   {DType::kUint8, 'u', 1},      {DType::kUint16, 'u', 2},
    {DType::kUint32, 'u', 4},  {DType::kUint64, 'u', 8},     {DType::kBool, 'b', 1},
    {DType::kComplex64, 'c', 8}, {DType::kComplex128, 'c', 16},
};

std::optional<DType> DTypeOfArray(const py::array& a) {
  const char kind = a.dtype().kind();
  if (kind == 'U' || kind == 'S' || kind == 'O') return DType::kString;
  const auto size = a.dtype().itemsize();
  for (const NumpyKind& k : kNumpyKinds) {
    if (k.kind == kind && k.size == size) return k.dtype;
  }
  return std::nullopt;
}

// The numpy dtype of each table entry, made once (a dtype from its name costs
// more than a small model's run); kept for the life of the process.
std::optional<py::dtype> NumpyDType(DType t) {
  static const auto* made = [] {
    auto* m = new std::vector<std::pair<DType, py::dtype>>();
    for (const NumpyKind& k : kNumpyKinds) m->emplace_back(k.dtype, py::dtype(absl::StrCat(std::string(1, k.kind), k.size)));
    return m;
  }();
  for (const auto& [dtype, numpy] : *made) {
    if (dtype == t) return numpy;
  }
  return std::nullopt;
}

// A numpy array as a tensor. A C-contiguous, aligned array is borrowed, not
// copied (the tensor keeps a reference, dropped under the GIL); any other is
// copied once into C order. `what` names the value in errors.
Tensor TensorOfArray(const py::handle& value, const std::string& what) {
  py::array a = py::array::ensure(value);
  if (!a) throw py::value_error(absl::StrCat(what, ": expected a numpy array, got ", std::string(py::str(py::type::handle_of(value)))));
  std::optional<DType> dtype = DTypeOfArray(a);
  if (!dtype) {
    throw py::value_error(absl::StrCat(what, ": numpy dtype ", std::string(py::str(a.dtype())), " has no ONNX tensor type here"));
  }
  std::vector<int64_t> dims(a.shape(), a.shape() + a.ndim());
  if (*dtype == DType::kString) {
    std::vector<std::string> items;
    for (const py::handle& item : a.attr("ravel")()) items.push_back(py::str(item).cast<std::string>());
    return Tensor::FromStrings(std::move(items), dims);
  }
  const int flags = a.flags();
  const bool contiguous = (flags & py::array::c_style) != 0 && (flags & 0x0100 /* NPY_ARRAY_ALIGNED */) != 0;
  if (!contiguous) a = py::array::ensure(a, py::array::c_style | py::array::forcecast);
  PyObject* owner = a.ptr();
  Py_INCREF(owner);
  std::shared_ptr<const void> keep_alive(owner, [](const void* p) {
    py::gil_scoped_acquire gil;
    Py_DECREF(static_cast<PyObject*>(const_cast<void*>(p)));
  });
  size_t bytes = static_cast<size_t>(a.nbytes());
  return Tensor(*dtype, std::move(dims), Buffer::Borrow(a.data(), bytes, std::move(keep_alive)));
}

// A tensor as a numpy array: the tensor's own memory when it owns it (the
// array keeps it alive), a copy when it borrows (a weight mapped from the
// model file, a caller's input).
py::object ArrayOfTensor(const Tensor& t) {
  if (t.dtype() == DType::kString) {
    py::list items;
    for (const std::string& s : t.strings()) items.append(py::str(s));
    py::array out = py::array::ensure(py::module_::import("numpy").attr("array")(items, "object"));
    return out.attr("reshape")(py::cast(t.dims()));
  }
  std::optional<py::dtype> dtype = NumpyDType(t.dtype());
  if (!dtype) throw py::value_error(absl::StrCat("an output of type ", DTypeName(t.dtype()), " has no numpy dtype"));
  std::vector<py::ssize_t> shape(t.dims().begin(), t.dims().end());
  if (t.buffer() == nullptr || t.num_elements() == 0) return py::array(*dtype, shape);
  if (t.buffer()->borrowed() || !t.buffer()->writable()) {
    py::array out(*dtype, shape);
    std::memcpy(out.mutable_data(), t.raw_data(), t.byte_size());
    return out;
  }
  auto* holder = new std::shared_ptr<Buffer>(t.buffer());
  py::capsule owner(holder, [](void* p) { delete static_cast<std::shared_ptr<Buffer>*>(p); });
  return py::array(*dtype, shape, {}, t.raw_data(), owner);
}

py::object ObjectOfValue(const RuntimeValue& v) {
  if (v.is_tensor()) return ArrayOfTensor(v.tensor);
  if (v.is_sequence()) {
    py::list items;
    for (const Tensor& t : v.sequence) items.append(ArrayOfTensor(t));
    return items;
  }
  if (v.is_map_sequence()) {  // ZipMap: a list of {label: score} dicts, as ONNX Runtime returns it
    py::list keys = ArrayOfTensor(v.map_keys).attr("tolist")();
    py::list rows = ArrayOfTensor(v.map_values).attr("tolist")();
    py::list maps;
    for (py::handle row : rows) {
      py::list scores = row.cast<py::list>();
      py::dict m;
      for (size_t c = 0; c < keys.size(); ++c) m[keys[c]] = scores[c];
      maps.append(m);
    }
    return maps;
  }
  return py::none();
}

exec::Feeds FeedsOfDict(const py::dict& feeds) {
  exec::Feeds out;
  for (const auto& [key, value] : feeds) {
    if (!py::isinstance<py::str>(key)) throw py::type_error("feed names are strings");
    std::string name = key.cast<std::string>();
    if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
      // A sequence input: a list of arrays.
      std::vector<Tensor> items;
      DType dtype = DType::kUndefined;
      for (const py::handle& item : value) {
        items.push_back(TensorOfArray(item, absl::StrCat("input '", name, "'")));
        dtype = items.back().dtype();
      }
      out[name] = RuntimeValue::Sequence(std::move(items), dtype);
    } else {
      out[name] = RuntimeValue(TensorOfArray(value, absl::StrCat("input '", name, "'")));
    }
  }
  return out;
}

session::InputShapes ShapesOfDict(const py::object& shapes) {
  session::InputShapes out;
  if (shapes.is_none()) return out;
  for (const auto& [key, value] : shapes.cast<py::dict>()) {
    out[key.cast<std::string>()] = value.cast<std::vector<int64_t>>();
  }
  return out;
}

// ONNX Runtime's NodeArg: name, type ("tensor(float)"), shape (ints and
// symbol names; None for an unknown dim; None for an unknown rank).
py::tuple DescribeIo(const session::IoInfo& io) {
  const TypeInfo& t = io.type;
  std::string type;
  switch (t.kind) {
    case TypeInfo::Kind::kTensor: type = absl::StrCat("tensor(", DTypeName(t.dtype), ")"); break;
    case TypeInfo::Kind::kSequence:
      type = t.element ? absl::StrCat("seq(tensor(", DTypeName(t.element->dtype), "))") : "seq";
      break;
    case TypeInfo::Kind::kOptional: type = "optional"; break;
    case TypeInfo::Kind::kMap: type = "map"; break;
    case TypeInfo::Kind::kSparseTensor: type = absl::StrCat("sparse_tensor(", DTypeName(t.dtype), ")"); break;
    default: type = "unknown"; break;
  }
  py::object shape = py::none();
  if (t.kind == TypeInfo::Kind::kTensor && t.shape.has_rank()) {
    py::list dims;
    for (const Dim& d : t.shape.dims()) {
      if (d.is_value()) {
        dims.append(py::int_(d.value()));
      } else if (d.is_symbol()) {
        dims.append(py::str(d.symbol()));
      } else {
        dims.append(py::none());
      }
    }
    shape = dims;
  }
  return py::make_tuple(io.name, type, shape);
}

// A session and the lock that keeps one run at a time on it (its plans and
// arena are not shared between concurrent runs); separate sessions run in
// parallel.
class PySession {
 public:
  PySession(const py::object& model, const std::string& name, const std::string& base_dir, const std::string& device,
            int threads, std::optional<int> opt_level) {
    ModelSource source = SourceOf(model, name, base_dir);
    session::SessionOptions options;
    options.device = device;
    options.threads = threads;
    options.opt_level = opt_level;
    if (threads < 0) throw py::value_error("threads must be >= 0 (0: the core count)");
    if (opt_level && (*opt_level < 0 || *opt_level > 3)) throw py::value_error("opt_level must be 0..3");
    absl::StatusOr<std::unique_ptr<session::Session>> created;
    {
      py::gil_scoped_release release;
      auto loaded = source.Load(/*infer_shapes=*/true);
      if (!loaded.ok()) {
        created = loaded.status();
      } else {
        created = session::Session::Create(*std::move(loaded), options);
        if (!created.ok()) {
          created = absl::Status(created.status().code(), absl::StrCat(source.name, ": ", created.status().message()));
        }
      }
    }
    session_ = Take(std::move(created));
    for (const auto& o : session_->outputs()) output_names_.push_back(o.name);
  }

  py::list Run(const py::object& output_names, const py::dict& feeds) {
    std::vector<size_t> picked;
    if (output_names.is_none()) {
      for (size_t i = 0; i < output_names_.size(); ++i) picked.push_back(i);
    } else {
      for (const py::handle& n : output_names) {
        std::string name = n.cast<std::string>();
        size_t i = 0;
        while (i < output_names_.size() && output_names_[i] != name) ++i;
        if (i == output_names_.size()) {
          throw py::value_error(absl::StrCat("'", name, "' is not an output of the model (outputs: ",
                                             absl::StrJoin(output_names_, ", "), ")"));
        }
        picked.push_back(i);
      }
    }
    exec::Feeds inputs = FeedsOfDict(feeds);
    absl::StatusOr<std::vector<RuntimeValue>> results;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mu_);
      results = session_->Run(inputs);
    }
    inputs.clear();  // the borrowed arrays' references drop here, under the GIL
    std::vector<RuntimeValue> values = Take(std::move(results));
    py::list out;
    for (size_t i : picked) out.append(ObjectOfValue(values[i]));
    return out;
  }

  py::list Inputs() const {
    py::list out;
    for (const auto& io : session_->inputs()) out.append(DescribeIo(io));
    return out;
  }
  py::list Outputs() const {
    py::list out;
    for (const auto& io : session_->outputs()) out.append(DescribeIo(io));
    return out;
  }
  std::string Describe() const { return session_->Describe(); }
  std::string Device() const { return session_->backend().name; }

 private:
  std::unique_ptr<session::Session> session_;
  std::vector<std::string> output_names_;
  std::mutex mu_;
};

// optimize(): (the optimized model's bytes, or None when it went to
// `output_path` or would pass protobuf's 2 GB limit; the --stats JSON).
// Calibration samples given as a list of feed dicts (copied: the analysis
// reads them from its own threads).
analysis::CalibrationData FeedListCalibration(const py::object& calib) {
  auto samples = std::make_shared<std::vector<exec::Feeds>>();
  for (const py::handle& f : calib) {
    exec::Feeds feeds = FeedsOfDict(f.cast<py::dict>());
    for (auto& [name, v] : feeds) {
      if (v.is_tensor()) v.tensor = v.tensor.Clone();
      for (Tensor& t : v.sequence) t = t.Clone();
    }
    samples->push_back(std::move(feeds));
  }
  if (samples->empty()) throw py::value_error("calib: no samples given");
  analysis::CalibrationData data;
  data.source = absl::StrCat(samples->size(), " sample(s) given");
  data.samples = static_cast<int64_t>(samples->size());
  data.feed = [samples](int64_t i) -> absl::StatusOr<analysis::Feeds> { return (*samples)[static_cast<size_t>(i)]; };
  return data;
}

// "random:N" -> N; 0 for a folder.
int64_t RandomSampleCount(const std::string& spec) {
  absl::StatusOr<int64_t> n = analysis::RandomSampleCount(spec);
  if (!n.ok()) throw py::value_error("calib 'random:N' " + std::string(n.status().message()));
  return *n;
}

py::tuple Optimize(const py::object& model, const std::string& name, const std::string& base_dir, int level,
                   const std::string& target, const py::object& fix_shapes, const py::object& fix_dims,
                   int64_t fold_limit, bool fold_dequantize, int verify_runs, const py::object& verify_shapes,
                   const py::object& verify_feeds, double rtol, double atol, bool write_shapes,
                   const std::string& output_path, const std::string& spill_path, bool external_data,
                   const std::string& html_path, const std::vector<std::string>& apply, double max_error,
                   const py::object& calib, double min_activation, bool keep_slower, bool measure_latency,
                   uint64_t seed) {
  if (level < 0 || level > 3) throw py::value_error("level must be 0..3");
  analysis::ApproximateOptions approximate;
  for (const std::string& spec : apply) {
    if (absl::Status s = analysis::AddApplySpec(spec, approximate); !s.ok()) {
      throw py::value_error("apply: " + std::string(s.message()));
    }
  }
  const bool approximating = !apply.empty();
  if (!(max_error >= 0)) throw py::value_error("max_error must be >= 0");
  if (!(min_activation >= 0 && min_activation < 1)) throw py::value_error("min_activation must be in [0, 1)");
  approximate.max_error = max_error;
  approximate.min_activation = min_activation;
  approximate.keep_slower = keep_slower;
  approximate.measure_latency = measure_latency;
  // What to measure on, read while the GIL is held: None (8 random samples),
  // "random:N", a folder, or feed dicts.
  int64_t random_samples = 0;
  std::string calib_dir;
  std::optional<analysis::CalibrationData> given_samples;
  if (approximating) {
    if (calib.is_none()) {
      random_samples = 8;
    } else if (py::isinstance<py::str>(calib)) {
      calib_dir = calib.cast<std::string>();
      random_samples = RandomSampleCount(calib_dir);
    } else {
      given_samples = FeedListCalibration(calib);
    }
  } else if (!calib.is_none()) {
    throw py::value_error("calib goes with apply");
  }
  if (target != "onnx" && target != "aic") throw py::value_error("target must be 'onnx' or 'aic'");
  ModelSource source = SourceOf(model, name, base_dir);
  session::OptimizeJob job;
  job.optimize.level = level;
  if (target == "aic") job.optimize.aic_ops = rewrite::AllAicOps();
  job.optimize.fold_limit = fold_limit;
  job.optimize.fold_dequantize = fold_dequantize;
  job.optimize.fix_shapes = ShapesOfDict(fix_shapes);
  if (!fix_dims.is_none()) {
    for (const auto& [k, v] : fix_dims.cast<py::dict>()) job.optimize.fix_dims[k.cast<std::string>()] = v.cast<int64_t>();
  }
  job.verify_runs = verify_runs;
  job.verify_shapes = ShapesOfDict(verify_shapes);
  if (!verify_feeds.is_none()) {
    for (const py::handle& f : verify_feeds) job.verify_feeds.push_back(FeedsOfDict(f.cast<py::dict>()));
    job.verify_feeds_source = "the inputs given";
  }
  job.rtol = rtol;
  job.atol = atol;
  job.write_shapes = write_shapes;
  job.optimize.record_provenance = !html_path.empty();
  std::string error_prefix = source.name + ": ";
  absl::Status status;
  std::optional<ModelBytes> serialized;  // in memory: written into the bytes returned
  std::string stats;
  {
    py::gil_scoped_release release;
    [&] {
      auto loaded = source.Load(/*infer_shapes=*/false);
      if (!loaded.ok()) {
        status = loaded.status();
        return;
      }
      std::unique_ptr<Model> m = *std::move(loaded);
      auto reload = [&source]() { return source.Load(/*infer_shapes=*/false); };
      auto outcome = session::OptimizeAndVerify(m, reload, job);
      if (!outcome.ok()) {
        std::string message(outcome.status().message());
        status = absl::Status(outcome.status().code(),
                              message.rfind(source.name, 0) == 0 ? message : error_prefix + message);
        return;
      }
      // `opt --html`: the page of what the rewriter changed, laid out before
      // `apply` replaces the graph it traced; written after the model.
      std::string html_page;
      if (!html_path.empty()) {
        analysis::OptPage page;
        page.input_path = source.name;
        page.output_path = output_path;
        page.optimized = m->graph.get();
        page.provenance = outcome->stats.provenance.get();
        page.stats = &outcome->stats;
        page.op_table = session::OpTableRows(outcome->ops_before, outcome->ops_after);
        page.unchanged_reason = outcome->unchanged_reason;
        absl::StatusOr<std::string> html = analysis::RenderOptHtml(page);
        if (!html.ok()) {
          status = absl::Status(html.status().code(), error_prefix + std::string(html.status().message()));
          return;
        }
        html_page = *std::move(html);
      }
      std::string approximations;
      if (approximating) {
        // `opt --apply`: measured against the model as given.
        auto original = reload();
        if (!original.ok()) {
          status = original.status();
          return;
        }
        if (given_samples) {
          approximate.calibration = *given_samples;
        } else if (random_samples > 0) {
          approximate.calibration = analysis::RandomCalibrationAtTestShapes(
              **original, random_samples, seed,
              outcome->verify_shapes.empty() ? job.verify_shapes : outcome->verify_shapes);
        } else {
          auto from_dir = analysis::CalibrationFromDir(**original, calib_dir);
          if (!from_dir.ok()) {
            status = from_dir.status();
            return;
          }
          approximate.calibration = *std::move(from_dir);
        }
        auto applied = analysis::ApplyApproximations(**original, m, approximate);
        if (!applied.ok()) {
          status = absl::Status(applied.status().code(), absl::StrCat(error_prefix, "apply: ", applied.status().message()));
          return;
        }
        JsonWriter json(/*one_line=*/true);
        analysis::WriteApproximationsJson(json, *applied);
        approximations = json.str();
      }
      if (!output_path.empty()) {
        SaveOptions save;
        if (external_data) save.external_data = SaveOptions::ExternalData::kAlways;
        status = SaveModel(*m, output_path, save);
        if (!status.ok()) return;
      } else {
        absl::StatusOr<ModelBytes> planned = ModelBytes::Of(*m);
        if (planned.ok()) {
          serialized.emplace(*std::move(planned));
        } else if (absl::IsResourceExhausted(planned.status()) && !spill_path.empty()) {
          // Past protobuf's 2 GB: written with external data for the caller to load.
          SaveOptions save;
          save.external_data = SaveOptions::ExternalData::kAlways;
          status = SaveModel(*m, spill_path, save);
          if (!status.ok()) return;
        } else {
          status = absl::Status(planned.status().code(), absl::StrCat(error_prefix, planned.status().message()));
          return;
        }
      }
      if (!html_path.empty()) {
        std::ofstream file(html_path, std::ios::binary | std::ios::trunc);
        file << html_page;
        if (!file.good()) {
          status = absl::InvalidArgumentError(absl::StrCat(error_prefix, "cannot write ", html_path));
          return;
        }
      }
      stats = session::OptimizeOutcomeJson(*outcome, cli::VersionString(), source.name, output_path, approximations);
    }();
  }
  Check(status);
  py::object model_bytes = py::none();
  if (serialized) {
    PyObject* raw = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(serialized->size()));
    if (raw == nullptr) throw py::error_already_set();
    model_bytes = py::reinterpret_steal<py::bytes>(raw);
    py::gil_scoped_release release;  // the new object is ours alone until returned
    serialized->CopyTo(PyBytes_AS_STRING(raw));
  }
  return py::make_tuple(model_bytes, stats);
}

// Calibration as the report takes it: None, "random:N", a folder, or a list
// of feed dicts (copied: the analysis reads them from its own threads).
std::optional<analysis::CalibrationData> CalibrationOf(const py::object& calib, const Model& model, uint64_t seed) {
  if (calib.is_none()) return std::nullopt;
  if (py::isinstance<py::int_>(calib)) {
    int64_t n = calib.cast<int64_t>();
    if (n < 1) throw py::value_error("calib: a number of random samples must be >= 1");
    return analysis::RandomCalibration(model, n, seed);
  }
  if (py::isinstance<py::str>(calib)) {
    std::string spec = calib.cast<std::string>();
    if (int64_t n = RandomSampleCount(spec); n > 0) return analysis::RandomCalibration(model, n, seed);
    return Take(analysis::CalibrationFromDir(model, spec));
  }
  return FeedListCalibration(calib);
}

std::string Report(const py::object& model, const std::string& name, const std::string& base_dir,
                   const py::object& shapes, const py::object& calib, double energy, bool spectra, int64_t seed,
                   double rare, int64_t max_svd_dim, const std::string& format) {
  if (!(energy > 0 && energy <= 1)) throw py::value_error("energy must be in (0, 1]");
  if (!(rare >= 0 && rare <= 1)) throw py::value_error("rare must be in [0, 1]");
  if (format != "json" && format != "text" && format != "md" && format != "html") {
    throw py::value_error("format must be json, text, md or html");
  }
  ModelSource source = SourceOf(model, name, base_dir);
  absl::StatusOr<std::unique_ptr<Model>> loaded;
  {
    py::gil_scoped_release release;
    loaded = source.Load(/*infer_shapes=*/false);  // Analyze infers itself, after the shapes are bound
  }
  std::unique_ptr<Model> m = Take(std::move(loaded));
  analysis::AnalysisOptions options;
  options.model_path = source.path.value_or(source.name);
  options.spectra = spectra;
  options.energy = energy;
  options.rare_threshold = rare;
  options.max_svd_dim = max_svd_dim;
  options.input_shapes = ShapesOfDict(shapes);
  options.calibration = CalibrationOf(calib, *m, static_cast<uint64_t>(seed));
  absl::StatusOr<analysis::Report> report;
  absl::StatusOr<std::string> text;
  {
    py::gil_scoped_release release;
    report = analysis::Analyze(*m, options);
    if (report.ok()) {
      text = format == "json"   ? analysis::RenderJson(*report)
             : format == "md"   ? analysis::RenderMarkdown(*report)
             : format == "html" ? analysis::RenderHtml(*report)
                                : analysis::RenderText(*report, analysis::NodeNames::kAuto);
    }
  }
  if (!report.ok()) {
    Raise(absl::Status(report.status().code(), absl::StrCat(source.name, ": ", report.status().message())));
  }
  if (!text.ok()) Raise(absl::Status(text.status().code(), absl::StrCat(source.name, ": ", text.status().message())));
  return *text;
}

py::dict Verify(const py::object& a, const py::object& b, const std::string& name_a, const std::string& name_b,
                const std::string& base_dir_a, const std::string& base_dir_b, const py::object& inputs, int runs,
                const py::object& shapes, double rtol, double atol, const std::string& device, int64_t seed) {
  ModelSource sa = SourceOf(a, name_a, base_dir_a), sb = SourceOf(b, name_b, base_dir_b);
  std::vector<exec::Feeds> feeds;
  if (!inputs.is_none()) {
    if (py::isinstance<py::dict>(inputs)) {
      feeds.push_back(FeedsOfDict(inputs.cast<py::dict>()));
    } else {
      for (const py::handle& f : inputs) feeds.push_back(FeedsOfDict(f.cast<py::dict>()));
    }
  } else if (runs < 1) {
    throw py::value_error("runs must be >= 1");
  }
  session::InputShapes given = ShapesOfDict(shapes);
  absl::Status status;
  session::CompareReport report;
  std::string shapes_text;
  {
    py::gil_scoped_release release;
    [&] {
      // As loaded: the sessions comparing them infer shapes themselves.
      auto ma = sa.Load(/*infer_shapes=*/false);
      if (!ma.ok()) {
        status = ma.status();
        return;
      }
      auto mb = sb.Load(/*infer_shapes=*/false);
      if (!mb.ok()) {
        status = mb.status();
        return;
      }
      if (feeds.empty()) {
        session::InputShapes all = session::TestShapes(**ma, given);
        shapes_text = session::ShapesText(**ma, all);
        auto sets = session::RandomFeedSets(**ma, all, runs, static_cast<uint64_t>(seed));
        if (!sets.ok()) {
          status = absl::Status(sets.status().code(), absl::StrCat(sa.name, ": ", sets.status().message()));
          return;
        }
        feeds = *std::move(sets);
      }
      session::CompareOptions compare;
      compare.rtol = rtol;
      compare.atol = atol;
      compare.device = device;
      auto r = session::CompareModels(**ma, **mb, feeds, compare);
      if (!r.ok()) {
        status = absl::Status(r.status().code(), absl::StrCat(sa.name, ": ", r.status().message()));
        return;
      }
      report = *std::move(r);
    }();
  }
  Check(status);
  py::dict out;
  out["ok"] = report.ok();
  out["runs"] = report.runs;
  out["device"] = report.device;
  out["fallback"] = report.fallback;
  out["shapes"] = shapes_text;
  py::list outputs;
  for (const auto& o : report.outputs) {
    py::dict d;
    d["name"] = o.name;
    d["max_abs"] = o.max_abs;
    d["max_rel"] = o.max_rel;
    d["ok"] = o.ok;
    d["problem"] = o.problem;
    outputs.append(d);
  }
  out["outputs"] = outputs;
  return out;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "aic-onnx's C++ library; use the aic_onnx package, not this module";
  m.def("version", [] { return cli::VersionString(); });
  m.def("devices", [] { return session::DeviceNames(); });
  m.def("optimize", &Optimize, py::arg("model"), py::arg("name"), py::arg("base_dir"), py::arg("level"),
        py::arg("target"), py::arg("fix_shapes"), py::arg("fix_dims"), py::arg("fold_limit"),
        py::arg("fold_dequantize"), py::arg("verify_runs"), py::arg("verify_shapes"), py::arg("verify_feeds"),
        py::arg("rtol"), py::arg("atol"), py::arg("write_shapes"), py::arg("output_path"),
        py::arg("spill_path"), py::arg("external_data"), py::arg("html_path"), py::arg("apply"),
        py::arg("max_error"), py::arg("calib"), py::arg("min_activation"), py::arg("keep_slower"),
        py::arg("measure_latency"), py::arg("seed"));
  m.def("report", &Report, py::arg("model"), py::arg("name"), py::arg("base_dir"), py::arg("shapes"),
        py::arg("calib"), py::arg("energy"), py::arg("spectra"), py::arg("seed"), py::arg("rare"),
        py::arg("max_svd_dim"), py::arg("format"));
  m.def("verify", &Verify, py::arg("a"), py::arg("b"), py::arg("name_a"), py::arg("name_b"), py::arg("base_dir_a"),
        py::arg("base_dir_b"), py::arg("inputs"), py::arg("runs"), py::arg("shapes"), py::arg("rtol"),
        py::arg("atol"), py::arg("device"), py::arg("seed"));
  py::class_<PySession>(m, "Session")
      .def(py::init<const py::object&, const std::string&, const std::string&, const std::string&, int,
                    std::optional<int>>(),
           py::arg("model"), py::arg("name"), py::arg("base_dir"), py::arg("device"), py::arg("threads"),
           py::arg("opt_level"))
      .def("run", &PySession::Run, py::arg("output_names"), py::arg("feeds"))
      .def("inputs", &PySession::Inputs)
      .def("outputs", &PySession::Outputs)
      .def("describe", &PySession::Describe)
      .def("device", &PySession::Device);
}

}  // namespace aic::python
