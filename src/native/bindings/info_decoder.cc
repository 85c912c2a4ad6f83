#include "info_decoder.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

namespace joltgym::bindings {

namespace {

const char* KindName(InfoKind kind) {
  switch (kind) {
    case InfoKind::kInteger:
      return "integer";
    case InfoKind::kLabel:
      return "label";
    case InfoKind::kReal:
      break;
  }
  return "real";
}

void CheckRows(const py::array& rows, int width, const char* what) {
  if (rows.ndim() != 2 || rows.shape(1) != width) {
    throw py::value_error(std::string(what) + " should be a 2-d array with " +
                          std::to_string(width) + " columns");
  }
}

}  // namespace

InfoDecoder::InfoDecoder(const InfoLayout& layout)
    : fields_(layout.fields()), width_(layout.width()) {
  py::module_ numpy = py::module_::import("numpy");
  float64_ = numpy.attr("float64");
  float32_ = numpy.attr("float32");
  for (const InfoField& field : fields_) {
    keys_.emplace_back(field.name);
    // A label field decodes to the members of its Python IntEnum
    // (joltgym_marl.registry.label_enum: Outcome for a game's outcome): an int
    // that keeps its label.
    std::vector<py::object> members;
    if (field.kind == InfoKind::kLabel) {
      py::list labels;
      for (const std::string& label : field.labels) labels.append(label);
      const py::object type =
          py::module_::import("joltgym_marl.registry").attr("label_enum")(field.name, labels);
      for (std::size_t i = 0; i < field.labels.size(); ++i) members.push_back(type(i));
    }
    labels_.push_back(std::move(members));
  }
}

namespace {

// An info value the core wrote as a double, as an integer. Rows may come from
// the caller (decoder.rows(any_array)): a NaN or a value beyond long long
// (whose conversion is undefined behaviour) reads as 0 or the nearest end.
long long ToInteger(double x) {
  constexpr double kLimit = 9.2e18;  // just inside long long's range
  if (std::isnan(x)) return 0;
  return static_cast<long long>(std::clamp(x, -kLimit, kLimit));
}

}  // namespace

py::object InfoDecoder::Value(const InfoField& field, const py::str&, const double* row) const {
  const double x = row[field.offset];
  switch (field.kind) {
    case InfoKind::kInteger:
      return py::int_(ToInteger(x));
    case InfoKind::kLabel: {
      const auto& labels = labels_[&field - fields_.data()];
      const long long i = ToInteger(x);
      if (i >= 0 && i < static_cast<long long>(labels.size())) return labels[static_cast<std::size_t>(i)];
      return py::int_(i);
    }
    case InfoKind::kReal:
      break;
  }
  if (field.size == 1) {
    switch (field.scalar) {
      case InfoScalar::kFloat64:
        return float64_(x);
      case InfoScalar::kFloat32:
        return float32_(x);
      case InfoScalar::kFloat:
        break;
    }
    return py::float_(x);
  }
  py::array_t<double> values(field.size);
  std::copy(row + field.offset, row + field.offset + field.size, values.mutable_data());
  return std::move(values);
}

py::dict InfoDecoder::Row(const double* row, bool reset) const {
  py::dict info;
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (reset && !fields_[i].at_reset) continue;
    info[keys_[i]] = Value(fields_[i], keys_[i], row);
  }
  return info;
}

py::dict InfoDecoder::RowOf(const py::array_t<double, kReadable>& row, bool reset) const {
  if (row.ndim() != 1 || row.shape(0) != width_) {
    throw py::value_error("row should be a 1-d array of " + std::to_string(width_) + " values");
  }
  return Row(row.data(), reset);
}

py::list InfoDecoder::Rows(const py::array_t<double, kReadable>& rows, bool reset) const {
  CheckRows(rows, width_, "rows");
  py::list out;
  for (py::ssize_t r = 0; r < rows.shape(0); ++r) out.append(Row(rows.data() + r * width_, reset));
  return out;
}

py::dict InfoDecoder::Columns(const py::array_t<double, kReadable>& rows,
                              const py::array_t<bool, kReadable>& valid,
                              const py::object& step_valid) const {
  CheckRows(rows, width_, "rows");
  const py::ssize_t n = rows.shape(0);
  if (valid.ndim() != 1 || valid.shape(0) != n) throw py::value_error("valid should have one entry per row");
  py::array_t<bool, kReadable> step;
  const bool has_step = !step_valid.is_none();
  if (has_step) {
    step = step_valid.cast<py::array_t<bool, kReadable>>();
    if (step.ndim() != 1 || step.shape(0) != n) {
      throw py::value_error("step_valid should have one entry per row");
    }
  }
  py::dict infos;
  const double* data = rows.data();
  for (size_t i = 0; i < fields_.size(); ++i) {
    const InfoField& field = fields_[i];
    // The masks' bytes, read as bytes: a caller's bool array may hold bytes
    // other than 0 and 1 (a uint8 array viewed as bool), and loading such a
    // byte as a C++ bool is undefined behaviour.
    const auto* mask = reinterpret_cast<const std::uint8_t*>(
        field.at_reset ? valid.data() : (has_step ? step.data() : nullptr));
    if (mask == nullptr || std::none_of(mask, mask + n, [](std::uint8_t b) { return b != 0; })) continue;
    py::array_t<bool> mask_out(n);
    for (py::ssize_t r = 0; r < n; ++r) mask_out.mutable_data()[r] = mask[r] != 0;
    py::object values;
    if (field.kind == InfoKind::kReal && field.size == 1 && field.scalar == InfoScalar::kFloat32) {
      py::array_t<float> array(n);  // the dtype Gymnasium's vector envs give a numpy.float32 entry
      float* out = array.mutable_data();
      for (py::ssize_t r = 0; r < n; ++r) out[r] = mask[r] ? static_cast<float>(data[r * width_ + field.offset]) : 0.0f;
      values = std::move(array);
    } else if (field.kind == InfoKind::kReal) {
      py::array_t<double> array = field.size == 1 ? py::array_t<double>(n)
                                                  : py::array_t<double>({n, py::ssize_t{field.size}});
      double* out = array.mutable_data();
      for (py::ssize_t r = 0; r < n; ++r) {
        const double* src = data + r * width_ + field.offset;
        for (int j = 0; j < field.size; ++j) *out++ = mask[r] ? src[j] : 0.0;
      }
      values = std::move(array);
    } else {  // integers, and labels as their codes (numeric, as vector envs' infos are)
      py::array_t<long long> array(n);
      for (py::ssize_t r = 0; r < n; ++r) {
        array.mutable_data()[r] = mask[r] ? ToInteger(data[r * width_ + field.offset]) : 0;
      }
      values = std::move(array);
    }
    infos[keys_[i]] = values;
    infos[py::str("_" + field.name)] = mask_out;
  }
  return infos;
}

py::list InfoDecoder::Fields() const {
  py::list out;
  for (const InfoField& f : fields_) {
    py::list labels;  // (no pybind11/stl.h here: a std::vector would not convert)
    for (const std::string& label : f.labels) labels.append(label);
    out.append(py::make_tuple(f.name, f.offset, f.size, f.at_reset, KindName(f.kind), labels));
  }
  return out;
}

}  // namespace joltgym::bindings
