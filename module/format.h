/*===- module/format.h - What a built kernel module holds ------------------===*
 *
 * [Note: built kernel modules]
 * `kiln build pkg/kernels.py --module pkg.kernels` writes a Python extension
 * module, kernels<EXT_SUFFIX>, that holds:
 *
 *   - the host code of every specialization, for the CPU engine
 *     (module/cpu_kernel_abi.h entry points, resolved by the dynamic loader);
 *   - one constant KilnModuleImage, which points at a table of the host
 *     entry points, one row per specialization in manifest order, and says
 *     how big the bundle is;
 *   - the bundle: a KilnBundleHeader, the manifest (JSON, docs/abi.md) and the
 *     payload (one fat binary per image: the specializations a GPU loads
 *     together), each checksummed;
 *   - PyInit_<name>, which imports kiln._runtime, takes its module loader
 *     from the capsule `module_loader` and returns loader(&image).
 *
 * The bundle (most of the file) lies in the ELF section KILN_BUNDLE_SECTION,
 * which is not allocated: it follows every loaded segment, so the dynamic
 * loader never maps it, and a file cut short anywhere in it (or in the
 * section headers after it) still loads. The runtime finds the section
 * through the section headers of the module's file (dladdr(image)), checks
 * that it lies inside the file and has the image's size and manifest
 * checksum, maps it read-only, and verifies the header and the manifest
 * before it creates the module, so that a damaged file fails at import with
 * an ImportError. Each fat binary is verified against its checksum when a
 * GPU first loads it, at the first launch of its specialization, so that an
 * import reads none of them (its cost does not grow with the number of
 * kernels) and the CPU engine never does; a damaged one fails that launch
 * with a RuntimeError rather than run garbage. (A file cut inside its loaded
 * segments is the dynamic loader's to refuse, before any of our code runs.)
 *
 * Plain C, shared by the writer (the driver) and the reader (the runtime),
 * which must agree on it byte for byte.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_MODULE_FORMAT_H
#define KILN_MODULE_FORMAT_H

#include "module/cpu_kernel_abi.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change to the structures below, the bundle or
 * the manifest; the runtime refuses modules of another version. */
#define KILN_MODULE_FORMAT_VERSION 2

#define KILN_MODULE_IMAGE_MAGIC 0x4b494c4eu /* "KILN" */

/* The ELF section of a built module that holds the bundle: SHT_PROGBITS,
 * no flags (not allocated), 16-byte aligned in the file. */
#define KILN_BUNDLE_SECTION ".kiln.bundle"

/* The name of the capsule attribute of kiln._runtime and of the capsule. */
#define KILN_MODULE_LOADER_ATTRIBUTE "module_loader"
#define KILN_MODULE_LOADER_CAPSULE "kiln._runtime.module_loader"

/* Host code of one specialization. `block` is null when the kernel's threads
 * run as fibers (manifest: "block_entry": false): warp collectives,
 * activemask, nanosleep, a raise. */
typedef struct KilnHostEntries {
  KilnCpuKernelEntry thread;
  KilnCpuKernelEntry block;
} KilnHostEntries;

/* The first four fields keep their place in every format version, so that
 * a runtime can tell a module of another version and refuse it. */
typedef struct KilnModuleImage {
  uint32_t magic;               /* KILN_MODULE_IMAGE_MAGIC */
  uint32_t formatVersion;       /* KILN_MODULE_FORMAT_VERSION */
  uint32_t cpuAbiVersion;       /* KILN_CPU_ABI_VERSION of the host code */
  uint32_t specializationCount; /* rows of hostEntries */
  const char *moduleName;       /* dotted, NUL-terminated: "pkg.kernels" */
  /* Null since format 2: the bundle is not in memory but in the file's
   * KILN_BUNDLE_SECTION (format 1 pointed at an allocated constant). */
  const uint8_t *bundle;
  uint64_t bundleSize; /* bytes of KILN_BUNDLE_SECTION */
  const KilnHostEntries *hostEntries;
  /* The bundle header's manifestChecksum: ties the section found in the
   * file to this image (format 2). */
  uint64_t manifestChecksum;
} KilnModuleImage;

/* What kiln._runtime's capsule holds: creates the module object (a new
 * reference) or sets an exception and returns null. PyObject is opaque here
 * so that this header needs no Python headers. */
typedef void *(*KilnModuleLoader)(const KilnModuleImage *image);

/* The bundle starts with this header (little-endian, as every Kiln target). */
#define KILN_BUNDLE_MAGIC "KILNBNDL"

typedef struct KilnBundleHeader {
  char magic[8];           /* KILN_BUNDLE_MAGIC, no NUL */
  uint32_t formatVersion;  /* KILN_MODULE_FORMAT_VERSION */
  uint32_t headerSize;     /* sizeof(KilnBundleHeader) */
  uint64_t manifestOffset; /* from the start of the bundle */
  uint64_t manifestSize;   /* bytes of UTF-8 JSON, no NUL */
  uint64_t manifestChecksum;
  uint64_t payloadOffset; /* 16-byte aligned; blobs are 16-byte aligned in it */
  uint64_t payloadSize;
} KilnBundleHeader;

/* The checksum of manifests and blobs: a 64-bit hash of the bytes, not
 * cryptographic (it detects damage, not tampering) but fast enough to check
 * every fat binary at import. Words are read little-endian. Manifests write
 * it as 16 lowercase hex digits. */
static inline uint64_t kilnChecksumMix(uint64_t value) {
  value ^= value >> 33;
  value *= 0xff51afd7ed558ccdull;
  value ^= value >> 33;
  value *= 0xc4ceb9fe1a85ec53ull;
  value ^= value >> 33;
  return value;
}

static inline uint64_t kilnChecksum(const void *data, uint64_t size) {
  const uint8_t *bytes = (const uint8_t *)data;
  /* Four independent lanes, so that the multiplications pipeline. */
  uint64_t lanes[4] = {0x9e3779b97f4a7c15ull, 0xbf58476d1ce4e5b9ull, 0x94d049bb133111ebull,
                       0x2545f4914f6cdd1dull};
  uint64_t offset = 0;
  for (; offset + 32 <= size; offset += 32)
    for (int lane = 0; lane < 4; ++lane) {
      uint64_t word;
      memcpy(&word, bytes + offset + 8 * lane, 8);
      lanes[lane] = (lanes[lane] ^ word) * 0x9fb21c651e98df25ull;
      lanes[lane] ^= lanes[lane] >> 29;
    }
  uint64_t hash = size;
  for (int lane = 0; lane < 4; ++lane)
    hash = kilnChecksumMix(hash ^ lanes[lane]);
  for (; offset < size; ++offset)
    hash = (hash ^ bytes[offset]) * 0x100000001b3ull;
  return kilnChecksumMix(hash);
}

#ifdef __cplusplus
}
#endif

#endif /* KILN_MODULE_FORMAT_H */
