# `llmft prepare` on conversations against transformers' apply_chat_template: token ids and
# assistant-turn loss masks for five template families, and the one-line template errors
# (chat_template_oracle.py). Included from tests/CMakeLists.txt; skipped (77) where
# LLMFT_PYTHON names no Python environment with transformers and tokenizers.
if(LLMFT_PYTHON)
  set(chat_oracle_python ${LLMFT_PYTHON})
else()
  set(chat_oracle_python none)
endif()
add_test(NAME hf_oracle_chat_template COMMAND bash -c
  "[ \"$0\" = none ] && { echo 'no Python environment (LLMFT_PYTHON): skipped'; exit 77; }
   exec \"$0\" \"$1\" \"$2\" \"$3\""
  ${chat_oracle_python} ${CMAKE_CURRENT_LIST_DIR}/chat_template_oracle.py
  $<TARGET_FILE:llmft> ${CMAKE_CURRENT_BINARY_DIR}/chat_template_oracle)
set_tests_properties(hf_oracle_chat_template PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
