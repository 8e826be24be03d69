// A structure-aware mutator for the fuzzer: edits IR JSON as a tree instead of as bytes.
//
// Byte-level mutations of a JSON program mostly break its syntax, so the
// fuzzer would rarely get past the parser. MutateJsonProgram parses the
// input and applies one to a few edits that keep it JSON while changing its
// meaning: nudge an integer (indices, shapes, line numbers) by one or set it
// to an edge value, replace a string with an IR name (primitive, dtype or
// type, stage, storage class, op or terminator kind), delete, duplicate,
// swap or transplant array elements, drop an object key, or give a
// variable a type or storage class. The result is written compactly.
#ifndef AUTOBATCH_TESTS_FUZZ_JSON_MUTATOR_H_
#define AUTOBATCH_TESTS_FUZZ_JSON_MUTATOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace autobatch {

// The mutated text, or nullopt if `text` is not JSON (the caller then
// mutates bytes) or no edit applied. Deterministic in (text, seed).
std::optional<std::string> MutateJsonProgram(std::string_view text, uint32_t seed);

}  // namespace autobatch

#endif  // AUTOBATCH_TESTS_FUZZ_JSON_MUTATOR_H_
