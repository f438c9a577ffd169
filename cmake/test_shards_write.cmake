# Run after each build of a doctest executable (cmake/test_shards.cmake): lists its cases in file
# order and writes TESTS_FILE, the add_test() calls of its groups of at most CASES consecutive
# cases, each case whose name matches an ALONE glob first and by itself.
#   cmake -D EXECUTABLE=... -D CASES=n -D ALONE=glob;glob -D WORKING_DIRECTORY=... -D TESTS_FILE=...
#         -P test_shards_write.cmake
cmake_policy(VERSION 3.25)
execute_process(COMMAND ${EXECUTABLE} --list-test-cases --order-by=file --reporters=xml
                OUTPUT_VARIABLE _listing RESULT_VARIABLE _rc WORKING_DIRECTORY ${WORKING_DIRECTORY})
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "${EXECUTABLE} --list-test-cases failed (${_rc}):\n${_listing}")
endif()

# doctest's XML: <TestCase name="..." filename="..." line="..." .../>, attribute values escaped.
# The names only label the tests and meet the ALONE globs: a quote in one becomes ', and a ;
# (which would split CMake's lists) a comma.
string(REPLACE "&lt;" "<" _listing "${_listing}")
string(REPLACE "&gt;" ">" _listing "${_listing}")
string(REPLACE "&quot;" "'" _listing "${_listing}")
string(REPLACE "&apos;" "'" _listing "${_listing}")
string(REPLACE "&amp;" "&" _listing "${_listing}")
string(REPLACE ";" "," _listing "${_listing}")
string(REGEX MATCHALL "<TestCase name=\"[^\"]*\" filename=\"[^\"]*\"" _entries "${_listing}")
set(_names)
set(_files)
foreach(_entry IN LISTS _entries)
  string(REGEX REPLACE "^<TestCase name=\"([^\"]*)\" filename=\"([^\"]*)\"$" "\\1" _name "${_entry}")
  string(REGEX REPLACE "^<TestCase name=\"([^\"]*)\" filename=\"([^\"]*)\"$" "\\2" _file "${_entry}")
  string(REGEX REPLACE "^.*tests/" "" _file "${_file}")
  list(APPEND _names "${_name}")
  list(APPEND _files "${_file}")
endforeach()
list(LENGTH _names _count)
if(_count EQUAL 0)
  message(FATAL_ERROR "${EXECUTABLE} lists no test cases")
endif()

# The ALONE globs as case-insensitive regular expressions (doctest matches names that way).
set(_alone_regexes)
foreach(_glob IN LISTS ALONE)
  string(TOLOWER "${_glob}" _glob)
  string(REGEX REPLACE "([][.+^$(){}|\\\\])" "\\\\\\1" _regex "${_glob}")
  string(REPLACE "*" ".*" _regex "${_regex}")
  string(REPLACE "?" "." _regex "${_regex}")
  list(APPEND _alone_regexes "^${_regex}$")
endforeach()

function(quoted out text)
  set(${out} "[==[${text}]==]" PARENT_SCOPE)
endfunction()
# doctest's range arguments for cases first..last. The range that ends at the last case is left
# open (no --last): should the executable be rebuilt with more cases and this file not written
# again (a build of the executable's target alone), the ranges still cover every case once.
function(case_range out first last)
  if(last EQUAL _count)
    set(${out} "--first=${first}" PARENT_SCOPE)
  else()
    set(${out} "--first=${first} --last=${last}" PARENT_SCOPE)
  endif()
endfunction()

set(_alone_tests "")
set(_group_tests "")
set(_group_first 0)
set(_group_size 0)
# Closes the open group (cases _group_first .. _group_first + _group_size - 1, counted from 1).
macro(close_group)
  if(_group_size GREATER 0)
    math(EXPR _last "${_group_first} + ${_group_size} - 1")
    math(EXPR _first_index "${_group_first} - 1")
    math(EXPR _last_index "${_last} - 1")
    list(GET _files ${_first_index} _first_file)
    list(GET _files ${_last_index} _last_file)
    if(_first_file STREQUAL _last_file)
      set(_where "${_first_file}")
    else()
      set(_where "${_first_file} to ${_last_file}")
    endif()
    quoted(_test "cases ${_group_first}-${_last} of ${_count}: ${_where}")
    case_range(_range ${_group_first} ${_last})
    string(APPEND _group_tests
           "add_test(${_test} [==[${EXECUTABLE}]==] --order-by=file ${_range})\n"
           "set_tests_properties(${_test} PROPERTIES WORKING_DIRECTORY [==[${WORKING_DIRECTORY}]==])\n")
    set(_group_size 0)
  endif()
endmacro()

set(_index 0)
foreach(_name IN LISTS _names)
  math(EXPR _index "${_index} + 1")
  string(TOLOWER "${_name}" _lower)
  set(_is_alone FALSE)
  foreach(_regex IN LISTS _alone_regexes)
    if(_lower MATCHES "${_regex}")
      set(_is_alone TRUE)
    endif()
  endforeach()
  if(_is_alone)
    close_group()
    quoted(_test "${_name}")
    case_range(_range ${_index} ${_index})
    string(APPEND _alone_tests
           "add_test(${_test} [==[${EXECUTABLE}]==] --order-by=file ${_range})\n"
           "set_tests_properties(${_test} PROPERTIES WORKING_DIRECTORY [==[${WORKING_DIRECTORY}]==] COST 100)\n")
  else()
    if(_group_size EQUAL 0)
      set(_group_first ${_index})
    endif()
    math(EXPR _group_size "${_group_size} + 1")
    if(_group_size EQUAL CASES)
      close_group()
    endif()
  endif()
endforeach()
close_group()

file(WRITE "${TESTS_FILE}" "${_alone_tests}${_group_tests}")
