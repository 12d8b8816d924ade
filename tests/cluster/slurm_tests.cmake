# The SLURM cluster test: daemons started by the test, each example script submitted with
# sbatch (tests/cluster/slurm_cluster.sh; exit 77, skipped, where the daemons cannot
# start). Not in sanitizer builds: the suite runs twice in CI and the test's jobs train
# for minutes. RUN_SERIAL: its jobs use every core, and its time-limit signal must reach
# a run that is still training.
if(NOT LLMFT_SANITIZE)
  add_test(NAME slurm_cluster COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cluster/slurm_cluster.sh
    $<TARGET_FILE:llmft> ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/slurm_cluster
    ${MPIEXEC_EXECUTABLE} ${LLMFT_MPI_FLAGS})
  set_tests_properties(slurm_cluster PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900 RUN_SERIAL TRUE)
endif()
