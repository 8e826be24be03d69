// A model written as a program, as a file: its declarations and its log
// density's IR, so a model defined in C++ can be saved and sampled by the
// command line without its C++ (`autobatch model NAME --json > m.json`,
// `autobatch sample --model m.json --data d.json`).
//
//   {"format": "autobatch-model", "version": 1, "name": "eight_schools",
//    "parameters": [{"name": "tau", "shape": [],
//                    "transform": {"kind": "lower", "lower": 0}}, ...],
//    "data": [{"name": "y", "dtype": "f64", "shape": [8], "lower": null,
//              "upper": null, "allow_nonfinite": false}, ...],
//    "program": <IR JSON (ir/json.h) of ProgramModel::LogDensityProgram()>,
//    "generated_quantities": {"quantities": [{"name": "y_rep", "shape": [8]},
//    ...],
//                             "program": <IR JSON of
//                             GeneratedQuantitiesProgram()>}}
//
// An extent of a data "shape" is a number or the name of an earlier i64
// scalar data variable (data.h Extent: ["N", 3]), kept as declared, so the
// file reads data of any size. The program fixes the parameters' sizes: a
// parameter extent given by name is written as the number it has for the
// model's data (ModelToJson of such a model needs the data set;
// FailedPrecondition otherwise). A file may name a parameter extent too
// (resolved when the data are set; the program must then slice q for those
// sizes). Generated quantities' extents are numbers.
// "generated_quantities" is optional (absent for a model without them).
// Transform kinds: identity, lower {lower}, upper {upper}, bounded {lower,
// upper}, simplex, ordered (constraint.h). The program is the log density
// as the user wrote it (untyped, before differentiation): the loader
// differentiates it again, so a file and its C++ model give the same bits.
#ifndef AUTOBATCH_MCMC_MODEL_MODEL_JSON_H_
#define AUTOBATCH_MCMC_MODEL_MODEL_JSON_H_

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "mcmc/model/program_model.h"
#include "nlohmann/json.hpp"

namespace autobatch::mcmc {

// The model as JSON (above). Errors: the model does not validate.
absl::StatusOr<nlohmann::json> ModelToJson(const ProgramModel& model);

// Reads a model file's text. InvalidArgument naming `source_name` and the
// field ("parameters[1].transform.kind") for malformed JSON, a wrong format
// or version, a missing or mistyped field, an unknown transform or dtype,
// an invalid declaration, or a program that is not an untyped log density
// of this model's shape (entry of 1 + data parameters) or that calls user
// kernels (a file carries IR only); the same for the generated quantities
// (entry of 3 + data parameters, one result per quantity, each f64 of its
// declared shape).
absl::StatusOr<std::unique_ptr<ProgramModel>> ModelFromJson(std::string_view text,
                                                            std::string_view source_name);

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_MODEL_MODEL_JSON_H_
