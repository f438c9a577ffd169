# anatomy_discover_test_shards(TARGET CASES n [ALONE glob...]): after each build of the doctest
# executable TARGET, one CTest test per group of at most n of its test cases (in file order,
# consecutive cases together), where doctest_discover_tests would add one per case.
#
# Why: a process of the sanitizer builds costs about 0.35 s of CPU before its first case and
# after its last (ASan's globals, the operator registrations at -O0, LeakSanitizer's scan at
# exit), 0.35 s x 900 cases = over five CPU-minutes (2.6 minutes on two cores); a group of
# cases pays it once. A group runs its cases as `TARGET --order-by=file --first=a --last=b`
# (doctest counts from 1); a failure names the case in the group's output. Cases whose names match
# an ALONE glob (doctest's wildcards, * and ?) each run in a process of their own, with a high COST:
# meant for the cases that take the longest under a sanitizer, and CTest, which has no timings in a
# fresh build folder, starts tests by COST and then in the order they are declared, so the long ones
# start first and the short groups fill the other cores meanwhile, not after them.
function(anatomy_discover_test_shards target)
  cmake_parse_arguments(_shards "" "CASES" "ALONE" ${ARGN})
  set(_tests_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_shards.cmake)
  set(_include_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_shards_include.cmake)
  # Written again whenever the executable or this script changes (not as a POST_BUILD step, which
  # a build folder made before the groups would never run).
  add_custom_command(
    OUTPUT ${_tests_file}
    COMMAND ${CMAKE_COMMAND} -D EXECUTABLE=$<TARGET_FILE:${target}> -D CASES=${_shards_CASES}
            "-D ALONE=${_shards_ALONE}" -D WORKING_DIRECTORY=${CMAKE_CURRENT_BINARY_DIR}
            -D TESTS_FILE=${_tests_file} -P ${PROJECT_SOURCE_DIR}/cmake/test_shards_write.cmake
    DEPENDS ${target} ${PROJECT_SOURCE_DIR}/cmake/test_shards_write.cmake
    COMMENT "Grouping the cases of ${target} into CTest tests"
    VERBATIM)
  add_custom_target(${target}_shards ALL DEPENDS ${_tests_file})
  file(WRITE ${_include_file}
       "if(EXISTS \"${_tests_file}\")\n"
       "  include(\"${_tests_file}\")\n"
       "else()\n"
       "  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)\n"
       "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${_include_file})
endfunction()
