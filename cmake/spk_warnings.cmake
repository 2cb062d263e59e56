# Warnings for spk's own targets (not exported: applications choose their own flags).
function(spk_add_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    if(SPK_HAVE_CUDA)
      # nvcc_wrapper forwards host-compiler flags through -Xcompiler
      target_compile_options(${target} PRIVATE -Wall -Wextra)
    else()
      target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unknown-pragmas)
    endif()
  endif()
endfunction()
