# libtorch for the side-by-side figures: bench/peer's anatomy_peer_torch and gpu-anatomy's
# --peer torch. anatomy_find_torch(<var>) sets <var> TRUE when Torch is to be used here: it calls
# find_package(Torch) in the caller's directory scope, so the variables and flags libtorch's CMake
# package sets (CUDA flags, module paths) stay in that directory.
#
# ANATOMY_BUILD_PEER: AUTO uses Torch when find_package(Torch QUIET) succeeds (CI has no torch and
# skips it quietly), ON requires Torch, OFF skips the search altogether. Point CMake at torch with
# -DCMAKE_PREFIX_PATH="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')"; on a
# machine without a GPU, set TORCH_CUDA_ARCH_LIST (e.g. 9.0) in the environment of a CUDA build of
# torch, whose package otherwise tries to detect the GPUs.
set(ANATOMY_BUILD_PEER "AUTO" CACHE STRING "Build against libtorch for the side-by-side figures: AUTO (when Torch is found), ON or OFF")
set_property(CACHE ANATOMY_BUILD_PEER PROPERTY STRINGS AUTO ON OFF)

macro(anatomy_find_torch result)
  set(${result} FALSE)
  if(ANATOMY_BUILD_PEER STREQUAL "ON")
    find_package(Torch REQUIRED)
    set(${result} TRUE)
  elseif(NOT ANATOMY_BUILD_PEER STREQUAL "OFF")
    find_package(Torch QUIET)
    if(Torch_FOUND)
      set(${result} TRUE)
    endif()
  endif()
endmacro()

# An executable linked against libtorch keeps what static archives bring private (the GPU
# machines' /opt/gcc links libstdc++ statically): exported, the executable's copy of std::locale,
# the streams and the rest would take the place of the system libstdc++'s inside libtorch, which
# loads that one (gpu-anatomy built with -static-libstdc++ against libtorch exported 2351 std::
# symbols). libanatomy does the same (CMakeLists.txt; docs/interop.md, "Importing beside torch").
function(anatomy_keep_static_runtime_private target)
  target_link_options(${target} PRIVATE "LINKER:--exclude-libs,ALL")
endfunction()
