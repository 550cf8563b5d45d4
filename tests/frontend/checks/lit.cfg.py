# Python source in, the typed IR the front end makes of it (or its key
# lines) out. A front-end bug that changed the typed IR gets a test here.
import os

lit_config.load_config(config, os.path.join(os.path.dirname(__file__), "..", "..", "lit_common.cfg.py"))
config.name = "frontend-checks"
config.suffixes = [".py"]
config.excludes = ["lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(lit_config.params["exec_root"], config.name)
