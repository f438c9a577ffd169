# oneDNN (Debian's libdnnl-dev) for the CPU convolutions (backends/cpu/conv_onednn.cpp) and the
# fp32 matrix products (backends/cpu/sgemm_onednn.cpp). Found by header and library, not by its
# CMake package: Debian builds it with an OpenCL GPU runtime, and its package then insists on the
# OpenCL headers, which nothing here uses. Where it is missing (a machine without the package,
# unless .deps/usr holds its unpacked files, as scripts/gpu-check.sh arranges), the convolutions
# take the im2col + matrix-product path on every dtype and the products OpenBLAS alone; the
# configure step says which.
find_path(ANATOMY_ONEDNN_INCLUDE_DIR oneapi/dnnl/dnnl.hpp)
find_library(ANATOMY_ONEDNN_LIBRARY dnnl)
# Debian's oneDNN runs on OpenMP; sgemm_onednn.cpp sets the calling thread's OpenMP thread count,
# so the library links libgomp itself (its runtime only: no source is compiled with -fopenmp).
find_package(OpenMP COMPONENTS CXX)
if(ANATOMY_ONEDNN_INCLUDE_DIR AND ANATOMY_ONEDNN_LIBRARY AND OpenMP_CXX_FOUND)
  message(STATUS "anatomy: oneDNN ${ANATOMY_ONEDNN_LIBRARY} for the CPU convolutions and fp32 products")
  add_library(anatomy_onednn INTERFACE IMPORTED)
  target_include_directories(anatomy_onednn INTERFACE ${ANATOMY_ONEDNN_INCLUDE_DIR})
  target_link_libraries(anatomy_onednn INTERFACE ${ANATOMY_ONEDNN_LIBRARY} ${OpenMP_CXX_LIBRARIES})
  target_link_libraries(anatomy PRIVATE anatomy_onednn)
  target_compile_definitions(anatomy PRIVATE ANATOMY_WITH_ONEDNN=1)
else()
  message(STATUS "anatomy: oneDNN (or OpenMP) not found; CPU convolutions use im2col + the matrix product, "
                 "and the products OpenBLAS alone")
endif()
