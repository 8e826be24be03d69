// Programs of many small non-recursive functions calling each other: the
// shapes whose compile time must grow linearly (issue 28: a chain of 2,000
// calls was still compiling after 60 s at 14 GB).
#ifndef AUTOBATCH_IR_TESTING_CALL_TREES_H_
#define AUTOBATCH_IR_TESTING_CALL_TREES_H_

#include <cstdint>

#include "ir/ir.h"

namespace autobatch::testing {

// f1(x) calls f2(x), which calls f3(x), ... f<length>(x) = x; each adds x to
// what its callee returned, so f1(x) = length * x. Untyped, i64 in and out.
Program CallChain(int length);

// f1 .. f<count>, f<k> calling f<2k> and f<2k+1> where they exist (a
// complete binary tree, each function called once) and adding x to both
// results; a leaf returns x, so f1(x) = count * x (CallTreeValue). Untyped,
// i64 in and out.
Program CallTree(int count);
// What CallTree(count)'s entry returns for x = 1.
int64_t CallTreeValue(int count);

}  // namespace autobatch::testing

#endif  // AUTOBATCH_IR_TESTING_CALL_TREES_H_
