# Fully static LLVM/MLIR linkage for self-contained tools (the device bundle).
#
# Debian's LLVMConfig.cmake hard-sets LLVM_LINK_LLVM_DYLIB=ON and every imported
# static MLIR target lists "LLVM" (libLLVM.so) in its INTERFACE_LINK_LIBRARIES.
# We switch the dylib off and rewrite that entry of every imported static
# library to an interface target that carries the static LLVM component
# libraries instead. The result depends only on libc/libstdc++/libm/libz/libzstd.
set(LLVM_LINK_LLVM_DYLIB OFF)
llvm_map_components_to_libnames(_humming_llvm_static_libs
  Core Support Demangle BinaryFormat BitReader BitWriter IRReader AsmParser
  Linker TransformUtils Analysis Passes IPO MC MCParser Object Target TargetParser
  FrontendOpenMP FrontendOffloading NVPTX)
add_library(humming_llvm_static INTERFACE)
target_link_libraries(humming_llvm_static INTERFACE ${_humming_llvm_static_libs})

foreach(_t IN LISTS MLIR_EXPORTED_TARGETS)
  if(TARGET ${_t})
    get_target_property(_type ${_t} TYPE)
    if(_type STREQUAL "STATIC_LIBRARY")
      get_target_property(_ill ${_t} INTERFACE_LINK_LIBRARIES)
      if(_ill)
        list(TRANSFORM _ill REPLACE "^LLVM$" "humming_llvm_static")
        set_target_properties(${_t} PROPERTIES INTERFACE_LINK_LIBRARIES "${_ill}")
      endif()
    endif()
  endif()
endforeach()
message(STATUS "Humming: linking LLVM and MLIR statically")

# Debian's LLVMSupport also lists libz3.so (used only by the clang static
# analyzer's Z3 solver, which nothing here calls). Drop it so the tools do
# not need libz3 on the GPU machine; a real reference would fail the link.
if(TARGET LLVMSupport)
  get_target_property(_support_libs LLVMSupport INTERFACE_LINK_LIBRARIES)
  if(_support_libs)
    list(FILTER _support_libs EXCLUDE REGEX "libz3")
    set_target_properties(LLVMSupport PROPERTIES INTERFACE_LINK_LIBRARIES "${_support_libs}")
  endif()
endif()
