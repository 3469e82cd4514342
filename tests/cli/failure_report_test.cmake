# What a user sees of a failure: `pacheck check` on a known failing mutant, then `pacheck replay` of its case file made
# long and given a hostile note. Run with cmake -DPACHECK=<pacheck> -DWORK_DIR=<dir> -P failure_report_test.cmake.
cmake_minimum_required(VERSION 3.25)

# The longest line a report may print: a terminal line plus the reproduce string, which grows with the shrink path.
set(max_line 400)

function(fail what)
  message(FATAL_ERROR "${what}\n--- output ---\n${output}")
endfunction()

# Fails when the output holds RapidCheck's internals, a line longer than max_line, or a control character other
# than the line break (an escape sequence from a file would reach the terminal).
function(check_readable output)
  foreach(internal "RC_ASSERT" "RC_FAIL" "rapidcheck" "pacheck::" "\\.cpp:[0-9]+:")
    if(output MATCHES "${internal}")
      fail("the report shows RapidCheck's internals ('${internal}')")
    endif()
  endforeach()
  string(REPLACE "\n" ";" lines "${output}")
  foreach(line IN LISTS lines)
    string(LENGTH "${line}" length)
    if(length GREATER max_line)
      fail("a line of ${length} characters, over ${max_line}: long arrays are not elided")
    endif()
  endforeach()
  string(ASCII 7 bell)
  string(ASCII 27 escape)
  if(output MATCHES "[${escape}${bell}\r]")
    fail("a control character reaches the terminal unescaped")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(case_file ${WORK_DIR}/failures/UlpBoundedAgreement-acc_not_rescaled.json)

# 1. check names the property, the variant, the worst element and its bound, the shrunk case, the case file and
#    the one-line replay.
execute_process(COMMAND ${PACHECK} check --variant acc_not_rescaled --property UlpBoundedAgreement --cases 200
                        --failures ${WORK_DIR}/failures
                OUTPUT_VARIABLE output ERROR_VARIABLE output RESULT_VARIABLE status)
if(NOT status EQUAL 1)
  fail("check of a failing mutant exited ${status}, not 1")
endif()
foreach(expected
        "UlpBoundedAgreement +acc_not_rescaled +[0-9]+ cases +FAIL\n"
        "failed after [0-9]+ passing cases?; shrunk [0-9]+ times to:\n  problem: "
        "variant acc_not_rescaled disagrees with the oracle"
        "worst element: seq [0-9]+ token [0-9]+ \\(position [0-9]+\\) head [0-9]+ dim [0-9]+\n"
        "  exact [^\n]*, got [^\n]*, bound [^\n]* ulps\n"
        "\nreplay: [^\n]*pacheck replay ${case_file} --variant acc_not_rescaled\n"
        "\nreproduce: [^\n]* check --variant acc_not_rescaled --property UlpBoundedAgreement --seed 1 --reproduce [^ \n]+\n")
  if(NOT output MATCHES "${expected}")
    fail("check's report lacks '${expected}'")
  endif()
endforeach()
check_readable("${output}")
if(NOT EXISTS ${case_file})
  fail("the replay line names ${case_file}, which was not written")
endif()

# 2. The same case with a 2048-entry block table (padded) and a note holding a window-title and a clear-screen sequence
#    and a second line: replay elides the table, escapes the note, indents its second line and still reports the
#    failure.
file(READ ${case_file} json)
string(ASCII 7 bell)
string(ASCII 27 escape)
# The case's own table, then padding entries past what its context needs (which kernels must never read).
string(JSON table GET "${json}" sequences 0 block_table)
string(JSON entries LENGTH "${table}")
math(EXPR padding "2048 - ${entries}")
string(REPEAT ",0" ${padding} zeros)
string(REGEX REPLACE "]$" "${zeros}]" table "${table}")
string(JSON json SET "${json}" sequences 0 block_table "${table}")
string(JSON json SET "${json}" note "\"found by hand ${escape}]0;owned${bell} ${escape}[2J\\nsecond line\"")
file(WRITE ${WORK_DIR}/long.json "${json}")
execute_process(COMMAND ${PACHECK} replay ${WORK_DIR}/long.json --variant acc_not_rescaled
                OUTPUT_VARIABLE output ERROR_VARIABLE output RESULT_VARIABLE status)
if(NOT status EQUAL 1)
  fail("replay of a failing case exited ${status}, not 1")
endif()
foreach(expected
        "  note: found by hand \\\\x1b]0;owned\\\\x07 \\\\x1b\\[2J\n        second line\n"
        "context_len=[0-9]+ num_queries=1 table=\\[[0-9 ]*\\.\\.\\. 2032 more\\]"
        "acc_not_rescaled +FAIL"
        "worst element: ")
  if(NOT output MATCHES "${expected}")
    fail("replay's report lacks '${expected}'")
  endif()
endforeach()
check_readable("${output}")
