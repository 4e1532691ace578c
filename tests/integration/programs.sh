#!/usr/bin/env bash
# The programs issue #2 names: each records and replays byte-identically, twice.
. "$(dirname "$0")/lib.sh"
case "$1" in
  ls) need ls; record_and_replay ls ls -la /usr/bin ;;
  date) need date; record_and_replay date date ;;
  pipeline) need sh; record_and_replay pipeline sh -c 'ls /usr/lib | sort -r | head -5' ;;
  python3) need python3
    record_and_replay python3 python3 -c 'import random,time,os; print(random.random(), time.time(), os.getpid())' ;;
  Rscript) need Rscript
    record_and_replay Rscript Rscript -e 'cat(runif(3), format(Sys.time()), "\n")' ;;
  sqlite3) need sqlite3; record_and_replay sqlite3 sqlite3 :memory: "select random();" ;;
  gcc) need gcc
    printf 'int twice(int x) { return 2 * x; }\n' >"$WORK/small.c"
    record_and_replay gcc gcc -c "$WORK/small.c" -o "$WORK/small.o"
    [ -s "$WORK/small.o" ] || fail "gcc produced no object file while recorded" ;;
  *) echo "unknown case $1"; exit 2 ;;
esac
finish
