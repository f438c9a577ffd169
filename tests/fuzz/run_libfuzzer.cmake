# A fuzz/<name> test (cmake -P, from tests/CMakeLists.txt's anatomy_libfuzzer): the FUZZER binary
# for RUNS cases from seed 1, starting from the checked-in corpus SEEDS and an empty work folder
# WORK (libFuzzer adds the inputs it finds to the first folder it is given), so that every run runs
# the same cases. A failing input is kept in ARTIFACTS, which no run empties.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK} ${ARTIFACTS})
execute_process(COMMAND ${FUZZER} -seed=1 -runs=${RUNS} -max_total_time=600 -timeout=60 -print_final_stats=1
                        -artifact_prefix=${ARTIFACTS}/ ${WORK} ${SEEDS}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  get_filename_component(_name ${FUZZER} NAME)
  message(FATAL_ERROR "${_name} found a failing input (exit status ${rc}), kept in ${ARTIFACTS}/; "
                      "replay it with: ${FUZZER} ${ARTIFACTS}/<file>")
endif()
