"""Helpers shared by the record/replay benchmarks (bench/record_overhead, bench/suite): timing a
command, reading the figures `rewind record -v` and `rewind replay -v` print, sizing a trace."""
import os
import re
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_REWIND = os.path.join(HERE, "..", "build", "rewind")


def timed(cmd, env, cwd=None):
    """Runs cmd with stdout discarded; returns (seconds of wall time, exit code, stderr text)."""
    t = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       stdin=subprocess.DEVNULL, env=env, cwd=cwd)
    return time.perf_counter() - t, r.returncode, r.stderr.decode(errors="replace")


def timed_cpu(cmd, env, cwd=None):
    """As timed, and the CPU seconds (user and system) of the command and the children it
    waited for, from wait4(2)'s rusage: returns (wall seconds, exit code, stderr text, CPU
    seconds)."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, env=env, cwd=cwd)
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
    p.stderr.close()
    return wall, p.returncode, err.decode(errors="replace"), usage.ru_utime + usage.ru_stime


def stat(pattern, text):
    """The integer that regex `pattern`'s group 1 finds in text, or 0."""
    m = re.search(pattern, text)
    return int(m.group(1)) if m else 0


def record_figures(stderr):
    """What `rewind record -v` says: events, buffered syscalls, ptrace stops, peak KiB."""
    return {
        "events": stat(r"recorded (\d+) events", stderr),
        "buffered": stat(r"(\d+) buffered syscalls", stderr),
        "stops": stat(r"(\d+) ptrace stops", stderr),
        "peak_kib": stat(r"recorder peak memory (\d+) KiB", stderr),
    }


def replay_figures(stderr):
    """What `rewind replay -a -v` says: points found between events, the ptrace stops spent
    finding them, and the replay's ptrace stops in all."""
    return {
        "points": stat(r"(\d+) points between events", stderr),
        "point_stops": stat(r"with (\d+) stops", stderr),
        "replay_stops": stat(r"(\d+) ptrace stops;", stderr),
    }


def trace_bytes(trace):
    """Bytes of a trace's events, data and meta streams (not files/: hard links or copies of
    the programs and libraries, which cost nothing or are shared between traces)."""
    return sum(os.path.getsize(os.path.join(d, f))
               for d, _, fs in os.walk(trace) for f in fs
               if os.sep + "files" not in d[len(trace):])
