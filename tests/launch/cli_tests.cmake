# Command-line behaviour of the llmft binary: bad input fails cleanly with a one-line
# error naming the problem, and a multi-rank job refuses to train without a strategy.
set(cli_dir ${CMAKE_CURRENT_BINARY_DIR}/cli)
set(expect ${CMAKE_CURRENT_SOURCE_DIR}/launch/expect_failure.sh)
set(llmft $<TARGET_FILE:llmft>)

add_test(NAME cli_setup COMMAND bash -c
  "rm -rf '${cli_dir}' && mkdir -p '${cli_dir}' &&
   '${llmft}' prepare --input '${PROJECT_SOURCE_DIR}/examples/data/val.txt' --output '${cli_dir}/val.tok' &&
   head -c 1000 '${cli_dir}/val.tok' > '${cli_dir}/truncated.tok' &&
   echo '{\"architectures\": [\"GPT2LMHeadModel\"], \"vocab_size\": 257, \"n_positions\": 64, \"n_embd\": 100, \"n_layer\": 2, \"n_head\": 3}' > '${cli_dir}/indivisible.json' &&
   echo '{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 64,' > '${cli_dir}/malformed.json' &&
   echo '{\"architectures\": [\"GPT2LMHeadModel\"], \"vocab_size\": 257, \"n_positions\": 64, \"n_embd\": 48, \"n_layer\": 2, \"n_head\": 3}' > '${cli_dir}/three_heads.json' &&
   echo '{\"architectures\": [\"MistralForCausalLM\"], \"hidden_size\": 64}' > '${cli_dir}/unknown_arch.json' &&
   mkdir -p '${cli_dir}/node_a' '${cli_dir}/node_b' && cp '${cli_dir}/val.tok' '${cli_dir}/node_a/' &&
   head -c 4000 '${cli_dir}/val.tok' > '${cli_dir}/node_b/val.tok' &&
   printf '{\"text\": \"fine\"}\\nnot json\\n' > '${cli_dir}/not_json.jsonl' &&
   printf '{\"text\": \"fine\"}\\n{\"prompt\": \"no response\"}\\n' > '${cli_dir}/no_field.jsonl' &&
   : > '${cli_dir}/empty.jsonl'")
set_tests_properties(cli_setup PROPERTIES FIXTURES_SETUP cli_data TIMEOUT 60)

# name | stderr pattern | arguments after `llmft`
set(outputs --absent ${cli_dir}/out --absent ${cli_dir}/metrics.jsonl)
set(train_outputs --save-dir ${cli_dir}/out --metrics ${cli_dir}/metrics.jsonl)
function(cli_failure name pattern)
  add_test(NAME cli_${name} COMMAND bash ${expect} "${pattern}" --one-line ${outputs} -- ${llmft} ${ARGN})
  set_tests_properties(cli_${name} PROPERTIES FIXTURES_REQUIRED cli_data TIMEOUT 60)
endfunction()

cli_failure(unknown_option "unrecognised option '--bogus'" --bogus 1)
cli_failure(missing_data "no_such_file.tok" --data ${cli_dir}/no_such_file.tok ${train_outputs})
cli_failure(truncated_data "truncated.tok.*(size|bytes)" --data ${cli_dir}/truncated.tok ${train_outputs})
cli_failure(seq_len_too_long "--seq-len 1000 is longer than the context"
  --data ${cli_dir}/val.tok --seq-len 1000 ${train_outputs})
cli_failure(indivisible_config "hidden size 100 is not divisible by the number of heads 3"
  --model ${cli_dir}/indivisible.json --data ${cli_dir}/val.tok ${train_outputs})
cli_failure(zero_steps "--steps must be at least 1" --data ${cli_dir}/val.tok --steps 0 ${train_outputs})
cli_failure(device_memory_too_small "will not fit.*--device-memory"
  --data ${cli_dir}/val.tok --device-memory 4MiB ${train_outputs})
cli_failure(bad_memory_size "--device-memory: '12XB' is not a size|unknown size unit"
  --data ${cli_dir}/val.tok --device-memory 12XB ${train_outputs})
cli_failure(vocab_mismatch "vocabulary of 257 but --model gpt2 has 50257"
  --model gpt2 --data ${cli_dir}/val.tok ${train_outputs})
cli_failure(missing_config_file "--config .*cannot read" --config ${cli_dir}/absent.ini)
cli_failure(malformed_config "malformed.json.*invalid JSON at offset"
  --model ${cli_dir}/malformed.json --data ${cli_dir}/val.tok ${train_outputs})
cli_failure(unknown_architecture "unsupported architecture \"MistralForCausalLM\""
  --model ${cli_dir}/unknown_arch.json --data ${cli_dir}/val.tok ${train_outputs})
cli_failure(llama_seq_len_too_long "--seq-len 512 is longer than the context of --model llama-tiny"
  --model llama-tiny --data ${cli_dir}/val.tok --seq-len 512 ${train_outputs})
cli_failure(bad_dtype "--dtype fp8" --data ${cli_dir}/val.tok --dtype fp8 ${train_outputs})
cli_failure(bad_grad_accum_dtype "--grad-accum-dtype bf16: unknown value; use fp32.*or stored"
  --data ${cli_dir}/val.tok --grad-accum-dtype bf16 ${train_outputs})
cli_failure(lomo_grad_accum "--grad-accum 4 with --optimizer lomo.*nothing to accumulate"
  --data ${cli_dir}/val.tok --optimizer lomo --grad-accum 4 ${train_outputs})
cli_failure(unknown_optimizer "--optimizer adam: unknown optimizer"
  --data ${cli_dir}/val.tok --optimizer adam ${train_outputs})
cli_failure(offload_lomo "--offload-optimizer with --optimizer lomo.*nothing to offload"
  --data ${cli_dir}/val.tok --optimizer lomo --offload-optimizer ${train_outputs})
cli_failure(offload_value "--offload-optimizer maybe: use auto, on or off"
  --data ${cli_dir}/val.tok --offload-optimizer=maybe ${train_outputs})
cli_failure(sequence_parallel_without_tp "--sequence-parallel splits the sequence.*needs --tp 2"
  --data ${cli_dir}/val.tok --sequence-parallel ${train_outputs})
cli_failure(host_memory_too_small "will not fit in host memory.*--host-memory 1.00 MiB"
  --data ${cli_dir}/val.tok --offload-optimizer --host-memory 1MiB ${train_outputs})

# prepare: bad datasets name the file and line, and leave no token file behind.
function(prepare_failure name pattern input)
  add_test(NAME cli_prepare_${name} COMMAND bash ${expect} "${pattern}" --one-line
    --absent ${cli_dir}/out.tok -- ${llmft} prepare --input ${input} --output ${cli_dir}/out.tok)
  set_tests_properties(cli_prepare_${name} PROPERTIES FIXTURES_REQUIRED cli_data TIMEOUT 60)
endfunction()
prepare_failure(not_json "not_json.jsonl:2:.*invalid JSON" ${cli_dir}/not_json.jsonl)
prepare_failure(missing_field "no_field.jsonl:2:.*response" ${cli_dir}/no_field.jsonl)
prepare_failure(empty_dataset "empty.jsonl.*the dataset is empty" ${cli_dir}/empty.jsonl)
prepare_failure(missing_input "no_such_input.txt" ${cli_dir}/no_such_input.txt)

# --help lists every option with its default; a config file supplies options and the
# command line overrides them.
# --version: the release on the first line, then this build's devices and communicators
# (tests/launch/build_report_test.cpp checks the lines); any subcommand takes it.
add_test(NAME cli_version COMMAND bash -c
  "for command in '' plan prepare generate export; do
     out=$('${llmft}' $command --version 2>&1) || { echo \"$out\"; exit 1; }
     echo \"$out\" | head -1 | grep -qx 'llmft ${PROJECT_VERSION}' || { echo \"$out\"; exit 1; }
     echo \"$out\" | grep -q '^  cpu: ' && echo \"$out\" | grep -q '^  mpi: ' || exit 1
   done")
set_tests_properties(cli_version PROPERTIES TIMEOUT 60)
# --threads 0: each rank's share of the CPUs (tests/launch/threads_share.sh).
add_test(NAME cli_threads_share COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launch/threads_share.sh
  ${llmft} ${cli_dir}/val.tok ${MPIEXEC_EXECUTABLE} ${LLMFT_MPI_FLAGS})
set_tests_properties(cli_threads_share PROPERTIES FIXTURES_REQUIRED cli_data TIMEOUT 120)
# Processed tokens/s, MFU and ETA by their definitions on prompt/response data
# (tests/launch/throughput.sh).
add_test(NAME cli_throughput COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launch/throughput.sh
  ${llmft} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/throughput
  ${MPIEXEC_EXECUTABLE} ${LLMFT_MPI_FLAGS})
set_tests_properties(cli_throughput PROPERTIES TIMEOUT 120)
add_test(NAME cli_help COMMAND ${llmft} --help)
set_tests_properties(cli_help PROPERTIES
  PASS_REGULAR_EXPRESSION "--lr-schedule arg \\(=cosine\\).*--device-memory arg \\(=0\\)")
add_test(NAME cli_config_file COMMAND bash -c
  "printf 'steps = 1\\nseq-len = 16\\n' > '${cli_dir}/run.ini' &&
   '${llmft}' --config '${cli_dir}/run.ini' --data '${cli_dir}/val.tok' --steps 2 --micro-batch 2 --threads 1")
set_tests_properties(cli_config_file PROPERTIES FIXTURES_REQUIRED cli_data TIMEOUT 120
  PASS_REGULAR_EXPRESSION "windows of 16 tokens.*step +2/2")

cli_failure(bad_zero_stage "--zero 4: ZeRO stages are 0, 1, 2 and 3"
  --data ${cli_dir}/val.tok --zero 4 ${train_outputs})
cli_failure(unknown_communicator "--comm bogus: unknown communicator; this build has: mpi"
  --data ${cli_dir}/val.tok --comm bogus ${train_outputs})

# Two ranks with ZeRO-3 train end to end through the llmft binary, evaluate, and save
# (gathering the sharded weights on every rank, writing on rank 0).
add_test(NAME cli_zero3_two_ranks COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2
  ${LLMFT_MPI_FLAGS} ${llmft} --model llama-tiny --data ${cli_dir}/val.tok
  --val-data ${cli_dir}/val.tok --eval-windows 4 --zero 3 --dtype bf16 --steps 3 --seq-len 32
  --micro-batch 2 --threads 1 --log-every 1 --save-dir ${cli_dir}/zero3_model)
set_tests_properties(cli_zero3_two_ranks PROPERTIES FIXTURES_REQUIRED cli_data TIMEOUT 120
  PASS_REGULAR_EXPRESSION "2 data-parallel ranks x 2 x 1 windows.*step +3/3.*saved the model")

# Tensor parallelism through the binary: 2 ranks as one tp=2 replica train, evaluate and
# save a whole model (the slices gathered); a tp that does not divide the ranks or the
# heads is refused before training, naming the sizes that work.
add_test(NAME cli_tp_two_ranks COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2
  ${LLMFT_MPI_FLAGS} ${llmft} --model llama-tiny --data ${cli_dir}/val.tok
  --val-data ${cli_dir}/val.tok --eval-windows 4 --tp 2 --steps 3 --seq-len 32
  --micro-batch 2 --threads 1 --log-every 1 --save-dir ${cli_dir}/tp_model)
set_tests_properties(cli_tp_two_ranks PROPERTIES FIXTURES_REQUIRED cli_data TIMEOUT 120
  PASS_REGULAR_EXPRESSION "layout dp 1 x tp 2.*step +3/3.*saved the model")
cli_failure(tp_world "--tp 3 does not divide the number of ranks \\(1\\); with 1 ranks.*use --tp 1"
  --data ${cli_dir}/val.tok --tp 3 ${train_outputs})
add_test(NAME cli_tp_heads COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2
  ${LLMFT_MPI_FLAGS} ${llmft} --model ${cli_dir}/three_heads.json --data ${cli_dir}/val.tok
  --tp 2 --seq-len 32 --threads 1)
set_tests_properties(cli_tp_heads PROPERTIES FIXTURES_REQUIRED cli_data TIMEOUT 60
  PASS_REGULAR_EXPRESSION "--tp 2 does not divide the attention heads \\(3\\).*use --tp 1")
add_test(NAME cli_sequence_parallel_rows COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2
  ${LLMFT_MPI_FLAGS} ${llmft} --model llama-tiny --data ${cli_dir}/val.tok --tp 2
  --sequence-parallel --seq-len 33 --micro-batch 1 --threads 1)
set_tests_properties(cli_sequence_parallel_rows PROPERTIES FIXTURES_REQUIRED cli_data TIMEOUT 60
  PASS_REGULAR_EXPRESSION "a micro-batch's 33 rows .* must be a multiple of --tp"
  FAIL_REGULAR_EXPRESSION "step +1/")
# Sequence parallelism through the binary (tests/launch/sequence_parallel.sh).
add_test(NAME cli_sequence_parallel_two_ranks COMMAND bash
  ${CMAKE_CURRENT_SOURCE_DIR}/launch/sequence_parallel.sh ${llmft} ${cli_dir}/val.tok
  ${cli_dir}/sequence_parallel ${MPIEXEC_EXECUTABLE} ${LLMFT_MPI_FLAGS})
set_tests_properties(cli_sequence_parallel_two_ranks PROPERTIES FIXTURES_REQUIRED cli_data
  TIMEOUT 120)

# The planner from the command line: `llmft plan` refuses a model that fits no layout
# (naming the closest one), and --auto-plan on 2 ranks plans (calibrating into a cache
# of its own), trains the chosen layout under the memory budget (with the optimizer kept
# on the device only tp 2 fits it), and stops before any training when nothing fits.
cli_failure(plan_no_fit "no layout of llama-65b.*fits 8 x rtx3090.*The smallest"
  plan --model llama-65b --gpus 8 --gpu rtx3090 --optimizer adamw --dtype fp16 --seq-len 512
  --global-batch 8)
# The GPU time model: on the h200 preset the predicted MFU comes from pricing each kernel,
# with where the step's time goes (tests/launch/plan_gpu_time_model.sh).
add_test(NAME cli_plan_gpu_time_model COMMAND bash
  ${CMAKE_CURRENT_SOURCE_DIR}/launch/plan_gpu_time_model.sh ${llmft})
set_tests_properties(cli_plan_gpu_time_model PROPERTIES TIMEOUT 60)
cli_failure(plan_bad_tp "--tp 3 does not divide"
  plan --model llama-7b --gpus 8 --gpu a100-80g --seq-len 512 --global-batch 8 --tp 3)
# Sequence parallelism forced on where no layout can use it names the option.
cli_failure(plan_sequence_parallel_tp1 "--sequence-parallel=on splits.*--tp 1 leaves no such group"
  plan --model llama-7b --gpus 8 --gpu a100-80g --seq-len 512 --global-batch 8 --tp 1
  --sequence-parallel=on)
cli_failure(plan_sequence_parallel_rows "no layout keeps the global batch.*--sequence-parallel=on needs"
  plan --model llama-7b --gpus 2 --gpu a100-80g --seq-len 511 --global-batch 2 --micro-batch 1
  --sequence-parallel=on)
cli_failure(auto_plan_sequence_parallel_tp1 "--sequence-parallel=on splits.*--tp 1"
  --auto-plan --plan-only --no-calibrate --data ${cli_dir}/val.tok --tp 1 --sequence-parallel=on
  ${train_outputs})
cli_failure(plan_only_needs_auto_plan "--plan-only and --plan-json need --auto-plan"
  --data ${cli_dir}/val.tok --plan-only ${train_outputs})
add_test(NAME cli_auto_plan_two_ranks COMMAND ${CMAKE_COMMAND} -E env
  LLMFT_CALIBRATION_CACHE=${cli_dir}/calibration.json
  ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${LLMFT_MPI_FLAGS} ${llmft} --auto-plan
  --model llama-tiny --data ${cli_dir}/val.tok --seq-len 32 --global-batch 8
  --device-memory 9MiB --offload-optimizer=off --steps 2 --threads 1 --log-every 1
  --plan-json ${cli_dir}/plan.json)
set_tests_properties(cli_auto_plan_two_ranks PROPERTIES FIXTURES_REQUIRED cli_data TIMEOUT 120
  PASS_REGULAR_EXPRESSION "chosen: dp 1 x tp 2.*layout dp 1 x tp 2.*step +2/2")
add_test(NAME cli_auto_plan_no_fit COMMAND ${CMAKE_COMMAND} -E env
  LLMFT_CALIBRATION_CACHE=${cli_dir}/calibration.json
  ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${LLMFT_MPI_FLAGS} ${llmft} --auto-plan
  --model llama-tiny --data ${cli_dir}/val.tok --seq-len 32 --global-batch 8
  --device-memory 1MiB --steps 2 --threads 1)
set_tests_properties(cli_auto_plan_no_fit PROPERTIES FIXTURES_REQUIRED cli_data TIMEOUT 120
  PASS_REGULAR_EXPRESSION "error: no layout of llama-tiny.*fits"
  FAIL_REGULAR_EXPRESSION "step +1/")

# The ablation script end to end on 2 ranks (one layout, so no timing verdict can flake):
# it plans, trains, and writes the CSV with the measured peaks equal to the predictions,
# the device's and (the optimizer offloaded) the host pool's, and its summary names the
# calibration the plan used (rate, date, load).
add_test(NAME ablate_script COMMAND bash -c
  "LLMFT_CALIBRATION_CACHE='${cli_dir}/calibration.json' LLMFT_BUILD_DIR='${CMAKE_BINARY_DIR}' \
   bash '${PROJECT_SOURCE_DIR}/examples/ablate.sh' --ranks 2 --steps 2 --threads 1 \
     --out '${cli_dir}/ablation' --layouts 1,0,4,1,on,on -- --data '${cli_dir}/val.tok' \
     --model gpt2-tiny --seq-len 32 --global-batch 8 --tp 1 --zero 0 --micro-batch 4 \
     --activation-checkpointing --offload-optimizer=on && \
   awk -F, '$1 == \"dp2-tp1-z0-mb4x1-ckpt4-offload\" && $10 == 1 && $11 > 0 && $11 == $12 && \
            $18 > 0 && $18 == $19' \
     '${cli_dir}/ablation/ablation.csv' | grep -q . && \
   grep -q '^calibration: .* GFLOP/s per rank (.*, load .* CPUs)' '${cli_dir}/ablation/ablation.txt'")
set_tests_properties(ablate_script PROPERTIES FIXTURES_REQUIRED cli_data TIMEOUT 300)

# The windows a step trains on and its loss do not depend on the layout: nine layouts on
# 1, 2 and 4 ranks give the same loss curves and predicted peaks
# (tests/launch/layout_invariance.sh).
add_test(NAME layout_invariance COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launch/layout_invariance.sh
  ${llmft} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/layout_invariance
  ${MPIEXEC_EXECUTABLE} ${LLMFT_MPI_FLAGS})
set_tests_properties(layout_invariance PROPERTIES TIMEOUT 300)
# The same on the GPU, 1, 2 and 4 ranks sharing it; skipped (77) where none can start.
add_test(NAME layout_invariance_cuda COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launch/layout_invariance.sh
  ${llmft} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/layout_invariance_cuda
  ${MPIEXEC_EXECUTABLE} ${LLMFT_MPI_FLAGS})
set_tests_properties(layout_invariance_cuda PROPERTIES ENVIRONMENT LLMFT_TEST_DEVICE=cuda
  SKIP_RETURN_CODE 77 TIMEOUT 300)

# --device cuda either trains (a GPU is there) or stops at once with one line saying why
# (a build without CUDA, no driver, no device), never a crash.
add_test(NAME cli_cuda_device COMMAND bash -c
  "out=$('${llmft}' --device cuda --model llama-tiny --data '${cli_dir}/val.tok' --seq-len 16 --steps 1 --log-every 1 2>&1); code=$?
   echo \"$out\"
   if [ $code -eq 0 ]; then echo \"$out\" | grep -q 'step *1/1'; exit $?; fi
   [ $code -lt 128 ] && [ $(echo \"$out\" | wc -l) -eq 1 ] &&
     echo \"$out\" | grep -Eq 'no NVIDIA driver|no CUDA device|no CUDA backend'")
set_tests_properties(cli_cuda_device PROPERTIES FIXTURES_REQUIRED cli_data TIMEOUT 120)

# Training-state checkpoints (README "Checkpoints"): resume in the same layout bit for bit
# and in other layouts within the parity tolerance, the files read by h5py where the
# Python environment is there (tests/launch/checkpoint_resume.sh); signals save and exit
# 75 (checkpoint_signals.sh); damaged or mismatched checkpoints and a full disk fail
# cleanly (checkpoint_faults.sh).
if(LLMFT_PYTHON)
  set(checkpoint_python ${LLMFT_PYTHON})
else()
  set(checkpoint_python none)
endif()
add_test(NAME checkpoint_resume COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launch/checkpoint_resume.sh
  ${llmft} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/checkpoint_resume ${checkpoint_python}
  ${MPIEXEC_EXECUTABLE} ${LLMFT_MPI_FLAGS})
set_tests_properties(checkpoint_resume PROPERTIES TIMEOUT 600)
# The same-layout resumes on the GPU, bit for bit; skipped (77) where none can start.
add_test(NAME checkpoint_resume_cuda COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launch/checkpoint_resume.sh
  ${llmft} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/checkpoint_resume_cuda ${checkpoint_python}
  ${MPIEXEC_EXECUTABLE} ${LLMFT_MPI_FLAGS})
set_tests_properties(checkpoint_resume_cuda PROPERTIES ENVIRONMENT LLMFT_TEST_DEVICE=cuda
  SKIP_RETURN_CODE 77 TIMEOUT 600)
add_test(NAME checkpoint_signals COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launch/checkpoint_signals.sh
  ${llmft} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/checkpoint_signals
  ${MPIEXEC_EXECUTABLE} ${LLMFT_MPI_FLAGS})
# RUN_SERIAL: its signals to mpiexec give the ranks 3 s to finish a step and save.
set_tests_properties(checkpoint_signals PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)
add_test(NAME checkpoint_faults COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launch/checkpoint_faults.sh
  ${llmft} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/checkpoint_faults)
set_tests_properties(checkpoint_faults PROPERTIES TIMEOUT 300)
# A resumed run does not read --init-from (the checkpoint replaces its weights): it resumes
# past a cut --init-from file, with the first run's losses (resume_skips_init_from.sh).
add_test(NAME resume_skips_init_from COMMAND bash
  ${CMAKE_CURRENT_SOURCE_DIR}/launch/resume_skips_init_from.sh ${llmft} ${PROJECT_SOURCE_DIR}
  ${CMAKE_CURRENT_BINARY_DIR}/resume_skips_init_from ${MPIEXEC_EXECUTABLE} ${LLMFT_MPI_FLAGS})
set_tests_properties(resume_skips_init_from PROPERTIES TIMEOUT 120)
# A checkpoint write that fails on 2 ranks ends the job promptly, its error printed once
# where the ranks can agree, and no partial file left (checkpoint_full_disk.sh).
add_test(NAME checkpoint_full_disk COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launch/checkpoint_full_disk.sh
  ${llmft} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/checkpoint_full_disk
  ${MPIEXEC_EXECUTABLE} ${LLMFT_MPI_FLAGS})
set_tests_properties(checkpoint_full_disk PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
# Damage that Fletcher32 does not cover (a value rewritten through h5py, a stored type, an
# attribute) is refused on resume and export (checkpoint_damage.sh; needs h5py).
add_test(NAME checkpoint_damage COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launch/checkpoint_damage.sh
  ${llmft} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/checkpoint_damage ${checkpoint_python})
set_tests_properties(checkpoint_damage PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
# `llmft export` of a run's last checkpoint writes the files --save-dir wrote, byte for byte.
add_test(NAME checkpoint_export COMMAND bash -c
  "set -e; d='${cli_dir}/export'; rm -rf \"$d\"
   '${llmft}' --model gpt2-tiny --data '${cli_dir}/val.tok' --seq-len 32 --micro-batch 2 --steps 3 --dtype bf16 --threads 1 --checkpoint-dir \"$d/ckpt\" --save-dir \"$d/saved\" > /dev/null
   '${llmft}' export --checkpoint \"$d/ckpt\" --save-dir \"$d/exported\"
   cmp \"$d/saved/model.safetensors\" \"$d/exported/model.safetensors\"
   cmp \"$d/saved/config.json\" \"$d/exported/config.json\"")
set_tests_properties(checkpoint_export PROPERTIES FIXTURES_REQUIRED cli_data TIMEOUT 120)
# A build without NCCL (the sanitizer build, or no CUDA toolkit) does not know it at all.
cli_failure(nccl_on_cpu "--comm nccl needs --device cuda|--comm nccl: unknown communicator; this build has: mpi"
  --data ${cli_dir}/val.tok --comm nccl ${train_outputs})
cli_failure(resume_weights_only_alone "--resume-weights-only needs --resume"
  --data ${cli_dir}/val.tok --resume-weights-only ${train_outputs})
cli_failure(checkpoint_every_without_dir "--checkpoint-every needs --checkpoint-dir"
  --data ${cli_dir}/val.tok --checkpoint-every 5 ${train_outputs})
cli_failure(resume_missing "--resume .*absent.h5: no such checkpoint file or directory"
  --data ${cli_dir}/val.tok --resume=${cli_dir}/absent.h5 ${train_outputs})
cli_failure(export_missing "--checkpoint .*absent.h5: no such checkpoint"
  export --checkpoint ${cli_dir}/absent.h5 --save-dir ${cli_dir}/out)

# The divergence policy (README "When things go wrong"): a non-finite loss or gradient norm,
# or too many fp16 overflows in a row, ends the run with exit code 65 and leaves the model
# saved before in the same --save-dir as it was (tests/launch/divergence.sh).
add_test(NAME divergence COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launch/divergence.sh
  ${llmft} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/divergence)
set_tests_properties(divergence PROPERTIES TIMEOUT 300)

# Ranks that were started with different settings stop before their first collective, with
# one error naming the setting and each rank's value (tests/launch/expect_failure.sh: no
# crash, no signal); an error every rank finds the same way is printed once, by rank 0,
# without MPI_Abort's report (launch/main.cpp, comm/job_failure.h).
set(two_programs ${MPIEXEC_EXECUTABLE} ${LLMFT_MPI_FLAGS} ${MPIEXEC_NUMPROC_FLAG} 1 ${llmft}
  --data ${cli_dir}/val.tok --seq-len 16 --steps 1 --threads 1)
add_test(NAME cli_ranks_disagree_zero COMMAND bash ${expect}
  "^error: the ranks do not agree on --zero: rank 0 has \"0\", rank 1 has \"3\"" --once --
  ${two_programs} : ${MPIEXEC_NUMPROC_FLAG} 1 ${llmft} --data ${cli_dir}/val.tok --seq-len 16
  --steps 1 --threads 1 --zero 3)
add_test(NAME cli_ranks_disagree_model COMMAND bash ${expect}
  "^error: the ranks do not agree on --model: rank 0 has \"gpt2-tiny\", rank 1 has \"llama-tiny\"" --once --
  ${two_programs} --model gpt2-tiny : ${MPIEXEC_NUMPROC_FLAG} 1 ${llmft}
  --data ${cli_dir}/val.tok --seq-len 16 --steps 1 --threads 1 --model llama-tiny)
# The same --data path names different files on the two "nodes" (working directories).
add_test(NAME cli_ranks_disagree_data COMMAND bash ${expect}
  "^error: the ranks do not agree on --data file: rank 0 has \"[0-9]+ bytes.*rank 1 has \"4000 bytes" --once --
  ${MPIEXEC_EXECUTABLE} ${LLMFT_MPI_FLAGS} ${MPIEXEC_NUMPROC_FLAG} 1 --wdir ${cli_dir}/node_a
  ${llmft} --data val.tok --seq-len 16 --steps 1 --threads 1 : ${MPIEXEC_NUMPROC_FLAG} 1
  --wdir ${cli_dir}/node_b ${llmft} --data val.tok --seq-len 16 --steps 1 --threads 1)
set_tests_properties(cli_ranks_disagree_zero cli_ranks_disagree_model cli_ranks_disagree_data
  PROPERTIES FIXTURES_REQUIRED cli_data TIMEOUT 60)
add_test(NAME cli_error_printed_once COMMAND bash ${expect} "^error: .*no_such_file.tok" --once
  -- ${MPIEXEC_EXECUTABLE} ${LLMFT_MPI_FLAGS} ${MPIEXEC_NUMPROC_FLAG} 4 ${llmft}
  --data ${cli_dir}/no_such_file.tok --threads 1)
set_tests_properties(cli_error_printed_once PROPERTIES FIXTURES_REQUIRED cli_data TIMEOUT 60)

# Output destinations fail at startup when they cannot hold the model, and a metrics file
# that cannot grow costs a warning, not the run (tests/launch/output_space.sh; the small
# filesystem part is skipped where a tmpfs cannot be mounted).
add_test(NAME output_space COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launch/output_space.sh
  ${llmft} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/output_space)
set_tests_properties(output_space PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)
# Progress lines of long operations in a log, with --quiet and at a terminal
# (tests/launch/progress.sh).
add_test(NAME cli_progress COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launch/progress.sh
  ${llmft} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/progress
  ${MPIEXEC_EXECUTABLE} ${LLMFT_MPI_FLAGS})
set_tests_properties(cli_progress PROPERTIES TIMEOUT 300)
