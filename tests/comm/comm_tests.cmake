# Collectives under mpiexec on 1, 2 and 4 ranks (MpiCommunicator, StagedCommunicator, splits, timeouts,
# failure notices), and a job whose rank fails mid-collective: it must end promptly, with
# rank 0 naming the failed rank. Uses LLMFT_MPI_FLAGS from tests/CMakeLists.txt.
llmft_mpi_tests(comm SOURCE ${CMAKE_CURRENT_LIST_DIR}/comm_mpi_tests.cpp
  LIBRARY llmft_mpi llmft_cpu RANKS 1 2 4 TIMEOUT 180)

# The program's communication timeout is 600 s, the test's 60 s: only the failure notice
# can end rank 0's wait in time.
add_executable(comm_rank_failure ${CMAKE_CURRENT_LIST_DIR}/rank_failure_program.cpp)
target_link_libraries(comm_rank_failure PRIVATE llmft_mpi)
add_test(NAME comm_rank_failure
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launch/expect_failure.sh
          "rank 0: error: all_reduce \\(step 3\\) aborted: rank 1 failed: injected failure" --
          ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${LLMFT_MPI_FLAGS}
          $<TARGET_FILE:comm_rank_failure>)
# The failed rank's own message is printed too, before the job ends (comm/job_failure.h).
add_test(NAME comm_rank_failure_origin
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launch/expect_failure.sh
          "^rank 1: error: injected failure in the backward of step 3" --
          ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${LLMFT_MPI_FLAGS}
          $<TARGET_FILE:comm_rank_failure>)
set_tests_properties(comm_rank_failure comm_rank_failure_origin PROPERTIES TIMEOUT 60)
