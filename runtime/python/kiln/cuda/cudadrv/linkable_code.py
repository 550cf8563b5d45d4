"""`numba.cuda.cudadrv.linkable_code`: code to link into kernels, held in
memory. Kiln links files named in a kernel's `link=` option when `kiln
build` runs; these classes exist so that code naming them imports, and so
that their data can be written to the files the build links."""

import io
import os

__all__ = ["Archive", "CUSource", "Cubin", "Fatbin", "LTOIR", "LinkableCode", "Object", "PTXSource"]


class LinkableCode:
    """Code to link, from memory: `data` (bytes or str), `name` for messages."""

    kind = None
    default_name = "<unnamed>"

    def __init__(self, data, name=None, setup_callback=None, teardown_callback=None, nrt=False):
        for callback in ("setup_callback", "teardown_callback"):
            if locals()[callback] is not None and not callable(locals()[callback]):
                raise TypeError(f"{callback} must be callable")
        self._data = data
        self._name = name
        self.setup_callback = setup_callback
        self.teardown_callback = teardown_callback
        self.nrt = nrt

    @property
    def name(self):
        return self._name or self.default_name

    @property
    def data(self):
        if isinstance(self._data, (io.StringIO, io.BytesIO)):
            return self._data.getvalue()
        return self._data

    @staticmethod
    def from_path(path):
        """The code in the file `path`, of the kind its extension says."""
        root, extension = os.path.splitext(path)
        kind = _BY_EXTENSION.get(extension)
        if kind is None:
            raise ValueError(f"Don't know how to link {path}: its extension is not one of "
                             f"{', '.join(sorted(_BY_EXTENSION))}")
        with open(path, "r" if extension in (".cu", ".ptx") else "rb") as file:
            return kind(file.read(), name=os.path.basename(root))

    @classmethod
    def from_path_or_obj(cls, path_or_obj):
        return cls.from_path(path_or_obj) if isinstance(path_or_obj, str) else path_or_obj


def _kind(class_name, extension, description):
    return type(class_name, (LinkableCode,), {"kind": extension.lstrip("."), "__doc__": description,
                                              "default_name": f"<unnamed-{extension.lstrip('.')}>"})


PTXSource = _kind("PTXSource", ".ptx", "PTX source code in memory.")
CUSource = _kind("CUSource", ".cu", "CUDA C/C++ source code in memory.")
Fatbin = _kind("Fatbin", ".fatbin", "A fat binary in memory.")
Cubin = _kind("Cubin", ".cubin", "A cubin in memory.")
Archive = _kind("Archive", ".a", "An archive of objects in memory.")
Object = _kind("Object", ".o", "An object file in memory.")
LTOIR = _kind("LTOIR", ".ltoir", "LTO-IR in memory.")

_BY_EXTENSION = {f".{kind.kind}": kind for kind in (PTXSource, CUSource, Fatbin, Cubin, Archive, Object, LTOIR)}
for _class in _BY_EXTENSION.values():
    _class.__module__ = __name__
del _class
