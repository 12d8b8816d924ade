# Two simulated nodes on one machine (docs/MULTINODE.md): network and UTS namespaces on a
# private bridge, Open MPI launching its daemons into them (tests/cluster/multinode_hosts.sh).
# Each test makes its own hosts and removes them however it ends; skipped (77) where
# namespaces cannot be made (not root). Serial: each loads both cores with up to 4 ranks.
# Not in sanitizer builds: what they check is the launch and placement, which the
# uninstrumented run of the suite covers.
if(NOT LLMFT_SANITIZE)
  add_executable(multinode_whoami cluster/multinode_whoami.cpp)
  target_link_libraries(multinode_whoami PRIVATE MPI::MPI_CXX)
  set(multinode_mpiexec ${MPIEXEC_EXECUTABLE} ${LLMFT_MPI_FLAGS})
  set(multinode_dir ${CMAKE_CURRENT_BINARY_DIR}/multinode)
  # multinode_test(NAME TIMEOUT SCRIPT_ARGUMENTS...): tests/cluster/multinode_NAME.sh
  function(multinode_test name timeout)
    add_test(NAME multinode_${name} COMMAND bash
      ${CMAKE_CURRENT_SOURCE_DIR}/cluster/multinode_${name}.sh ${ARGN})
    set_tests_properties(multinode_${name} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT ${timeout}
      RUN_SERIAL TRUE)
  endfunction()
  # Losses of 2 hosts x 1 and x 2 ranks (dp, dp x tp) equal one host's; tp groups per host.
  multinode_test(losses 240 ${llmft} $<TARGET_FILE:multinode_whoami> ${PROJECT_SOURCE_DIR}
    ${multinode_dir}/losses ${multinode_mpiexec})
  # Checkpoints from both hosts into one directory resume the run bit for bit.
  multinode_test(checkpoint 180 ${llmft} ${PROJECT_SOURCE_DIR} ${multinode_dir}/checkpoint
    ${multinode_mpiexec})
  # A host lost mid-run ends the job, nonzero, within --comm-timeout.
  multinode_test(node_lost 180 ${llmft} ${PROJECT_SOURCE_DIR} ${multinode_dir}/node_lost
    ${multinode_mpiexec})
  # The harness removes its namespaces, bridge, hosts files and processes after SIGTERM,
  # and sweeps them after SIGKILL.
  multinode_test(cleanup 120 ${PROJECT_SOURCE_DIR} ${multinode_dir}/cleanup ${multinode_mpiexec})
  # --threads 0 per host; the calibration's intra- and inter-node links.
  multinode_test(placement 240 ${llmft} ${PROJECT_SOURCE_DIR} ${multinode_dir}/placement
    ${multinode_mpiexec})
endif()
