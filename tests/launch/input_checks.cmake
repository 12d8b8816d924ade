# Inputs are validated where they enter (docs/REFERENCE.md, "Checked at startup"): token ids against
# the vocabulary, config.json numbers against ModelLimits, options against their ranges
# (also in a --config file the command line overrides), products of options against
# overflow, thread counts against the machine. Each is one clean line naming the input.
# Uses cli_failure and the cli_data fixture of cli_tests.cmake.

add_test(NAME input_checks_setup COMMAND bash -c
  "set -e; d='${cli_dir}/inputs'; rm -rf \"$d\"; mkdir -p \"$d\"
   cp '${cli_dir}/val.tok' \"$d/bad_id.tok\"
   printf '\\x60\\xea' | dd of=\"$d/bad_id.tok\" bs=1 seek=40 conv=notrunc status=none
   gpt2='\"architectures\": [\"GPT2LMHeadModel\"], \"vocab_size\": 257, \"n_positions\": 64'
   echo \"{$gpt2, \\\"n_embd\\\": 4294967424, \\\"n_layer\\\": 2, \\\"n_head\\\": 4}\" > \"$d/wrapped.json\"
   echo \"{$gpt2, \\\"n_embd\\\": 128, \\\"n_layer\\\": 1000000000, \\\"n_head\\\": 4}\" > \"$d/layers.json\"
   echo \"{$gpt2, \\\"n_embd\\\": 128, \\\"n_layer\\\": 2, \\\"n_head\\\": 4, \\\"layer_norm_epsilon\\\": 1e300}\" > \"$d/epsilon.json\"
   echo '{\"architectures\": [\"LlamaForCausalLM\"], \"vocab_size\": 257, \"hidden_size\": 48, \"intermediate_size\": 72, \"num_hidden_layers\": 2, \"num_attention_heads\": 6, \"max_position_embeddings\": 64, \"rope_theta\": -1}' > \"$d/theta.json\"
   printf 'steps = 0\\n' > \"$d/bad_steps.ini\"
   mkdir -p \"$d/a_directory\"
   small=\"$gpt2, \\\"n_embd\\\": 128, \\\"n_head\\\": 4\"
   echo \"{$small, \\\"n_layer\\\": 2, \\\"frobnicate\\\": 3}\" > \"$d/unknown_key.json\"
   echo \"{$small, \\\"n_layer\\\": 2, \\\"tie_word_embedding\\\": true}\" > \"$d/key_typo.json\"
   echo \"{$small, \\\"n_layer\\\": 1e400}\" > \"$d/huge.json\"
   printf '\\xef\\xbb\\xbf{%s, \"n_layer\": 2}\\n' \"$small\" > \"$d/bom.json\"
   echo '{\"version\": \"1.0\", \"added_tokens\": [], \"pre_tokenizer\": null}' > \"$d/no_model.json\"
   echo '{\"model\": {\"type\": \"Unigram\", \"unk_id\": 0, \"vocab\": [[\"a\", 0.0]]}}' > \"$d/unigram.json\"
   echo '{\"model\": {\"type\": \"WordPiece\", \"vocab\": {\"a\": 0}}, \"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"}}' > \"$d/wordpiece.json\"
   printf 'fine line\\nbad \\xff byte\\n' > \"$d/latin1.txt\"
   printf '{\"text\": \"fine\"}\\n{\"text\": \"cut \\xc3\"}\\n' > \"$d/latin1.jsonl\"")
set_tests_properties(input_checks_setup PROPERTIES FIXTURES_SETUP input_files
  FIXTURES_REQUIRED cli_data TIMEOUT 60)

set(inputs ${cli_dir}/inputs)
function(input_failure name pattern)
  cli_failure(${name} "${pattern}" ${ARGN})
  set_tests_properties(cli_${name} PROPERTIES FIXTURES_REQUIRED "cli_data;input_files")
endfunction()

# Token ids (a vocab-257 file holding 60000 trained with a zero embedding and logit 0).
input_failure(token_outside_vocabulary
  "bad_id.tok' holds token id 60000 at token 4 \\(byte offset 40\\), outside its vocabulary of 257"
  --data ${inputs}/bad_id.tok ${train_outputs})
# config.json numbers (n_embd 2^32 + 128 trained "hidden 128"; 10^9 layers ran into bad_alloc).
input_failure(config_size_wraps "wrapped.json: key \"n_embd\" is 4294967424; it must be an integer in \\[1, 131072\\]"
  --model ${inputs}/wrapped.json --data ${cli_dir}/val.tok ${train_outputs})
input_failure(config_too_many_layers "layers.json: key \"n_layer\" is 1000000000"
  --model ${inputs}/layers.json --data ${cli_dir}/val.tok ${train_outputs})
input_failure(config_epsilon "epsilon.json: key \"layer_norm_epsilon\" is 1e\\+300"
  --model ${inputs}/epsilon.json --data ${cli_dir}/val.tok ${train_outputs})
input_failure(config_rope_theta "rope_theta -1 must be a positive finite number"
  --model ${inputs}/theta.json --data ${cli_dir}/val.tok ${train_outputs})
# Options.
input_failure(step_overflows "one step would hold 34359738368 tokens"
  --data ${cli_dir}/val.tok --seq-len 16 --micro-batch 2 --grad-accum 1073741824 ${train_outputs})
input_failure(too_many_threads "--threads 100000: this machine has [0-9]+ CPUs online"
  --data ${cli_dir}/val.tok --threads 100000 ${train_outputs})
input_failure(eps_infinite "--eps must be a positive finite number" --data ${cli_dir}/val.tok --eps inf ${train_outputs})
input_failure(clip_negative "--clip-grad must be a finite number >= 0"
  --data ${cli_dir}/val.tok --clip-grad -1 ${train_outputs})
input_failure(loss_scale_infinite "--initial-loss-scale must be a finite number >= 1"
  --data ${cli_dir}/val.tok --dtype fp16 --initial-loss-scale inf ${train_outputs})
input_failure(seed_negative "--seed -1: a seed is a whole number from 0 to 18446744073709551615"
  --data ${cli_dir}/val.tok --seed=-1 ${train_outputs})
input_failure(max_loss_bad "--max-loss -3: give auto \\(20 x ln\\(vocabulary\\)\\), none, or a positive number"
  --data ${cli_dir}/val.tok --max-loss=-3 ${train_outputs})
input_failure(config_is_directory "--config .*a_directory: not a regular file"
  --config ${inputs}/a_directory --data ${cli_dir}/val.tok ${train_outputs})
# A bad value in the ini file is an error even though the command line overrides it.
input_failure(config_file_value_masked "--config .*bad_steps.ini: --steps must be at least 1"
  --config ${inputs}/bad_steps.ini --steps 2 --data ${cli_dir}/val.tok ${train_outputs})
input_failure(generate_seed_negative "--seed -1: a seed is a whole number"
  generate --checkpoint ${inputs} --seed=-1)
# config.json keys llmft does not know (were accepted silently), numbers beyond a double
# (said "is null") and a byte-order mark (said "invalid JSON at offset 0" only).
input_failure(config_unknown_key "unknown_key.json: unknown key \"frobnicate\": not a key that llmft reads"
  --model ${inputs}/unknown_key.json --data ${cli_dir}/val.tok ${train_outputs})
input_failure(config_key_typo "key_typo.json: unknown key \"tie_word_embedding\" \\(did you mean \"tie_word_embeddings\"\\?\\)"
  --model ${inputs}/key_typo.json --data ${cli_dir}/val.tok ${train_outputs})
input_failure(config_number_out_of_range "huge.json: invalid JSON at offset [0-9]+: the number 1e400 of key \"n_layer\" is out of range"
  --model ${inputs}/huge.json --data ${cli_dir}/val.tok ${train_outputs})
input_failure(config_byte_order_mark "bom.json: invalid JSON at offset 0: the text starts with a UTF-8 byte-order mark"
  --model ${inputs}/bom.json --data ${cli_dir}/val.tok ${train_outputs})
# A tokenizer.json without its model was read as a vocab.json ('token "version" has id
# "1.0"'); Unigram and WordPiece models were refused by their pre-tokenizer.
set(prepare_val prepare --input ${PROJECT_SOURCE_DIR}/examples/data/val.txt --output ${cli_dir}/out.tok)
input_failure(tokenizer_without_model "no_model.json has no \"model\" object, which holds a tokenizer.json's vocabulary and merges"
  ${prepare_val} --tokenizer ${inputs}/no_model.json)
input_failure(tokenizer_unigram "unigram.json: model.type is \"Unigram\", not \"BPE\": llmft reads BPE models only"
  ${prepare_val} --tokenizer ${inputs}/unigram.json)
input_failure(tokenizer_wordpiece "wordpiece.json: model.type is \"WordPiece\", not \"BPE\": llmft reads BPE models only"
  ${prepare_val} --tokenizer ${inputs}/wordpiece.json)
# Invalid UTF-8 was tokenized without a word; now the file, line and byte offset.
input_failure(prepare_invalid_utf8_text "latin1.txt' line 2, byte offset 14: byte 0xFF is not UTF-8 text"
  prepare --input ${inputs}/latin1.txt --output ${cli_dir}/out.tok)
input_failure(prepare_invalid_utf8_jsonl "latin1.jsonl' line 2, byte offset 31: byte 0xC3 is not UTF-8 text"
  prepare --input ${inputs}/latin1.jsonl --output ${cli_dir}/out.tok)
# NaN said "must not be negative"; a negative number after an option with an optional
# value was an unknown option ("unrecognised option '-3'"); more blocks than the model's
# and one-token windows were accepted.
input_failure(generate_temperature_nan "--temperature must be a finite number >= 0, 0 for greedy \\(got nan\\)"
  generate --checkpoint ${inputs} --temperature nan)
input_failure(min_lr_nan "--min-lr must be a finite number >= 0 \\(got nan\\)"
  --data ${cli_dir}/val.tok --min-lr nan ${train_outputs})
input_failure(checkpointing_negative "--activation-checkpointing -3: give all, none, or how many of the first blocks to checkpoint \\(a whole number from 0 to the model's blocks\\)"
  --data ${cli_dir}/val.tok --activation-checkpointing -3 ${train_outputs})
input_failure(checkpointing_beyond_blocks "--activation-checkpointing 99: the model has 4 blocks; give 0 to 4, or all"
  --data ${cli_dir}/val.tok --activation-checkpointing 99 ${train_outputs})
input_failure(plan_checkpointing_beyond_blocks
  "--activation-checkpointing 99: the model has 4 blocks; give 0 to 4, or all"
  plan --model gpt2-tiny --gpus 1 --gpu h100-80g --activation-checkpointing 99)
input_failure(seq_len_one "--seq-len 1: a window needs at least 2 tokens .*; use --seq-len 2 or more"
  --data ${cli_dir}/val.tok --seq-len 1 ${train_outputs})

# A data file cut short under a running job (was SIGBUS).
add_test(NAME data_changed_under_job COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launch/data_changed.sh
  ${llmft} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/data_changed)
set_tests_properties(data_changed_under_job PROPERTIES TIMEOUT 120)
