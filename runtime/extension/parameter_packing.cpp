//===- runtime/extension/parameter_packing.cpp - Arguments to parameters --===//
//
// The chosen specialization's parameter slots (from the manifest's
// "params") say, for each machine parameter, which argument and which part
// of it (value, real/imaginary part, data pointer, shape, stride, record
// pointer) it carries, and its machine type. Each gets one 8-byte cell of a
// stack buffer, and the launch gets an array of pointers to the cells,
// exactly as cuLaunchKernel and the CPU engine's entry points take them.
//
// Scalars are converted to the specialization's type here (Numba's casts:
// truncation for integers, round-to-nearest for floats, != 0 for bool).
// On a GPU target, NumPy arrays (and record scalars) are staged: the extent
// of the array is copied to a device allocation before the launch and back
// after it (the stream synchronized first, as Numba does); read-only arrays
// are not copied back.
//
//===----------------------------------------------------------------------===//

#include "runtime/extension/dispatcher.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace kiln::extension {
namespace {

/// A double to an integer type, saturating (NaN is 0), instead of the
/// undefined behaviour of a plain cast.
template <typename Int> Int integerFromDouble(double value) {
  if (std::isnan(value))
    return 0;
  if (value <= double(std::numeric_limits<Int>::min()))
    return std::numeric_limits<Int>::min();
  if (value >= double(std::numeric_limits<Int>::max()))
    return std::numeric_limits<Int>::max();
  return Int(value);
}

struct Number {
  bool integer;
  bool isSigned;
  int64_t i;
  uint64_t u;
  double real, imaginary;
};

Number numberOf(const TypeNode &node, const ArgumentValue &value) {
  Number number{};
  auto kind = ScalarKind(node.element);
  if (isRecordElement(node.element)) {
    // A datetime64 or timedelta64: its int64 count.
    number.integer = number.isSigned = true;
    number.i = value.i;
    number.u = value.u;
    return number;
  }
  if (kind == ScalarKind::Bool || isIntegerKind(kind)) {
    number.integer = true;
    number.isSigned = kind == ScalarKind::Bool || kind <= ScalarKind::I64;
    number.i = value.i;
    number.u = value.u;
    number.real = number.isSigned ? double(value.i) : double(value.u);
  } else {
    number.real = value.f;
    number.imaginary = isComplexKind(kind) ? value.imaginary : 0;
  }
  return number;
}

template <typename T> void store(uint64_t &cell, T value) {
  std::memcpy(&cell, &value, sizeof value);
}

template <typename Int> Int integerOf(const Number &number) {
  if (number.integer)
    return number.isSigned ? Int(number.i) : Int(number.u);
  return integerFromDouble<Int>(number.real);
}

void storeNumber(uint64_t &cell, MachineType type, bool toBool, double part, const Number &number) {
  if (toBool) {
    bool truth = number.integer ? number.u != 0 : (number.real != 0 || number.imaginary != 0);
    store(cell, uint8_t(truth));
    return;
  }
  switch (type) {
  case MachineType::I8:
    return store(cell, integerOf<int8_t>(number));
  case MachineType::I16:
    return store(cell, integerOf<int16_t>(number));
  case MachineType::I32:
    return store(cell, integerOf<int32_t>(number));
  case MachineType::I64:
    return store(cell, integerOf<int64_t>(number));
  case MachineType::U8:
    return store(cell, integerOf<uint8_t>(number));
  case MachineType::U16:
    return store(cell, integerOf<uint16_t>(number));
  case MachineType::U32:
    return store(cell, integerOf<uint32_t>(number));
  case MachineType::U64:
    return store(cell, integerOf<uint64_t>(number));
  case MachineType::F16:
    return store(cell, halfFromDouble(part));
  case MachineType::F32:
    return store(cell, float(part));
  case MachineType::F64:
    return store(cell, part);
  case MachineType::Pointer:
    // A CPointer's address, from the integer passed.
    return store(cell, number.integer ? number.u : uint64_t(0));
  }
}

/// Lowest and highest byte offsets an array touches, from its data pointer.
void extentOf(const TypeNode &node, const ArgumentValue &value, int64_t itemSize, int64_t &low,
              int64_t &high) {
  low = 0;
  high = itemSize;
  if (node.kind != TypeKind::Array)
    return;
  for (unsigned d = 0; d < node.ndim; ++d) {
    if (value.shape[d] == 0) {
      high = 0;
      return;
    }
    int64_t reach = (value.shape[d] - 1) * value.strides[d];
    (reach < 0 ? low : high) += reach;
  }
}

/// NumPy memory copied to the device for one launch.
struct Staging {
  ExecutionTarget *target;
  StreamHandle stream;
  CallArguments &call;
  // Indexed by host buffer (CallArguments::buffers).
  DevicePointer allocation[maxHostBuffers] = {};
  DevicePointer data[maxHostBuffers] = {};
  int64_t low[maxHostBuffers] = {};
  int64_t bytes[maxHostBuffers] = {};
  bool staged = false;

  Status stageIn() {
    staged = true;
    for (unsigned i = 0; i < call.nodeCount; ++i) {
      const ArgumentValue &value = call.values[i];
      if (value.buffer < 0)
        continue;
      unsigned b = unsigned(value.buffer);
      int64_t high;
      extentOf(call.nodes[i], value, call.buffers[b].itemsize, low[b], high);
      bytes[b] = high - low[b];
      if (bytes[b] <= 0) {
        data[b] = value.data;
        continue;
      }
      if (Status status = target->allocate(size_t(bytes[b]), allocation[b]); !status.ok())
        return status;
      const void *host = reinterpret_cast<const void *>(uintptr_t(value.data + uint64_t(low[b])));
      if (Status status = target->copyToDevice(allocation[b], host, size_t(bytes[b]), stream);
          !status.ok())
        return status;
      data[b] = allocation[b] - uint64_t(low[b]);
    }
    return Status::success();
  }

  /// Copies back on the launch's stream (ordered after the kernel), then
  /// waits: into page-locked memory the copies are asynchronous.
  Status stageOut() {
    Status status = Status::success();
    for (unsigned i = 0; status.ok() && i < call.nodeCount; ++i) {
      const ArgumentValue &value = call.values[i];
      if (value.buffer < 0)
        continue;
      unsigned b = unsigned(value.buffer);
      if (!allocation[b] || call.nodes[i].kind != TypeKind::Array || call.nodes[i].readonly)
        continue;
      void *host = reinterpret_cast<void *>(uintptr_t(value.data + uint64_t(low[b])));
      status = target->copyToHost(host, allocation[b], size_t(bytes[b]), stream);
    }
    return status.ok() ? target->synchronizeStream(stream) : status;
  }

  ~Staging() {
    for (DevicePointer pointer : allocation)
      if (pointer)
        target->release(pointer);
  }
};

/// The launching thread's state while it waits without the GIL.
struct SignalPoll {
  PyThreadState *state = nullptr;
};

/// Runs Python's pending signal handlers; true when one raised (Ctrl-C's
/// KeyboardInterrupt), whose exception then stays set for the launch to
/// report.
bool pollSignals(void *context) {
  auto *poll = static_cast<SignalPoll *>(context);
  PyEval_RestoreThread(poll->state);
  bool raised = PyErr_CheckSignals() != 0;
  poll->state = PyEval_SaveThread();
  return raised;
}

} // namespace

bool launchSpecialization(Specialization &chosen, CallArguments &call, const LaunchRequest &request,
                          bool dryRun) {
  ExecutionTarget *target = currentTarget();
  if (!target)
    return false;
  size_t count = chosen.parameters.size();
  if (count > maxParameters) {
    PyErr_Format(PyExc_TypeError, "kernel '%s' has %zu machine parameters, more than %u",
                 chosen.kernel.name.c_str(), count, maxParameters);
    return false;
  }
  if (!dryRun && target->runsFatBinaries() && !fatBinaryIntact(chosen))
    return false;
  if (!dryRun && !chosen.launchWarningGiven) {
    chosen.launchWarningGiven = true;
    std::string warning = target->launchWarning(chosen.kernel);
    if (!warning.empty() && PyErr_WarnEx(PyExc_RuntimeWarning, ("kiln: " + warning).c_str(), 1))
      return false;
  }
  bool stage = !dryRun && !target->sharesHostMemory() && call.bufferCount > 0;
  Staging staging{target, request.stream, call};
  if (stage) {
    Status status = withoutGil([&] { return staging.stageIn(); });
    if (!status.ok()) {
      raiseStatus(status);
      return false;
    }
  }

  uint64_t cells[maxParameters];
  void *pointers[maxParameters];
  for (size_t p = 0; p < count; ++p) {
    const ParameterSlot &slot = chosen.parameters[p];
    unsigned nodeIndex = call.argumentStart[slot.argument] + slot.node;
    // An IntEnum member passed for an integer: its value.
    if (call.nodes[nodeIndex].kind == TypeKind::Enum &&
        chosen.nodes[chosen.argumentStart[slot.argument] + slot.node].kind != TypeKind::Enum)
      ++nodeIndex;
    const TypeNode &node = call.nodes[nodeIndex];
    const ArgumentValue &value = call.values[nodeIndex];
    const TypeNode &wanted = chosen.nodes[chosen.argumentStart[slot.argument] + slot.node];
    uint64_t &cell = cells[p];
    cell = 0;
    switch (slot.role) {
    case ParameterRole::Data:
    case ParameterRole::Record:
      store(cell, uint64_t(staging.staged && value.buffer >= 0 ? staging.data[value.buffer]
                                                               : value.data));
      break;
    case ParameterRole::Shape:
      store(cell, value.shape[slot.dimension]);
      break;
    case ParameterRole::Stride:
      store(cell, value.strides[slot.dimension]);
      break;
    case ParameterRole::Value:
    case ParameterRole::Real:
    case ParameterRole::Imaginary: {
      Number number = numberOf(node, value);
      double part = slot.role == ParameterRole::Imaginary ? number.imaginary : number.real;
      bool toBool = slot.role == ParameterRole::Value && wanted.kind == TypeKind::Scalar &&
                    ScalarKind(wanted.element) == ScalarKind::Bool;
      storeNumber(cell, slot.type, toBool, part, number);
      break;
    }
    }
    pointers[p] = &cells[p];
  }
  if (dryRun)
    return true;

  // The GIL is released while the kernel runs; the poll takes it back for
  // a moment to let Python's signal handlers run (Ctrl-C).
  SignalPoll poll;
  runtime::LaunchDims dims = request.dims;
  dims.interrupt = {pollSignals, &poll};
  poll.state = PyEval_SaveThread();
  Status status = target->launch(chosen.kernel, dims, request.stream, pointers);
  if (stage) {
    Status copied = staging.stageOut();
    if (status.ok())
      status = copied;
  }
  PyEval_RestoreThread(poll.state);
  if (!status.ok()) {
    raiseStatus(status);
    return false;
  }
  return true;
}

} // namespace kiln::extension
