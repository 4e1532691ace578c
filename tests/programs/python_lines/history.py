# A Python program for rewind/history on a Python local: running(n) binds its local `total`
# once per step and logs each binding ("BIND n total"); the calls come one after another with
# no syscall between them (the log is printed at the end), their frames at one address.


def running(n):
    total = 0
    for k in range(1, n + 1):
        total = total + k * k  # total changes
        log.append(f"BIND {n} {total}")
    return total


log = []
results = [running(n) for n in (3, 4, 2)]  # the calls
print("\n".join(log), flush=True)
print("RESULTS", results, flush=True)


def label(n):  # returns a constant, printed at the end ("LABELS")
    if n > 3:
        return "big"  # a constant returned (RETURN_CONST from 3.12 on)
    return "small"


print("LABELS", [label(n) for n in (3, 4, 2)], flush=True)
