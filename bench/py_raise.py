# bench/python_exceptions' workload: 100,000 ValueErrors raised in check() and caught by the
# loop (exceptions used for control flow), then one KeyError raised last, also caught.
import sys


def check(i):
    if i % 2 == 0:
        raise ValueError(i)  # raise line
    return i


def run(n):
    caught = 0
    for i in range(2 * n):
        try:
            check(i)
        except ValueError:
            caught += 1
    try:
        {}["last"]
    except KeyError:
        caught += 1
    return caught


print(run(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000))
