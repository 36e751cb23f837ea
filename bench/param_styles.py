"""Measure the generated parameter style against the original subclasses (docs/ARCHITECTURE.md, "The contract").

    python bench/param_styles.py [--count N]

Copies ``fixtures/engine`` to a temporary directory, converts the copy with ``codemod
apply``, then measures each tree in its own process (same interpreter, same torch):

* cost per parameter: wall time and memory (tracemalloc) to build ``count``
  ``PackedvLLMParameter`` objects on a shared 1-element tensor, so the numbers are the
  wrapper's own cost, not the tensor's;
* requirement 3: a dropped parameter freed by reference counting alone (gc disabled);
* requirement 4: ``copy.deepcopy`` keeps the attributes and the copy's loader acts on the copy;
* requirement 5: pickling a module holding the parameter keeps the attributes and loader;
* requirement 2: a loader called inside ``torch.compile(fullgraph=True)`` (backend aot_eager).

Prints one table; medians of 5 repeats for the timings. Not a test: numbers vary by machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = r'''
import copy, gc, io, json, pickle, statistics, sys, time, tracemalloc, weakref
import torch
from minivllm.model_executor import parameter as P

count = int(sys.argv[1])
base = torch.zeros(8, 4, dtype=torch.int32)

def loader(param, weight):
    pass

def build():
    return P.PackedvLLMParameter(data=base, input_dim=0, output_dim=1, packed_dim=0,
                                 packed_factor=8, weight_loader=loader)

times = []
for _ in range(5):
    start = time.perf_counter()
    keep = [build() for _ in range(count)]
    times.append((time.perf_counter() - start) / count * 1e6)
    del keep
tracemalloc.start()
keep = [build() for _ in range(count)]
size, _ = tracemalloc.get_traced_memory()
tracemalloc.stop()
del keep

gc.disable()
p = build()
ref = weakref.ref(p)
del p
freed = ref() is None
gc.enable()

p = build()
try:
    q = copy.deepcopy(p)
    q.load_column_parallel_weight(torch.ones(8, 4, dtype=torch.int32))
    deep = (q.output_dim == 1 and q.packed_dim == 0 and int(q.sum()) == 32
            and int(p.sum()) == 0)
    deep = "keeps attributes, acts on copy" if deep else "loses attributes or acts on original"
except Exception as exc:
    deep = f"raises {type(exc).__name__}"

m = torch.nn.Module()
m.w = build()
try:
    buf = io.BytesIO()
    torch.save(m, buf)
    buf.seek(0)
    m2 = torch.load(buf, weights_only=False)
    m2.w.load_column_parallel_weight(torch.ones(8, 4, dtype=torch.int32))
    kept = [a for a in ("output_dim", "input_dim", "packed_dim", "packed_factor") if hasattr(m2.w, a)]
    pick = f"keeps {len(kept)}/4 public attributes, loader works"
except Exception as exc:
    pick = f"fails: {type(exc).__name__}: {exc}"[:120]

torch._dynamo.reset()
p = P.ModelWeightParameter(data=torch.zeros(4, 4), input_dim=1, output_dim=0, weight_loader=loader)
@torch.compile(fullgraph=True, backend="aot_eager")
def fwd(param, w):
    param.load_column_parallel_weight(w)
    return param * 2
try:
    fwd(p, torch.ones(4, 4))
    comp = "compiles"
except Exception as exc:
    comp = f"fails: {type(exc).__name__}"

print(json.dumps({"us_per_param": statistics.median(times), "bytes_per_param": size / count,
                  "freed_by_refcount": freed, "deepcopy": deep, "pickle_module": pick,
                  "compile_loader": comp}))
'''


def measure(tree: Path, count: int) -> dict[str, object]:
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="1",
               PYTHONWARNINGS="ignore")
    out = subprocess.run([sys.executable, "-c", PROBE, str(count)], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        original = Path(tmp) / "original"
        converted = Path(tmp) / "converted"
        shutil.copytree(ROOT / "fixtures" / "engine", original)
        shutil.copytree(ROOT / "fixtures" / "engine", converted)
        done = subprocess.run(
            [sys.executable, "-c", "import sys; from codemod.cli import main; sys.exit(main(sys.argv[1:]))",
             "apply", str(converted)], cwd=ROOT, capture_output=True, text=True, check=False)
        if done.returncode != 1:
            raise SystemExit(f"codemod apply failed: {done.stderr}")
        rows = {"original subclasses": measure(original, args.count),
                "converted (codemod)": measure(converted, args.count)}
    keys = ["us_per_param", "bytes_per_param", "freed_by_refcount", "deepcopy",
            "pickle_module", "compile_loader"]
    print(f"{'':22}" + "".join(f"{k:>40}" for k in keys[:3]))
    for name, row in rows.items():
        print(f"{name:22}" + f"{row['us_per_param']:>40.2f}{row['bytes_per_param']:>40.0f}"
              f"{str(row['freed_by_refcount']):>40}")
    for key in keys[3:]:
        print(f"{key}:")
        for name, row in rows.items():
            print(f"  {name:22} {row[key]}")
    ratio = rows["converted (codemod)"]["us_per_param"] / rows["original subclasses"]["us_per_param"]  # type: ignore[operator]
    print(f"construction cost ratio converted/original: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
