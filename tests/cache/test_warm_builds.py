"""A warm build looks up each image's PTX before its kernels' LLVM IR: the
image's entry carries what the build needs of them, so it reads no IR, and
reads the IR of the PTX targets whose image PTX it did not find."""

import re

from .conftest import WARM_HITS, outputs


def kinds_and_targets(notes):
    return sorted({(kind, target) for _, kind, target, _ in notes})


def test_a_warm_build_reads_no_kernels_llvm_ir(rig):
    module = rig.write("kernels.py")
    _, _, _, cold_notes, cold = rig.build(module)
    assert ("llvm", "sm_80") in kinds_and_targets(cold_notes), cold_notes
    result, hits, misses, notes, warm = rig.build(module)
    assert (hits, misses) == (WARM_HITS, 0), result.stderr
    assert kinds_and_targets(notes) == [("cubin", "sm_80"), ("fatbin", "-"), ("ptx", "sm_80")], notes
    assert {name for _, _, _, name in notes} == {"image kernels"}, notes
    assert outputs(warm) == outputs(cold), "a fat binary built from the image's entries differs"
    manifest = "kernels.manifest.json"
    assert (warm / manifest).read_text() == (cold / manifest).read_text(), (
        "the manifest written from the interfaces the image's entry keeps differs from the cold build's")


def test_only_targets_whose_image_ptx_is_missing_read_their_kernels_ir(rig):
    module = rig.write("kernels.py")
    rig.build(module)
    result, _, _, notes, both = rig.build(module, "--arch", "80;90")
    states = {(kind, target, name): state for state, kind, target, name in notes}
    assert states[("ptx", "sm_80", "image kernels")] == "hit", notes
    assert not [note for note in notes if note[1:3] == ("llvm", "sm_80")], (
        f"the kernels' sm_80 IR was read although the image's sm_80 PTX was found:\n{result.stderr}")
    assert states[("llvm", "sm_90", "first")] == states[("llvm", "sm_90", "second")] == "miss", notes
    assert states[("ptx", "sm_90", "image kernels")] == "miss", notes
    reference = rig.root / "reference"
    rig.run(*rig.build_args(module, reference, "--arch", "80;90", "--no-cache"), check=True)
    assert outputs(both) == outputs(reference)


def test_the_progress_of_a_warm_module_build_counts_to_its_total(rig):
    module = rig.write("kernels.py")
    for _ in range(2):
        result = rig.run("build", module, "--module", "kernels", "-o", rig.root / "module", "--arch",
                         "80;90", "-v")
        assert result.returncode == 0, result.stderr
        counts = [tuple(map(int, m)) for m in re.findall(r"^\[(\d+)/(\d+)\] ", result.stderr, re.M)]
        total = counts[-1][1]
        assert counts == [(done, total) for done in range(1, total + 1)], result.stderr
