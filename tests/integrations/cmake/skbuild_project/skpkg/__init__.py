"""A scikit-build-core package with one Kiln kernel module."""
