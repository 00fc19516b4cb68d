# Helpers shared by RLX's CMake files.

# rlx_add_library(name SOURCES... [DEPENDS ...] [LINK_LIBS ...])
# A static, position-independent library linked against the shared MLIR/LLVM
# libraries only (never the static MLIR archives). Installed and exported in
# the RLXTargets set (RLXConfig.cmake imports it as RLX::<name>).
function(rlx_add_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK_LIBS" ${ARGN})
  add_mlir_library(${name}
    ${ARG_UNPARSED_ARGUMENTS}
    DEPENDS ${ARG_DEPENDS} rlx-headers
    LINK_LIBS PUBLIC ${ARG_LINK_LIBS} MLIR LLVM
    DISABLE_INSTALL
  )
  target_include_directories(${name} INTERFACE $<INSTALL_INTERFACE:include>)
  install(TARGETS ${name} EXPORT RLXTargets
          ARCHIVE DESTINATION lib${LLVM_LIBDIR_SUFFIX}
          LIBRARY DESTINATION lib${LLVM_LIBDIR_SUFFIX})
  set_property(GLOBAL APPEND PROPERTY RLX_ALL_LIBS ${name})
endfunction()




# rlx_add_doc(td_name output_name [tablegen args...])
# Generates Markdown reference docs into ${CMAKE_BINARY_DIR}/docs/reference/
# as part of the `rlx-doc` target. `ninja rlx-doc-publish` copies them into the
# source tree's docs/reference/, where they are committed.
function(rlx_add_doc td_name output_name)
  add_mlir_doc(${td_name} ${output_name} reference/ ${ARGN})
  add_dependencies(rlx-doc ${output_name}DocGen)
  set_property(GLOBAL APPEND PROPERTY RLX_DOC_FILES ${output_name}.md)
endfunction()
