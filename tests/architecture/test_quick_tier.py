"""The quick tier's list (tests/quick_tier.txt) names test files that exist,
once each, so that `scripts/test.sh --quick` runs what it says."""

import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]


def listed_files():
    lines = (REPO / "tests" / "quick_tier.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_every_listed_file_is_a_test_file():
    missing = [path for path in listed_files()
               if not (REPO / path).is_file() or not pathlib.Path(path).name.startswith("test_")]
    assert not missing, f"tests/quick_tier.txt lists files that are not test files: {missing}"


def test_no_file_is_listed_twice():
    files = listed_files()
    assert len(files) == len(set(files)), "tests/quick_tier.txt lists a file twice"
