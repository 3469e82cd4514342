# A skipped GoogleTest test's reason reaches the JUnit files: a one-test project registered as pacheck registers its
# tests (gtest_discover_tests with NO_PRETTY_VALUES and an XML_OUTPUT_DIR) skips with a reason; the file
# `ctest --output-junit` writes must carry it in the test's record (its <skipped message> says only that a skip
# pattern matched), and the test's own gtest XML in its <skipped message>.
# Run with cmake -DWORK_DIR=<dir> -DGENERATOR=<generator> -DCXX_COMPILER=<compiler> -P junit_skip_reason_test.cmake.
cmake_minimum_required(VERSION 3.25)

set(reason "no CUDA device answers (probe said: cudaErrorNoDevice)")
file(REMOVE_RECURSE ${WORK_DIR})
file(WRITE ${WORK_DIR}/src/skip_test.cpp "// A test that skips with a reason.
#include <gtest/gtest.h>
TEST(Device, Runs) { GTEST_SKIP() << \"${reason}\"; }
")
file(WRITE ${WORK_DIR}/src/CMakeLists.txt "# One skipping test, registered as pacheck registers its GoogleTest tests.
cmake_minimum_required(VERSION 3.25)
project(junit_skip CXX)
find_package(GTest REQUIRED)
include(GoogleTest)
enable_testing()
add_executable(skip_test skip_test.cpp)
target_link_libraries(skip_test PRIVATE GTest::gtest GTest::gtest_main)
gtest_discover_tests(skip_test NO_PRETTY_VALUES XML_OUTPUT_DIR \${PROJECT_BINARY_DIR}/junit)
")

function(run what)
  execute_process(COMMAND ${ARGN} OUTPUT_VARIABLE output ERROR_VARIABLE output RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${what} failed (${status}):\n${output}")
  endif()
endfunction()
run(configure ${CMAKE_COMMAND} -S ${WORK_DIR}/src -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=Release)
run(build ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(ctest ${CMAKE_CTEST_COMMAND} --test-dir ${WORK_DIR}/build --output-junit ${WORK_DIR}/junit.xml)

file(READ ${WORK_DIR}/junit.xml xml)
if(NOT xml MATCHES "<testcase name=\"Device\\.Runs\"[^>]*>(.*)</testcase>")
  message(FATAL_ERROR "the JUnit file has no test case Device.Runs:\n${xml}")
endif()
set(record "${CMAKE_MATCH_1}")
if(NOT record MATCHES "<skipped")
  message(FATAL_ERROR "Device.Runs is not recorded as skipped:\n${record}")
endif()
string(REPLACE "(" "\\(" reason_pattern "${reason}")
string(REPLACE ")" "\\)" reason_pattern "${reason_pattern}")
if(NOT record MATCHES "${reason_pattern}")
  message(FATAL_ERROR "the JUnit record of the skipped test lacks its reason '${reason}':\n${record}")
endif()

file(READ ${WORK_DIR}/build/junit/Device.Runs.xml gtest_xml)
if(NOT gtest_xml MATCHES "<skipped message=\"[^\"]*${reason_pattern}\"")
  message(FATAL_ERROR "the test's own JUnit XML lacks the reason in <skipped message>:\n${gtest_xml}")
endif()
