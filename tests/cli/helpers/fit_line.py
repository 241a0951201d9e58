#!/usr/bin/env python3
"""fit_line.py - a user's own training program, not the bundled trainer:
it fits y = 3x - 1 (plus noise) by minibatch SGD at the learning rate $LR
and writes metrics.jsonl in the format of hpctrain-report(1), METRICS
FORMAT, in the run directory: $HPCTRAIN_RUN_DIR when hpctrain runs it in
its code snapshot, else its working directory (the run directory under
Slurm).

A prediction is counted accurate when it is within 0.25 of the target.
The data come from a fixed seed, so a run is the same every time.
"""
import json
import os
import random
import time

LR = float(os.environ.get("LR", "0.05"))
EPOCHS, BATCH, TRAIN, TEST = 3, 16, 256, 128


def sample(rng, n):
    xs = [rng.uniform(-1, 1) for _ in range(n)]
    return [(x, 3 * x - 1 + rng.gauss(0, 0.1)) for x in xs]


def evaluate(w, b, data):
    errs = [w * x + b - y for x, y in data]
    loss = sum(e * e for e in errs) / len(errs)
    return loss, sum(abs(e) < 0.25 for e in errs) / len(errs)


rng = random.Random(7)
train, test = sample(rng, TRAIN), sample(rng, TEST)
w = b = 0.0
steps_per_epoch = TRAIN // BATCH
total = EPOCHS * steps_per_epoch
step, rates = 0, []
with open(os.path.join(os.environ.get("HPCTRAIN_RUN_DIR", "."), "metrics.jsonl"), "a") as log:
    def put(record):
        log.write(json.dumps(record) + "\n")
        log.flush()

    for epoch in range(EPOCHS):
        rng.shuffle(train)
        for i in range(steps_per_epoch):
            t0 = time.perf_counter()
            batch = train[i * BATCH:(i + 1) * BATCH]
            errs = [(w * x + b - y, x) for x, y in batch]
            w -= LR * 2 * sum(e * x for e, x in errs) / BATCH
            b -= LR * 2 * sum(e for e, _ in errs) / BATCH
            loss = sum(e * e for e, _ in errs) / BATCH
            seconds = max(time.perf_counter() - t0, 1e-6)
            step += 1
            rates.append(BATCH / seconds)
            put({"event": "step", "step": step, "epoch": epoch, "loss": loss,
                 "lr": LR, "samples_per_s": rates[-1], "step_ms": seconds * 1e3,
                 "total_steps": total})
        train_loss, train_acc = evaluate(w, b, train)
        test_loss, test_acc = evaluate(w, b, test)
        put({"event": "epoch", "epoch": epoch + 1, "steps": step,
             "train_loss": train_loss, "train_accuracy": train_acc,
             "test_loss": test_loss, "test_accuracy": test_acc})
    put({"event": "summary", "steps": step, "epochs": EPOCHS,
         "test_loss": test_loss, "test_accuracy": test_acc,
         "mean_samples_per_s": sum(rates) / len(rates), "ranks": 1})
print(f"w {w:.3f} b {b:.3f} test loss {test_loss:.4f}")
