"""module/format.h in Python, for the tests of built modules."""

import json
import pathlib
import re
import struct

MASK = (1 << 64) - 1
BUNDLE_MAGIC = b"KILNBNDL"
HEADER = struct.Struct("<8sIIQQQQQ")  # KilnBundleHeader, 56 bytes
MODULE_FORMAT_VERSION = 2
MANIFEST_FORMAT = 2
CPU_ABI_VERSION = int(re.search(
    r"#define KILN_CPU_ABI_VERSION (\d+)",
    (pathlib.Path(__file__).resolve().parents[2] / "module" / "cpu_kernel_abi.h").read_text()).group(1))
BUNDLE_SECTION = ".kiln.bundle"

ELF_HEADER = struct.Struct("<16sHHIQQQIHHHHHH")  # Elf64_Ehdr
PROGRAM_HEADER = struct.Struct("<IIQQQQQQ")  # Elf64_Phdr
SECTION_HEADER = struct.Struct("<IIQQQQIIQQ")  # Elf64_Shdr
PT_LOAD = 1
SHT_PROGBITS = 1
SHF_ALLOC = 2


def _mix(value):
    value ^= value >> 33
    value = (value * 0xFF51AFD7ED558CCD) & MASK
    value ^= value >> 33
    value = (value * 0xC4CEB9FE1A85EC53) & MASK
    value ^= value >> 33
    return value


def kiln_checksum(data):
    """kilnChecksum() of runtime/module_format.h."""
    data = bytes(data)
    lanes = [0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB, 0x2545F4914F6CDD1D]
    offset = 0
    while offset + 32 <= len(data):
        for lane in range(4):
            word = int.from_bytes(data[offset + 8 * lane:offset + 8 * lane + 8], "little")
            value = ((lanes[lane] ^ word) * 0x9FB21C651E98DF25) & MASK
            lanes[lane] = value ^ (value >> 29)
        offset += 32
    value = len(data)
    for lane in lanes:
        value = _mix(value ^ lane)
    for byte in data[offset:]:
        value = ((value ^ byte) * 0x100000001B3) & MASK
    return _mix(value)


def checksum_text(data):
    return format(kiln_checksum(data), "016x")


def read_bundle(data):
    """(header fields as a dict, manifest bytes, payload bytes) of a bundle
    found in `data` by its magic (as `kiln inspect` finds it)."""
    at = data.find(BUNDLE_MAGIC)
    assert at >= 0, "no bundle"
    fields = dict(zip(
        ("magic", "format", "header_size", "manifest_offset", "manifest_size",
         "manifest_checksum", "payload_offset", "payload_size"),
        HEADER.unpack_from(data, at)))
    fields["file_offset"] = at
    bundle = data[at:]
    manifest = bundle[fields["manifest_offset"]:fields["manifest_offset"] + fields["manifest_size"]]
    payload = bundle[fields["payload_offset"]:fields["payload_offset"] + fields["payload_size"]]
    return fields, manifest, payload


def read_manifest(data):
    return json.loads(read_bundle(data)[1])


def elf_segments(data):
    """The program headers of a 64-bit little-endian ELF file, as dicts."""
    header = ELF_HEADER.unpack_from(data, 0)
    phoff, phentsize, phnum = header[5], header[9], header[10]
    names = ("type", "flags", "offset", "vaddr", "paddr", "filesz", "memsz", "align")
    return [dict(zip(names, PROGRAM_HEADER.unpack_from(data, phoff + i * phentsize)))
            for i in range(phnum)]


def loaded_end(data):
    """Where the last byte the dynamic loader maps from the file ends."""
    return max(s["offset"] + s["filesz"] for s in elf_segments(data) if s["type"] == PT_LOAD)


def elf_sections(data):
    """{name: section header as a dict} of a 64-bit little-endian ELF file."""
    header = ELF_HEADER.unpack_from(data, 0)
    shoff, shentsize, shnum, shstrndx = header[6], header[11], header[12], header[13]
    names = ("name", "type", "flags", "addr", "offset", "size", "link", "info", "addralign",
             "entsize")
    sections = [dict(zip(names, SECTION_HEADER.unpack_from(data, shoff + i * shentsize)))
                for i in range(shnum)]
    strings = sections[shstrndx]
    table = data[strings["offset"]:strings["offset"] + strings["size"]]
    result = {}
    for index, section in enumerate(sections):
        name = table[section["name"]:table.index(b"\0", section["name"])].decode()
        section["index"] = index
        section["header_offset"] = shoff + index * shentsize
        result[name] = section
    return result


def with_manifest(data, manifest):
    """A copy of the module `data` whose manifest is `manifest` (at most as
    long as the old one; padded with JSON whitespace), with the checksums of
    the bundle header and of the module image made to match: a module as a
    newer or older Kiln, or someone forging one, would write it."""
    header, old, _ = read_bundle(data)
    assert len(manifest) <= len(old), f"the new manifest is {len(manifest) - len(old)} bytes too long"
    manifest = manifest + b" " * (len(old) - len(manifest))
    start = header["file_offset"] + header["manifest_offset"]
    data = bytes(data[:start]) + manifest + bytes(data[start + len(manifest):])
    old_checksum = struct.pack("<Q", header["manifest_checksum"])
    # The bundle header and the image hold it, and the symbol table too:
    # the image reads it from an absolute symbol the link defines.
    assert data.count(old_checksum) >= 2, "expected the checksum in the bundle header and the image"
    return data.replace(old_checksum, struct.pack("<Q", kiln_checksum(manifest)))


def image_offset(data):
    """Where the module image (KilnModuleImage) of the module `data` starts."""
    header, _, _ = read_bundle(data)
    checksum = struct.pack("<Q", header["manifest_checksum"])
    at = data.find(checksum)
    while at >= 0:
        if at != header["file_offset"] + 32 and data[at - 48:at - 44] == struct.pack("<I", 0x4B494C4E):
            return at - 48
        at = data.find(checksum, at + 1)
    raise AssertionError("no module image")
