# lit configuration for the compiler's FileCheck tests.
import os
import shutil

import lit.formats

config.name = "dynqual-compiler"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = config.dq_obj_root
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in", "RunLit.cmake", "Inputs"]
# dynqual-opt first, then FileCheck and not from LLVM 22 (not on PATH on Debian).
config.environment["PATH"] = os.pathsep.join(
    [config.dq_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
# Memcheck tests catch use-after-free reads that an optimized build survives by chance. Valgrind
# cannot run a sanitized binary (ASan needs its runtime first); ASan checks the use-after-free reads.
if shutil.which("valgrind") and not config.dq_sanitize:
    config.available_features.add("valgrind")
# A sanitizer report exits with status 1 by default; aborting instead makes it a crash, so the
# injected-bug tests (`not --crash`) expect the same outcome in a sanitized build as in a plain one.
if config.dq_sanitize:
    for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
        config.environment[var] = ":".join(
            filter(None, [config.environment.get(var, ""), "abort_on_error=1"]))
