"""Functions given jitted implementations with numba.extending.overload (or
numba.cuda.extending.overload), and methods given them with
overload_method, as kernels call them.

Numba chooses an implementation by calling the overload's typing function
with the Numba types of a call's arguments; the function it returns is
compiled in place of the call. Kiln's compiler runs no Python while it
types a kernel, so the dispatcher does this part: a kernel's build names
the calls it could not resolve (CompileError.overload_requests), resolve()
calls the typing function for each, and the dispatcher builds again with
the implementation compiled as a device function.

Overloaded functions travel to the compiler as host values by a key of
their own (encode()), with the implementations resolved so far."""

import re
import sys
import types

from kiln._types import split_top_level

# key -> (the overloaded function's or method's name, its typing function),
# for the process's lifetime (the function objects are the registry's,
# which Numba keeps alive too).
_TYPING = {}
# key -> {argument types: (module path, name the implementation is compiled under)}
_RESOLVED = {}
_REGISTRIES = ("numba.cuda.typing.templates", "numba.core.typing.templates")


# Per registry: (how many globals it had, {id of a function: its typing
# function}), read again when the registry grows.
_INDEXES = {}


def typing_function(function):
    """The typing function numba.extending.overload registered for
    `function`, or None."""
    for module_name in _REGISTRIES:
        registry = getattr(sys.modules.get(module_name), "builtin_registry", None)
        registered = list(getattr(registry, "globals", ()))
        size, index = _INDEXES.get(module_name, (-1, {}))
        if size != len(registered):
            index = {}
            for candidate, numba_type in registered:
                for template in getattr(numba_type, "templates", ()):
                    overload = getattr(template, "_overload_func", None)
                    if overload is not None:
                        index[id(candidate)] = (candidate, overload)
            _INDEXES[module_name] = (len(registered), index)
        found = index.get(id(function))
        if found is not None and found[0] is function:
            return found[1]
    return None


def method_values():
    """The host values of the methods user code registered with
    numba.extending.overload_method (the compiler's "@methods"):
    {"receiver.method": an overload}, the receiver a Numba type's name or
    its class's. Numba's own (`Array.sum`, `CharSeq.upper`, ... once
    numba.np is imported) are implementations for Numba's targets, which
    Kiln's compiler has its own of where it supports them: they are left
    out, so that kernels get Kiln's answer and builds do not carry them."""
    methods = {}
    for module_name in _REGISTRIES:
        for name, key, method, typing in _method_templates(module_name):
            if name not in methods:  # a method registered with both registries
                _TYPING[key] = (method, typing)
                methods[name] = _value(method, key)
    return methods


# Per registry: (how many attribute templates it had, [(receiver.method,
# key, method, typing function)]), read again when the registry grows.
_METHOD_INDEXES = {}


def _method_templates(module_name):
    module = sys.modules.get(module_name)
    registered = list(getattr(getattr(module, "builtin_registry", None), "attributes", ()))
    size, found = _METHOD_INDEXES.get(module_name, (-1, []))
    if size == len(registered):
        return found
    method_template = getattr(module, "_OverloadMethodTemplate", None)
    found = []
    for template in registered:
        if method_template is None or not (isinstance(template, type)
                                           and issubclass(template, method_template)):
            continue
        if _is_numbas(template._overload_func):
            continue
        receiver = template.key.__name__ if isinstance(template.key, type) else str(template.key)
        name = f"{receiver}.{template._attr}"
        found.append((name, f"{name}@{id(template):x}", template._attr, template._overload_func))
    _METHOD_INDEXES[module_name] = (len(registered), found)
    return found


def _is_numbas(function):
    module = getattr(function, "__module__", None) or ""
    return module == "numba" or module.startswith(("numba.", "numba_cuda"))


def key_of(function):
    return f"{function.__module__}.{function.__qualname__}@{id(function):x}"


def encode(value):
    """The host value of an overloaded Python function, or None for any
    other value."""
    typing = typing_function(value) if isinstance(value, types.FunctionType) else None
    if typing is None:
        return None
    key = key_of(value)
    _TYPING[key] = (value.__name__, typing)
    return _value(value.__name__, key)


def _value(name, key):
    return {"kind": "overload", "name": name, "key": key,
            "resolved": [[argument_types, path, compiled_as]
                         for argument_types, (path, compiled_as) in sorted(_RESOLVED.get(key, {}).items())]}


# A keyword argument's type: "z=int64".
_KEYWORD = re.compile(r"([A-Za-z_]\w*)=")


class UnresolvableOverload(TypeError):
    """An overload's typing function gave no implementation for a call."""


def implementation(key, argument_types, arguments):
    """The Python function the overload of `key` gives for arguments of
    Kiln's types `arguments` ("int64", or "name=int64" for a keyword
    argument): its typing function called with their Numba types;
    UnresolvableOverload if it gives none."""
    name, typing = _TYPING[key]
    positional, keywords = [], {}
    for text in arguments:
        keyword = _KEYWORD.match(text)
        if keyword:
            keywords[keyword.group(1)] = numba_type(text[keyword.end():])
        else:
            positional.append(numba_type(text))
    chosen = typing(*positional, **keywords)
    if isinstance(chosen, tuple) and len(chosen) == 2:  # (signature, implementation)
        chosen = chosen[1]
    if not isinstance(chosen, types.FunctionType):
        raise UnresolvableOverload(
            f"the overload of '{name}' has no implementation for {argument_types}")
    return chosen


def resolved(key, argument_types, path, name):
    """Records that the implementation for `argument_types` is compiled as
    `name` of the module at `path`."""
    _RESOLVED.setdefault(key, {})[argument_types] = (path, name)


def numba_type(text):
    """The Numba type a Kiln type string names ("int64", "array(float32, 1d,
    C)", "UniTuple(int64 x 2)"); an opaque type named by the text for the
    types Numba has no spelling of here (functions passed as arguments)."""
    from numba.cuda import types as numba_types

    text = text.strip()
    readonly = text.startswith("readonly ")
    if readonly:
        text = text[len("readonly "):].strip()
    scalar = getattr(numba_types, "boolean" if text == "bool" else text, None)
    if isinstance(scalar, numba_types.Type):
        return scalar
    if text.startswith("array(") and text.endswith(")"):
        element, rank, layout = split_top_level(text[len("array("):-1])
        return numba_types.Array(numba_type(element), int(rank.rstrip("d")), layout, readonly=readonly)
    if text.startswith("UniTuple(") and text.endswith(")"):
        element, _, count = text[len("UniTuple("):-1].rpartition(" x ")
        return numba_types.UniTuple(numba_type(element), int(count))
    if text.startswith("Tuple(") and text.endswith(")"):
        return numba_types.Tuple([numba_type(part) for part in split_top_level(text[len("Tuple("):-1])])
    return numba_types.Opaque(text)
