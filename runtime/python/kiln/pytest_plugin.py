"""pytest --kiln-record[=FILE]: records the signatures the test run calls
kernels with into FILE (default: kiln-signatures.toml in pytest's rootdir),
for `kiln build` to compile ahead of time. See kiln.signature_file.

Loaded through the pytest11 entry point of the `kiln` package, or with
`pytest -p kiln.pytest_plugin`.
"""

import os

from kiln import signature_file


def pytest_addoption(parser):
    parser.addoption(
        "--kiln-record", nargs="?", const="kiln-signatures.toml", default=None, metavar="FILE",
        help="record the signatures Kiln's kernels are called with into FILE "
             "(default kiln-signatures.toml in the rootdir)")


def pytest_configure(config):
    path = config.getoption("--kiln-record")
    if path is None:
        return
    if not os.path.isabs(path):
        path = os.path.join(str(config.rootpath), path)
    # Workers (pytest-xdist) inherit the environment, and record into the
    # same file under its lock.
    os.environ[signature_file.ENVIRONMENT] = path
