# autobatch_embed_files(<target> FUNCTION <name> TYPE <struct> INCLUDE <header>
#                       NAMESPACE <namespace> FILES <path>...)
# Builds into <target> a generated C++ file defining
# `std::span<const <struct>> <namespace>::<name>()`, declared in <header>:
# one {path, text} entry per file (paths under the project's source
# directory, in the order given), each text the file's bytes when <target>
# was built. The file is written again whenever one of them changes
# (cmake/embed_files.cmake writes it). Used for the JIT's copies of the
# headers generated code includes (codegen/) and the example models' data
# sets (samples/models/). Internal to this project: not installed.
set(_autobatch_embed_script "${CMAKE_CURRENT_LIST_DIR}/embed_files.cmake")

function(autobatch_embed_files target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "FUNCTION;TYPE;INCLUDE;NAMESPACE" "FILES")
  if(arg_UNPARSED_ARGUMENTS OR NOT arg_FUNCTION OR NOT arg_TYPE OR NOT arg_INCLUDE
     OR NOT arg_NAMESPACE OR NOT arg_FILES)
    message(FATAL_ERROR "autobatch_embed_files(${target} ...): give FUNCTION, TYPE, INCLUDE, "
                        "NAMESPACE and FILES, and nothing else (${ARGN})")
  endif()
  set(output "${CMAKE_CURRENT_BINARY_DIR}/${arg_FUNCTION}_embedded.cc")
  list(TRANSFORM arg_FILES PREPEND "${PROJECT_SOURCE_DIR}/" OUTPUT_VARIABLE paths)
  string(REPLACE ";" "," file_list "${arg_FILES}")
  add_custom_command(
    OUTPUT "${output}"
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${output} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
            -DFILES=${file_list} -DFUNCTION=${arg_FUNCTION} -DTYPE=${arg_TYPE}
            -DINCLUDE=${arg_INCLUDE} -DNAMESPACE=${arg_NAMESPACE}
            -P ${_autobatch_embed_script}
    DEPENDS ${paths} ${_autobatch_embed_script}
    COMMENT "Embedding ${arg_FUNCTION}'s files"
    VERBATIM)
  target_sources(${target} PRIVATE "${output}")
endfunction()
