# tests/fuzz.cmake: the fuzz harnesses (tests/fuzz/): their seed replay under ctest in every build, the
# libFuzzer binaries where the compiler has libFuzzer.
add_subdirectory(${CMAKE_CURRENT_SOURCE_DIR}/fuzz ${CMAKE_CURRENT_BINARY_DIR}/fuzz)
