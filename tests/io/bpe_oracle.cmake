# Hugging Face `tokenizers` oracle for the byte-level BPE tokenizer: hf_tokenizer_oracle.py
# trains a tokenizer, encodes held-out text and a sweep of Unicode code points with
# `tokenizers`, and bpe_oracle_check compares llmft's ids token for token.
# Included from tests/CMakeLists.txt; runs only when LLMFT_PYTHON names a Python that has
# `tokenizers` (the environment scripts/test.sh makes).
add_executable(bpe_oracle_check ${CMAKE_CURRENT_LIST_DIR}/bpe_oracle_check.cpp)
target_link_libraries(bpe_oracle_check PRIVATE llmft_launch)
if(LLMFT_PYTHON)
  add_test(NAME hf_oracle_bpe_tokenizer
    COMMAND ${LLMFT_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/hf_tokenizer_oracle.py
            --checker $<TARGET_FILE:bpe_oracle_check>
            --data ${PROJECT_SOURCE_DIR}/examples/data
            --out ${CMAKE_CURRENT_BINARY_DIR}/bpe_oracle)
  set_tests_properties(hf_oracle_bpe_tokenizer PROPERTIES TIMEOUT 300)
endif()
if(LLMFT_PYTHON)
  add_test(NAME hf_oracle_llama_tokenizers
    COMMAND ${LLMFT_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/hf_llama_tokenizer_oracle.py
            --checker $<TARGET_FILE:bpe_oracle_check>
            --data ${PROJECT_SOURCE_DIR}/examples/data
            --out ${CMAKE_CURRENT_BINARY_DIR}/llama_tokenizer_oracle)
  set_tests_properties(hf_oracle_llama_tokenizers PROPERTIES TIMEOUT 300)
endif()
