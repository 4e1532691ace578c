#!/bin/sh
# Sample: a shell pipeline whose result depends on $RANDOM-like input (from /dev/urandom)
# and the clock. Bug: `head -n 1` of an unstable sort picks a different "winner" on ties, so
# the script's verdict changes from run to run.
date +%s%N | cut -c 10- > /dev/null
od -An -N12 -tu1 /dev/urandom | tr -s ' ' '\n' | grep -v '^$' | awk '{print $1 % 7}' \
  | sort | uniq -c | sort -rn | head -n 3
winner=$(od -An -N1 -tu1 /dev/urandom | tr -d ' ')
if [ $((winner % 4)) -eq 0 ]; then
  echo "FAIL: tie broken the wrong way ($winner)"
  exit 1
fi
echo "ok ($winner)"
