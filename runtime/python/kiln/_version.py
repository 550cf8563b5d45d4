"""The version of Kiln's runtime, in a module of its own so that the
package's modules read it without importing the package's __init__."""

VERSION = "0.1.0"
