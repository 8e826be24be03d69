// Where uniform values may be computed: the blocks of a function that every
// lane runs exactly once (the rule of ir/ir.h's "Uniform values").
#ifndef AUTOBATCH_IR_UNIFORM_H_
#define AUTOBATCH_IR_UNIFORM_H_

#include <vector>

#include "ir/ir.h"

namespace autobatch {

// Per block of `fn`: whether every lane that runs `fn` runs it exactly once,
// i.e. it lies on no cycle of the CFG (no loop) and every path from block 0
// to an exit (Return, Halt, IndirectGoto) passes through it (no per-lane
// branch skips it). Successors are ir.h's Successors (a PushGoto's return
// block included); targets out of range are ignored, so a malformed function
// gives an answer but no crash.
std::vector<bool> BlocksRunOncePerLane(const Function& fn);

// Whether `op` may write a uniform variable: a built-in primitive (not a user
// kernel, whose effects the IR cannot see) with at least one input.
bool MayComputeUniform(const PrimOp& op);

}  // namespace autobatch

#endif  // AUTOBATCH_IR_UNIFORM_H_
