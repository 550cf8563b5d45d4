"""One project built under what reprotest varies gives the same bytes: the
module and, built as separate files, its fat binaries and manifest.

Each test builds a reference and a variation that changes one thing (the
last changes all of them at once): where the checkout sits and how its path
is given (`--debug` and `--lineinfo` put paths in debug information), the
time zone and the sources' times, the umask, the locale, the number of
jobs, and the user. Builds compile everything (`--no-cache`), so that a
cache hit cannot hide a difference.
"""

import os
import time

import pytest

from repro_builds import (NOBODY, Circumstances, assert_same_build, build, give_to_nobody,
                          write_checkout)

# The time zone farthest from UTC; a POSIX TZ string needs no tzdata.
FAR_TIME_ZONE = "KIR-14"


@pytest.fixture
def checkout(tmp_path):
    return write_checkout(tmp_path / "checkout-one")


@pytest.mark.parametrize("flags", [(), ("--lineinfo",), ("--debug",)],
                         ids=["plain", "lineinfo", "debug"])
def test_two_checkouts_in_different_folders_build_the_same_module(tmp_path, checkout, flags):
    other = write_checkout(tmp_path / "a" / "much" / "deeper" / "checkout-two")
    reference = build(checkout, tmp_path / "out-one", Circumstances(flags=flags))
    variation = build(other, tmp_path / "elsewhere" / "out-two", Circumstances(flags=flags))
    assert_same_build(reference, variation,
                      f"building another checkout, at another depth ({' '.join(flags) or 'plain'})")


def test_a_path_relative_to_the_checkout_builds_what_an_absolute_one_builds(tmp_path, checkout):
    reference = build(checkout, tmp_path / "out")
    variation = build(checkout, tmp_path / "out", Circumstances(relative=True))
    assert_same_build(reference, variation, "giving the module's path relative to the checkout")


def test_the_time_zone_and_the_times_of_the_sources_change_nothing(tmp_path, checkout):
    reference = build(checkout, tmp_path / "out")
    long_ago = time.mktime((1990, 1, 2, 3, 4, 5, 0, 0, 0))
    for source in checkout.rglob("*.py"):
        os.utime(source, (long_ago, long_ago))
    variation = build(checkout, tmp_path / "out", Circumstances(env={"TZ": FAR_TIME_ZONE}))
    assert_same_build(reference, variation,
                      f"TZ={FAR_TIME_ZONE} and sources last changed in 1990")


def test_the_umask_changes_nothing(tmp_path, checkout):
    reference = build(checkout, tmp_path / "out")
    variation = build(checkout, tmp_path / "out", Circumstances(umask=0o077))
    assert_same_build(reference, variation, "umask 077 instead of 022")


def test_the_locale_changes_nothing(tmp_path, checkout):
    reference = build(checkout, tmp_path / "out")
    variation = build(checkout, tmp_path / "out",
                      Circumstances(env={"LC_ALL": "C", "LANG": "C"}))
    assert_same_build(reference, variation, "LC_ALL=C instead of C.UTF-8")


def test_the_number_of_jobs_changes_nothing(tmp_path, checkout):
    reference = build(checkout, tmp_path / "out")
    variation = build(checkout, tmp_path / "out", Circumstances(jobs=1))
    assert_same_build(reference, variation, "-j 1 instead of -j 2")


def require_root():
    if os.geteuid() != 0:
        pytest.skip("building as another user needs root (setpriv --reuid), and this is uid "
                    f"{os.geteuid()}")


def test_another_user_builds_the_same_module(shared_tmp):
    require_root()
    checkout = write_checkout(shared_tmp / "checkout")
    give_to_nobody(checkout)
    reference = build(checkout, shared_tmp / "out")
    variation = build(checkout, shared_tmp / "out", Circumstances(as_nobody=True))
    assert_same_build(reference, variation, f"building as uid {NOBODY} instead of root")


def test_everything_varied_at_once_builds_the_same_module(tmp_path, shared_tmp, checkout):
    other = write_checkout(shared_tmp / "deeper" / "checkout-two")
    long_ago = time.mktime((1990, 1, 2, 3, 4, 5, 0, 0, 0))
    for source in other.rglob("*.py"):
        os.utime(source, (long_ago, long_ago))
    as_nobody = os.geteuid() == 0
    if as_nobody:
        give_to_nobody(shared_tmp / "deeper")
    reference = build(checkout, tmp_path / "out")
    variation = build(other, shared_tmp / "deeper" / "out", Circumstances(
        env={"TZ": FAR_TIME_ZONE, "LC_ALL": "C", "LANG": "C"}, umask=0o002, jobs=1,
        as_nobody=as_nobody, relative=True))
    assert_same_build(reference, variation,
                      "another checkout, its path relative, TZ, mtimes, umask, locale, -j 1"
                      + (" and another user" if as_nobody else ""))


def test_line_tables_do_not_record_the_times_of_the_sources(tmp_path, checkout):
    """With --lineinfo, run from the checkout (where the recorded relative
    paths name the sources), as kiln.setuptools runs it: ptxas reads the
    time and size of the files PTX `.file` directives name, relative to its
    working folder, so it must run in a folder of its own."""
    circumstances = Circumstances(relative=True, flags=("--lineinfo",))
    reference = build(checkout, tmp_path / "out", circumstances)
    long_ago = time.mktime((1990, 1, 2, 3, 4, 5, 0, 0, 0))
    for source in checkout.rglob("*.py"):
        os.utime(source, (long_ago, long_ago))
    variation = build(checkout, tmp_path / "out", circumstances)
    assert_same_build(reference, variation, "--lineinfo with sources last changed in 1990")
