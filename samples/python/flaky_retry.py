#!/usr/bin/env python3
"""Sample: a retry loop whose outcome depends on random numbers and the clock.

Bug: the back-off deadline is computed from time.time() but compared with time.monotonic(),
so whether the last attempt runs depends on the wall clock; about one run in four gives up
with FAIL."""
import os
import random
import sys
import time


def attempt(n):
    return random.random() < 0.35 + 0.1 * n


def main():
    deadline = time.time() + 0.05  # the bug: wall clock
    for n in range(4):
        ok = attempt(n)
        print(f"attempt {n}: {'ok' if ok else 'failed'} (pid {os.getpid()})")
        if ok:
            print("ok")
            return 0
        if time.monotonic() > deadline:  # compared with a monotonic clock
            break
    print("FAIL: gave up")
    return 1


if __name__ == "__main__":
    sys.exit(main())
