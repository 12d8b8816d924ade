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
