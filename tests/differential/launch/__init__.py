"""The parts of the launch-index generator; launch_programs.py is its
entry, and its docstring the overview of the design."""
