# `llmft plot` (tests/launch/plot.sh and plot_setup.sh) and --help's defaults as written.
set(plot_dir ${CMAKE_CURRENT_BINARY_DIR}/plot)
set(expect ${CMAKE_CURRENT_SOURCE_DIR}/launch/expect_failure.sh)
set(llmft $<TARGET_FILE:llmft>)

add_test(NAME plot_setup COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launch/plot_setup.sh
  ${llmft} ${PROJECT_SOURCE_DIR}/examples/data/val.txt ${plot_dir})
set_tests_properties(plot_setup PROPERTIES FIXTURES_SETUP plot_data TIMEOUT 120)
add_test(NAME plot_two_runs COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launch/plot.sh ${llmft} ${plot_dir})
set_tests_properties(plot_two_runs PROPERTIES FIXTURES_REQUIRED plot_data TIMEOUT 120)

# Bad input: one line naming the file (and line), and no --out directory left behind.
function(plot_failure name pattern)
  add_test(NAME plot_${name} COMMAND bash ${expect} "${pattern}" --one-line
    --absent ${plot_dir}/failed -- ${ARGN})
  set_tests_properties(plot_${name} PROPERTIES FIXTURES_REQUIRED plot_data TIMEOUT 60)
endfunction()
plot_failure(bad_json "bad.jsonl:2: invalid JSON at offset 0"
  ${llmft} plot ${plot_dir}/a.jsonl ${plot_dir}/bad.jsonl --out ${plot_dir}/failed)
plot_failure(not_a_number "string_loss.jsonl:1: \"loss\" is a string, not a number"
  ${llmft} plot ${plot_dir}/string_loss.jsonl --out ${plot_dir}/failed)
plot_failure(no_steps "no_steps.jsonl has no step lines"
  ${llmft} plot ${plot_dir}/no_steps.jsonl --out ${plot_dir}/failed)
plot_failure(missing_file "cannot read metrics file .*absent.jsonl"
  ${llmft} plot ${plot_dir}/absent.jsonl --out ${plot_dir}/failed)
plot_failure(gnuplot_error "gnuplot failed \\(exit 1\\): line 3: unknown or ambiguous terminal"
  bash -c "PATH='${plot_dir}/failing_gnuplot':$PATH exec '${llmft}' plot '${plot_dir}/a.jsonl' --out '${plot_dir}/failed'")
# Open MPI's singleton start looks for ssh or rsh in PATH unless told to use another agent.
plot_failure(gnuplot_missing "cannot run 'gnuplot'.*install it"
  env OMPI_MCA_plm_rsh_agent=/bin/false PATH=${plot_dir}/no_gnuplot
  ${llmft} plot ${plot_dir}/a.jsonl --out ${plot_dir}/failed)

# Every command's --help prints float defaults as written: no float expansion such as
# 0.000300000014 or 9.99999994e-09 (8 or more digits after a point: a float printed to its
# 9 significant digits), and --lr's as 3e-4.
add_test(NAME cli_help_defaults_as_written COMMAND bash -c
  "for command in train eval generate prepare plan export plot; do
     help=$('${llmft}' $command --help) || exit 1
     if grep -nE '[0-9]\\.[0-9]{8,}' <<< \"$help\"; then echo \"in llmft $command --help\"; exit 1; fi
     [[ $command != train ]] || grep -qF -- '--lr arg (=3e-4)' <<< \"$help\" || { echo 'no --lr (=3e-4)'; exit 1; }
   done")
set_tests_properties(cli_help_defaults_as_written PROPERTIES TIMEOUT 60)
