# The command line's traps (an unknown command or a stray word is an error naming the
# nearest command, and no option prefix is guessed), --init-from without --model, --epochs,
# and `llmft eval`. Uses cli_tests.cmake's cli_failure and its cli_data fixture.
cli_failure(unknown_command "^error: unknown command 'evaluate'; did you mean 'eval'\\?"
  evaluate --data ${cli_dir}/val.tok ${train_outputs})
cli_failure(misspelt_command "unknown command 'genrate'; did you mean 'generate'\\?"
  genrate --checkpoint ${cli_dir}/out)
cli_failure(stray_word "stray word 'evaluate' in the command line.*did you mean 'eval'\\?"
  train --data ${cli_dir}/val.tok evaluate ${train_outputs})
cli_failure(eval_stray_word "stray word 'extra' in the command line"
  eval --data ${cli_dir}/val.tok --model ${cli_dir} extra)
cli_failure(option_prefix "unrecognised option '--check'"
  --data ${cli_dir}/val.tok --check ${cli_dir}/out ${train_outputs})
cli_failure(epochs_and_steps "--epochs 2 and --steps 5 both set the length of the run"
  --data ${cli_dir}/val.tok --epochs 2 --steps 5 ${train_outputs})
cli_failure(epochs_zero "--epochs must be a positive number"
  --data ${cli_dir}/val.tok --epochs 0 ${train_outputs})
cli_failure(init_from_without_config "--init-from .*: no config.json in it.*--model"
  --data ${cli_dir}/val.tok --init-from ${cli_dir}/node_a ${train_outputs})
cli_failure(eval_missing_data "--data is required: the token file to score"
  eval --model ${cli_dir})
cli_failure(eval_absent_data "no_such_file.tok" eval --data ${cli_dir}/no_such_file.tok
  --model llama-tiny)
cli_failure(eval_preset_without_weights "--model llama-tiny has no weights to score"
  eval --data ${cli_dir}/val.tok --model llama-tiny)
cli_failure(eval_checkpoint_and_model "--checkpoint .* holds its model and weights"
  eval --data ${cli_dir}/val.tok --checkpoint ${cli_dir}/out --model llama-tiny)

# A stale calibration cache is found by the probe and remeasured; an honest one is kept
# (tests/launch/stale_calibration.sh).
add_test(NAME cli_stale_calibration COMMAND bash
  ${CMAKE_CURRENT_SOURCE_DIR}/launch/stale_calibration.sh ${llmft} ${cli_dir}/val.tok
  ${cli_dir}/stale_calibration)
# RUN_SERIAL: a test beside it on the same cores would move the GEMM rates it compares.
set_tests_properties(cli_stale_calibration PROPERTIES FIXTURES_REQUIRED cli_data TIMEOUT 120
  RUN_SERIAL TRUE)
# --epochs (tests/launch/epochs.sh).
add_test(NAME cli_epochs COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launch/epochs.sh ${llmft}
  ${cli_dir}/epochs)
set_tests_properties(cli_epochs PROPERTIES FIXTURES_REQUIRED cli_data TIMEOUT 120)
# The run record and a run restarted from it (tests/launch/run_record.sh).
add_test(NAME cli_run_record COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launch/run_record.sh ${llmft}
  ${cli_dir}/run_record)
set_tests_properties(cli_run_record PROPERTIES FIXTURES_REQUIRED cli_data TIMEOUT 120)
# `llmft eval` equals the training run's validation (tests/launch/eval_matches_validation.sh).
add_test(NAME cli_eval_matches_validation COMMAND bash
  ${CMAKE_CURRENT_SOURCE_DIR}/launch/eval_matches_validation.sh ${llmft} ${PROJECT_SOURCE_DIR}
  ${cli_dir}/eval ${MPIEXEC_EXECUTABLE} ${LLMFT_MPI_FLAGS})
set_tests_properties(cli_eval_matches_validation PROPERTIES FIXTURES_REQUIRED cli_data
  TIMEOUT 300)

# The chat example, end to end (tests/launch/chat_example.sh): prepare with the chat
# template, train on 2 ranks, eval, export, generate --chat.
add_test(NAME chat_example COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launch/chat_example.sh
  ${llmft} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/chat_example ${MPIEXEC_EXECUTABLE}
  ${LLMFT_MPI_FLAGS})
set_tests_properties(chat_example PROPERTIES TIMEOUT 300)
