# Fails unless make_model_data (samples/models/make_model_data.cc) writes
# exactly the checked-in data files of the example models. Run by CTest as
#   cmake -DGENERATOR=<make_model_data> -DSOURCE_DIR=<root> -DOUT_DIR=<dir> -P check_model_data.cmake
cmake_minimum_required(VERSION 3.25)

file(REMOVE_RECURSE "${OUT_DIR}")
file(MAKE_DIRECTORY "${OUT_DIR}")
execute_process(COMMAND "${GENERATOR}" "${OUT_DIR}" RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "make_model_data failed (${result})")
endif()
file(GLOB written RELATIVE "${OUT_DIR}" "${OUT_DIR}/*.data.json")
list(LENGTH written count)
if(count LESS 5)
  message(FATAL_ERROR "make_model_data wrote ${count} files: ${written}")
endif()
foreach(name IN LISTS written)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files
                  "${OUT_DIR}/${name}" "${SOURCE_DIR}/samples/models/${name}"
                  RESULT_VARIABLE differ)
  if(NOT differ EQUAL 0)
    message(FATAL_ERROR "samples/models/${name} is not what make_model_data writes: "
                        "regenerate it (see make_model_data.cc)")
  endif()
endforeach()
message(STATUS "make_model_data wrote the checked-in files: ${written}")
