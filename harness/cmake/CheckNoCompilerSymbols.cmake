# cmake -DNM=<nm> -DFILES="a;b" -P CheckNoCompilerSymbols.cmake
# Fails when any of FILES defines or references a symbol of the compiler (namespace dq::, mlir::
# or llvm::): the object-level proof that the CPU reference does not use the system under test.
foreach(file IN LISTS FILES)
  execute_process(COMMAND ${NM} -C ${file} OUTPUT_VARIABLE symbols RESULT_VARIABLE rc ERROR_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cannot read symbols of ${file}")
  endif()
  string(REGEX MATCHALL "[^\n]*[ (<,](dq|mlir|llvm)::[^\n]*" hits "${symbols}")
  if(hits)
    list(GET hits 0 first)
    list(LENGTH hits n)
    # The fixed words first: CMake word-wraps the message, and a long path before them would
    # split them across lines, which the canary test's regular expression reads.
    message(FATAL_ERROR "compiler symbols, e.g.: ${first} (${n} in ${file})")
  endif()
  message(STATUS "${file}: no compiler symbols")
endforeach()
