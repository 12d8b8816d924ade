# The weights users download and the weights llmft writes, against transformers
# (hf_weights_oracle.py): sharded save_pretrained -> llmft, llmft --save-dir -> transformers,
# and the bytes each rank reads. Included from tests/CMakeLists.txt after LLMFT_MPI_FLAGS;
# runs only with the Python environment that scripts/test.sh makes.
add_executable(hf_logits ${CMAKE_CURRENT_LIST_DIR}/hf_logits.cpp)
target_link_libraries(hf_logits PRIVATE llmft_launch)
if(LLMFT_PYTHON)
  set(mpi_flag_args "")
  foreach(flag ${LLMFT_MPI_FLAGS})
    list(APPEND mpi_flag_args "--mpi-flag=${flag}")
  endforeach()
  add_test(NAME hf_oracle_weights
    COMMAND ${LLMFT_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/hf_weights_oracle.py
            --llmft $<TARGET_FILE:llmft> --hf-logits $<TARGET_FILE:hf_logits>
            --work ${CMAKE_CURRENT_BINARY_DIR}/oracle_weights
            --data ${PROJECT_SOURCE_DIR}/examples/data
            --mpiexec ${MPIEXEC_EXECUTABLE} ${mpi_flag_args})
  set_tests_properties(hf_oracle_weights PROPERTIES TIMEOUT 300)
endif()
# The complete model directory (hf_export_oracle.py): --save-dir and `llmft export` of a
# bf16 run with a chat-template tokenizer, loaded by AutoTokenizer, AutoModelForCausalLM
# and pipeline("text-generation"), whose greedy tokens equal `llmft generate`'s (--chat
# too). Exit 77 (skipped) where torch, transformers or tokenizers are missing.
if(LLMFT_PYTHON)
  add_test(NAME hf_oracle_export
    COMMAND ${LLMFT_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/hf_export_oracle.py
            $<TARGET_FILE:llmft> ${PROJECT_SOURCE_DIR}/examples/data
            ${CMAKE_CURRENT_BINARY_DIR}/oracle_export)
  set_tests_properties(hf_oracle_export PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
endif()
