# The coverage-report target's script (cmake -P): runs the ctest suite of a --coverage build, captures lcov data
# for oracle/, variants/, reports/ and cuda/ (the host code; tests excluded), writes genhtml's pages with line and
# branch coverage, and prints the per-folder summary. Fails when a test failed or when oracle/ or variants/ fall
# below 95% line coverage; the pages and summary are written either way.
#
# Inputs (-D): SOURCE_DIR, BUILD_DIR, OUT_DIR, SUMMARY_TOOL (pacheck_coverage_summary), LCOV, GENHTML, CTEST.
foreach(var SOURCE_DIR BUILD_DIR OUT_DIR SUMMARY_TOOL LCOV GENHTML CTEST)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "coverage.cmake: ${var} is not set")
  endif()
endforeach()

# Branch data on; exception-only branches (every call that can throw) off, or they drown the real branches.
set(rc --rc lcov_branch_coverage=1 --rc geninfo_no_exception_branch=1)

file(REMOVE_RECURSE "${OUT_DIR}")
file(MAKE_DIRECTORY "${OUT_DIR}")

# Counters from an earlier run would add up with this one.
execute_process(COMMAND "${LCOV}" --quiet --zerocounters --directory "${BUILD_DIR}" COMMAND_ERROR_IS_FATAL ANY)

# Coverage asks which lines run, not how hard they are tested: 20 cases per property reach the same code as 100
# at a fifth of the cost of an instrumented -O0 build (the default build runs the full counts). For the same
# reason the full kill matrix test (every mutant against every property, 100 cases each: minutes at -O0) is left
# to the default build; the other kill-matrix tests and the report render test's kill matrix reach the same code.
set(ENV{RC_PARAMS} "max_success=20")
execute_process(
  COMMAND "${CTEST}" --test-dir "${BUILD_DIR}" --output-on-failure -j2
          --exclude-regex "^KillMatrix\\.EveryMutantDiesAndEveryPropertyKills$"
  RESULT_VARIABLE tests_result)

# lcov's own chatter (perl warnings, "source file is newer" notes) goes to lcov.log, shown when a step fails.
function(run_lcov_step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  file(APPEND "${OUT_DIR}/lcov.log" "${out}${err}")
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "coverage-report: failed (${result}): ${ARGN}\n${out}${err}")
  endif()
endfunction()

run_lcov_step("${LCOV}" --quiet ${rc} --capture --directory "${BUILD_DIR}" --base-directory "${SOURCE_DIR}"
              --output-file "${OUT_DIR}/all.info")
run_lcov_step("${LCOV}" --quiet ${rc} --extract "${OUT_DIR}/all.info" "${SOURCE_DIR}/oracle/*" "${SOURCE_DIR}/variants/*"
              "${SOURCE_DIR}/reports/*" "${SOURCE_DIR}/cuda/*" --output-file "${OUT_DIR}/extracted.info")
run_lcov_step("${LCOV}" --quiet ${rc} --remove "${OUT_DIR}/extracted.info" "*/tests/*"
              --output-file "${OUT_DIR}/coverage.info")
file(REMOVE "${OUT_DIR}/all.info" "${OUT_DIR}/extracted.info")
run_lcov_step("${GENHTML}" --quiet ${rc} --branch-coverage --legend --title "pacheck" --prefix "${SOURCE_DIR}"
              --output-directory "${OUT_DIR}/html" "${OUT_DIR}/coverage.info")

execute_process(
  COMMAND "${SUMMARY_TOOL}" "${OUT_DIR}/coverage.info" --source-root "${SOURCE_DIR}" --json "${OUT_DIR}/summary.json"
          --min-lines oracle/=95 --min-lines variants/=95
  OUTPUT_VARIABLE summary ERROR_VARIABLE floors RESULT_VARIABLE summary_result)
file(WRITE "${OUT_DIR}/summary.txt" "${summary}")
message("\ncoverage (tests excluded), ${OUT_DIR}/html/index.html:\n${summary}${floors}")

if(NOT tests_result EQUAL 0)
  message(FATAL_ERROR "coverage-report: the ctest suite failed (the coverage figures above are still written)")
endif()
if(NOT summary_result EQUAL 0)
  message(FATAL_ERROR "coverage-report: line coverage floors not met, or the summary could not be made")
endif()
