# A Python program for rewind's Python line breakpoint tests: a helper module imported after a
# native call (time.sleep), its function called in a loop, and each call's result printed
# ("RESULT n value") for comparison with what the debugger shows.
import time

time.sleep(0.001)  # before the import: helper.py is not loaded yet
import helper  # noqa: E402

results = []
for n in range(5):
    value = helper.accumulate(n)  # call site
    results.append(value)
    print(f"RESULT {n} {value}", flush=True)
print("CHURN", helper.churn(60), flush=True)  # a loop warm enough to be specialized
print("DONE", sum(results), flush=True)
