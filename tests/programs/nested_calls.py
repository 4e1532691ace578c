# A Python program for rewind's interpreter-frame tests: five nested calls with typed locals,
# a native call at the deepest point (time.sleep -> clock_nanosleep), and, at each call and
# return, the line Python itself reports, printed for comparison ("LINE function line").
import sys
import time


def where():
    frame = sys._getframe(1)
    print(f"LINE {frame.f_code.co_qualname} {frame.f_lineno}", flush=True)  # one write


class Pipeline:
    def stage(self, depth, label):
        ratio = depth / 4
        items = [depth, label, None]
        where()
        if depth == 0:
            big = 2**70 + 5
            word = "héllo"
            flag = True
            time.sleep(0.001)  # deepest point
            where()
            return big
        result = self.stage(depth - 1, label + "x")
        where()
        return result


def main():
    total = Pipeline().stage(3, "a")
    where()
    return total


main()  # the entry call
