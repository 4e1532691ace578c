#!/usr/bin/env bash
# A program reading a file that is deleted after recording still replays; so does a program
# whose executable is deleted (the trace keeps its own copy of every mapped file).
. "$(dirname "$0")/lib.sh"
printf '3\n5 6 7\n' >"$WORK/data.txt"
cp "$SAMPLES_BIN/vanishing_file" "$WORK/reader"
"$REWIND" record -o "$WORK/t" "$WORK/reader" "$WORK/data.txt" >"$WORK/rec.out" 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail "recording exited $rc"
rm -f "$WORK/data.txt" "$WORK/reader"
for i in 1 2; do
  "$REWIND" replay -a "$WORK/t" >"$WORK/rep.out" 2>&1 || fail "replay $i exited $?: $(tail -1 "$WORK/rep.out")"
  cmp -s "$WORK/rec.out" "$WORK/rep.out" && pass "replay $i after deleting the data file and the executable: $(cat "$WORK/rep.out")" \
    || fail "replay $i output differs: $(cat "$WORK/rep.out")"
done
grep -q "3 of 3 values, total 18" "$WORK/rec.out" || fail "unexpected program output: $(cat "$WORK/rec.out")"
finish
