# The memory model across the whole matrix on every rank, and planned layouts trained
# under their memory budget, under mpiexec -n 4.
llmft_mpi_tests(planner SOURCE ${CMAKE_CURRENT_LIST_DIR}/planner_mpi_tests.cpp
  LIBRARY llmft_launch RANKS 4 TIMEOUT 600)
