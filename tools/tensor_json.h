// Batched tensors to and from JSON, for the command-line tool.
//
// A tensor is written as {"dtype": "f64", "shape": [3], "values": [[...], ...]}
// with one entry of "values" per lane (or, for a uniform input, "uniform":
// [...], the one value every lane reads) (a nested array of the event shape, a
// bare number for scalars). Non-finite floats are the strings "nan", "inf"
// and "-inf". When reading, "dtype" and "shape" are optional: a bare array of
// lanes is accepted. The dtype is the declared one, else `expected`'s, else
// inferred (all integers -> i64, any float or non-finite string -> f64, all
// booleans -> bool); the shape is the declared one, else `expected`'s, else
// scalar if a dtype is declared, else the nesting of the first lane.
//
// Every value must be representable in the dtype (no wrapping, no finite
// value rounding to inf in f32), every lane must match the shape exactly, and
// the shape may have at most kMaxJsonTensorRank dimensions and
// kMaxJsonLaneElements elements per lane; anything else is an error naming
// the input. No tensor is allocated before every lane has matched the shape,
// so an allocation is never larger than the values read.
#ifndef AUTOBATCH_TOOLS_TENSOR_JSON_H_
#define AUTOBATCH_TOOLS_TENSOR_JSON_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/tensor.h"
#include "nlohmann/json.hpp"

namespace autobatch {

// Limits on an input read from JSON: they bound the reader's recursion and
// turn an absurd "shape" into an error instead of a huge allocation.
inline constexpr int kMaxJsonTensorRank = 32;
inline constexpr int64_t kMaxJsonLaneElements = int64_t{1} << 32;

nlohmann::json TensorToJson(const Tensor& tensor);

// `where` names the value in errors (e.g. "inputs[1]").
absl::StatusOr<Tensor> TensorFromJson(const nlohmann::json& json,
                                      const std::string& where,
                                      std::optional<TensorType> expected = {});

// The array of tensors (JSON, not read yet) of an inputs file:
// {"inputs": [tensor, ...]} or a bare array of tensors. Errors name the file.
absl::StatusOr<nlohmann::json> ReadInputsList(const std::string& path);

// Whether an input as written declares its dtype ({"dtype": ...}); if not,
// TensorFromJson takes the expected one, else infers it from the values.
bool DeclaresDType(const nlohmann::json& input);

// Reads {"inputs": [tensor, ...]} (or a bare array of tensors) from a file.
// An input written {"uniform": VALUE} (with optional "dtype" and "shape")
// is UNIFORM: one value for every lane, read as a tensor of one lane;
// `uniform`, if given, receives per input whether it was written so.
absl::StatusOr<std::vector<Tensor>> ReadInputsFile(
    const std::string& path, const std::vector<std::optional<TensorType>>& expected,
    std::vector<bool>* uniform = nullptr);

}  // namespace autobatch

#endif  // AUTOBATCH_TOOLS_TENSOR_JSON_H_
