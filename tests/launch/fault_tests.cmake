# Faults around a job's outputs (docs/REFERENCE.md, "Checked at startup"): an output directory
# belongs to one job at a time, a stale lock of a killed job is taken over
# (directory_lock.sh), and an output that cannot be written fails a 2-rank job with one
# error, without MPI_Abort's report, leaving nothing behind (output_errors_once.sh; the
# read-only and too-small filesystems need a tmpfs mount and are skipped, 77, where the
# test cannot mount). Uses `llmft` of cli_tests.cmake; each script prepares its own data.
set(fault_mpiexec ${MPIEXEC_EXECUTABLE} ${LLMFT_MPI_FLAGS})
add_test(NAME fault_directory_lock COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launch/directory_lock.sh
  ${llmft} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/fault_directory_lock ${fault_mpiexec})
set_tests_properties(fault_directory_lock PROPERTIES TIMEOUT 180)
foreach(cases plain mounted)
  add_test(NAME fault_output_errors_once_${cases} COMMAND bash
    ${CMAKE_CURRENT_SOURCE_DIR}/launch/output_errors_once.sh ${llmft} ${PROJECT_SOURCE_DIR}
    ${CMAKE_CURRENT_BINARY_DIR}/fault_output_errors_once_${cases} ${cases} ${fault_mpiexec})
  set_tests_properties(fault_output_errors_once_${cases} PROPERTIES SKIP_RETURN_CODE 77
    TIMEOUT 120)
endforeach()
