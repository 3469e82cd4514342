# The coverage-report target's script (cmake -P): the ctest suite of a --coverage build, then gcovr's HTML pages and
# JSON summary of oracle/, variants/, reports/ and cuda/, summed per folder by pacheck_coverage_summary. Fails, after
# writing them, when a test failed or oracle/ or variants/ fall below 95% line coverage.
# Inputs (-D): SOURCE_DIR, BUILD_DIR, OUT_DIR, SUMMARY_TOOL (pacheck_coverage_summary), GCOVR, CTEST.
foreach(var SOURCE_DIR BUILD_DIR OUT_DIR SUMMARY_TOOL GCOVR CTEST)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "coverage.cmake: ${var} is not set")
  endif()
endforeach()

file(REMOVE_RECURSE "${OUT_DIR}")
file(MAKE_DIRECTORY "${OUT_DIR}/html")

# Counters from an earlier run would add up with this one.
file(GLOB_RECURSE old_counters "${BUILD_DIR}/*.gcda")
if(old_counters)
  file(REMOVE ${old_counters})
endif()

# Coverage asks which lines run: 20 cases per property reach the code 100 do, at a fifth of an -O0 build's cost. The
# full kill matrix test (minutes at -O0) is left to the default build; the other kill-matrix tests reach its code.
set(ENV{RC_PARAMS} "max_success=20")
execute_process(
  COMMAND "${CTEST}" --test-dir "${BUILD_DIR}" --output-on-failure -j2
          --exclude-regex "^KillMatrix\\.EveryMutantDiesAndEveryPropertyKills$"
  RESULT_VARIABLE tests_result)

# Filters are relative to the checkout, so tests/ and library headers are left out; so are exception-only branches,
# which would drown the real ones. One worker: gcovr 5.2 (Debian 12) can hang or lose files with -j
# (gcovr/gcovr#673, gcovr/gcovr#628). gcovr's chatter goes to gcovr.log, shown if it fails.
execute_process(
  COMMAND "${GCOVR}" --root "${SOURCE_DIR}" --filter "(oracle|variants|reports|cuda)/" --exclude-throw-branches
          --html-details "${OUT_DIR}/html/index.html" --html-title "pacheck"
          --json-summary "${OUT_DIR}/gcovr-summary.json" --json-summary-pretty "${BUILD_DIR}"
  WORKING_DIRECTORY "${SOURCE_DIR}"
  RESULT_VARIABLE gcovr_result OUTPUT_VARIABLE gcovr_out ERROR_VARIABLE gcovr_err)
file(WRITE "${OUT_DIR}/gcovr.log" "${gcovr_out}${gcovr_err}")
if(NOT gcovr_result EQUAL 0)
  message(FATAL_ERROR "coverage-report: gcovr failed (${gcovr_result}):\n${gcovr_out}${gcovr_err}")
endif()

execute_process(
  COMMAND "${SUMMARY_TOOL}" "${OUT_DIR}/gcovr-summary.json" --json "${OUT_DIR}/summary.json"
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
