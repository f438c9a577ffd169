# CMake 3.25 knows no nvcc flag for CUDA_STANDARD 20; nvcc 12+ accepts -std=c++20. Loaded through
# CMAKE_USER_MAKE_RULES_OVERRIDE_CUDA before the CUDA language is enabled.
if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
endif()
