# Fuzz targets for the file readers (fuzz/*_fuzz.cpp), included from the top-level
# CMakeLists.txt. Each target is built twice:
#  - fuzz_replay_NAME, with the normal compiler and fuzz/replay_main.cpp, registered as the
#    ctest test fuzz_replay_NAME that runs it over the committed corpus fuzz/corpus/NAME;
#  - fuzz_NAME, the libFuzzer binary, only with -DLLMFT_FUZZ=ON and clang (scripts/fuzz.sh).
option(LLMFT_FUZZ "Build the libFuzzer targets (needs clang; see scripts/fuzz.sh)" OFF)
set(LLMFT_FUZZ_TARGETS token_file safetensors json_config tokenizer prepare checkpoint)
set(LLMFT_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR})

add_library(llmft_fuzz_support STATIC ${LLMFT_FUZZ_DIR}/scratch_dir.cpp)
target_link_libraries(llmft_fuzz_support PUBLIC llmft_io)
# The checkpoint target restores into a real Engine on the CPU backend.
set(LLMFT_FUZZ_LIBRARIES_checkpoint llmft_checkpoint llmft_devices)

foreach(name ${LLMFT_FUZZ_TARGETS})
  if(BUILD_TESTING)
    add_executable(fuzz_replay_${name} ${LLMFT_FUZZ_DIR}/${name}_fuzz.cpp
                   ${LLMFT_FUZZ_DIR}/replay_main.cpp)
    target_link_libraries(fuzz_replay_${name} PRIVATE llmft_fuzz_support
                          ${LLMFT_FUZZ_LIBRARIES_${name}})
    add_test(NAME fuzz_replay_${name}
             COMMAND fuzz_replay_${name} ${LLMFT_FUZZ_DIR}/corpus/${name})
    set_tests_properties(fuzz_replay_${name} PROPERTIES TIMEOUT 60)
  endif()
  if(LLMFT_FUZZ)
    add_executable(fuzz_${name} ${LLMFT_FUZZ_DIR}/${name}_fuzz.cpp)
    target_compile_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
    target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
    target_link_libraries(fuzz_${name} PRIVATE llmft_fuzz_support ${LLMFT_FUZZ_LIBRARIES_${name}})
  endif()
endforeach()
