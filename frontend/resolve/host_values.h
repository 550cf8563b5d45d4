//===- frontend/resolve/host_values.h --------------------------*- C++ -*-===//
//
// [Note: host values]
// In a module that stays Python, host code computes globals Kiln cannot
// evaluate from the source: `TABLE = np.cos(np.linspace(0, 1, 64))`,
// `from .config import SCALE`. Numba reads such globals from the running
// module when it compiles a kernel and freezes them in (NumPy arrays as
// read-only constant arrays). Kiln does the same through a HostValueSource:
// the dispatcher hands over the live module's values; `kiln build` asks a
// Python interpreter to import the module. Values travel as JSON, one
// object per module file:
//
//   {"/abs/pkg/kernels.py": {"TABLE": {"kind": "array", "dtype": "float64",
//                                       "shape": [64], "order": "C",
//                                       "data": "<hex>"},
//                            "SCALE": {"kind": "float", "data": "<hex>"}}}
//
// Scalars and array elements are in the machine's byte order; "int",
// "float", "bool" and "complex" are Python's (int within int64), "scalar"
// is a NumPy scalar of "dtype", "tuple" holds "items" (a named tuple's also
// its "class" and "fields"), and "function" names
// a device function by the "file" and "name" it is compiled under. The free
// variables of a closure the build compiles (ClosureRequest) are host values
// of its module named "<closure name>.<variable>". A module global that is a
// closure (`add_one = make_kernel(inc)`) is a "closure": the "line" its
// definition starts on, its "enclosing" function and its free "variables".
// A "str" is a string's "text" (for print and exception messages). A
// "symbol" is something kernels use by its qualified "name", as an import
// would bind it: a module (`numba.cuda`), a type (`numba.float64`,
// `numpy.int32`) or a function (`math.sin`, `numpy.sin`). An "enum" is an
// enum.Enum or IntEnum class ("int" says which) whose "members" are
// [name, value] pairs, values being numbers or tuples of them. A
// "device_array" (an object with __cuda_array_interface__: a device array)
// has a "dtype", "shape", byte "strides" and the "address" of its data in
// the process that hands the values over, which kernels compiled there
// capture it by; `kiln build` gets no address, as the process that made
// the array is gone. A "set" of strings ("items", sorted) is for the
// decorators that take one (`fastmath={"nsz", "arcp"}`), not for kernels.
// An "overload" is a Python function given a jitted implementation with
// numba.extending.overload, whose typing function runs on Numba's types: by
// its "name", the "key" host code knows it by, and the implementations
// "resolved" so far, [argument types, module file, name of the function
// compiled for them] triples. Kiln's compiler runs no Python while it types a kernel: a
// call for argument types not yet resolved is a compile error, and a
// request to the host value source (requestOverload), which host code may
// answer by resolving it and building again. Methods numba.extending's
// overload_method gives types are overloads too, under the key "@methods",
// which is no file: {"@methods": {"Array.norm2": {"kind": "overload", ...}}}
// names each by the receiver, a Numba type's name ("float64") or its class's
// ("Array"), and the method; the typing function takes the receiver's type
// first.
// A "namedtuple_class" is a named tuple class (collections.namedtuple,
// typing.NamedTuple) kernels call to make one: its "name" and "fields".
// A "record_type" is a structured dtype used as a type (a NumPy dtype, or
// the Numba Record type numba.from_dtype makes of one): its "fields",
// "itemsize" and "aligned" flag, as a record array's. A "module" is a
// module of Python source by its "name" and "file", which
// kernels read as one of their own package (`from stumpy import core` in
// the package's tests). A "namespace" is a module host code made with no
// source (`types.ModuleType("mymod")`, then `mymod.add = add`): its "name"
// and its "members", [name, value] pairs, which kernels read as its
// attributes.
//
// A name the module's source does not bind, a host value of the module
// still gives it: the globals of a function `exec` made from a string, or of
// a notebook cell, are what the running code defined elsewhere.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/JSON.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// The key of the host values' overloaded methods (see [Note: host values]).
inline constexpr llvm::StringLiteral methodOverloadsKey = "@methods";

struct HostValue {
  enum class Kind : uint8_t {
    Int,
    Float,
    Bool,
    Complex,
    Scalar,
    Array,
    Tuple,
    Function,
    Closure,
    Symbol,
    String,
    Enum,
    DeviceArray,
    Set,
    Module,
    Namespace,
    RecordType,
    NamedTupleClass,
    Overload,
    DeclaredDevice,
  };
  Kind kind = Kind::Int;
  /// NumPy's name of the element type, for Scalar and Array: "float32";
  /// "record" for an array of a structured dtype, whose fields follow.
  std::string dtype;
  struct RecordField {
    std::string name;
    std::string dtype; ///< NumPy's name of its type: "float64"
    unsigned offset = 0;
    std::vector<uint64_t> shape; ///< a field holding an array: its extents
  };
  std::vector<RecordField> recordFields;
  unsigned recordSize = 0;
  bool recordAligned = false;
  std::vector<uint64_t> shape; // Array, DeviceArray
  /// Array: the elements in Fortran order ("order": "F"), else C order.
  bool fortranOrder = false;
  /// DeviceArray: its byte strides, and where its data is in the running
  /// process; no address where the build runs elsewhere (kiln build).
  std::vector<int64_t> strides;
  std::optional<uint64_t> address;
  /// The value's bytes (for an array, its elements in C order); shared, as
  /// every kernel reading a table refers to the one copy.
  std::shared_ptr<const std::string> data;
  std::vector<HostValue> items; // Tuple, Set
  /// Function: the module file (canonical path) and the name it has there.
  /// Module: its file, and its name in `text`.
  std::string functionFile;
  std::string functionName;
  /// Closure: where it is defined, and what it closes over.
  uint32_t line = 0;
  std::string enclosing;
  std::vector<std::string> variables;
  /// String: its text. Symbol: its qualified name, "numba.cuda". Enum,
  /// NamedTupleClass: the class's name. Namespace: the module's.
  std::string text;
  /// Enum: whether it is an IntEnum. Enum, Namespace: the members' names
  /// (their values are `items`, in the same order). A named tuple, its
  /// class: the fields.
  bool isIntEnum = false;
  std::vector<std::string> memberNames;
  /// Overload: the implementations resolved so far, by argument types
  /// ("(int64, UniTuple(int64 x 1))"), each a function compiled for them,
  /// by its module's file and name; its key is `functionName`, its name
  /// `text`.
  struct Implementation {
    std::string argumentTypes;
    std::string file;
    std::string function;
  };
  std::vector<Implementation> resolved;
  /// DeclaredDevice (cuda.declare_device): its link name is `text`, its
  /// signature the Numba signature string `signature`, and the files it
  /// links (absolute paths) `linkFiles`.
  std::string signature;
  std::vector<std::string> linkFiles;
  bool cooperative = false;
  bool cAbi = false; ///< declared with abi="c"
};

/// A call of an overloaded function (HostValue::Kind::Overload) for
/// argument types it has no implementation for yet.
struct OverloadRequest {
  std::string file;
  std::string key;
  std::string argumentTypes; // "(int64, float32)", as `resolved` keys them
  std::vector<std::string> arguments;
  bool operator==(const OverloadRequest &other) const {
    return file == other.file && key == other.key && argumentTypes == other.argumentTypes;
  }
};

/// Where the values of module globals computed at import come from.
class HostValueSource {
public:
  virtual ~HostValueSource();
  /// The value of `name` in the module whose source is `file` (an absolute
  /// path with symbolic links resolved), or null if it has none Kiln can
  /// use (host code's objects: functions, classes, strings, lists).
  virtual const HostValue *lookup(llvm::StringRef file, llvm::StringRef name) = 0;
  /// The overload numba.extending.overload_method registered for method
  /// `method` of `receiver` (a Numba type's name, "float64", or the name of
  /// a class of them, "Array"); null if there is none.
  virtual const HostValue *lookupMethod(llvm::StringRef receiver, llvm::StringRef method);
  /// Notes that a kernel calls an overloaded function for argument types it
  /// has no implementation for; thread-safe. What asked may resolve them
  /// (overloadRequests()) and build again.
  void requestOverload(OverloadRequest request);
  std::vector<OverloadRequest> overloadRequests() const;

private:
  mutable std::mutex requestsMutex;
  std::vector<OverloadRequest> requests;
};

/// Host values given up front, as JSON.
class HostValueTable final : public HostValueSource {
public:
  /// Reads the JSON of [Note: host values]; an error names what is wrong
  /// and where.
  static llvm::Expected<std::unique_ptr<HostValueTable>> fromJson(llvm::StringRef json);
  /// Adds the values of one module, given as the JSON object of its names.
  llvm::Error addModuleJson(llvm::StringRef file, llvm::StringRef json);

  const HostValue *lookup(llvm::StringRef file, llvm::StringRef name) override;
  const HostValue *lookupMethod(llvm::StringRef receiver, llvm::StringRef method) override;

private:
  llvm::Error addModule(llvm::StringRef file, const llvm::json::Value &names);
  llvm::Error addMethods(const llvm::json::Value &methods);
  llvm::StringMap<llvm::StringMap<HostValue>> modules;
  /// Overloaded methods, by "receiver.method".
  llvm::StringMap<HostValue> methods;
};

/// `path` made absolute, with symbolic links resolved, as host values name
/// their modules.
std::string canonicalModulePath(llvm::StringRef path);

} // namespace kiln
