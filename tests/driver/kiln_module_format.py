"""runtime/module_format.h in Python, for the tests of built modules."""

import json
import struct

MASK = (1 << 64) - 1
BUNDLE_MAGIC = b"KILNBNDL"
HEADER = struct.Struct("<8sIIQQQQQ")  # KilnBundleHeader, 56 bytes
MODULE_FORMAT_VERSION = 1
MANIFEST_FORMAT = 2


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
    found in `data` by its magic."""
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
