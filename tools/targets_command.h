// The `autobatch targets` subcommand: what `sample` can sample, each with a
// one-line description and its parameters.
//
//   autobatch targets          the built-in targets (--target NAME), each
//                              with its summary, its sampled parameters at
//                              the defaults and its --target-params (name,
//                              type, range, default); then the example
//                              models (--model NAME) with their parameters
//   autobatch targets --all    also the samplers' test mocks (energy_jump,
//                              never_uturn), in a section of their own
//
// Output goes to stdout; it cannot fail on user input (exit status 0).
#ifndef AUTOBATCH_TOOLS_TARGETS_COMMAND_H_
#define AUTOBATCH_TOOLS_TARGETS_COMMAND_H_

#include <string>

#include "CLI/CLI.hpp"

namespace autobatch {

struct TargetsArgs {
  bool all = false;  // also the test targets
};

CLI::App* AddTargetsCommand(CLI::App& app, TargetsArgs& args);

// The text `autobatch targets` prints.
std::string DescribeTargets(const TargetsArgs& args);

// Runs it; returns the exit status.
int RunTargetsCommand(const TargetsArgs& args);

}  // namespace autobatch

#endif  // AUTOBATCH_TOOLS_TARGETS_COMMAND_H_
