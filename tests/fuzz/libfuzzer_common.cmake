# What every libFuzzer target's project shares (dlpack/, safetensors/; each a project of its own so
# that clang++ compiles it, configured by tests/CMakeLists.txt as an external project): the library
# the main project built (by g++: the two share the C++ ABI and libstdc++), imported as
# anatomy_built, and anatomy_libfuzzer_target(NAME SOURCES...), a fuzzer whose own sources (and the
# library sources it compiles in, to instrument and cover them) are built with the sanitizers.
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)

find_package(fmt REQUIRED)
add_library(anatomy_built SHARED IMPORTED)
set_target_properties(anatomy_built PROPERTIES IMPORTED_LOCATION ${ANATOMY_LIBRARY}
                                               INTERFACE_INCLUDE_DIRECTORIES ${ANATOMY_INCLUDE_DIR})
target_link_libraries(anatomy_built INTERFACE fmt::fmt)
if(ANATOMY_CUDART)
  # A CUDA build's library: the linker resolves its CUDA symbols through the CUDA runtime.
  target_link_libraries(anatomy_built INTERFACE ${ANATOMY_CUDART})
endif()

function(anatomy_libfuzzer_target name)
  add_executable(${name} ${ARGN})
  set(_sanitizers -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)
  target_compile_options(${name} PRIVATE ${_sanitizers} -O1 -g -fno-omit-frame-pointer -Wall -Wextra)
  target_link_options(${name} PRIVATE ${_sanitizers})
  target_link_libraries(${name} PRIVATE anatomy_built)
endfunction()
