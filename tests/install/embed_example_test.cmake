# The installed package works for an application of its own: installs the already built tree
# into a fresh prefix, builds examples/embed against it with find_package(Steer) and runs it
# (it tunes its kernel on OpenCL, in the installed steer-worker: the package tells the program
# where the installation keeps it, ahead of the build folder's). Run by ctest as
# install.embed_example with
#   -DBUILD_DIR=<Steer's build> -DSOURCE_DIR=<Steer's source> -DWORK_DIR=<scratch folder>
#   [-DCXX_COMPILER=...] [-DCXX_COMPILER_LAUNCHER=...] [-DBUILD_TYPE=...]
foreach(variable BUILD_DIR SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "embed_example_test.cmake needs -D${variable}=...")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT status EQUAL 0)
    string(REPLACE ";" " " command "${ARGV}")
    message(FATAL_ERROR "`${command}` failed (${status}):\n${output}")
  endif()
  set(last_output "${output}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(installed include/steer/tuner.hpp bin/steer libexec/steer-worker)
  if(NOT EXISTS ${prefix}/${installed})
    message(FATAL_ERROR "cmake --install did not install ${installed}")
  endif()
endforeach()

set(configure_options -DCMAKE_PREFIX_PATH=${prefix})
if(DEFINED CXX_COMPILER)
  list(APPEND configure_options -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
endif()
if(DEFINED CXX_COMPILER_LAUNCHER AND NOT CXX_COMPILER_LAUNCHER STREQUAL "")
  list(APPEND configure_options -DCMAKE_CXX_COMPILER_LAUNCHER=${CXX_COMPILER_LAUNCHER})
endif()
if(DEFINED BUILD_TYPE AND NOT BUILD_TYPE STREQUAL "")
  list(APPEND configure_options -DCMAKE_BUILD_TYPE=${BUILD_TYPE})
endif()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/embed -B ${WORK_DIR}/example ${configure_options})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/example)
file(READ ${WORK_DIR}/example/steer_installed_worker.cpp registration)
string(FIND "${registration}" "\"${prefix}/libexec/steer-worker\"" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the example was not told the installed steer-worker:\n${registration}")
endif()
run(${WORK_DIR}/example/embed_example)
message(STATUS "embed_example:\n${last_output}")
