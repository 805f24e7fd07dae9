# -*- Python -*-
import os

import lit.formats
import lit.util
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "HUMMING"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.humming_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs", "Unit"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%humming_src_root", config.humming_src_root))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%mlir_obj_dir", config.mlir_obj_dir))
config.substitutions.append(
    ("%humming_lib", os.path.join(config.humming_obj_root, "lib", "libhumming.so")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
# FileCheck, not and count come from LLVM's tools directory.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.humming_tools_dir, config.llvm_tools_dir]
tools = ["humming-opt", "humming-inspect", "humming-translate", "humming-gpu-test",
         "humming-contract",
         "humming-capi-test"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

if config.ptxas and os.path.exists(config.ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.ptxas))
config.substitutions.append(
    ("%humming_opt_path", os.path.join(config.humming_tools_dir, "humming-opt")))
config.substitutions.append(
    ("%humming_translate_path",
     os.path.join(config.humming_tools_dir, "humming-translate")))
# nvJitLink loads (the default compiler uses it, with ptxas for the
# kernels that need whole-program compilation).
try:
    import ctypes
    for soname in ("libnvJitLink.so.13", "libnvJitLink.so.12", "libnvJitLink.so"):
        try:
            ctypes.CDLL(soname)
            config.available_features.add("nvjitlink")
            break
        except OSError:
            pass
except ImportError:
    pass
if config.humming_static_llvm:
    config.available_features.add("static-llvm")
# The installed package and a compiler built against it (test/Install):
# needs cmake and ninja.
import shutil
if shutil.which("cmake") and shutil.which("ninja"):
    config.available_features.add("downstream")
config.substitutions.append(("%humming_src", config.humming_src_root))
config.substitutions.append(("%humming_obj", config.humming_obj_root))
config.substitutions.append(("%mlir_dir", config.mlir_dir))
config.substitutions.append(("%cxx", config.cxx_compiler))
if config.humming_unittests:
    config.available_features.add("unittests")
# The libFuzzer targets (fuzz/; clang builds): bounded runs and the replay
# of every input they once found (fuzz/regressions/).
if config.humming_fuzzers:
    config.available_features.add("fuzzers")
    llvm_config.add_tool_substitutions(config.humming_fuzzers.split(";"), tool_dirs)
    # The MLIR libraries are not instrumented: container annotations would
    # mismatch across the boundary.
    config.environment["ASAN_OPTIONS"] = "detect_container_overflow=0"
