"""A package whose kernels Kiln compiled (tests/integrations/cmake)."""
