"""What the Python tests share: check() records an assertion (printing a failure at once,
so one run shows them all), finish() prints the tally and exits non-zero if any failed."""
import sys

failures, count = [], 0


def check(cond, what):
    global count
    count += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def finish():
    print(f"{count - len(failures)} of {count} checks passed")
    sys.exit(1 if failures else 0)
