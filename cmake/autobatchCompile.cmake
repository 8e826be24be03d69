# autobatch_compile_program: a program compiled whole to C++ at build time
# (`autobatch compile --whole-program`, codegen/codegen.h
# EmitCompiledProgram) and built into a target of yours.
#
#   autobatch_compile_program(<target>
#     PROGRAM <file>        the program: IR JSON (`autobatch ir --json`,
#                           DumpProgramJson) or IR text, any stage
#     SYMBOL <name>         the function the generated file defines:
#                           const autobatch::FusedProgram& <name>();
#     [TYPES <types>]       its entry's input types when the file does not
#                           lower it (e.g. "f64" or "i64,f64[3]")
#     [DEPENDS <files or targets>...])  what makes the program file
#
# Run the program with CallOptions::fused_blocks = &<name>(): the stack VM
# checks that it was generated from the program it runs (the lowered form,
# by fingerprint) and runs every block compiled. The generated file is
# compiled with -ffp-contract=off (the bits depend on it) and the target's
# other flags.
#
# Defined by find_package(autobatch) and by add_subdirectory of autobatch's
# tree; the `autobatch` tool it runs is the target autobatch::cli.
function(autobatch_compile_program target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "PROGRAM;SYMBOL;TYPES" "DEPENDS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "autobatch_compile_program: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "autobatch_compile_program: no target '${target}'; "
                        "call it after add_executable or add_library")
  endif()
  if(NOT ARG_PROGRAM OR NOT ARG_SYMBOL)
    message(FATAL_ERROR "autobatch_compile_program(${target} ...): give PROGRAM <file> and "
                        "SYMBOL <name>")
  endif()
  if(NOT TARGET autobatch::cli)
    message(FATAL_ERROR "autobatch_compile_program: the autobatch tool (autobatch::cli) was "
                        "not built or installed with this autobatch")
  endif()
  get_filename_component(program "${ARG_PROGRAM}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  set(output "${CMAKE_CURRENT_BINARY_DIR}/autobatch_compiled/${ARG_SYMBOL}.cc")
  set(types)
  if(ARG_TYPES)
    set(types --types "${ARG_TYPES}")
  endif()
  add_custom_command(
    OUTPUT "${output}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${CMAKE_CURRENT_BINARY_DIR}/autobatch_compiled"
    COMMAND autobatch::cli compile "${program}" --whole-program --symbol "${ARG_SYMBOL}"
            ${types} -o "${output}"
    DEPENDS "${program}" autobatch::cli ${ARG_DEPENDS}
    COMMENT "autobatch: compiling ${ARG_PROGRAM} whole (${ARG_SYMBOL})"
    VERBATIM)
  target_sources(${target} PRIVATE "${output}")
  set_source_files_properties("${output}" PROPERTIES COMPILE_OPTIONS "-ffp-contract=off")
endfunction()
