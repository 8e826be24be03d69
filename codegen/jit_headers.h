// The project headers that JIT-compiled code includes, embedded in this
// library when it is built (autobatch_embed_files, cmake/autobatchEmbed.cmake), so that the JIT
// needs neither the source nor the build tree (codegen/jit.h).
#ifndef AUTOBATCH_CODEGEN_JIT_HEADERS_H_
#define AUTOBATCH_CODEGEN_JIT_HEADERS_H_

#include <span>
#include <string_view>

namespace autobatch {

struct JitHeader {
  std::string_view path;  // as included: "ir/ir.h"
  std::string_view text;  // the file's bytes when this library was built
};

// Every project header the generated code includes, directly or not, sorted
// by path (codegen/CMakeLists.txt lists them).
std::span<const JitHeader> JitHeaders();

}  // namespace autobatch

#endif  // AUTOBATCH_CODEGEN_JIT_HEADERS_H_
