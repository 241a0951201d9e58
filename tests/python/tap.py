#!/usr/bin/python3
# tap.py - runs the Python module's unittest suites and speaks TAP, as
# every other suite of make check does (tests/run-tests.sh counts it).
# Usage: python3 tests/python/tap.py   (from anywhere; finds test_*.py here)
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "launcher", "python"))


class TapResult(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.n = 0

    def _line(self, ok, test, note=""):
        self.n += 1
        print(f"{'ok' if ok else 'not ok'} {self.n} - {test.id()}{note}", flush=True)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._line(True, test)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._line(True, test, f" # skip {reason}")

    def _fail(self, test, err, kind):
        self._line(False, test)
        for line in self._exc_info_to_string(err, test).splitlines():
            print(f"# {line}")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._fail(test, err, "failure")

    def addError(self, test, err):
        super().addError(test, err)
        self._fail(test, err, "error")


def main():
    suite = unittest.defaultTestLoader.discover(HERE, pattern="test_*.py", top_level_dir=HERE)
    print(f"1..{suite.countTestCases()}", flush=True)
    result = TapResult()
    suite.run(result)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
