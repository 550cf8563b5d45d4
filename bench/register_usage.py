"""Registers, spills and stack per kernel: Kiln's PTX next to Numba's NVVM PTX.

Goal: Kiln no worse than Numba on any example.

    bash bench/setup.sh      # once: bench/.venv with numba 0.68.1, numba-cuda 0.30.4
    python3 bench/register_usage.py [--archs 75,80,90] [--examples vector_add,...]
                                    [--kiln build/driver/kiln] [--json FILE]

For every kernel specialization of examples/*.py (ufuncs and reductions
included; not examples/curand_interop, whose kernels link CUDA C) and each
architecture:

* Kiln: `kiln build EXAMPLE --emit ptx --arch "75-real;80-real;90-real" -v`,
  whose ptxas resource report (ptxas -v on Kiln's own PTX, with the flags
  Kiln passes) gives the Kiln columns;
* Numba: `numba.cuda.compile_ptx(pyfunc, sig, cc=...)` for the same
  signature and architecture (bench/numba_side.py, in bench/.venv), then
  `ptxas -arch=sm_XX -m64 -v` with the same flags Kiln passes for the
  kernel's options (-O3; -O0 -g for debug=True; --maxrregcount for
  max_registers=).

Constant memory (bank 0: kernel parameters and driver constants; other
banks: the module's constants) comes from `ptxas -v` on both sides' PTX
with the same flags.

The PTX of both sides is kept in bench/out/register_usage/{kiln,numba}/ for
reading. For each kernel where Kiln uses more registers, a second table
counts PTX instructions of both sides that usually explain it (64-bit
integer arithmetic, selp, non-coherent loads, ...).

Ufunc kernels are not the same code on both sides (Kiln's is grid-stride,
Numba's one element per thread), nor are reductions (different tree
reduction algorithms); they are listed but flagged.
"""

import argparse
import collections
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import bench_common as bc  # noqa: E402

OUT = bc.BENCH / "out" / "register_usage"
SYNTHESIZED = {"reductions": "reduction: different algorithms", "ufuncs": "ufunc: each compiler's own kernel"}

Usage = collections.namedtuple("Usage", "registers stack spill_stores spill_loads shared const0 const_other",
                               defaults=(0, 0))


def all_examples():
    return sorted(p.stem for p in (bc.ROOT / "examples").glob("*.py"))


def kiln_usage(kiln, example, archs, out):
    """{(stem, arch): Usage} from `kiln build --emit ptx -v`."""
    if out.exists():
        shutil.rmtree(out)
    arch_list = ";".join(f"{a}-real" for a in archs)
    _, stdout = bc.timed_run([kiln, "build", str(bc.ROOT / "examples" / f"{example}.py"), "--emit", "ptx",
                              "--arch", arch_list, "-o", str(out), "-v"])
    stems = []
    for line in stdout.splitlines():
        if line.endswith(".ptx"):
            stem = pathlib.Path(line).name.rsplit(".", 2)[0]
            if stem not in stems:
                stems.append(stem)
    usage = {}
    index = -1
    for line in stdout.splitlines():
        if line.startswith("  kernel "):
            index += 1
            continue
        found = re.match(r"\s+sm_(\d+): (\d+) registers, (\d+) bytes stack, (\d+) bytes spill stores, "
                         r"(\d+) bytes spill loads, (\d+) bytes shared", line)
        if found:
            arch, *numbers = map(int, found.groups())
            usage[(stems[index], arch)] = Usage(*numbers)
    return usage


def parse_ptxas(log):
    """Usage of the entry function in a `ptxas -v` log."""
    entry = re.search(r"Compiling entry function '([^']+)'", log).group(1)
    props = re.search(r"Function properties for " + re.escape(entry) +
                      r"\s*\n\s*(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", log)
    line = re.search(r"Used (\d+) registers[^\n]*", log[log.index(entry):])
    smem = re.search(r"(\d+) bytes smem", line.group(0))
    banks = {int(b): int(n) for n, b in re.findall(r"(\d+) bytes cmem\[(\d+)\]", line.group(0))}
    return Usage(int(line.group(1)), int(props.group(1)), int(props.group(2)), int(props.group(3)),
                 int(smem.group(1)) if smem else 0, banks.get(0, 0),
                 sum(n for b, n in banks.items() if b != 0))


def ptxas_usage(path, arch, flags):
    """Usage of the kernel in one PTX file, from `ptxas -v` with these flags."""
    with tempfile.TemporaryDirectory() as work:
        done = subprocess.run([str(bc.CUDA_HOME / "bin" / "ptxas"), f"-arch=sm_{arch}", "-v", *flags, str(path),
                               "-o", str(pathlib.Path(work) / "k.cubin")], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"ptxas failed on {path}:\n{done.stderr}")
    return parse_ptxas(done.stdout + done.stderr)


def numba_usage(python, example, archs, out):
    if out.exists():
        shutil.rmtree(out)
    _, stdout = bc.timed_run([python, str(bc.BENCH / "numba_side.py"), "ptx", example,
                              "--ptx-archs", ",".join(map(str, archs)), "--out", str(out)])
    listing = json.loads(stdout.strip().splitlines()[-1])
    usage, refused, flags = {}, {}, {}
    for entry in listing:
        flags[entry["stem"]] = entry["ptxas_flags"]
        for arch, message in entry["refused"].items():
            refused[(entry["stem"], int(arch))] = message
        for arch, path in entry["ptx"].items():
            usage[(entry["stem"], int(arch))] = ptxas_usage(path, int(arch), entry["ptxas_flags"])
    return usage, refused, flags


def add_constant_memory(kiln, kdir, flags):
    """Kiln's report gives no constant memory: ptxas -v on Kiln's PTX, with
    the flags of the kernel's options, adds it (and must agree on registers)."""
    for (stem, arch), usage in list(kiln.items()):
        path = next(kdir.glob(f"{stem}.sm_{arch}.ptx"), None)
        if path is None or stem not in flags:
            continue
        measured = ptxas_usage(path, arch, flags[stem])
        kiln[(stem, arch)] = usage._replace(const0=measured.const0, const_other=measured.const_other)


# PTX instruction classes counted in the explanation table.
PTX_CLASSES = {
    "instrs": r"^\s+(?:@!?%p\d+\s+)?[a-z]",
    "64-bit int ops": r"^\s+(?:@!?%p\d+\s+)?(?:add|sub|mul|mad|shl|shr|and|or|xor|neg|min|max|div|rem)(?:\.lo|\.wide)?\.(?:s64|u64|b64)\b",
    "mul.wide": r"\bmul\.wide\.",
    "32-bit int ops": r"^\s+(?:@!?%p\d+\s+)?(?:add|sub|mul|mad|shl|shr|and|or|xor|neg|min|max|div|rem)(?:\.lo|\.wide)?\.(?:s32|u32|b32)\b",
    "cvt": r"\bcvt\.",
    "selp": r"\bselp\.",
    "setp": r"\bsetp\.",
    "ld.global.nc": r"\bld\.global\.nc\.",
    "ld.global": r"\bld\.global\.(?!nc)",
    "st.global": r"\bst\.global\.",
    "ld.param": r"\bld\.param\.",
    "branches": r"\bbra(?:\.uni)?\b",
    "calls": r"\bcall(?:\.uni)?\b",
}


# Per-SM limits: max resident warps, max resident blocks (CUDA occupancy calculator).
SM_LIMITS = {75: (32, 16), 80: (64, 32), 86: (48, 16), 87: (48, 16), 89: (48, 24), 90: (64, 32),
             100: (64, 32), 120: (48, 24)}


def occupancy(registers, arch, block=256):
    """Theoretical occupancy from registers alone (65,536 per SM, allocated
    per warp in units of 256, warps in units of 4), for `block` threads."""
    max_warps, max_blocks = SM_LIMITS.get(arch, (64, 32))
    warps_per_block = block // 32
    per_warp = -(-registers * 32 // 256) * 256
    warps = (65536 // per_warp) // 4 * 4
    blocks = min(warps // warps_per_block, max_warps // warps_per_block, max_blocks)
    return blocks * warps_per_block / max_warps


def ptx_profile(path):
    text = pathlib.Path(path).read_text()
    # Count the entry function only (plus any .func it calls: they cost registers too).
    counts = {}
    for name, pattern in PTX_CLASSES.items():
        counts[name] = len(re.findall(pattern, text, flags=re.M))
    counts["param words"] = len(re.findall(r"^\s*\.param\s", text, flags=re.M))
    return counts


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archs", default="75,80,90", help="comma-separated sm_ numbers (PTX targets)")
    parser.add_argument("--examples", help="comma-separated example names (default: all)")
    parser.add_argument("--kiln", default=bc.default_kiln())
    parser.add_argument("--full", action="store_true", help="also print one row per kernel and architecture")
    parser.add_argument("--json", help="also write every kernel's figures here")
    options = parser.parse_args()

    bc.wait_for_kiln(options.kiln)
    private = tempfile.TemporaryDirectory(prefix="kiln-bench-bin-")
    options.kiln = bc.snapshot(options.kiln, private.name)
    version = bc.wait_for_kiln(options.kiln)
    python = bc.require_bench_python()
    archs = [int(a) for a in options.archs.split(",")]
    examples = options.examples.split(",") if options.examples else all_examples()
    print(f"command: {bc.command_line()}")
    print(f"machine: {bc.machine_line(version)}; load average {bc.load_average()} at start\n")

    rows, worse, better, equal = [], [], 0, 0
    records = []
    summary = []
    spills = []
    refused_all = {}
    explain = []
    for example in examples:
        kdir, ndir = OUT / "kiln" / example, OUT / "numba" / example
        kiln = kiln_usage(options.kiln, example, archs, kdir)
        numba, refused, flags = numba_usage(python, example, archs, ndir)
        add_constant_memory(kiln, kdir, flags)
        for key in kiln:
            if key in numba:
                records.append({"example": example, "kernel": key[0], "arch": key[1],
                                "kiln": kiln[key]._asdict(), "numba": numba[key]._asdict()})
        refused_all.update(refused)
        stems = sorted({stem for stem, _ in kiln}, key=lambda s: list(kiln).index((s, archs[0])))
        for stem in stems:
            cells = []
            for arch in archs:
                k, n = kiln.get((stem, arch)), numba.get((stem, arch))
                if k and n:
                    mark = " **+%d**" % (k.registers - n.registers) if k.registers > n.registers else ""
                    cells.append(f"{k.registers} / {n.registers}{mark}")
                else:
                    cells.append(f"{k.registers if k else '-'} / {n.registers if n else '-'}")
            both = [(kiln[(stem, a)], numba[(stem, a)]) for a in archs if (stem, a) in kiln and (stem, a) in numba]
            spill = "/".join(str(max((u.spill_stores + u.spill_loads for u in side), default=0))
                             for side in zip(*both)) if both else "-"
            stack = "/".join(str(max((u.stack for u in side), default=0)) for side in zip(*both)) if both else "-"
            summary.append([example, stem, *cells, spill, stack, SYNTHESIZED.get(example, "")])
            for arch in archs:
                k = kiln.get((stem, arch))
                n = numba.get((stem, arch))
                note = SYNTHESIZED.get(example, "")
                if k and (k.spill_stores or k.spill_loads):
                    spills.append(f"{stem} sm_{arch}")
                if k is None or n is None:
                    rows.append([example, stem, f"sm_{arch}", k.registers if k else "-", "-", "-", "-", "-", "-", "-",
                                 "compile_ptx refused" if (stem, arch) in refused else "missing"])
                    continue
                delta = k.registers - n.registers
                if delta > 0:
                    worse.append((example, stem, arch, k, n))
                elif delta < 0:
                    better += 1
                else:
                    equal += 1
                rows.append([example, stem, f"sm_{arch}", k.registers, f"{k.spill_stores}/{k.spill_loads}", k.stack,
                             n.registers, f"{n.spill_stores}/{n.spill_loads}", n.stack,
                             f"{delta:+d}" if delta else "0", note])
        for stem in stems:
            gaps = [w[2] for w in worse if w[1] == stem and w[0] == example]
            if gaps:
                arch = 80 if 80 in gaps else gaps[0]
                kp = next(kdir.glob(f"{stem}.sm_{arch}.ptx"), None)
                np_ = ndir / f"{stem}.sm_{arch}.ptx"
                if kp and np_.exists():
                    explain.append((stem, arch, ptx_profile(kp), ptx_profile(np_)))
        print(f"  {example} done", file=sys.stderr)

    print("Registers, Kiln / Numba (**+N**: Kiln uses N more); spills and stack: largest over the "
          "architectures, bytes, Kiln/Numba:\n")
    print(bc.table(["example", "kernel", *[f"sm_{a} regs" for a in archs], "spill st+ld (B)", "stack (B)", "note"],
                   summary, "ll" + "r" * (len(archs) + 2) + "l"))
    if options.full:
        print("\nEvery kernel and architecture:\n")
        print(bc.table(["example", "kernel", "arch", "Kiln regs", "Kiln spill st/ld (B)", "Kiln stack (B)",
                    "Numba regs", "Numba spill st/ld (B)", "Numba stack (B)", "Kiln − Numba", "note"],
                       rows, "lllrrrrrrrl"))
    total = len(worse) + better + equal
    print(f"\nKiln uses more registers in {len(worse)} of {total} kernel×arch rows, "
          f"fewer in {better}, as many in {equal}.")
    same_code = [w for w in worse if w[0] not in SYNTHESIZED]
    print(f"Where both sides compile the same kernel (ufuncs and reductions excluded): "
          f"{len(same_code)} rows with more registers.")
    print("Kiln spills: " + (", ".join(spills) if spills else "none"))
    if refused_all:
        print("compile_ptx refused: " + "; ".join(f"{s} sm_{a}: {m}" for (s, a), m in sorted(refused_all.items())))
    if worse:
        rows = [[f"{stem} sm_{arch}", k.registers, n.registers, f"{occupancy(k.registers, arch):.0%}",
                 f"{occupancy(n.registers, arch):.0%}"] for _, stem, arch, k, n in worse]
        print("\nWhat the extra registers cost: theoretical occupancy from registers alone, 256-thread blocks:\n")
        print(bc.table(["kernel", "Kiln regs", "Numba regs", "Kiln occupancy", "Numba occupancy"], rows))
    if explain:
        names = list(PTX_CLASSES) + ["param words"]
        rows = []
        for stem, arch, k, n in explain:
            rows.append([f"{stem} sm_{arch}", "Kiln", *[k[c] for c in names]])
            rows.append(["", "Numba", *[n[c] for c in names]])
        print(f"\nPTX instruction counts of the kernels where Kiln uses more registers (whole PTX file):\n")
        print(bc.table(["kernel", "side", *names], rows, "ll" + "r" * len(names)))
    print(f"\nPTX kept in {OUT.relative_to(bc.ROOT)}/{{kiln,numba}}/EXAMPLE/")
    bc.write_json(options.json, {"archs": archs, "examples": examples, "synthesized": SYNTHESIZED,
                                 "records": records,
                                 "refused": {f"{s} sm_{a}": m for (s, a), m in sorted(refused_all.items())}})


if __name__ == "__main__":
    main()
