from ordinary.ops import blurred, mixed

__all__ = ["blurred", "mixed"]
