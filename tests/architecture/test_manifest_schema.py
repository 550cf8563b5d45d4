"""The C++ readers and writer of manifests spell keys only through the one
schema, module/manifest_keys.def (as keys::Object::Name), never as string
literals of their own, so that a renamed key cannot leave one reader behind.
The Python reader is held to the same in tests/runtime/python/test_manifest_reader.py."""

import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = REPO / "module" / "manifest_keys.def"
KEY = re.compile(r'^MANIFEST_KEY\(\w+, \w+, "([a-z0-9_]+)", \w+\)$', re.MULTILINE)
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)


def distinctive_keys():
    """The schema's keys that no other word of the code spells: those of more
    than one word ("arg_names"); "name" or "size" stand for much else."""
    return {key for key in KEY.findall(SCHEMA.read_text()) if "_" in key}


def manifest_code():
    """The sources that write or read manifests (`kiln audit --json` writes a
    report of its own, whose keys are not the manifest's)."""
    files = [path for path in (REPO / "module").iterdir() if path.suffix in {".h", ".cpp"}]
    return files + [REPO / "driver" / "inspect_command.cpp", REPO / "driver" / "audit_scan.cpp"]


def test_the_schema_lists_the_keys_this_test_looks_for():
    assert {"arg_names", "static_shared_bytes", "companion_of", "kiln_version"} <= distinctive_keys()


def test_no_manifest_code_spells_a_key_of_its_own():
    keys = distinctive_keys()
    spelled = []
    for path in manifest_code():
        code = COMMENT.sub("", path.read_text())
        for key in keys:
            if f'"{key}"' in code:
                spelled.append(f"{path.relative_to(REPO)}: \"{key}\"")
    assert not spelled, f"spell these through module/manifest_keys.h instead: {spelled}"
