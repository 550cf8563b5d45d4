# Typed IR in, written by hand with no Python behind it, and the LLVM IR or
# PTX the back end lowers it to (or its key lines) out.
import os

lit_config.load_config(config, os.path.join(os.path.dirname(__file__), "..", "..", "lit_common.cfg.py"))
config.name = "backend-checks"
config.suffixes = [".typed"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(lit_config.params["exec_root"], config.name)
