# Finds Python 3 and nanobind for the Python package (interop/python/) and sets
# ANATOMY_WITH_PYTHON.
#
# The interpreter is the project's virtual environment (.venv, made by scripts/setup.sh) when it
# exists, else the first python3 on the PATH (a GPU machine's, which has nanobind installed);
# Python_EXECUTABLE overrides both. nanobind's CMake package comes from that interpreter
# (`python -m nanobind --cmake_dir`). Sanitizer builds leave the package out: a Python
# interpreter that loads an instrumented module needs the sanitizer's runtime preloaded.
set(ANATOMY_WITH_PYTHON OFF)
if(NOT ANATOMY_PYTHON STREQUAL "OFF" AND (NOT ANATOMY_SANITIZE OR ANATOMY_PYTHON STREQUAL "ON"))
  if(NOT DEFINED Python_EXECUTABLE AND EXISTS ${PROJECT_SOURCE_DIR}/.venv/bin/python)
    set(Python_EXECUTABLE ${PROJECT_SOURCE_DIR}/.venv/bin/python)
  endif()
  if(ANATOMY_PYTHON STREQUAL "ON")
    set(_python_required REQUIRED)
  endif()
  find_package(Python 3.9 COMPONENTS Interpreter Development.Module ${_python_required})
  if(Python_FOUND)
    execute_process(COMMAND ${Python_EXECUTABLE} -m nanobind --cmake_dir OUTPUT_VARIABLE nanobind_ROOT
                    OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _nanobind_rc ERROR_QUIET)
    if(_nanobind_rc EQUAL 0)
      find_package(nanobind CONFIG ${_python_required})
    endif()
  endif()
  if(Python_FOUND AND nanobind_FOUND)
    set(ANATOMY_WITH_PYTHON ON)
    message(STATUS "anatomy: Python package ON (${Python_EXECUTABLE}, nanobind ${nanobind_VERSION})")
  elseif(ANATOMY_PYTHON STREQUAL "ON")
    message(FATAL_ERROR "ANATOMY_PYTHON=ON but Python 3 with nanobind was not found (run scripts/setup.sh)")
  else()
    message(STATUS "anatomy: Python package OFF (no Python 3 with nanobind; scripts/setup.sh makes .venv)")
  endif()
endif()
if(ANATOMY_WITH_PYTHON)
  add_subdirectory(interop/python)
endif()
