# bench/python_calls' workload: a loop that calls step(i) N times (argv[1], 1,000 by
# default); each call returns 3 * i + 1. Prints the sum of the results.
import sys
import time


def step(i):
    return 3 * i + 1


def run(n):
    total = 0
    for i in range(n):
        total += step(i)
    return total


time.sleep(0.001)
print(run(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000))
