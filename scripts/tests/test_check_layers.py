#!/usr/bin/env python3
"""scripts/check_layers.py can fail: on small made-up trees it rejects an include from a lower
floor into a higher one and a loop between harness/lib folders, and accepts includes downwards,
tests, and includes it cannot resolve in the tree (system and library headers)."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "check_layers.py")


def tree(files):
    root = tempfile.mkdtemp(prefix="layers-")
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
    return root


def check(files):
    p = subprocess.run([sys.executable, SCRIPT, tree(files)], capture_output=True, text=True)
    return p.returncode, p.stdout


BASE = {
    "compiler/runtime/include/dq/runtime/Device.h": "#pragma once\n#include <vector>\n",
    "harness/include/dynqual/process/Process.h": "#pragma once\n",
    "harness/include/dynqual/exec/Executor.h": '#include "dynqual/process/Process.h"\n',
    "harness/lib/exec/Executor.cpp": '#include "dynqual/exec/Executor.h"\n#include "dq/runtime/Device.h"\n',
    "fuzz/include/dynqual/fuzz/Oracle.h": '#include "dynqual/exec/Executor.h"\n',
    "reports/include/dynqual/reports/Markdown.h": "#pragma once\n",
    "tools/dynqual/Main.cpp": '#include "dynqual/fuzz/Oracle.h"\n#include "dynqual/reports/Markdown.h"\n',
    "harness/test/exec/ExecutorTest.cpp": '#include "dynqual/fuzz/Oracle.h"\n',
    "compiler/lib/Pass.cpp": '#include "mlir/IR/Builders.h"\n#include "dq/runtime/Device.h"\n',
}


class CheckLayers(unittest.TestCase):
    def test_downward_includes_pass(self):
        rc, out = check(BASE)
        self.assertEqual(rc, 0, out)
        self.assertIn("layers ok", out)

    def test_compiler_including_harness_fails(self):
        rc, out = check({**BASE, "compiler/lib/Bad.cpp": '#include "dynqual/exec/Executor.h"\n'})
        self.assertEqual(rc, 1, out)
        self.assertIn("compiler/lib/Bad.cpp:1: includes harness/include/dynqual/exec/Executor.h", out)

    def test_harness_lib_including_fuzz_or_reports_or_mains_fails(self):
        for bad in ("dynqual/fuzz/Oracle.h", "dynqual/reports/Markdown.h"):
            rc, out = check({**BASE, "harness/lib/exec/Bad.cpp": f'#include "{bad}"\n'})
            self.assertEqual(rc, 1, out)
            self.assertIn("harness/lib/exec/Bad.cpp:1", out)
        rc, out = check({**BASE, "harness/lib/exec/Bad.cpp": '#include "../../../tools/dynqual/Main.cpp"\n'})
        self.assertEqual(rc, 1, out)
        self.assertIn("(tools)", out)

    def test_fuzz_including_the_mains_fails(self):
        rc, out = check({**BASE, "fuzz/lib/Bad.cpp": '#include "../../tools/dynqual/Main.cpp"\n'})
        self.assertEqual(rc, 1, out)
        self.assertIn("(tools)", out)

    def test_a_folder_loop_in_harness_lib_fails(self):
        rc, out = check({**BASE, "harness/include/dynqual/process/Process.h": '#include "dynqual/exec/Executor.h"\n'})
        self.assertEqual(rc, 1, out)
        self.assertIn("loop: exec <-> process", out)

    def test_usage_error(self):
        p = subprocess.run([sys.executable, SCRIPT, "/no/such/folder"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)


if __name__ == "__main__":
    unittest.main()
