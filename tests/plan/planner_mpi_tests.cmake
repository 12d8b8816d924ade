# The memory model across the whole matrix on every rank, and planned layouts trained
# under their memory budget, under mpiexec -n 4.
add_executable(planner_mpi_tests ${CMAKE_CURRENT_LIST_DIR}/planner_mpi_tests.cpp
               ${CMAKE_CURRENT_SOURCE_DIR}/support/mpi_doctest_main.cpp)
target_link_libraries(planner_mpi_tests PRIVATE llmft_launch doctest::doctest)
add_test(NAME planner_np4
  COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 4 ${LLMFT_MPI_FLAGS}
          $<TARGET_FILE:planner_mpi_tests>)
set_tests_properties(planner_np4 PROPERTIES TIMEOUT 600)
