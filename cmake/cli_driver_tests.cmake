# Read by ctest when it starts (a TEST_INCLUDE_FILES entry of tests/): registers every case of
# a CLI test driver built elsewhere, run against this build's program. The sanitizer build
# uses the release build's driver this way instead of compiling a second one: the driver only
# starts the program and reads what it did, and the sanitizers watch the program.
# Filled in by tests/CMakeLists.txt (configure_file): ATTNLAB_CLI_DRIVER, ATTNLAB_CLI_PROGRAM,
# ATTNLAB_CLI_SANITIZED and the working folder.
set(driver "@ATTNLAB_CLI_DRIVER@")
if(NOT EXISTS "${driver}")
  message(FATAL_ERROR "the CLI tests' driver ${driver} is missing: build it first (cmake --build --preset release)")
endif()
execute_process(COMMAND "${driver}" --list-test-cases OUTPUT_VARIABLE listing RESULT_VARIABLE listed)
if(NOT listed EQUAL 0)
  message(FATAL_ERROR "${driver} --list-test-cases failed (${listed})")
endif()
string(REPLACE "\n" ";" lines "${listing}")
foreach(name IN LISTS lines)
  if(name STREQUAL "" OR name MATCHES "^===" OR name MATCHES "^\\[doctest\\] ")
    continue()
  endif()
  # doctest's --test-case takes a list at commas: a comma of the name is escaped
  string(REPLACE "," "\\," filter "${name}")
  add_test("cli:${name}" "${driver}" "--test-case=${filter}")
  set_tests_properties("cli:${name}" PROPERTIES WORKING_DIRECTORY "@CMAKE_CURRENT_BINARY_DIR@"
                       ENVIRONMENT "ATTNLAB_PROGRAM=@ATTNLAB_CLI_PROGRAM@;ATTNLAB_PROGRAM_SANITIZED=@ATTNLAB_CLI_SANITIZED@")
endforeach()
