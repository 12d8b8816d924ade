# Data-parallel training under mpiexec -n 2 and -n 4: parity with one rank for every
# optimizer, communication volume, and the memory model on every rank.
add_executable(data_parallel_mpi_tests ${CMAKE_CURRENT_LIST_DIR}/data_parallel_mpi_tests.cpp
               ${CMAKE_CURRENT_SOURCE_DIR}/support/mpi_doctest_main.cpp)
target_link_libraries(data_parallel_mpi_tests PRIVATE llmft_launch doctest::doctest)
foreach(ranks 2 4)
  add_test(NAME data_parallel_np${ranks}
    COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${LLMFT_MPI_FLAGS}
            $<TARGET_FILE:data_parallel_mpi_tests>)
  set_tests_properties(data_parallel_np${ranks} PROPERTIES TIMEOUT 300)
endforeach()
