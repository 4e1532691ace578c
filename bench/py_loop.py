# bench/python_breakpoints' workload: a Python loop of 100,000 passes (work()), and a line
# that never runs.
import sys
import time


def work(n):
    total = 0
    for i in range(n):
        total += i * 3 % 7  # loop line
    return total


time.sleep(0.001)
print(work(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000))
if len(sys.argv) > 2:
    print("never")  # never reached
