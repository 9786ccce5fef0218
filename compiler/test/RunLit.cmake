# Runs lit on SUITE and fails unless it discovered and passed at least one test.
execute_process(COMMAND ${LIT} -sv ${SUITE} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
message("${out}${err}")
string(REGEX MATCH "Total Discovered Tests: ([0-9]+)" found "${out}${err}")
if(NOT found OR CMAKE_MATCH_1 EQUAL 0)
  message(FATAL_ERROR "lit discovered no tests in ${SUITE}")
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "lit failed (exit ${rc})")
endif()
message("lit ran ${CMAKE_MATCH_1} tests")
