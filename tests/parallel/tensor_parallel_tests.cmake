# Tensor parallelism under mpiexec -n 2 and -n 4: each layer against its single-rank twin,
# training parity with one rank (tp alone and dp x tp with ZeRO), and the memory model.
llmft_mpi_tests(tensor_parallel SOURCE ${CMAKE_CURRENT_LIST_DIR}/tensor_parallel_mpi_tests.cpp
  LIBRARY llmft_launch RANKS 2 4 TIMEOUT 300)
