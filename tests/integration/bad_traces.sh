#!/usr/bin/env bash
# Replay detects a tampered trace (divergence naming event, task and register) and refuses a
# truncated, corrupted or newer-version trace with a one-line error naming file and offset.
. "$(dirname "$0")/lib.sh"
: "${TRACE_TAMPER:?set TRACE_TAMPER}"
"$REWIND" record -o "$WORK/good" date >/dev/null 2>&1 || fail "record date"
"$REWIND" replay -a "$WORK/good" >/dev/null 2>&1 || fail "the untouched trace must replay"

# Pick an emulated syscall (the 10th `close`... any syscall works) and shift one register.
ev=$("$REWIND" dump "$WORK/good" | awk '$3 == "syscall" && $4 == "close" { print $1; exit }')
[ -n "$ev" ] || fail "no close event found"
"$TRACE_TAMPER" "$WORK/good" "$WORK/tampered" "$ev" rdi 1 || fail "tamper tool failed"
out=$("$REWIND" replay -a "$WORK/tampered" 2>&1 >/dev/null)
rc=$?
expect="rewind: replay diverged at event $ev (task [0-9]*, close): rdi: recorded 0x[0-9a-f]*, replay 0x[0-9a-f]*"
[ "$rc" -eq 1 ] && echo "$out" | grep -qx "$expect" && pass "tampered register: $out" \
  || fail "tampered register not reported as expected (rc $rc): $out"

# Under gdb the same divergence ends the `continue` with gdb's "Remote failure reply: E01";
# rewind says why on stderr.
if command -v gdb >/dev/null; then
  printf 'continue\n' >"$WORK/cont.gdb"
  timeout 120 "$REWIND" replay "$WORK/tampered" -- -batch -nx -x "$WORK/cont.gdb" \
    >"$WORK/gdb_div.out" 2>&1
  grep -q "^rewind: replay diverged at event $ev (task [0-9]*, close): rdi" "$WORK/gdb_div.out" \
    && pass "under gdb, the divergence is said: $(grep diverged "$WORK/gdb_div.out")" \
    || fail "under gdb, the divergence was not said: $(tail -5 "$WORK/gdb_div.out")"
fi

# A real syscall whose recorded result no longer matches what the kernel returns.
ev=$("$REWIND" dump "$WORK/good" | awk '$3 == "syscall" && $4 == "brk" { print $1; exit }')
"$TRACE_TAMPER" "$WORK/good" "$WORK/tampered2" "$ev" result 4096 || fail "tamper tool failed"
out=$("$REWIND" replay -a "$WORK/tampered2" 2>&1 >/dev/null)
echo "$out" | grep -q "diverged at event $ev .*brk.*returned" && pass "tampered result: $out" \
  || fail "tampered brk result not detected: $out"

# Truncated: the events file loses its last 10 bytes.
cp -r "$WORK/good" "$WORK/trunc"
size=$(stat -c %s "$WORK/trunc/events")
truncate -s $((size - 10)) "$WORK/trunc/events"
out=$("$REWIND" replay -a "$WORK/trunc" 2>&1 >/dev/null)
rc=$?
[ "$rc" -eq 1 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] && echo "$out" | grep -q "/trunc/events: offset [0-9]*: .*truncated" \
  && pass "truncated: $out" || fail "truncated trace (rc $rc): $out"

# Corrupted: one byte in the middle of the data stream replaced by its complement (writing a
# fixed value changed nothing when the byte already had it).
cp -r "$WORK/good" "$WORK/corrupt"
size=$(stat -c %s "$WORK/corrupt/data")
off=$((size / 2))
byte=$(od -An -tu1 -j "$off" -N1 "$WORK/corrupt/data" | tr -d ' ')
printf "\\$(printf '%03o' $((byte ^ 255)))" | dd of="$WORK/corrupt/data" bs=1 seek="$off" conv=notrunc 2>/dev/null
cmp -s "$WORK/good/data" "$WORK/corrupt/data" && fail "the data stream was not changed"
out=$("$REWIND" replay -a "$WORK/corrupt" 2>&1 >/dev/null)
rc=$?
[ "$rc" -eq 1 ] && echo "$out" | grep -q "/corrupt/data: offset [0-9]*: chunk checksum mismatch" \
  && pass "corrupted: $out" || fail "corrupted trace (rc $rc): $out"
"$REWIND" dump "$WORK/corrupt" >/dev/null 2>&1 && fail "dump must refuse a corrupted trace"

# The exit status in `processes` no longer matches the first process's exit event (each
# stream's checksums intact): replay says so instead of exiting with the altered status.
"$TRACE_TAMPER" "$WORK/good" "$WORK/status" 0 root_status 256 || fail "tamper tool failed"
out=$("$REWIND" replay -a "$WORK/status" 2>&1 >/dev/null)
rc=$?
[ "$rc" -eq 1 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] &&
  echo "$out" | grep -q "/status/processes: offset 0: the first process's exit status (256) disagrees with its exit event [0-9]* (0): altered trace"   && pass "altered exit status: $out" || fail "altered exit status (rc $rc): $out"
"$REWIND" dump "$WORK/status" >/dev/null 2>&1 && fail "dump must refuse an altered exit status"

# Streams of another recording swapped in: each reader names the file that does not belong.
"$REWIND" record -o "$WORK/other" true >/dev/null 2>&1 || fail "record true"
for stream in events data processes; do
  cp -r "$WORK/good" "$WORK/mixed-$stream"
  cp "$WORK/other/$stream" "$WORK/mixed-$stream/$stream"
  for cmd in "replay -a" dump ps; do
    out=$("$REWIND" $cmd "$WORK/mixed-$stream" 2>&1 >/dev/null)
    rc=$?
    [ "$rc" -ne 0 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] &&
      echo "$out" | grep -q "mixed-$stream/$stream: offset 16: belongs to another recording (trace id [0-9a-f]*, the trace's meta says [0-9a-f]*): files of two traces were mixed" ||
      { [ "$cmd" = ps ] && [ "$stream" != processes ] && [ "$rc" -eq 0 ]; } ||
      fail "$stream of another trace under rewind $cmd (rc $rc): $out"
  done
done
pass "streams of another trace refused by replay -a, dump and ps"

# A saved file truncated, or changed in place: the replay names it before using it. (Saved
# system files are hard links: each is replaced by an altered copy, never written to.)
replace_saved() {  # replace_saved TRACE NAME BYTES-TO-KEEP|flip
  local f="$1/files/$2"
  if [ "$3" = flip ]; then
    cp "$f" "$WORK/copy" && printf 'X' | dd of="$WORK/copy" bs=1 seek=100 conv=notrunc 2>/dev/null
  else
    head -c "$3" "$f" >"$WORK/copy"
  fi
  rm -f "$f" && mv "$WORK/copy" "$f"
}
cp -r "$WORK/good" "$WORK/shortlib"
lib=$(cd "$WORK/shortlib/files" && ls | grep '^libc\.so')
replace_saved "$WORK/shortlib" "$lib" 50000
out=$("$REWIND" replay -a "$WORK/shortlib" 2>&1 >/dev/null)
rc=$?
[ "$rc" -eq 1 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] &&
  echo "$out" | grep -q "shortlib/files/$lib: 50000 bytes, the recording saved [0-9]* (truncated or replaced saved file)"   && pass "truncated saved file: $out" || fail "truncated saved file (rc $rc): $out"
cp -r "$WORK/good" "$WORK/altered"
exe=$(cd "$WORK/altered/files" && ls | grep '^date-')
replace_saved "$WORK/altered" "$exe" flip
out=$("$REWIND" replay -a "$WORK/altered" 2>&1 >/dev/null)
rc=$?
[ "$rc" -eq 1 ] && echo "$out" | grep -q "altered/files/$exe: checksum differs from the one recorded (altered saved file)"   && pass "altered saved file: $out" || fail "altered saved file (rc $rc): $out"
"$REWIND" replay -a "$WORK/good" >/dev/null 2>&1 || fail "the untouched trace must still replay"

# Newer format version.
cp -r "$WORK/good" "$WORK/future"
echo "rewind trace format 99" >"$WORK/future/version"
out=$("$REWIND" replay -a "$WORK/future" 2>&1 >/dev/null)
echo "$out" | grep -q "version 99 is newer than this rewind supports" && pass "newer version: $out" \
  || fail "future version: $out"

# Garbage instead of a stream header; and no trace at all.
cp -r "$WORK/good" "$WORK/garbage"
head -c 100 /dev/urandom >"$WORK/garbage/meta"
out=$("$REWIND" replay -a "$WORK/garbage" 2>&1 >/dev/null)
echo "$out" | grep -q "garbage/meta: offset 0: not a rewind trace stream" && pass "garbage meta: $out" \
  || fail "garbage meta: $out"
out=$("$REWIND" replay -a "$WORK/nonexistent" 2>&1 >/dev/null)
rc=$?
[ "$rc" -ne 0 ] && echo "$out" | grep -q "no trace named" && pass "missing trace: $out" || fail "missing trace: $out"
finish
