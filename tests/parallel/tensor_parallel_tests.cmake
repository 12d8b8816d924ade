# Tensor parallelism under mpiexec -n 2 and -n 4: each layer against its single-rank twin,
# training parity with one rank (tp alone and dp x tp with ZeRO), and the memory model.
add_executable(tensor_parallel_mpi_tests ${CMAKE_CURRENT_LIST_DIR}/tensor_parallel_mpi_tests.cpp
               ${CMAKE_CURRENT_SOURCE_DIR}/support/mpi_doctest_main.cpp)
target_link_libraries(tensor_parallel_mpi_tests PRIVATE llmft_launch doctest::doctest)
foreach(ranks 2 4)
  add_test(NAME tensor_parallel_np${ranks}
    COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${LLMFT_MPI_FLAGS}
            $<TARGET_FILE:tensor_parallel_mpi_tests>)
  set_tests_properties(tensor_parallel_np${ranks} PROPERTIES TIMEOUT 300)
endforeach()
