# Two threads calling helper.accumulate (rewind's Python line breakpoint tests): n = 10..12 in
# one, 20..22 in the other, in whatever order the threads ran.
import threading

import helper


def worker(base):
    for n in range(base, base + 3):
        helper.accumulate(n)


threads = [threading.Thread(target=worker, args=(b,)) for b in (10, 20)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("THREADS DONE", flush=True)
