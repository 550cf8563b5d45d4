//===- runtime/extension/module_image.cpp - Loading built modules ---------===//
//
// A built module's PyInit_ calls the `module_loader` capsule's function with
// its KilnModuleImage (module/format.h). The loader finds the bundle in the
// section .kiln.bundle of the module's file (dladdr(image);
// module/elf_section_reader.h: a file cut short or with garbled section
// headers says so), maps it, and checks the image and the bundle with the
// check `kiln audit` runs (module/module_check.h), all of it that does not
// grow with the number of kernels: versions, header, the manifest's
// checksum, the manifest as bounded JSON and its outline (the module, one
// entry per specialization with its name and kind, the constants). Only
// then does it wrap the image in a ModuleImage and call
// kiln._loader.create_module(image), which builds the module object from
// those names. Any damage found so far becomes an ImportError naming the
// module and what is damaged, never a crash.
//
// The rest is checked per kernel, when it is first needed, so that an
// import costs the same with 1 or 500 kernels: a specialization's manifest
// entry (every key the runtime reads, the parameter layout) when
// ModuleImage.entry() hands it to its kernel at the kernel's first use, and
// its fat binary against its checksum just before a GPU first loads it
// (fatBinaryIntact(); the kernels of an image share one fat binary, read
// once). The bundle is mapped, so a fat binary's pages are
// read only then; the CPU engine, which runs the host code, reads none.
// Damage found there is a RuntimeError of that first use, naming the
// module and what is damaged.
//
//===----------------------------------------------------------------------===//

#include "runtime/extension/module_image.h"

#include "module/elf_section_reader.h"
#include "module/module_check.h"
#include "runtime/extension/dispatcher.h"

#include <cerrno>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <new>
#include <optional>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::extension {

PyTypeObject *moduleImageType = nullptr;

namespace {

ModuleImageObject *asImage(PyObject *self) {
  return reinterpret_cast<ModuleImageObject *>(self);
}

void *raiseImportError(const std::string &message, const char *moduleName) {
  PyObject *text = PyUnicode_FromString(message.c_str());
  PyObject *name = moduleName ? PyUnicode_FromString(moduleName) : nullptr;
  if (text)
    PyErr_SetImportError(text, name ? name : Py_None, nullptr);
  Py_XDECREF(text);
  Py_XDECREF(name);
  return nullptr;
}

void *damaged(const char *moduleName, const std::string &what) {
  return raiseImportError(std::string("kiln: module '") + moduleName + "' is damaged: " + what +
                              "; rebuild it with kiln build",
                          moduleName);
}

void *incompatible(const char *moduleName, const module::ModuleCheck &check) {
  std::string by = check.kilnVersion.empty() ? "" : " (" + check.kilnVersion + ")";
  return raiseImportError(std::string("kiln: module '") + moduleName +
                              "' was built by an incompatible Kiln" + by + ": " + check.problem +
                              "; rebuild it with the kiln build of this Kiln",
                          moduleName);
}

/// Whether [offset, offset + size) lies in [0, limit), without overflow.
bool inside(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

/// Closes a descriptor when it goes out of scope.
struct FileDescriptor {
  int value = -1;
  ~FileDescriptor() {
    if (value >= 0)
      close(value);
  }
};

/// The bundle of a format-2 image: the section KILN_BUNDLE_SECTION of the
/// file that holds the image (its path in `modulePath`), mapped read-only
/// for the life of the process (fat binaries are loaded lazily from it).
/// Null with an ImportError set when it cannot be had.
const uint8_t *mapBundle(const KilnModuleImage *image, const char *name, std::string &modulePath) {
  Dl_info info;
  if (!dladdr(image, &info) || !info.dli_fname || !*info.dli_fname)
    return static_cast<const uint8_t *>(
        raiseImportError(std::string("kiln: cannot find the file of module '") + name +
                             "' to read its kernel data (dladdr failed)",
                         name));
  const char *path = info.dli_fname;
  modulePath = path;
  FileDescriptor file;
  file.value = open(path, O_RDONLY | O_CLOEXEC);
  if (file.value < 0)
    return static_cast<const uint8_t *>(damaged(name, std::string("its file '") + path +
                                                          "' cannot be opened (" +
                                                          std::strerror(errno) + ")"));
  struct stat status;
  if (fstat(file.value, &status) != 0 || !S_ISREG(status.st_mode))
    return static_cast<const uint8_t *>(
        damaged(name, std::string("its file '") + path + "' is not a regular file"));
  module::DescriptorByteSource source(file.value, uint64_t(status.st_size));
  module::SectionLocation section;
  std::string problem;
  if (!module::locateElfSection(source, KILN_BUNDLE_SECTION, "kernel data", image->bundleSize,
                                section, problem))
    return static_cast<const uint8_t *>(damaged(name, problem));
  long pageSize = sysconf(_SC_PAGESIZE);
  uint64_t page = pageSize > 0 ? uint64_t(pageSize) : 4096;
  uint64_t start = section.fileOffset - section.fileOffset % page;
  uint64_t skip = section.fileOffset - start;
  void *mapping = mmap(nullptr, skip + section.size, PROT_READ, MAP_PRIVATE, file.value,
                       static_cast<off_t>(start));
  if (mapping == MAP_FAILED)
    return static_cast<const uint8_t *>(damaged(
        name, std::string("its kernel data cannot be mapped (") + std::strerror(errno) + ")"));
  return static_cast<const uint8_t *>(mapping) + skip;
}

/// Drops the resident pages of [start, start + size), a part of a read-only
/// file mapping, which stays valid: touched again, it is read from the file.
void releasePages(const uint8_t *start, uint64_t size) {
  long pageSize = sysconf(_SC_PAGESIZE);
  uintptr_t page = pageSize > 0 ? uintptr_t(pageSize) : 4096;
  uintptr_t begin = reinterpret_cast<uintptr_t>(start) / page * page;
  uintptr_t end = reinterpret_cast<uintptr_t>(start) + size;
  // Only an advice: a failure leaves the pages resident, nothing worse.
  (void)madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
}

/// The kilnChecksum of the regular file at `path`, or nothing when it
/// cannot be read whole (missing, a folder, unreadable).
std::optional<uint64_t> fileChecksum(const std::string &path) {
  FileDescriptor file;
  file.value = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat status;
  if (file.value < 0 || fstat(file.value, &status) != 0 || !S_ISREG(status.st_mode))
    return std::nullopt;
  std::string bytes;
  char buffer[65536];
  for (;;) {
    ssize_t got = read(file.value, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return std::nullopt;
    if (got == 0)
      break;
    bytes.append(buffer, size_t(got));
  }
  return kilnChecksum(bytes.data(), bytes.size());
}

/// The path of the file the module was built from, when it sits beside the
/// module (at `modulePath`) and has changed since: the user edited the
/// kernels and did not rebuild. Else None.
PyObject *changedSourceBeside(const std::string &modulePath, const module::ManifestIndex &index) {
  if (index.sourceFile.empty() || !index.sourceChecksum ||
      index.sourceFile.find('/') != std::string::npos)
    Py_RETURN_NONE;
  size_t slash = modulePath.rfind('/');
  std::string source =
      (slash == std::string::npos ? std::string() : modulePath.substr(0, slash + 1)) +
      index.sourceFile;
  std::optional<uint64_t> checksum = fileChecksum(source);
  if (!checksum || *checksum == *index.sourceChecksum)
    Py_RETURN_NONE;
  return PyUnicode_DecodeFSDefault(source.c_str());
}

/// The module's name, if the image is sane enough to have one.
const char *moduleNameOf(const KilnModuleImage *image) {
  if (!image->moduleName || !memchr(image->moduleName, '\0', 1024))
    return nullptr;
  return image->moduleName;
}

/// (name, kind) of each specialization of `index`.
PyObject *specializationNames(const module::ManifestIndex &index) {
  PyObject *names = PyTuple_New(Py_ssize_t(index.specializations.size()));
  for (size_t i = 0; names && i < index.specializations.size(); ++i) {
    const module::ManifestIndex::Entry &entry = index.specializations[i];
    PyObject *pair = Py_BuildValue("(s#s#)", entry.name.data(), Py_ssize_t(entry.name.size()),
                                   entry.kind.data(), Py_ssize_t(entry.kind.size()));
    if (!pair) {
      Py_CLEAR(names);
      break;
    }
    PyTuple_SetItem(names, Py_ssize_t(i), pair);
  }
  return names;
}

PyObject *createImageObject(const KilnModuleImage *image, const uint8_t *bundle,
                            const KilnBundleHeader &header, const module::ManifestIndex &index,
                            const std::string &modulePath) {
  PyObject *self = allocateObject(moduleImageType);
  if (!self)
    return nullptr;
  ModuleImageObject *object = asImage(self);
  object->image = image;
  object->payload = bundle + header.payloadOffset;
  object->payloadSize = header.payloadSize;
  object->manifest = reinterpret_cast<const char *>(bundle) + header.manifestOffset;
  object->manifestSize = header.manifestSize;
  object->constants = {index.constantsBegin, index.constantsEnd};
  object->entries = new (std::nothrow) std::vector<std::pair<size_t, size_t>>();
  object->intactFatBinaries =
      new (std::nothrow) std::set<std::tuple<const uint8_t *, uint64_t, uint64_t>>();
  if (object->entries) {
    object->entries->reserve(index.specializations.size());
    for (const module::ManifestIndex::Entry &entry : index.specializations)
      object->entries->emplace_back(entry.begin, entry.end);
  }
  object->name = PyUnicode_FromString(image->moduleName);
  object->specializations = specializationNames(index);
  object->changedSource = changedSourceBeside(modulePath, index);
  if (!object->entries || !object->intactFatBinaries || !object->name || !object->specializations ||
      !object->changedSource) {
    bool noMemory = !object->entries || !object->intactFatBinaries;
    Py_DECREF(self);
    return noMemory ? PyErr_NoMemory() : nullptr;
  }
  return self;
}

/// An empty extension module for the image. The import system wants a
/// module made from a PyModuleDef (single-phase initialization), one per
/// module; built modules are never unloaded, so neither is the definition.
PyObject *newModule(const KilnModuleImage *image) {
  auto *definition = new (std::nothrow) PyModuleDef{PyModuleDef_HEAD_INIT,
                                                    image->moduleName,
                                                    nullptr,
                                                    -1,
                                                    nullptr,
                                                    nullptr,
                                                    nullptr,
                                                    nullptr,
                                                    nullptr};
  if (!definition)
    return PyErr_NoMemory();
  PyObject *module = PyModule_Create(definition);
  if (!module)
    delete definition;
  return module;
}

/// The KilnModuleLoader in the capsule.
void *loadModule(const KilnModuleImage *image) {
  if (!image)
    return raiseImportError("kiln: a built module passed no image to the runtime", nullptr);
  const char *name = moduleNameOf(image);
  if (image->magic != KILN_MODULE_IMAGE_MAGIC || !name)
    return raiseImportError("kiln: a built module is damaged: its image has no valid header; "
                            "rebuild it with kiln build",
                            name);
  module::ImageFacts facts;
  facts.formatVersion = image->formatVersion;
  facts.cpuAbiVersion = image->cpuAbiVersion;
  facts.specializationCount = image->specializationCount;
  facts.bundleSize = image->bundleSize;
  facts.manifestChecksum = image->manifestChecksum;
  facts.moduleName = name;
  // Versions first: a module of another format is refused before its
  // bundle, whose layout this runtime may not know, is read.
  module::ModuleCheck check = module::checkImage(facts);
  if (!check.sound())
    return incompatible(name, check);
  if (image->bundle || image->bundleSize < sizeof(KilnBundleHeader))
    return damaged(name, "its image is damaged (bundle pointer or size)");
  if (image->specializationCount && !image->hostEntries)
    return damaged(name, "its table of host entry points is missing");
  std::string modulePath;
  const uint8_t *bundleBytes = mapBundle(image, name, modulePath);
  if (!bundleBytes)
    return nullptr;
  module::ManifestIndex index;
  check = module::checkModule(
      facts, std::string_view(reinterpret_cast<const char *>(bundleBytes), image->bundleSize),
      module::CheckScope::DeferPerKernel, &index);
  // The pages of the bundle the check read (the header and the manifest)
  // are not needed until a kernel's first use reads its own entry again.
  releasePages(bundleBytes, image->bundleSize);
  if (check.verdict == module::ModuleVerdict::Incompatible)
    return incompatible(name, check);
  if (!check.sound())
    return damaged(name, check.problem);
  KilnBundleHeader header;
  std::memcpy(&header, bundleBytes, sizeof header);

  PyObject *imageObject = createImageObject(image, bundleBytes, header, index, modulePath);
  if (!imageObject)
    return nullptr;
  PyObject *module = newModule(image);
  PyObject *loader = module ? PyImport_ImportModule("kiln._loader") : nullptr;
  PyObject *created =
      loader ? PyObject_CallMethod(loader, "create_module", "OO", imageObject, module) : nullptr;
  Py_XDECREF(loader);
  Py_XDECREF(module);
  Py_DECREF(imageObject);
  return created;
}

//===-- ModuleImage -------------------------------------------------------===//

void deallocate(PyObject *self) {
  Py_XDECREF(asImage(self)->name);
  Py_XDECREF(asImage(self)->specializations);
  Py_XDECREF(asImage(self)->changedSource);
  delete asImage(self)->entries;
  delete asImage(self)->intactFatBinaries;
  freeObject(self);
}

/// Parses (offset, size) and checks that they lie in the payload.
bool payloadRange(ModuleImageObject *image, PyObject *args, const char *format,
                  unsigned long long &offset, unsigned long long &size) {
  if (!PyArg_ParseTuple(args, format, &offset, &size))
    return false;
  if (!inside(offset, size, image->payloadSize)) {
    PyErr_Format(PyExc_ValueError,
                 "kiln: bytes [%llu, %llu + %llu) lie outside the payload of %llu bytes", offset,
                 offset, size, static_cast<unsigned long long>(image->payloadSize));
    return false;
  }
  return true;
}

PyObject *blob(PyObject *self, PyObject *args) {
  unsigned long long offset, size;
  ModuleImageObject *image = asImage(self);
  if (!payloadRange(image, args, "KK:blob", offset, size))
    return nullptr;
  char *start = const_cast<char *>(reinterpret_cast<const char *>(image->payload + offset));
  return PyMemoryView_FromMemory(start, static_cast<Py_ssize_t>(size), PyBUF_READ);
}

PyObject *checksum(PyObject *self, PyObject *args) {
  unsigned long long offset, size;
  ModuleImageObject *image = asImage(self);
  if (!payloadRange(image, args, "KK:checksum", offset, size))
    return nullptr;
  return PyLong_FromUnsignedLongLong(kilnChecksum(image->payload + offset, size));
}

PyObject *hasBlockEntry(PyObject *self, PyObject *indexObject) {
  ModuleImageObject *image = asImage(self);
  Py_ssize_t index = PyLong_AsSsize_t(indexObject);
  if (index == -1 && PyErr_Occurred())
    return nullptr;
  if (index < 0 || size_t(index) >= image->image->specializationCount) {
    PyErr_Format(PyExc_IndexError, "kiln: specialization %zd of %u", index,
                 image->image->specializationCount);
    return nullptr;
  }
  return PyBool_FromLong(image->image->hostEntries[index].block != nullptr);
}

/// The bytes [range.first, range.second) of the manifest.
PyObject *manifestPart(ModuleImageObject *image, std::pair<size_t, size_t> range) {
  return PyBytes_FromStringAndSize(image->manifest + range.first,
                                   Py_ssize_t(range.second - range.first));
}

PyObject *entry(PyObject *self, PyObject *indexObject) {
  ModuleImageObject *image = asImage(self);
  Py_ssize_t index = PyLong_AsSsize_t(indexObject);
  if (index == -1 && PyErr_Occurred())
    return nullptr;
  if (index < 0 || size_t(index) >= image->entries->size()) {
    PyErr_Format(PyExc_IndexError, "kiln: specialization %zd of %zu", index,
                 image->entries->size());
    return nullptr;
  }
  std::pair<size_t, size_t> range = (*image->entries)[size_t(index)];
  std::optional<std::string> problem = module::checkSpecialization(
      std::string_view(image->manifest + range.first, range.second - range.first), size_t(index),
      std::string_view(reinterpret_cast<const char *>(image->payload), image->payloadSize));
  if (problem)
    return PyErr_Format(PyExc_RuntimeError,
                        "kiln: module '%s' is damaged: %s; rebuild it with kiln build",
                        image->image->moduleName, problem->c_str());
  return manifestPart(image, range);
}

PyObject *getName(PyObject *self, void *) {
  return Py_NewRef(asImage(self)->name);
}
PyObject *getManifest(PyObject *self, void *) {
  return manifestPart(asImage(self), {0, asImage(self)->manifestSize});
}
PyObject *getSpecializations(PyObject *self, void *) {
  return Py_NewRef(asImage(self)->specializations);
}
PyObject *getConstants(PyObject *self, void *) {
  ModuleImageObject *image = asImage(self);
  if (image->constants.first == image->constants.second)
    Py_RETURN_NONE;
  return manifestPart(image, image->constants);
}
PyObject *getChangedSource(PyObject *self, void *) {
  return Py_NewRef(asImage(self)->changedSource);
}
PyObject *getFatBinariesRead(PyObject *self, void *) {
  return PyLong_FromUnsignedLongLong(asImage(self)->fatBinariesRead);
}
PyObject *getCount(PyObject *self, void *) {
  return PyLong_FromUnsignedLong(asImage(self)->image->specializationCount);
}
PyObject *getPayloadSize(PyObject *self, void *) {
  return PyLong_FromUnsignedLongLong(asImage(self)->payloadSize);
}

PyMethodDef methods[] = {
    {"blob", blob, METH_VARARGS,
     "blob(offset, size) -> memoryview: read-only bytes of the payload."},
    {"checksum", checksum, METH_VARARGS,
     "checksum(offset, size) -> int: kilnChecksum of bytes of the payload."},
    {"has_block_entry", hasBlockEntry, METH_O,
     "has_block_entry(index) -> bool: whether specialization `index` has a block entry."},
    {"entry", entry, METH_O,
     "entry(index) -> bytes: the JSON text of specialization `index`'s manifest entry, "
     "checked as kiln audit checks it (RuntimeError: the module is damaged)."},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef accessors[] = {
    {"name", getName, nullptr, "The module's dotted name.", nullptr},
    {"manifest", getManifest, nullptr, "The manifest (bytes of UTF-8 JSON).", nullptr},
    {"specializations", getSpecializations, nullptr,
     "(name, kind) of each specialization, in manifest order.", nullptr},
    {"constants", getConstants, nullptr, "The JSON text of the manifest's constants, or None.",
     nullptr},
    {"changed_source", getChangedSource, nullptr,
     "The path of the source file beside the module when it has changed since the module was "
     "built from it, else None.",
     nullptr},
    {"fat_binaries_read", getFatBinariesRead, nullptr,
     "Fat binaries read so far: each is read at its first launch on a GPU.", nullptr},
    {"specialization_count", getCount, nullptr, "Rows of the host entry table.", nullptr},
    {"payload_size", getPayloadSize, nullptr, "Bytes of fat binaries.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyType_Slot slots[] = {
    {Py_tp_doc, const_cast<char *>("The image of a built kernel module (made by the loader).")},
    {Py_tp_dealloc, reinterpret_cast<void *>(deallocate)},
    {Py_tp_methods, methods},
    {Py_tp_getset, accessors},
    {0, nullptr},
};

PyType_Spec spec = {"kiln._runtime.ModuleImage", sizeof(ModuleImageObject), 0,
                    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, slots};

} // namespace

bool fatBinaryIntact(Specialization &chosen) {
  if (chosen.fatBinaryChecked.load(std::memory_order_acquire) || !chosen.image ||
      !chosen.kernel.fatbin)
    return true;
  ModuleImageObject *image = chosen.image;
  std::tuple<const uint8_t *, uint64_t, uint64_t> fatbin{
      chosen.kernel.fatbin, chosen.kernel.fatbinSize, chosen.fatBinaryChecksum};
  if (image->intactFatBinaries->count(fatbin)) {
    chosen.fatBinaryChecked.store(true, std::memory_order_release);
    return true;
  }
  ++image->fatBinariesRead;
  std::optional<std::string> problem =
      module::checkFatBinary(std::string_view(reinterpret_cast<const char *>(chosen.kernel.fatbin),
                                              chosen.kernel.fatbinSize),
                             chosen.fatBinaryChecksum, chosen.kernel.name, chosen.index);
  if (problem) {
    PyErr_Format(PyExc_RuntimeError, "kiln: module '%s' is damaged: %s; rebuild it with kiln build",
                 image->image->moduleName, problem->c_str());
    return false;
  }
  image->intactFatBinaries->insert(fatbin);
  chosen.fatBinaryChecked.store(true, std::memory_order_release);
  return true;
}

bool addModuleLoader(PyObject *module) {
  PyObject *type = PyType_FromSpec(&spec);
  moduleImageType = reinterpret_cast<PyTypeObject *>(type);
  if (!type || PyModule_AddObjectRef(module, "ModuleImage", type) < 0)
    return false;
  KilnModuleLoader loader = loadModule;
  PyObject *capsule =
      PyCapsule_New(reinterpret_cast<void *>(loader), KILN_MODULE_LOADER_CAPSULE, nullptr);
  return addType(module, KILN_MODULE_LOADER_ATTRIBUTE, capsule);
}

} // namespace kiln::extension
