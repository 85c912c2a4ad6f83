// The one decoder of a task's per-agent info record (InfoLayout): every
// Python layer turns native float64 rows into Python values through it, so an
// info field's kind (real, integer, label) is interpreted in one place.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <vector>

#include "../task.h"
#include "checks.h"

namespace joltgym::bindings {

namespace py = pybind11;

// Hidden like pybind11 itself: it holds Python objects.
class __attribute__((visibility("hidden"))) InfoDecoder {
 public:
  explicit InfoDecoder(const InfoLayout& layout);

  // One agent's info dict from its row ([width] doubles). With `reset`, only
  // the fields written at reset.
  py::dict Row(const double* row, bool reset) const;
  py::dict RowOf(const py::array_t<double, kReadable>& row, bool reset) const;
  // A list of dicts, one per row of `rows` ([n, width]).
  py::list Rows(const py::array_t<double, kReadable>& rows, bool reset) const;
  // Gymnasium's batched vector info over rows ([n, width]): each key an array
  // over rows plus a boolean "_key" mask, zero outside the mask (a label field: its codes).
  // Reset-time fields are valid where `valid`, step-only fields where
  // `step_valid` (None: nowhere).
  py::dict Columns(const py::array_t<double, kReadable>& rows,
                   const py::array_t<bool, kReadable>& valid,
                   const py::object& step_valid) const;

  int width() const { return width_; }
  // (name, offset, size, at_reset, kind, labels) per field.
  py::list Fields() const;

 private:
  py::object Value(const InfoField& field, const py::str& key, const double* row) const;

  std::vector<InfoField> fields_;
  std::vector<py::str> keys_;
  std::vector<std::vector<py::object>> labels_;  // per label field: its IntEnum's members, by code
  int width_;
  py::object float64_, float32_;  // numpy's scalar types
};

}  // namespace joltgym::bindings
