# pacheck_add_variant_tests(): a test executable that runs pacheck's property catalogue over a project's variants,
# registered with ctest as one test per (property, variant).
include_guard(GLOBAL)
include(GoogleTest)

# pacheck_add_variant_tests(NAME <executable> VARIANTS <target>... [CASES <n>] [LABELS <label>...]
#                           [DISCOVERY_TIMEOUT <seconds>])
#
# Builds <executable> from pacheck::test_main and the VARIANTS targets, the libraries whose sources register
# variants (PACHECK_REGISTER_VARIANT or register_external_variant at namespace scope). A variant joins the registry
# from a static initialiser that nothing references, so a linker would drop its object from a static archive: a
# STATIC library is linked whole ($<LINK_LIBRARY:WHOLE_ARCHIVE,...>, CMake 3.24 or later), an OBJECT library's
# objects are linked as they are; any other kind of target is refused.
#
# Registers every test the executable lists with ctest (gtest_discover_tests, after each build):
#   Catalogue.<Property>/<variant>     label cpu
#   GpuCatalogue.<Property>/<variant>  label gpu and RESOURCE_GROUPS "gpus:1", for variants that declare needs_gpu:
#                                      `ctest -L gpu -j N --resource-spec-file FILE` (FILE from
#                                      `pacheck gpus --resource-spec FILE`) runs them on every GPU, each on the one
#                                      ctest assigns; without a device they skip, saying why.
# Each test also writes its own JUnit XML to <build folder>/<executable>_junit/, whose <skipped message> names the
# reason a test skipped (ctest's --output-junit has it only in the test's recorded output). LABELS are added to both.
# CASES is the number of cases per property (default 100); RC_PARAMS="max_success=N" overrides it at run time, and
# RC_PARAMS="reproduce=..." replays a failure.
function(pacheck_add_variant_tests)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;CASES;DISCOVERY_TIMEOUT" "VARIANTS;LABELS")
  set(usage "pacheck_add_variant_tests(NAME <executable> VARIANTS <target>... [CASES <n>] [LABELS <label>...] "
            "[DISCOVERY_TIMEOUT <seconds>])")
  string(JOIN "" usage ${usage})
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "pacheck_add_variant_tests: unknown arguments '${arg_UNPARSED_ARGUMENTS}'; usage: ${usage}")
  endif()
  if(NOT arg_NAME)
    message(FATAL_ERROR "pacheck_add_variant_tests: NAME (the test executable to create) is missing; usage: ${usage}")
  endif()
  if(NOT arg_VARIANTS)
    message(FATAL_ERROR "pacheck_add_variant_tests(NAME ${arg_NAME}): VARIANTS (the libraries that register the "
                        "variants) is missing; usage: ${usage}")
  endif()
  if(DEFINED arg_CASES AND NOT arg_CASES MATCHES "^[1-9][0-9]*$")
    message(FATAL_ERROR "pacheck_add_variant_tests(NAME ${arg_NAME}): CASES is '${arg_CASES}', not a positive "
                        "number of cases per property")
  endif()
  if(NOT DEFINED arg_DISCOVERY_TIMEOUT)
    set(arg_DISCOVERY_TIMEOUT 60)
  elseif(NOT arg_DISCOVERY_TIMEOUT MATCHES "^[1-9][0-9]*$")
    message(FATAL_ERROR "pacheck_add_variant_tests(NAME ${arg_NAME}): DISCOVERY_TIMEOUT is "
                        "'${arg_DISCOVERY_TIMEOUT}', not a positive number of seconds")
  endif()
  if(NOT TARGET pacheck::test_main)
    message(FATAL_ERROR "pacheck_add_variant_tests(NAME ${arg_NAME}): this pacheck has no pacheck::test_main "
                        "(GoogleTest was not found when it was built)")
  endif()

  add_executable(${arg_NAME})
  foreach(variants IN LISTS arg_VARIANTS)
    if(NOT TARGET ${variants})
      message(FATAL_ERROR "pacheck_add_variant_tests(NAME ${arg_NAME}): VARIANTS names '${variants}', which is not "
                          "a target")
    endif()
    get_target_property(type ${variants} TYPE)
    if(type STREQUAL "STATIC_LIBRARY")
      if(CMAKE_VERSION VERSION_LESS 3.24)
        message(FATAL_ERROR "pacheck_add_variant_tests(NAME ${arg_NAME}): linking the static library ${variants} "
                            "whole needs CMake 3.24 or later ($<LINK_LIBRARY:WHOLE_ARCHIVE>); make it an OBJECT "
                            "library or use a newer CMake")
      endif()
      target_link_libraries(${arg_NAME} PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,${variants}>")
    elseif(type STREQUAL "OBJECT_LIBRARY")
      target_link_libraries(${arg_NAME} PRIVATE ${variants})
    else()
      message(FATAL_ERROR "pacheck_add_variant_tests(NAME ${arg_NAME}): VARIANTS target ${variants} is a ${type}; "
                          "give a STATIC or an OBJECT library (its variants register from static initialisers, "
                          "which only a whole archive or object files keep)")
    endif()
  endforeach()
  target_link_libraries(${arg_NAME} PRIVATE pacheck::test_main)
  if(DEFINED arg_CASES)
    target_compile_definitions(${arg_NAME} PRIVATE PACHECK_TEST_CASES=${arg_CASES})
  endif()

  gtest_discover_tests(${arg_NAME} NO_PRETTY_VALUES XML_OUTPUT_DIR ${CMAKE_CURRENT_BINARY_DIR}/${arg_NAME}_junit
                       TEST_FILTER "Catalogue.*" TEST_LIST ${arg_NAME}_cpu_tests
                       DISCOVERY_TIMEOUT ${arg_DISCOVERY_TIMEOUT} PROPERTIES LABELS cpu)
  gtest_discover_tests(${arg_NAME} NO_PRETTY_VALUES XML_OUTPUT_DIR ${CMAKE_CURRENT_BINARY_DIR}/${arg_NAME}_junit
                       TEST_FILTER "GpuCatalogue.*" TEST_LIST ${arg_NAME}_gpu_tests
                       DISCOVERY_TIMEOUT ${arg_DISCOVERY_TIMEOUT} PROPERTIES LABELS gpu RESOURCE_GROUPS "gpus:1")
  # gtest_discover_tests passes a list inside PROPERTIES on as separate words, so the other labels are set by a
  # file ctest reads after the discovered tests, from their lists.
  if(arg_LABELS)
    set(labels_file ${CMAKE_CURRENT_BINARY_DIR}/${arg_NAME}_labels.cmake)
    file(WRITE ${labels_file} "# The LABELS of pacheck_add_variant_tests(NAME ${arg_NAME}), after cpu or gpu.\n"
         "foreach(kind cpu gpu)\n"
         "  if(${arg_NAME}_\${kind}_tests)\n"
         "    set_tests_properties(\${${arg_NAME}_\${kind}_tests} PROPERTIES LABELS \"\${kind};${arg_LABELS}\")\n"
         "  endif()\n"
         "endforeach()\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${labels_file})
  endif()
endfunction()
