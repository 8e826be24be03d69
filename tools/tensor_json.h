// Batched tensors to and from JSON, for the command-line tool.
//
// A tensor is written as {"dtype": "f64", "shape": [3], "values": [[...], ...]}
// with one entry of "values" per lane (a nested array of the event shape, a
// bare number for scalars). Non-finite floats are the strings "nan", "inf"
// and "-inf". When reading, "dtype" and "shape" are optional: a bare array of
// lanes is accepted, its dtype taken from `expected` if given, else inferred
// (all integers -> i64, any float or non-finite string -> f64, all booleans
// -> bool) and its shape from the first lane.
#ifndef AUTOBATCH_TOOLS_TENSOR_JSON_H_
#define AUTOBATCH_TOOLS_TENSOR_JSON_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/tensor.h"
#include "nlohmann/json.hpp"

namespace autobatch {

nlohmann::json TensorToJson(const Tensor& tensor);

// `where` names the value in errors (e.g. "inputs[1]").
absl::StatusOr<Tensor> TensorFromJson(const nlohmann::json& json,
                                      const std::string& where,
                                      std::optional<TensorType> expected = {});

// Reads {"inputs": [tensor, ...]} (or a bare array of tensors) from a file.
absl::StatusOr<std::vector<Tensor>> ReadInputsFile(
    const std::string& path, const std::vector<std::optional<TensorType>>& expected);

}  // namespace autobatch

#endif  // AUTOBATCH_TOOLS_TENSOR_JSON_H_
