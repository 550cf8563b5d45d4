from ordinary.ops import blurred, gained, mixed

__all__ = ["blurred", "gained", "mixed"]
