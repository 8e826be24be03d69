// What `--help` shows after an option's name: its type with the range or
// choices it accepts ("INT in [1, 256]", "{nuts,hmc,rwmh}"), the same text
// for every subcommand. The subcommands set it with CLI::Option::option_text,
// so a value CLI11 reads as text (sample's, range-checked later for an
// exit-1 error) shows its real type rather than TEXT.
#ifndef AUTOBATCH_TOOLS_CLI_TYPES_H_
#define AUTOBATCH_TOOLS_CLI_TYPES_H_

#include <cstdint>
#include <string>
#include <vector>

namespace autobatch {

// "INT in [min, max]"; "INT >= min" when max is the largest int64.
std::string IntegerText(int64_t min, int64_t max);

// "{a,b,c}".
std::string ChoiceText(const std::vector<std::string>& choices);

// A byte count as ParseBytes (support/memory.h) reads it.
inline constexpr char kBytesText[] = "BYTES (K, M, G, T suffixes)";

}  // namespace autobatch

#endif  // AUTOBATCH_TOOLS_CLI_TYPES_H_
