# -*- Python -*-
# Runs the GoogleTest executables of unittests/ under lit (as upstream does),
# so `check-humming` covers them.
import os

import lit.formats

config.name = "HUMMING-Unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.humming_obj_root, "unittests")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
