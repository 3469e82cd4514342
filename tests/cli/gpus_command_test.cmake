# `pacheck gpus` run as a user runs it, one case per ctest test (CASE names the function below): the resource spec
# file it writes, in CTest's format and accepted by ctest; its refusals; the GPU ctest assigns a process. Fake GPUs
# (the hidden --fake-gpu-count) stand in for devices, so every case but no_device_says_why runs on any machine.
# Arguments: PACHECK (the executable), CASE, WORK_DIR (emptied first), HAVE_CUDA, GENERATOR (for the ctest case).
cmake_minimum_required(VERSION 3.25)

# CASE=assigned_gpus is not a test of its own but the test command of the project ctest_accepts_the_spec writes:
# fails unless ctest assigned it GROUPS resource groups of one GPU slot each, on distinct GPUs, in the environment
# format the GPU test binaries read; prints "assigned gpus <id>...".
if(CASE STREQUAL "assigned_gpus")
  set(ids)
  if(NOT "$ENV{CTEST_RESOURCE_GROUP_COUNT}" STREQUAL "${GROUPS}")
    message(FATAL_ERROR "CTEST_RESOURCE_GROUP_COUNT is '$ENV{CTEST_RESOURCE_GROUP_COUNT}', expected ${GROUPS}")
  endif()
  math(EXPR last "${GROUPS} - 1")
  foreach(group RANGE ${last})
    set(types "$ENV{CTEST_RESOURCE_GROUP_${group}}")
    set(assigned "$ENV{CTEST_RESOURCE_GROUP_${group}_GPUS}")
    if(NOT types STREQUAL "gpus" OR NOT assigned MATCHES "^id:([0-9]+),slots:1$")
      message(FATAL_ERROR "group ${group}: CTEST_RESOURCE_GROUP_${group} is '${types}' and "
                          "CTEST_RESOURCE_GROUP_${group}_GPUS is '${assigned}', expected gpus and id:<n>,slots:1")
    endif()
    list(APPEND ids ${CMAKE_MATCH_1})
  endforeach()
  set(distinct ${ids})
  list(REMOVE_DUPLICATES distinct)
  if(NOT distinct STREQUAL ids)
    message(FATAL_ERROR "ctest gave two groups the same GPU: ${ids}")
  endif()
  message("assigned gpus ${ids}")
  return()
endif()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(spec ${WORK_DIR}/spec.json)

# Runs `pacheck gpus ARGS...` with ENV (NAME=VALUE...) and none of ctest's own resource variables; sets
# <prefix>_status, <prefix>_out and <prefix>_err.
function(run_gpus prefix)
  cmake_parse_arguments(PARSE_ARGV 1 run "" "" "ENV;ARGS")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=CTEST_RESOURCE_GROUP_COUNT ${run_ENV} ${PACHECK} gpus
                          ${run_ARGS}
                  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${prefix}_status "${status}" PARENT_SCOPE)
  set(${prefix}_out "${out}" PARENT_SCOPE)
  set(${prefix}_err "${err}" PARENT_SCOPE)
endfunction()

function(fail what)
  message(FATAL_ERROR "${what}\n--- stdout:\n${run_out}\n--- stderr:\n${run_err}")
endfunction()
function(expect_status expected)
  if(NOT run_status STREQUAL expected)
    fail("exit status ${run_status}, expected ${expected}")
  endif()
endfunction()
function(expect_in text fragment)
  string(FIND "${text}" "${fragment}" at)
  if(at EQUAL -1)
    fail("expected '${fragment}'")
  endif()
endfunction()
function(expect_equal actual expected what)
  if(NOT "${actual}" STREQUAL "${expected}")
    fail("${what} is '${actual}', expected '${expected}'")
  endif()
endfunction()

# The spec file holds exactly CTest's format, version 1.0, with COUNT GPUs (ids as strings, slots as numbers).
function(expect_resource_spec count slots)
  if(NOT EXISTS ${spec})
    fail("no resource spec file ${spec}")
  endif()
  file(READ ${spec} json)
  set(run_out "${run_out}\n--- ${spec}:\n${json}")
  set(gpus)
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    list(APPEND gpus "{\"id\": \"${i}\", \"slots\": ${slots}}")
  endforeach()
  list(JOIN gpus ", " gpus)
  set(expected "{\"version\": {\"major\": 1, \"minor\": 0}, \"local\": [{\"gpus\": [${gpus}]}]}")
  string(JSON same EQUAL "${json}" "${expected}")
  if(NOT same)
    fail("the resource spec is not ${expected}")
  endif()
endfunction()

function(resource_spec_format)
  run_gpus(run ARGS --fake-gpu-count 3 --slots-per-gpu 2 --resource-spec ${spec})
  expect_status(0)
  expect_resource_spec(3 2)
  expect_in("${run_out}" "ctest -L gpu -j 6 --resource-spec-file ${spec}")
endfunction()

function(one_slot_by_default)
  run_gpus(run ARGS --fake-gpu-count 2 --resource-spec ${spec})
  expect_status(0)
  expect_resource_spec(2 1)
  expect_in("${run_out}" "ctest -L gpu -j 2 --resource-spec-file ${spec}")
endfunction()

function(lists_each_gpu)
  run_gpus(run ARGS --fake-gpu-count 2)
  expect_status(0)
  expect_in("${run_out}" "GPU 0: fake GPU 0, PCI bus fake:0\nGPU 1: fake GPU 1, PCI bus fake:1\n")
  if(EXISTS ${spec} OR run_out MATCHES "wrote")
    fail("wrote a resource spec file without --resource-spec")
  endif()
endfunction()

function(refuses_zero_slots)
  run_gpus(run ARGS --fake-gpu-count 1 --slots-per-gpu 0 --resource-spec ${spec})
  if(run_status EQUAL 0 OR EXISTS ${spec})
    fail("--slots-per-gpu 0 was accepted")
  endif()
  expect_in("${run_err}" "--slots-per-gpu: '0' is outside 1 to 65536")
  expect_status(2)
endfunction()

function(no_gpu_says_why)
  run_gpus(run ARGS --fake-gpu-count 0 --resource-spec ${spec})
  expect_status(1)
  expect_in("${run_err}" "error: no GPU to write a resource spec for: --fake-gpu-count is 0")
  if(EXISTS ${spec})
    fail("wrote a resource spec file for no GPU")
  endif()
endfunction()

# The CUDA runtime's own answer: without CUDA or a device, the reason and exit status 1; with devices, each listed
# under its CUDA index and written into the spec.
function(no_device_says_why)
  run_gpus(run ARGS --resource-spec ${spec})
  if(NOT HAVE_CUDA)
    expect_status(1)
    expect_in("${run_err}" "error: no GPU to write a resource spec for: pacheck was built without CUDA")
  elseif(run_status EQUAL 0)
    expect_in("${run_out}" "GPU 0: ")
    string(REGEX MATCHALL "\nGPU [0-9]+: " listed "\n${run_out}")
    list(LENGTH listed count)
    expect_resource_spec(${count} 1)
  else()
    expect_status(1)
    expect_in("${run_err}" "error: no GPU to write a resource spec for: no CUDA device")
  endif()
  if(NOT run_status EQUAL 0 AND EXISTS ${spec})
    fail("wrote a resource spec file for no GPU")
  endif()
endfunction()

function(unwritable_path_is_named)
  run_gpus(run ARGS --fake-gpu-count 1 --resource-spec ${WORK_DIR}/missing/spec.json)
  expect_status(1)
  expect_in("${run_err}" "error: cannot write the resource spec file ${WORK_DIR}/missing/spec.json: No such file")
endfunction()

# The GPU of the first group holding gpus, as ctest's environment gives it.
function(reads_ctest_assignment)
  run_gpus(run ENV CTEST_RESOURCE_GROUP_COUNT=2 CTEST_RESOURCE_GROUP_0=disks CTEST_RESOURCE_GROUP_0_DISKS=id:a,slots:1
                   CTEST_RESOURCE_GROUP_1=gpus CTEST_RESOURCE_GROUP_1_GPUS=id:1,slots:1
               ARGS --fake-gpu-count 2)
  expect_status(0)
  expect_in("${run_out}" "ctest assigned this process GPU 1\n")
  run_gpus(run ARGS --fake-gpu-count 2)
  expect_status(0)
  if(run_out MATCHES "ctest assigned")
    fail("names an assignment outside ctest")
  endif()
endfunction()

# Each malformed environment exits 2 naming the variable at fault.
function(malformed_assignment_is_named)
  set(one CTEST_RESOURCE_GROUP_COUNT=1 CTEST_RESOURCE_GROUP_0=gpus)
  set(gpus CTEST_RESOURCE_GROUP_0_GPUS)
  foreach(case
      "CTEST_RESOURCE_GROUP_COUNT=one|CTEST_RESOURCE_GROUP_COUNT is 'one', not a number of resource groups"
      "CTEST_RESOURCE_GROUP_COUNT=1|CTEST_RESOURCE_GROUP_0 is not set, but CTEST_RESOURCE_GROUP_COUNT is"
      "${one}|${gpus} is not set"
      "${one};${gpus}=slots:1|${gpus} is 'slots:1', not entries id:<n>,slots:<n> with a numeric id"
      "${one};${gpus}=id:x,slots:1|${gpus} is 'id:x,slots:1', not entries"
      "${one};${gpus}=id:5,slots:1|ctest assigned GPU 5, which is not among the 2 listed")
    string(REPLACE "|" ";" case "${case}")
    list(POP_BACK case message)
    run_gpus(run ENV ${case} ARGS --fake-gpu-count 2)
    expect_status(2)
    expect_in("${run_err}" "error: ${message}")
  endforeach()
endfunction()

# ctest takes the written spec: a project whose tests check what ctest assigned them runs with it, a test needing two
# GPUs gets both, and with one GPU in the spec ctest refuses that test for want of resources.
function(ctest_accepts_the_spec)
  run_gpus(run ARGS --fake-gpu-count 2 --resource-spec ${spec})
  expect_status(0)
  # The project: four tests of one GPU group and one of two, each checking what ctest assigned it.
  set(project_build ${WORK_DIR}/project)
  set(check "\${CMAKE_COMMAND} -DCASE=assigned_gpus")
  file(WRITE ${WORK_DIR}/project_source/CMakeLists.txt "cmake_minimum_required(VERSION 3.25)
project(resource_spec_check NONE)
enable_testing()
foreach(i RANGE 1 4)
  add_test(NAME one_gpu_\${i} COMMAND ${check} -DGROUPS=1 -P ${CMAKE_CURRENT_LIST_FILE})
  set_tests_properties(one_gpu_\${i} PROPERTIES RESOURCE_GROUPS gpus:1)
endforeach()
add_test(NAME two_gpus COMMAND ${check} -DGROUPS=2 -P ${CMAKE_CURRENT_LIST_FILE})
set_tests_properties(two_gpus PROPERTIES RESOURCE_GROUPS \"2,gpus:1\")
")
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${WORK_DIR}/project_source -B ${project_build}
                          -G ${GENERATOR}
                  RESULT_VARIABLE run_status OUTPUT_VARIABLE run_out ERROR_VARIABLE run_err)
  expect_status(0)
  execute_process(COMMAND ${CMAKE_CTEST_COMMAND} --test-dir ${project_build} -j 4 --output-on-failure -V
                          --resource-spec-file ${spec}
                  RESULT_VARIABLE run_status OUTPUT_VARIABLE run_out ERROR_VARIABLE run_err)
  expect_status(0)
  expect_in("${run_out}" "100% tests passed, 0 tests failed out of 5")
  string(REGEX MATCHALL "assigned gpus " assigned "${run_out}")
  list(LENGTH assigned count)
  expect_equal(${count} 5 "the number of tests that printed their GPUs")
  if(NOT run_out MATCHES "assigned gpus (0;1|1;0)")
    fail("the test of two GPU groups did not get both GPUs")
  endif()
  run_gpus(run ARGS --fake-gpu-count 1 --resource-spec ${spec})
  expect_status(0)
  execute_process(COMMAND ${CMAKE_CTEST_COMMAND} --test-dir ${project_build} -R two_gpus --resource-spec-file ${spec}
                  RESULT_VARIABLE run_status OUTPUT_VARIABLE run_out ERROR_VARIABLE run_err)
  if(run_status EQUAL 0)
    fail("ctest ran a test of two GPUs on a spec of one")
  endif()
  expect_in("${run_out}${run_err}" "Insufficient resources")
endfunction()

cmake_language(CALL ${CASE})
