//===- frontend/resolve/host_values.cpp -----------------------------------===//
//
// Reads the JSON in which host code describes the values its modules
// computed at import (see [Note: host values] in host_values.h), one reader
// per kind of value, and looks those values up.
//
//===----------------------------------------------------------------------===//

#include "frontend/resolve/host_values.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/Path.h>

namespace kiln {

HostValueSource::~HostValueSource() = default;

void HostValueSource::requestOverload(OverloadRequest request) {
  std::lock_guard<std::mutex> lock(requestsMutex);
  if (!llvm::is_contained(requests, request))
    requests.push_back(std::move(request));
}

const HostValue *HostValueSource::lookupMethod(llvm::StringRef, llvm::StringRef) {
  return nullptr;
}

std::vector<OverloadRequest> HostValueSource::overloadRequests() const {
  std::lock_guard<std::mutex> lock(requestsMutex);
  return requests;
}

namespace {

/// Appends the strings of `array` to `out`; false if an item is no string.
bool readStrings(const llvm::json::Array &array, std::vector<std::string> &out) {
  for (const llvm::json::Value &item : array) {
    std::optional<llvm::StringRef> text = item.getAsString();
    if (!text)
      return false;
    out.push_back(text->str());
  }
  return true;
}

/// The fields of a record array's dtype: "fields", "itemsize", "aligned".
bool readRecordFields(const llvm::json::Object &object, HostValue &value) {
  const llvm::json::Array *fields = object.getArray("fields");
  std::optional<int64_t> size = object.getInteger("itemsize");
  std::optional<bool> aligned = object.getBoolean("aligned");
  if (!fields || !size || *size <= 0 || *size > (1 << 30) || !aligned)
    return false;
  for (const llvm::json::Value &entry : *fields) {
    const llvm::json::Array *field = entry.getAsArray();
    if (!field || (field->size() != 3 && field->size() != 4))
      return false;
    std::optional<llvm::StringRef> fieldName = (*field)[0].getAsString();
    std::optional<llvm::StringRef> dtype = (*field)[1].getAsString();
    std::optional<int64_t> offset = (*field)[2].getAsInteger();
    if (!fieldName || !dtype || !offset || *offset < 0 || *offset >= *size)
      return false;
    std::vector<uint64_t> shape;
    if (field->size() == 4) {
      const llvm::json::Array *extents = (*field)[3].getAsArray();
      if (!extents || extents->empty())
        return false;
      for (const llvm::json::Value &extent : *extents) {
        std::optional<int64_t> number = extent.getAsInteger();
        if (!number || *number < 1 || *number > (1 << 30))
          return false;
        shape.push_back(uint64_t(*number));
      }
    }
    value.recordFields.push_back(
        {fieldName->str(), dtype->str(), unsigned(*offset), std::move(shape)});
  }
  value.recordSize = unsigned(*size);
  value.recordAligned = *aligned;
  return !value.recordFields.empty();
}

llvm::Error valueError(llvm::StringRef file, llvm::StringRef name, const llvm::Twine &problem) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "host value '" + name + "' of " + file + ": " + problem);
}

llvm::Expected<HostValue> readValue(const llvm::json::Value &json, llvm::StringRef file,
                                    llvm::StringRef name);

/// A "tuple" or "set" of "items"; a named tuple's "class" and "fields" too.
llvm::Expected<HostValue> readSequence(const llvm::json::Object &object, llvm::StringRef kind,
                                       llvm::StringRef file, llvm::StringRef name) {
  HostValue value;
  value.kind = kind == "set" ? HostValue::Kind::Set : HostValue::Kind::Tuple;
  const llvm::json::Array *items = object.getArray("items");
  if (!items)
    return valueError(file, name, "a " + kind.str() + " needs \"items\"");
  for (const llvm::json::Value &item : *items) {
    llvm::Expected<HostValue> element = readValue(item, file, name);
    if (!element)
      return element.takeError();
    value.items.push_back(std::move(*element));
  }
  // A named tuple: its "class" and its "fields", one an item.
  if (std::optional<llvm::StringRef> className = object.getString("class")) {
    const llvm::json::Array *fields = object.getArray("fields");
    if (!fields || fields->size() != value.items.size())
      return valueError(file, name, "a named tuple needs \"fields\", one for each item");
    if (!readStrings(*fields, value.memberNames))
      return valueError(file, name, "a named tuple's fields are strings");
    value.text = className->str();
  }
  return value;
}

/// The kinds that name a file: a function by the "name" it is compiled
/// under there, a module by its own.
llvm::Expected<HostValue> readFileReference(const llvm::json::Object &object, llvm::StringRef kind,
                                            llvm::StringRef file, llvm::StringRef name) {
  HostValue value;
  bool isFunction = kind == "function";
  value.kind = isFunction ? HostValue::Kind::Function : HostValue::Kind::Module;
  std::optional<llvm::StringRef> definedIn = object.getString("file");
  std::optional<llvm::StringRef> named = object.getString("name");
  if (!definedIn || !named)
    return valueError(file, name, "a " + kind.str() + " needs a \"file\" and a \"name\"");
  value.functionFile = canonicalModulePath(*definedIn);
  (isFunction ? value.functionName : value.text) = named->str();
  return value;
}

/// The kinds that are one string: a str's "text", a symbol's "name".
llvm::Expected<HostValue> readText(const llvm::json::Object &object, llvm::StringRef kind,
                                   llvm::StringRef file, llvm::StringRef name) {
  HostValue value;
  bool isString = kind == "str";
  value.kind = isString ? HostValue::Kind::String : HostValue::Kind::Symbol;
  llvm::StringRef field = isString ? "text" : "name";
  std::optional<llvm::StringRef> text = object.getString(field);
  if (!text)
    return valueError(file, name, "a " + kind + " needs a \"" + field + "\"");
  value.text = text->str();
  return value;
}

/// An overload: its "name", the "key" typing it and the overloads host
/// code "resolved".
llvm::Expected<HostValue> readOverload(const llvm::json::Object &object, llvm::StringRef file,
                                       llvm::StringRef name) {
  HostValue value;
  value.kind = HostValue::Kind::Overload;
  std::optional<llvm::StringRef> ownName = object.getString("name");
  std::optional<llvm::StringRef> key = object.getString("key");
  const llvm::json::Array *resolved = object.getArray("resolved");
  if (!ownName || !key || !resolved)
    return valueError(file, name, "an overload needs a \"name\", a \"key\" and \"resolved\"");
  value.text = ownName->str();
  value.functionName = key->str();
  for (const llvm::json::Value &entry : *resolved) {
    const llvm::json::Array *triple = entry.getAsArray();
    std::vector<std::string> parts;
    if (!triple || !readStrings(*triple, parts) || parts.size() != 3)
      return valueError(file, name,
                        "an overload's \"resolved\" holds [argument types, module file, "
                        "function] triples");
    value.resolved.push_back({parts[0], parts[1], parts[2]});
  }
  return value;
}

/// A function cuda.declare_device declared: its "symbol", "signature",
/// "link" files, "cooperative" flag and "abi".
llvm::Expected<HostValue> readDeclaredDevice(const llvm::json::Object &object, llvm::StringRef file,
                                             llvm::StringRef name) {
  HostValue value;
  value.kind = HostValue::Kind::DeclaredDevice;
  std::optional<llvm::StringRef> symbol = object.getString("symbol");
  std::optional<llvm::StringRef> signature = object.getString("signature");
  const llvm::json::Array *link = object.getArray("link");
  std::optional<bool> cooperative = object.getBoolean("cooperative");
  std::optional<llvm::StringRef> abi = object.getString("abi");
  if (!symbol || !signature || !link || !cooperative || !readStrings(*link, value.linkFiles) ||
      !abi || (*abi != "numba" && *abi != "c"))
    return valueError(file, name,
                      "a declared device function needs a \"symbol\", a \"signature\", "
                      "\"link\" (file names), \"cooperative\" and \"abi\" (numba or c)");
  value.cAbi = *abi == "c";
  value.text = symbol->str();
  value.signature = signature->str();
  value.cooperative = *cooperative;
  return value;
}

/// A named tuple class: its "name" and "fields".
llvm::Expected<HostValue> readNamedTupleClass(const llvm::json::Object &object,
                                              llvm::StringRef file, llvm::StringRef name) {
  HostValue value;
  value.kind = HostValue::Kind::NamedTupleClass;
  std::optional<llvm::StringRef> className = object.getString("name");
  const llvm::json::Array *fields = object.getArray("fields");
  if (!className || !fields)
    return valueError(file, name, "a named tuple class needs a \"name\" and \"fields\"");
  if (!readStrings(*fields, value.memberNames))
    return valueError(file, name, "a named tuple class's fields are strings");
  value.text = className->str();
  return value;
}

/// A structured dtype used as a type (cuda.shared.array(n, dtype=dt)).
llvm::Expected<HostValue> readRecordType(const llvm::json::Object &object, llvm::StringRef file,
                                         llvm::StringRef name) {
  HostValue value;
  value.kind = HostValue::Kind::RecordType;
  if (!readRecordFields(object, value))
    return valueError(file, name,
                      "a record type needs \"fields\" ([name, dtype, offset] or [name, dtype, "
                      "offset, shape] each), \"itemsize\" and \"aligned\"");
  return value;
}

/// The kinds with named members: an enum's, a namespace's attributes.
llvm::Expected<HostValue> readMembers(const llvm::json::Object &object, llvm::StringRef kind,
                                      llvm::StringRef file, llvm::StringRef name) {
  HostValue value;
  bool isEnum = kind == "enum";
  value.kind = isEnum ? HostValue::Kind::Enum : HostValue::Kind::Namespace;
  std::optional<llvm::StringRef> ownName = object.getString("name");
  std::optional<bool> isIntEnum = isEnum ? object.getBoolean("int") : std::optional(false);
  const llvm::json::Array *members = object.getArray("members");
  if (!ownName || !isIntEnum || !members)
    return valueError(file, name,
                      isEnum ? "an enum needs a \"name\", \"int\" and \"members\""
                             : "a namespace needs a \"name\" and \"members\"");
  value.text = ownName->str();
  value.isIntEnum = *isIntEnum;
  for (const llvm::json::Value &member : *members) {
    const llvm::json::Array *pair = member.getAsArray();
    std::optional<llvm::StringRef> memberName =
        pair && pair->size() == 2 ? (*pair)[0].getAsString() : std::nullopt;
    if (!memberName)
      return valueError(file, name,
                        "a" + llvm::Twine(isEnum ? "n " : " ") + kind +
                            "'s members are [name, value] pairs");
    llvm::Expected<HostValue> memberValue = readValue((*pair)[1], file, name);
    if (!memberValue)
      return memberValue.takeError();
    value.memberNames.push_back(memberName->str());
    value.items.push_back(std::move(*memberValue));
  }
  return value;
}

/// A closure: the "line" its definition starts on, the "enclosing"
/// function and the free "variables".
llvm::Expected<HostValue> readClosure(const llvm::json::Object &object, llvm::StringRef file,
                                      llvm::StringRef name) {
  HostValue value;
  value.kind = HostValue::Kind::Closure;
  std::optional<int64_t> line = object.getInteger("line");
  std::optional<llvm::StringRef> enclosing = object.getString("enclosing");
  const llvm::json::Array *variables = object.getArray("variables");
  if (!line || *line <= 0 || *line > INT32_MAX || !enclosing || !variables)
    return valueError(file, name, "a closure needs a \"line\", \"enclosing\" and \"variables\"");
  value.line = uint32_t(*line);
  value.enclosing = enclosing->str();
  if (!readStrings(*variables, value.variables))
    return valueError(file, name, "a closure's variables are strings");
  return value;
}

/// A device array: its "dtype", "shape", "strides" and, if known, "address".
llvm::Expected<HostValue> readDeviceArray(const llvm::json::Object &object, llvm::StringRef file,
                                          llvm::StringRef name) {
  HostValue value;
  value.kind = HostValue::Kind::DeviceArray;
  std::optional<llvm::StringRef> dtype = object.getString("dtype");
  const llvm::json::Array *shape = object.getArray("shape");
  const llvm::json::Array *strides = object.getArray("strides");
  if (!dtype || !shape || !strides || shape->size() != strides->size())
    return valueError(file, name,
                      "a device array needs a \"dtype\", and a \"shape\" and \"strides\" of "
                      "the same length");
  value.dtype = dtype->str();
  for (size_t d = 0; d < shape->size(); ++d) {
    std::optional<int64_t> extent = (*shape)[d].getAsInteger();
    std::optional<int64_t> stride = (*strides)[d].getAsInteger();
    if (!extent || *extent < 0 || !stride)
      return valueError(file, name,
                        "a device array's shape holds non-negative integers, its strides "
                        "integers");
    value.shape.push_back(uint64_t(*extent));
    value.strides.push_back(*stride);
  }
  if (const llvm::json::Value *address = object.get("address")) {
    std::optional<uint64_t> where = address->getAsUINT64();
    if (!where)
      return valueError(file, name, "a device array's \"address\" is a non-negative integer");
    value.address = *where;
  }
  return value;
}

/// The kinds whose bytes are their "data": numbers, NumPy scalars (with
/// their "dtype") and arrays (with their "dtype", "shape" and "order").
llvm::Expected<HostValue> readData(const llvm::json::Object &object, llvm::StringRef kind,
                                   llvm::StringRef file, llvm::StringRef name) {
  HostValue value;
  static const std::pair<llvm::StringLiteral, HostValue::Kind> kinds[] = {
      {"int", HostValue::Kind::Int},       {"float", HostValue::Kind::Float},
      {"bool", HostValue::Kind::Bool},     {"complex", HostValue::Kind::Complex},
      {"scalar", HostValue::Kind::Scalar}, {"array", HostValue::Kind::Array}};
  auto known = llvm::find_if(kinds, [&](const auto &entry) { return entry.first == kind; });
  if (known == std::end(kinds))
    return valueError(file, name, "unknown kind \"" + kind + "\"");
  value.kind = known->second;
  if (value.kind == HostValue::Kind::Scalar || value.kind == HostValue::Kind::Array) {
    std::optional<llvm::StringRef> dtype = object.getString("dtype");
    if (!dtype)
      return valueError(file, name, "no \"dtype\"");
    value.dtype = dtype->str();
  }
  if (value.kind == HostValue::Kind::Array) {
    const llvm::json::Array *shape = object.getArray("shape");
    if (!shape)
      return valueError(file, name, "an array needs a \"shape\"");
    for (const llvm::json::Value &extent : *shape) {
      std::optional<int64_t> number = extent.getAsInteger();
      if (!number || *number < 0)
        return valueError(file, name, "a shape holds non-negative integers");
      value.shape.push_back(uint64_t(*number));
    }
    std::optional<llvm::StringRef> order = object.getString("order");
    if (order && *order != "C" && *order != "F")
      return valueError(file, name, "an array's \"order\" is \"C\" or \"F\"");
    value.fortranOrder = order && *order == "F";
    if (value.dtype == "record" && !readRecordFields(object, value))
      return valueError(file, name,
                        "a record array needs \"fields\" ([name, dtype, offset] each), "
                        "\"itemsize\" and \"aligned\"");
  }
  std::optional<llvm::StringRef> hex = object.getString("data");
  std::string bytes;
  if (!hex || !llvm::tryGetFromHex(*hex, bytes))
    return valueError(file, name, "\"data\" must be hexadecimal digits");
  value.data = std::make_shared<const std::string>(std::move(bytes));
  return value;
}

llvm::Expected<HostValue> readValue(const llvm::json::Value &json, llvm::StringRef file,
                                    llvm::StringRef name) {
  const llvm::json::Object *object = json.getAsObject();
  if (!object)
    return valueError(file, name, "expected an object");
  std::optional<llvm::StringRef> kind = object->getString("kind");
  if (!kind)
    return valueError(file, name, "no \"kind\"");
  if (*kind == "tuple" || *kind == "set")
    return readSequence(*object, *kind, file, name);
  if (*kind == "function" || *kind == "module")
    return readFileReference(*object, *kind, file, name);
  if (*kind == "str" || *kind == "symbol")
    return readText(*object, *kind, file, name);
  if (*kind == "overload")
    return readOverload(*object, file, name);
  if (*kind == "declared_device")
    return readDeclaredDevice(*object, file, name);
  if (*kind == "namedtuple_class")
    return readNamedTupleClass(*object, file, name);
  if (*kind == "record_type")
    return readRecordType(*object, file, name);
  if (*kind == "enum" || *kind == "namespace")
    return readMembers(*object, *kind, file, name);
  if (*kind == "closure")
    return readClosure(*object, file, name);
  if (*kind == "device_array")
    return readDeviceArray(*object, file, name);
  return readData(*object, *kind, file, name);
}

} // namespace

llvm::Expected<std::unique_ptr<HostValueTable>> HostValueTable::fromJson(llvm::StringRef json) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(json);
  if (!parsed)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "host values are not valid JSON: " +
                                       llvm::toString(parsed.takeError()));
  const llvm::json::Object *files = parsed->getAsObject();
  if (!files)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "host values must be a JSON object of module files");
  auto table = std::make_unique<HostValueTable>();
  for (const auto &[file, names] : *files)
    if (llvm::Error error = llvm::StringRef(file) == methodOverloadsKey
                                ? table->addMethods(names)
                                : table->addModule(file.str(), names))
      return error;
  return table;
}

llvm::Error HostValueTable::addModuleJson(llvm::StringRef file, llvm::StringRef json) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(json);
  if (!parsed)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "host values of " + file + " are not valid JSON: " + llvm::toString(parsed.takeError()));
  return addModule(file, *parsed);
}

llvm::Error HostValueTable::addModule(llvm::StringRef file, const llvm::json::Value &names) {
  const llvm::json::Object *values = names.getAsObject();
  if (!values)
    return valueError(file, "", "expected an object of names");
  llvm::StringMap<HostValue> &module = modules[canonicalModulePath(file)];
  for (const auto &[name, value] : *values) {
    llvm::Expected<HostValue> read = readValue(value, file, name.str());
    if (!read)
      return read.takeError();
    module[name.str()] = std::move(*read);
  }
  return llvm::Error::success();
}

llvm::Error HostValueTable::addMethods(const llvm::json::Value &json) {
  const llvm::json::Object *overloads = json.getAsObject();
  if (!overloads)
    return valueError(methodOverloadsKey, "", "expected an object of \"receiver.method\" names");
  for (const auto &[name, value] : *overloads) {
    llvm::Expected<HostValue> read = readValue(value, methodOverloadsKey, name.str());
    if (!read)
      return read.takeError();
    if (read->kind != HostValue::Kind::Overload || !llvm::StringRef(name).contains('.'))
      return valueError(methodOverloadsKey, name.str(),
                        "an overloaded method is an overload named \"receiver.method\"");
    methods[name.str()] = std::move(*read);
  }
  return llvm::Error::success();
}

const HostValue *HostValueTable::lookupMethod(llvm::StringRef receiver, llvm::StringRef method) {
  auto found = methods.find((receiver + "." + method).str());
  return found == methods.end() ? nullptr : &found->second;
}

const HostValue *HostValueTable::lookup(llvm::StringRef file, llvm::StringRef name) {
  auto module = modules.find(file);
  if (module == modules.end())
    return nullptr;
  auto value = module->second.find(name);
  return value == module->second.end() ? nullptr : &value->second;
}

std::string canonicalModulePath(llvm::StringRef path) {
  llvm::SmallString<256> real;
  if (!llvm::sys::fs::real_path(path, real))
    return std::string(real);
  llvm::SmallString<256> absolute(path);
  llvm::sys::fs::make_absolute(absolute);
  llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
  return std::string(absolute);
}

} // namespace kiln
