# The helper module of main.py (rewind's Python line breakpoint tests).


def accumulate(n):
    # a comment line: a breakpoint here binds to the next line with code
    square = n * n  # first line
    label = "even" if n % 2 == 0 else "odd"
    total = square + 1
    return total


def churn(count):
    acc = 0
    for i in range(count):
        acc = acc + i  # churn body: fetched inside a fused STORE_FAST__LOAD_FAST once warm
    return acc
