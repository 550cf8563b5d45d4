"""The warnings Kiln's runtime gives, in a module of their own so that the
package's modules raise them without importing the package's __init__."""


class StaleModuleWarning(UserWarning):
    """A built kernel module was imported while the source file it was built
    from, beside it, has changed since: the module runs the kernels as they
    were when it was built."""

    __module__ = "kiln"  # where users import it from
