# Data-parallel training under mpiexec -n 2 and -n 4: parity with one rank for every
# optimizer, communication volume, and the memory model on every rank.
llmft_mpi_tests(data_parallel SOURCE ${CMAKE_CURRENT_LIST_DIR}/data_parallel_mpi_tests.cpp
  LIBRARY llmft_launch RANKS 2 4 TIMEOUT 300)
# Optimizer offload: parity with the optimizer on the device, both pools predicted.
llmft_mpi_tests(offload SOURCE ${CMAKE_CURRENT_LIST_DIR}/offload_mpi_tests.cpp
  LIBRARY llmft_launch RANKS 2 4 TIMEOUT 300)
# fp32 gradient sums against fp64 under every ZeRO stage and offload (--grad-accum-dtype).
llmft_mpi_tests(grad_accum SOURCE ${CMAKE_CURRENT_LIST_DIR}/grad_accum_mpi_tests.cpp
  LIBRARY llmft_launch RANKS 2 4 TIMEOUT 300)
