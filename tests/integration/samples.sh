#!/usr/bin/env bash
# Every program in samples/ records and replays byte-identically with its exit status.
. "$(dirname "$0")/lib.sh"
printf '4\n10 20 30 40\n' >"$WORK/values.txt"
case "$1" in
  lottery) record_and_replay lottery "$SAMPLES_BIN/lottery" ;;
  vanishing_file) record_and_replay vanishing_file "$SAMPLES_BIN/vanishing_file" "$WORK/values.txt" ;;
  crash) # record until it crashes (it does one run in four), then replay the crash
    for i in $(seq 1 40); do
      record_and_replay "crash$i" "$SAMPLES_BIN/crash" >/dev/null
      [ "${RC:-0}" -eq 139 ] && break
    done
    [ "${RC:-0}" -eq 139 ] && pass "crash recorded after $i runs, replayed with SIGSEGV (exit 139) twice" \
      || fail "crash sample never crashed in 40 recordings" ;;
  shuffle_pipeline) need od; record_and_replay shuffle "$SOURCE_DIR/samples/shell/shuffle_pipeline.sh" ;;
  flaky_retry) need python3; record_and_replay flaky "$SOURCE_DIR/samples/python/flaky_retry.py" ;;
  noisy_mean) need Rscript; record_and_replay noisy_mean Rscript "$SOURCE_DIR/samples/r/noisy_mean.R" ;;
  *) echo "unknown case $1"; exit 2 ;;
esac
finish
