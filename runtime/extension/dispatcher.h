//===- runtime/extension/dispatcher.h - Kernel dispatch ---------*- C++ -*-===//
//
// [Note: dispatch]
// `kernel[griddim, blockdim, stream, sharedmem](*args)` runs, in C:
//
//   1. launch_config: parse and check the configuration (ValueError before
//      any argument is looked at); the result is a Launch object;
//   2. argument_classify: each argument becomes TypeNodes (its type, as
//      Numba's typeof would say) and ArgumentValues (where its data is);
//      NumPy arrays and scalars are read through the buffer protocol,
//      device arrays from their C fields;
//   3. specialization_select: the specialization whose argument types
//      match exactly, else the best conversion by Numba's rules (fewest
//      unsafe, then safe, then promoting conversions), else a TypeError
//      that names the argument and lists the compiled signatures;
//   4. parameter_packing: the values become the kernel's machine
//      parameters (docs/abi.md) in a fixed buffer of 8-byte cells, NumPy
//      arrays staged on the device when the target is a GPU, and the launch
//      runs with the GIL released.
//
// Everything a call needs lives on the C stack (CallArguments): no heap
// allocation on the way, and nothing shared but the dispatcher's
// specializations, which are immutable after construction, so that any
// number of Python threads may launch the same kernel at once.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/extension/argument_types.h"
#include "runtime/extension/runtime_module.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace kiln::extension {

/// Limits of one call: beyond them a call fails with a clear TypeError.
constexpr unsigned maxArguments = 64;
constexpr unsigned maxTypeNodes = 256;
constexpr unsigned maxHostBuffers = 64;
constexpr unsigned maxParameters = 1024;

struct ModuleImageObject;

enum class ParameterRole : uint8_t { Value, Real, Imaginary, Data, Shape, Stride, Record };
enum class MachineType : uint8_t { I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64, Pointer };

/// One machine parameter: where its value comes from.
struct ParameterSlot {
  uint16_t argument;
  uint16_t node; ///< node of the argument's type, relative to its first
  ParameterRole role;
  MachineType type;
  uint8_t dimension;
};

/// One compiled specialization of a kernel.
struct Specialization {
  runtime::KernelSpec kernel;
  std::string signature; ///< "(array(float32, 1d, C), int64)"
  std::vector<TypeNode> nodes;
  std::vector<uint16_t> argumentStart; ///< first node of each argument
  std::vector<ParameterSlot> parameters;
  /// False when an argument type is one dispatch cannot pass (it is listed
  /// in messages but never chosen).
  bool usable = true;
  /// The ModuleImage the code lies in (null: none, for tests), the row of
  /// the specialization in it and its fat binary's manifest checksum.
  ModuleImageObject *image = nullptr;
  size_t index = 0;
  uint64_t fatBinaryChecksum = 0;
  /// Set once the fat binary passed its checksum, before its first load.
  std::atomic<bool> fatBinaryChecked{false};
  /// Set at the first launch, after any launch warning (the target's
  /// launchWarning) was given: once per specialization. Under the GIL.
  bool launchWarningGiven = false;
};

struct DispatcherState {
  std::string name;
  std::vector<std::unique_ptr<Specialization>> specializations;
  std::vector<std::string> argumentNames; ///< empty when unknown
  unsigned arity = 0;
  /// Only a specialization whose types are the arguments' own is chosen,
  /// none by conversion: a kernel that specializes on demand (Numba's
  /// dispatcher while it can compile).
  bool exact = false;
};

struct DispatcherObject {
  PyObject_HEAD DispatcherState *state;
  PyObject *keep; ///< what the specializations point into (ModuleImages)
  /// A callable returning (specializations, arg_names), called at the first
  /// use of the dispatcher, when it was made from one; null after that.
  PyObject *pending;
  /// States replaced by `_replace`, kept until the object dies, so that
  /// nothing that chose one of their specializations is left dangling.
  std::vector<DispatcherState *> *retired;
};

/// What one argument node holds at run time.
struct ArgumentValue {
  // Scalars, as read: integers in i/u by signedness, floats in f,
  // complex numbers in f (real) and imaginary.
  union {
    int64_t i;
    uint64_t u;
    double f;
  };
  double imaginary;
  // Arrays and records.
  DevicePointer data;
  const int64_t *shape;
  const int64_t *strides;
  int16_t buffer; ///< index in CallArguments::buffers for host memory, else -1
};

/// Everything a call needs, on the stack.
struct CallArguments {
  unsigned count = 0;
  unsigned nodeCount = 0;
  uint16_t argumentStart[maxArguments];
  TypeNode nodes[maxTypeNodes];
  ArgumentValue values[maxTypeNodes];
  Py_buffer buffers[maxHostBuffers];
  unsigned bufferCount = 0;
  /// Device arrays kiln.cuda.devicearray made of foreign objects.
  PyObject *interopArrays[maxArguments];
  unsigned interopCount = 0;

  CallArguments() = default;
  CallArguments(const CallArguments &) = delete;
  CallArguments &operator=(const CallArguments &) = delete;
  ~CallArguments();
};

struct LaunchRequest {
  runtime::LaunchDims dims;
  StreamHandle stream = 0;
};

// argument_classify.cpp
/// Classifies `args`; false with a TypeError naming the argument.
bool classifyArguments(const DispatcherState &state, PyObject *const *args, size_t count,
                       StreamHandle stream, CallArguments &call);

// specialization_select.cpp
/// The specialization for `call`, or null with a TypeError set.
/// The specialization for `call`, or null with a TypeError set; `noMatch`
/// says whether the error is that none fits (as opposed to an ambiguity or
/// a wrong number of arguments).
Specialization *selectSpecialization(const DispatcherState &state, const CallArguments &call,
                                     bool &noMatch);
/// "argument 2 ('y') of 'add_kernel'"
std::string describeArgument(const DispatcherState &state, unsigned index);

// specialization_tuples.cpp
/// Adds the specializations of `specializations` (a sequence of the tuples
/// kiln.kernel makes) to `state`, and the images they point into to `keep`;
/// false with an exception set.
bool addSpecializations(DispatcherState &state, PyObject *specializations, PyObject *keep);
/// Sets the argument names of `state` from `argNames`, None or a sequence.
bool setArgumentNames(DispatcherState &state, PyObject *argNames);

// launch_config.cpp
/// Parses `kernel[...]`'s key; false with TypeError/ValueError set.
bool parseLaunchConfig(const DispatcherState &state, PyObject *key, LaunchRequest &request);
/// Checks the shared memory of `chosen` against the device; false with a
/// ValueError set.
bool checkSharedMemory(const DispatcherState &state, const Specialization &chosen,
                       const LaunchRequest &request);

// module_image.cpp
/// Checks the fat binary of `chosen` against its manifest checksum, once,
/// before a target that runs fat binaries first loads it; false with a
/// RuntimeError saying the module is damaged.
bool fatBinaryIntact(Specialization &chosen);

// parameter_packing.cpp
/// Packs, stages and launches; false with an exception set. With `dryRun`
/// it only packs (what `Launch.prepare` measures).
bool launchSpecialization(Specialization &chosen, CallArguments &call, const LaunchRequest &request,
                          bool dryRun);

} // namespace kiln::extension
