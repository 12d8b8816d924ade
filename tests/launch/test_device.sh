# Sourced by the launch tests that run on LLMFT_TEST_DEVICE when it is set (e.g. cuda):
# sets `device` to the options every run then takes (the ranks sharing the one GPU:
# --share-devices, MPI through host copies; a collective gives up within a minute,
# naming itself, well inside gpu_check's bound), after one probe run. Where the device
# cannot start here (no driver, no device, a build without it) the test exits 77
# (skipped); any other failure of the probe is a failure. Unset: `device` is empty.
# usage: source test_device.sh LLMFT TOKEN_FILE WORK_DIR
device=()
if [[ -n ${LLMFT_TEST_DEVICE:-} ]]; then
  device=(--device "$LLMFT_TEST_DEVICE" --share-devices --comm-timeout 60)
  if ! "$1" "${device[@]}" --model llama-tiny --data "$2" --seq-len 16 --steps 1 \
    > "$3/probe.log" 2>&1; then
    if grep -Eq "cannot run CUDA|no CUDA device is visible|has no CUDA backend" "$3/probe.log"; then
      echo "skipped: --device $LLMFT_TEST_DEVICE cannot start here: $(tail -n 1 "$3/probe.log")"
      exit 77
    fi
    echo "FAILED: the --device $LLMFT_TEST_DEVICE probe run:"
    cat "$3/probe.log"
    exit 1
  fi
fi
