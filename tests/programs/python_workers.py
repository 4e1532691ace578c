"""Everyday Python concurrency, as a user's script does it (program.python_workers): worker
processes (multiprocessing's fork pool and concurrent.futures), a thread pool, asyncio with a
subprocess (after the pool: vfork from a process with MAP_SHARED memory), and an interval
timer's signal waited for with pause()."""
import asyncio
import concurrent.futures as cf
import multiprocessing
import signal


def square(x):
    return x * x


async def child_output():
    p = await asyncio.create_subprocess_exec("echo", "from a child", stdout=asyncio.subprocess.PIPE)
    out, _ = await p.communicate()
    return out.decode().strip(), p.returncode


if __name__ == "__main__":
    with multiprocessing.get_context("fork").Pool(2) as pool:
        print("pool:", pool.map(square, range(8)))
    with cf.ProcessPoolExecutor(2) as ex:
        print("process executor:", sum(ex.map(square, range(100))))
    with cf.ThreadPoolExecutor(4) as ex:
        print("thread executor:", sum(ex.map(square, range(1000))))
    print("asyncio:", asyncio.run(child_output()))
    signal.signal(signal.SIGALRM, lambda *a: print("alarm"))
    signal.setitimer(signal.ITIMER_REAL, 0.02)
    signal.pause()
