"""Where things are, for tests in any folder of ``tests/`` (the folders mirror the package, so a
test's own ``__file__`` says little): the checkout's root, the test helpers' folder, the data the
tests read and the benchmark scripts some of them import."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
DATA = TESTS / "data"
GOLDEN = TESTS / "golden"
BENCH = ROOT / "bench"
PACKAGE = ROOT / "sqlanon"
