"""Tensor parallelism over torch.distributed (scripts/tp-block.py): a
Llama-style GPTQ MLP block sharded over ranks, one process each, its parts
added by all_reduce, against the float64 block of the unsharded weights,
eager, compiled and CUDA-graphed. With two GPUs over NCCL; with one, the
ranks emulated on it over gloo (the sharding and the reduction, not NCCL).
Without torch and a CUDA device the tests skip.
"""

import os
import subprocess
import sys
import unittest

from test_layer import _cuda

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                      "scripts", "tp-block.py")


def run(*args):
    p = subprocess.run([sys.executable, SCRIPT, "--hidden", "512",
                        "--intermediate", "1024", "--ms", "1,7,33", *args],
                       capture_output=True, text=True, timeout=900)
    return p.returncode, p.stdout + p.stderr


def gpus():
    import torch
    return torch.cuda.device_count()


@unittest.skipUnless(_cuda(), "needs torch and a CUDA device")
class TensorParallelTest(unittest.TestCase):
    def test_two_ranks_emulated_on_one_gpu(self):
        rc, out = run("--world", "2", "--backend", "gloo", "--same-gpu")
        self.assertEqual(rc, 0, out)
        self.assertIn("tp-block: ok (2 ranks, gloo)", out)
        for how in ("eager", "compiled", "graph"):
            self.assertIn(f"M = 33 {how}: rel", out)

    @unittest.skipUnless(_cuda() and gpus() >= 2, "needs two CUDA devices")
    def test_two_ranks_over_nccl(self):
        rc, out = run("--world", "2")
        self.assertEqual(rc, 0, out)
        self.assertIn("tp-block: ok (2 ranks, nccl)", out)

    @unittest.skipUnless(_cuda() and gpus() >= 4, "needs four CUDA devices")
    def test_four_ranks_over_nccl(self):
        rc, out = run("--world", "4")
        self.assertEqual(rc, 0, out)
        self.assertIn("tp-block: ok (4 ranks, nccl)", out)

    def test_what_the_machine_cannot_run_is_refused(self):
        rc, out = run("--world", "2", "--same-gpu")
        self.assertNotEqual(rc, 0)
        self.assertIn("NCCL refuses two ranks on one GPU; use --backend "
                      "gloo with --same-gpu", out)
        rc, out = run("--world", str(gpus() + 1))
        self.assertNotEqual(rc, 0)
        self.assertIn(f"expected {gpus() + 1} CUDA devices (one per rank), "
                      f"found {gpus()}", out)
        rc, out = run("--world", "0")
        self.assertNotEqual(rc, 0)
        self.assertIn("expected --world >= 1, got 0", out)
        rc, out = run("--world", "1", "--hidden", "500")
        self.assertNotEqual(rc, 0)
        self.assertIn("expected hidden and intermediate sizes that divide "
                      "into --world shards of whole groups of 128, got 500 "
                      "and 1024", out)


if __name__ == "__main__":
    unittest.main()
