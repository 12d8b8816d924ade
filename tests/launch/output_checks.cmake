# An output is never an input of the same job and never a node that renaming a file over it
# would destroy (docs/REFERENCE.md, "Checked at startup"): each case is one clean line naming both
# paths, and the input or node is left as it was. Uses cli_failure's `expect` and `outputs`
# and the cli_data fixture of cli_tests.cmake.

set(out_dir ${cli_dir}/outputs)
add_test(NAME output_checks_setup COMMAND bash -c
  "set -e; d='${out_dir}'; rm -rf \"$d\"; mkdir -p \"$d/model\"
   cp '${PROJECT_SOURCE_DIR}/examples/data/val.txt' \"$d/x.txt\"
   ln -s x.txt \"$d/link.txt\"
   cp '${cli_dir}/val.tok' \"$d/train.tok\"
   cp '${cli_dir}/val.tok' \"$d/metrics_is_data.tok\"
   mknod \"$d/node\" c 1 3 2>/dev/null || mkfifo \"$d/node\"")
set_tests_properties(output_checks_setup PROPERTIES FIXTURES_SETUP output_files
  FIXTURES_REQUIRED cli_data TIMEOUT 60)

# name | stderr pattern | KEEP paths the refused command leaves as they were | ARGS after `llmft`
set(unchanged ${CMAKE_CURRENT_SOURCE_DIR}/launch/unchanged_by.sh)
function(output_refused name pattern)
  cmake_parse_arguments(ARG "" "" "KEEP;ARGS" ${ARGN})
  add_test(NAME cli_${name} COMMAND bash ${unchanged} ${ARG_KEEP} --
    bash ${expect} "${pattern}" --one-line ${outputs} -- ${llmft} ${ARG_ARGS})
  set_tests_properties(cli_${name} PROPERTIES FIXTURES_REQUIRED "cli_data;output_files" TIMEOUT 60)
endfunction()

# Short runs, so that the unfixed code, which trains, fails quickly.
set(short_run --steps 1 --seq-len 16 --micro-batch 2 --threads 1)
output_refused(output_is_input "--output .*x.txt is the same file as --input .*x.txt"
  KEEP ${out_dir}/x.txt ARGS prepare --input ${out_dir}/x.txt --output ${out_dir}/x.txt)
output_refused(output_is_input_through_symlink "--output .*x.txt is the same file as --input .*link.txt"
  KEEP ${out_dir}/x.txt ${out_dir}/link.txt
  ARGS prepare --input ${out_dir}/link.txt --output ${out_dir}/x.txt)
output_refused(metrics_is_data "--metrics .*metrics_is_data.tok is the same file as --data"
  KEEP ${out_dir}/metrics_is_data.tok
  ARGS --data ${out_dir}/metrics_is_data.tok --metrics ${out_dir}/./metrics_is_data.tok ${short_run})
output_refused(prepare_output_node "--output .*node is a (character device|FIFO).*renaming"
  KEEP ${out_dir}/node ${out_dir}/x.txt
  ARGS prepare --input ${out_dir}/x.txt --output ${out_dir}/node)
output_refused(plan_json_node "--plan-json .*node is a (character device|FIFO).*renaming"
  KEEP ${out_dir}/node
  ARGS --data ${out_dir}/train.tok --auto-plan --plan-only --no-calibrate --threads 1
       --plan-json ${out_dir}/node)
output_refused(save_dir_is_init_from "--save-dir .*model is the directory --init-from .*model is read from"
  KEEP ${out_dir}/model
  ARGS --data ${out_dir}/train.tok --init-from ${out_dir}/model --save-dir ${out_dir}/model ${short_run})
output_refused(save_dir_is_checkpoint_dir "--save-dir .*run is also --checkpoint-dir .*run"
  KEEP ${out_dir}/train.tok
  ARGS --data ${out_dir}/train.tok --save-dir ${out_dir}/run --checkpoint-dir ${out_dir}/run ${short_run})
