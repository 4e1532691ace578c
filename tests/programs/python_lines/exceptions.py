# Exceptions for rewind's Python exception stops (tests/dap/dap_script_exceptions_test.cpp):
# check() raises ValueError for odd numbers, which the loop catches; lookup() raises KeyError
# from C code (a dict subscript), caught once; a thread then dies of an uncaught KeyError;
# and the program ends with an uncaught RuntimeError raised in fail(), whose finally clause
# runs while it propagates.
import threading


def check(n):
    if n % 2:
        raise ValueError("odd " + str(n))  # raise line
    return n


def lookup(table, key):
    return table[key]  # lookup line


caught = 0
for i in range(5):
    try:
        check(i)
    except ValueError:
        caught += 1
try:
    lookup({"a": 1}, "b")
except KeyError:
    caught += 1


def worker():
    lookup({}, "missing")


t = threading.Thread(target=worker)
t.start()
t.join()


def fail(count):
    try:
        raise RuntimeError("gave up after %d" % count)  # uncaught raise line
    finally:
        cleanup = count  # finally line


fail(caught)
