# cuDNN 9 for the CUDA convolutions (backends/cuda/conv/). The CUDA Toolkit of the development
# machines ships it beside its own headers and libraries; elsewhere (the GPU machines, where
# PyTorch's wheel brings one) ANATOMY_CUDNN_ROOT names its folder (with include/ and lib/).
# Without it, CUDA convolutions take the im2col + cuBLAS composite; the configure step says which.
find_path(ANATOMY_CUDNN_INCLUDE_DIR cudnn.h HINTS ${ANATOMY_CUDNN_ROOT}/include ${CUDAToolkit_INCLUDE_DIRS})
find_library(ANATOMY_CUDNN_LIBRARY NAMES cudnn libcudnn.so.9 NAMES_PER_DIR
             HINTS ${ANATOMY_CUDNN_ROOT}/lib ${ANATOMY_CUDNN_ROOT}/lib64 ${CUDAToolkit_LIBRARY_DIR})
if(ANATOMY_CUDNN_INCLUDE_DIR AND ANATOMY_CUDNN_LIBRARY)
  message(STATUS "anatomy: cuDNN ${ANATOMY_CUDNN_LIBRARY} for the CUDA convolutions")
  target_include_directories(anatomy PRIVATE ${ANATOMY_CUDNN_INCLUDE_DIR})
  target_link_libraries(anatomy PRIVATE ${ANATOMY_CUDNN_LIBRARY})
  target_compile_definitions(anatomy PRIVATE ANATOMY_WITH_CUDNN=1)
else()
  message(STATUS "anatomy: cuDNN not found; CUDA convolutions use im2col + cuBLAS")
endif()
