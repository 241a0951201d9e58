# test_hpctrain.py - the Python module (launcher/python/hpctrain) against
# its contract, hpctrain-program(7): the environment read and checked,
# batches the same at any world size, checkpoints whole and verified,
# preemption, metrics records, accumulation; then templates/torch-ddp.py
# on it, at two world sizes and across a resume.  Run by tap.py.
import contextlib
import io
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

import hpctrain
from hpctrain import checkpoint

try:
    import torch
except ImportError:
    torch = None

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


class EnvTest(unittest.TestCase):
    def test_outside_hpctrain_is_a_first_attempt_on_one_rank(self):
        e = hpctrain.env({})
        self.assertEqual((e.rank, e.world_size, e.attempt, e.restart, e.prev_world_size), (0, 1, 1, 0, 0))
        self.assertEqual((e.checkpoint_dir, e.preempt_signal, e.launched), ("checkpoints", "USR2", False))
        self.assertFalse(e.resized)

    def test_what_launch_sets(self):
        e = hpctrain.env({"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2",
                          "NODE_RANK": "1", "HPCTRAIN_RANK": "3", "HPCTRAIN_ATTEMPT": "2",
                          "HPCTRAIN_PREV_WORLD_SIZE": "8", "HPCTRAIN_CHECKPOINT_DIR": "/r/checkpoints",
                          "HPCTRAIN_DATA_FMNIST": "/tmp/cache/fmnist", "HPCTRAIN_DATA_": "x",
                          "HPCTRAIN_HEARTBEAT": "/r/hb", "HPCTRAIN_PREEMPT_SIGNAL": "TERM"})
        self.assertEqual((e.rank, e.world_size, e.local_rank, e.local_world_size, e.node_rank),
                         (3, 4, 1, 2, 1))
        self.assertEqual((e.attempt, e.prev_world_size, e.checkpoint_dir), (2, 8, "/r/checkpoints"))
        self.assertEqual(e.data, {"FMNIST": "/tmp/cache/fmnist"})
        self.assertEqual((e.heartbeat, e.preempt_signal, e.launched), ("/r/hb", "TERM", True))
        self.assertTrue(e.resized)

    def test_a_malformed_variable_is_named(self):
        for environ, name in (({"RANK": "x"}, "RANK"), ({"WORLD_SIZE": "0"}, "WORLD_SIZE"),
                              ({"RANK": "-1"}, "RANK"), ({"HPCTRAIN_ATTEMPT": "1.5"}, "HPCTRAIN_ATTEMPT"),
                              ({"RANK": "4", "WORLD_SIZE": "4"}, "RANK=4")):
            with self.assertRaisesRegex(ValueError, name):
                hpctrain.env(environ)


class GlobalBatchesTest(unittest.TestCase):
    def test_a_step_trains_on_the_same_samples_at_any_world_size(self):
        b = hpctrain.GlobalBatches(1000, 64, seed=7)
        for step in (0, 1, 14, 15, 16, 47):  # 15 batches an epoch: across two boundaries
            whole = b.indices(step)
            self.assertEqual(len(whole), 64)
            for world in (1, 2, 3, 5, 8, 64):
                shards = [b.shard(step, r, world) for r in range(world)]
                self.assertEqual(sorted(sum(shards, [])), sorted(whole))
                self.assertLessEqual(max(map(len, shards)) - min(map(len, shards)), 1)

    def test_an_epoch_visits_each_sample_once_and_the_next_reshuffles(self):
        b = hpctrain.GlobalBatches(256, 32, seed=1)
        epoch0 = sum((b.indices(s) for s in range(8)), [])
        self.assertEqual(sorted(epoch0), list(range(256)))
        self.assertNotEqual(b.indices(0), b.indices(8))
        self.assertEqual(b.position(17), (2, 1))

    def test_a_resume_needs_only_the_step(self):
        going = hpctrain.GlobalBatches(500, 50, seed=3)
        seen = [going.indices(s) for s in range(25)]
        resumed = hpctrain.GlobalBatches(500, 50, seed=3)  # a new process at step 13
        self.assertEqual([resumed.indices(s) for s in range(13, 25)], seen[13:])
        self.assertEqual(resumed.batch_hash(13), going.batch_hash(13))
        self.assertNotEqual(going.batch_hash(13), going.batch_hash(14))
        self.assertNotEqual(hpctrain.GlobalBatches(500, 50, seed=4).indices(0), seen[0])

    def test_micro_batches_cover_the_share(self):
        b = hpctrain.GlobalBatches(1000, 100)
        pieces = b.micro_batches(3, 1, 3, 16)
        self.assertEqual(sum(pieces, []), b.shard(3, 1, 3))
        self.assertEqual([len(p) for p in pieces], [16, 16, 1])

    def test_impossible_sizes_are_refused(self):
        for n, batch in ((10, 11), (10, 0)):
            with self.assertRaisesRegex(ValueError, "global batch"):
                hpctrain.GlobalBatches(n, batch)
        b = hpctrain.GlobalBatches(100, 4)
        for rank, world in ((0, 5), (2, 2), (-1, 2)):
            with self.assertRaisesRegex(ValueError, "no share"):
                b.shard(0, rank, world)


class CheckpointTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.ckpt = os.path.join(self.dir, "ck")

    def tearDown(self):
        subprocess.run(["rm", "-rf", self.dir], check=True)

    def save(self, state, rank=0):
        hpctrain.save(state, self.ckpt, rank=rank)

    def test_none_before_the_first(self):
        self.assertIsNone(hpctrain.load(self.ckpt))

    def test_a_state_comes_back_whole_and_private(self):
        self.save({"step": 5, "world_size": 2, "w": [1.5, 2.5]})
        self.assertEqual(hpctrain.load(self.ckpt), {"step": 5, "world_size": 2, "w": [1.5, 2.5]})
        self.assertEqual(stat.S_IMODE(os.stat(self.ckpt).st_mode), 0o700)
        self.assertEqual(stat.S_IMODE(os.stat(os.path.join(self.ckpt, "ckpt.pt")).st_mode), 0o600)
        self.assertEqual(sorted(os.listdir(self.ckpt)), ["ckpt.pt"])

    def test_without_torch_it_pickles(self):
        with mock.patch.dict(sys.modules, {"torch": None}):
            self.save({"step": 1})
            self.assertEqual(hpctrain.load(self.ckpt), {"step": 1})
        with open(os.path.join(self.ckpt, "ckpt.pt"), "rb") as f:
            self.assertTrue(f.readline().startswith(b"HPCTRAIN-CHECKPOINT 1 pickle "))

    def test_only_rank_0_writes(self):
        self.save({"step": 1}, rank=1)
        self.assertFalse(os.path.exists(self.ckpt))

    def damage(self, how):
        path = os.path.join(self.ckpt, "ckpt.pt")
        data = open(path, "rb").read()
        with open(path, "wb") as f:
            f.write(data[:-7] if how == "torn" else data[:-1] + bytes([data[-1] ^ 1]))

    def test_a_damaged_newest_gives_way_to_the_one_before(self):
        for how, why in (("torn", "torn"), ("flipped", "damaged")):
            self.save({"step": 1})
            self.save({"step": 2})
            self.damage(how)
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                self.assertEqual(hpctrain.load(self.ckpt), {"step": 1})
            self.assertIn(why, err.getvalue())

    def test_nothing_that_verifies_is_an_error_not_a_fresh_start(self):
        self.save({"step": 1})
        self.damage("flipped")
        with contextlib.redirect_stderr(io.StringIO()), \
                self.assertRaisesRegex(RuntimeError, "no checkpoint verifies"):
            hpctrain.load(self.ckpt)

    def test_a_fifo_or_a_link_is_passed_over_without_blocking(self):
        self.save({"step": 1})
        self.save({"step": 2})
        newest = os.path.join(self.ckpt, "ckpt.pt")
        os.unlink(newest)
        os.mkfifo(newest)
        with contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(hpctrain.load(self.ckpt), {"step": 1})
        os.unlink(newest)
        os.symlink(os.path.join(self.ckpt, "ckpt.pt.prev"), newest)
        self.assertEqual(hpctrain.load(self.ckpt), {"step": 1})  # via .prev, not the link

    def test_a_leftover_temporary_is_ignored(self):
        self.save({"step": 3})
        with open(os.path.join(self.ckpt, ".ckpt.pt.abc123"), "wb") as f:
            f.write(b"half")
        self.assertEqual(hpctrain.load(self.ckpt), {"step": 3})

    def test_the_directory_comes_from_the_environment(self):
        with mock.patch.dict(os.environ, {"HPCTRAIN_CHECKPOINT_DIR": self.ckpt, "RANK": "0"}):
            hpctrain.save({"step": 9})
            self.assertEqual(hpctrain.load(), {"step": 9})
        self.assertTrue(os.path.exists(os.path.join(self.ckpt, "ckpt.pt")))


class PreemptionTest(unittest.TestCase):
    def setUp(self):
        self.saved = {s: signal.getsignal(s) for s in (signal.SIGUSR2, signal.SIGTERM)}

    def tearDown(self):
        for s, h in self.saved.items():
            signal.signal(s, h)

    def test_the_signal_sets_a_flag_read_at_a_step(self):
        p = hpctrain.Preemption()
        self.assertFalse(p.requested())
        os.kill(os.getpid(), signal.SIGUSR2)
        os.kill(os.getpid(), signal.SIGUSR2)  # Slurm and hpctrain may both send it
        self.assertTrue(p.requested())
        with self.assertRaises(SystemExit) as end:
            p.exit()
        self.assertEqual(end.exception.code, 75)

    def test_the_spec_names_the_signal(self):
        with mock.patch.dict(os.environ, {"HPCTRAIN_PREEMPT_SIGNAL": "TERM"}):
            p = hpctrain.Preemption()
        os.kill(os.getpid(), signal.SIGTERM)
        self.assertTrue(p.requested())
        with self.assertRaisesRegex(ValueError, "NOPE"):
            hpctrain.Preemption(["NOPE"])


class MetricsTest(unittest.TestCase):
    def test_rank_0_writes_the_documented_records(self):
        with tempfile.TemporaryDirectory() as d:
            path, hb = os.path.join(d, "metrics.jsonl"), os.path.join(d, "hb")
            m = hpctrain.Metrics(path, {"RANK": "0", "WORLD_SIZE": "4", "HPCTRAIN_ATTEMPT": "2",
                                        "SLURM_RESTART_COUNT": "1", "HPCTRAIN_HEARTBEAT": hb})
            m.resume(0, 0.25)
            m.step(1, 0.5, 100.0, 64, total_steps=10, batch_hash="ab")
            m.epoch(1, 1, train_loss=0.5)
            m.summary(1)
            m.close()
            recs = [json.loads(line) for line in open(path)]
            self.assertEqual([r["event"] for r in recs], ["resume", "step", "epoch", "summary"])
            self.assertEqual(recs.pop(0), {"event": "resume", "checkpoint_step": 0, "load_s": 0.25})
            step = recs[0]
            self.assertEqual((step["step"], step["global_batch"], step["world_size"], step["attempt"],
                              step["restart"], step["total_steps"], step["batch_hash"]),
                             (1, 64, 4, 2, 1, 10, "ab"))
            self.assertAlmostEqual(step["samples_per_s"], 160.0)  # 16 samples a rank in 0.1 s
            self.assertEqual(recs[2]["ranks"], 4)
            self.assertTrue(os.path.exists(hb))

    def test_other_ranks_only_beat(self):
        with tempfile.TemporaryDirectory() as d:
            path, hb = os.path.join(d, "metrics.jsonl"), os.path.join(d, "hb")
            m = hpctrain.Metrics(path, {"RANK": "1", "WORLD_SIZE": "2", "HPCTRAIN_HEARTBEAT": hb})
            m.step(1, 0.5, 10.0, 8)
            self.assertFalse(os.path.exists(path))
            self.assertTrue(os.path.exists(hb))


@unittest.skipIf(torch is None, "no torch for this python3")
class AccumulateTest(unittest.TestCase):
    def test_micro_batches_give_the_whole_batch_gradient(self):
        torch.manual_seed(0)
        x, y = torch.randn(12, 3), torch.randn(12, 1)
        grads = []
        for pieces in ([list(range(12))], [list(range(5)), list(range(5, 10)), [10, 11]]):
            model = torch.nn.Linear(3, 1)
            torch.nn.init.constant_(model.weight, 0.5)
            torch.nn.init.constant_(model.bias, 0.1)
            loss = hpctrain.accumulate(model, pieces, lambda i: torch.nn.functional.mse_loss(
                model(x[i]), y[i], reduction="sum"), 12, 1)
            grads.append((loss, model.weight.grad.clone()))
        self.assertAlmostEqual(grads[0][0], grads[1][0], places=5)
        self.assertTrue(torch.allclose(grads[0][1], grads[1][1], atol=1e-6))

    def test_only_the_last_piece_all_reduces(self):
        quiet = []

        class Ddp(torch.nn.Linear):
            @contextlib.contextmanager
            def no_sync(self):
                quiet.append(1)
                yield

        model = Ddp(2, 1)
        x = torch.randn(6, 2)
        hpctrain.accumulate(model, [[0, 1], [2, 3], [4, 5]], lambda i: model(x[i]).sum(), 6, 1)
        self.assertEqual(len(quiet), 2)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@unittest.skipIf(torch is None, "no torch for this python3")
class TorchDdpTemplateTest(unittest.TestCase):
    """templates/torch-ddp.py on the module: the same batches and losses at
    1 and 2 ranks, and across a stop at step 4 resumed at another size."""

    def run_ranks(self, world, cwd, steps):
        port, procs = free_port(), []
        for rank in range(world):
            env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
                       MASTER_PORT=str(port), HPCTRAIN_CHECKPOINT_DIR=os.path.join(cwd, "ckpt"),
                       PYTHONPATH=os.path.join(ROOT, "launcher", "python"), PYTHONDONTWRITEBYTECODE="1")
            procs.append(subprocess.Popen(
                [sys.executable, os.path.join(ROOT, "templates", "torch-ddp.py"), "--steps", str(steps),
                 "--micro-batch", "16", "--samples", "512"], cwd=cwd, env=env,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        for p in procs:
            out, _ = p.communicate(timeout=120)
            self.assertEqual(p.returncode, 0, out)

    def steps(self, cwd):
        with open(os.path.join(cwd, "metrics.jsonl")) as f:
            recs = [json.loads(line) for line in f]
        return {r["step"]: r for r in recs if r["event"] == "step"}

    def test_same_batches_and_losses_at_any_world_size_and_across_a_resume(self):
        with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
            self.run_ranks(1, one, 10)
            self.run_ranks(2, two, 4)
            self.run_ranks(1, two, 10)  # resumes at step 4, on one rank
            ref, got = self.steps(one), self.steps(two)
            self.assertEqual(sorted(got), list(range(1, 11)))
            self.assertEqual([got[s]["world_size"] for s in (4, 5)], [2, 1])
            for s in ref:
                self.assertEqual(got[s]["batch_hash"], ref[s]["batch_hash"])
                self.assertAlmostEqual(got[s]["loss"], ref[s]["loss"], delta=1e-5 * (1 + abs(ref[s]["loss"])))
