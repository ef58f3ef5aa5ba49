"""Compiles on a real Dask cluster (LocalCluster, worker processes), no mocks.

The property throughout: a cluster gives the local executor's results, figure for figure,
and its results land in the local cache.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time

import pytest
import sycl_builds as sb
import yaml
from conftest import KERNELS, ZEINSPECT

distributed = pytest.importorskip("distributed")

TARGETS = "tgllp,dg2-g10,bmg-g21"


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0") as c:
        yield c


def _comparable(doc) -> list[str]:
    """Every field of every report (the reproduce command and the log included), in one order."""
    return sorted(json.dumps(r, sort_keys=True) for r in doc["reports"])


def test_the_cluster_gives_the_local_results_and_fills_the_local_cache(cli, sid_compiler, cluster, tmp_path):
    lib = sb.sycl_library(tmp_path, [{"data": sb.spirv_of(sid_compiler, KERNELS / "sg32_accumulate.cl", tmp_path),
                                      "entries": ["sg32_accumulate"]}])
    args = ("inspect", KERNELS, lib, "-t", TARGETS, "--compiler", sid_compiler.id)
    _, local = cli.json(*args)  # the local executor's (through the session's cache)
    cache = {"ZEINSPECT_CACHE_DIR": str(tmp_path / "cache")}
    _, remote = cli.json(*args, "--scheduler", cluster.scheduler_address, env=cache)
    assert remote["stats"]["compiles"] > 0 and remote["stats"]["cache_hits"] == 0
    assert _comparable(remote) == _comparable(local)
    assert any(r["input"].startswith(str(lib)) and r["spill_bytes"] for r in remote["reports"])
    # A later run needs no cluster: everything is in the local cache.
    _, again = cli.json(*args, env=cache)
    assert again["stats"]["compiles"] == 0 and again["stats"]["cache_hits"] == remote["stats"]["compiles"]
    assert _comparable(again) == _comparable(local)


def test_losing_a_worker_mid_audit_changes_no_result(cli, sid_compiler, cluster, tmp_path):
    # The corpus but its PTSS kernel (its compiles are most of the corpus's time and add
    # nothing here: the overflow's way through the cluster is the test above's).
    corpus = tmp_path / "kernels"
    corpus.mkdir()
    for source in KERNELS.glob("*.cl"):
        if source.name != "ptss_overflow.cl":
            shutil.copy(source, corpus)
    args = ["inspect", str(corpus), "-t", "tgllp,dg2-g10,mtl-u,bmg-g21", "--compiler", sid_compiler.id, "--json"]
    _, local = cli.json(*args[:-1])  # the local executor's (through the session's cache)
    args.append("--no-cache")
    client = distributed.Client(cluster.scheduler_address, set_as_default=False)
    try:
        proc = subprocess.Popen([*ZEINSPECT, *args, "--scheduler", cluster.scheduler_address],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli.env)
        killed = None
        deadline = time.monotonic() + 120
        while killed is None and time.monotonic() < deadline and proc.poll() is None:
            busy = [w for w, keys in client.processing().items() if any("zeinspect-compile" in str(k) for k in keys)]
            if busy:
                pids = client.run(os.getpid, workers=[busy[0]])
                os.kill(pids[busy[0]], signal.SIGKILL)
                killed = busy[0]
            time.sleep(0.05)
        out, err = proc.communicate(timeout=600)
    finally:
        client.close()
    assert killed is not None, "the audit ended before a worker could be lost"
    assert proc.returncode in (0, 1), err
    assert _comparable(json.loads(out)) == _comparable(local)


def test_a_worker_with_another_compiler_is_refused(cli, sid_compiler, debian_compiler):
    with distributed.LocalCluster(n_workers=1, processes=True, threads_per_worker=1, dashboard_address=":0",
                                  env={"ZEINSPECT_OCLOC": debian_compiler.path}) as other:
        res = cli("inspect", KERNELS / "clean.cl", "-t", "tgllp", "--compiler", sid_compiler.id, "--no-cache",
                  "--scheduler", other.scheduler_address)
    assert res.code == 3, res
    (line,) = [x for x in res.err.splitlines() if x.strip()]
    assert line.startswith("zeinspect: error: ") and "worker tcp://" in line
    assert sid_compiler.id in line and debian_compiler.id in line


def test_the_gate_configuration_names_the_scheduler(cli, sid_compiler, cluster, tmp_path):
    config = tmp_path / "gate.yaml"
    config.write_text(yaml.safe_dump({"inputs": [str(KERNELS / "fma_tile.cl")], "targets": ["dg2-g10"],
                                      "compiler": sid_compiler.id, "scheduler": cluster.scheduler_address,
                                      "ratchet": str(tmp_path / "none.txt")}))
    (tmp_path / "none.txt").write_text("")
    res = cli("audit", "--config", config, "--no-cache", "--format", "json")
    with distributed.Client(cluster.scheduler_address, set_as_default=False) as client:
        prefixes = client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.task_prefixes))
    assert res.code == 1, res  # fma_tile spills on dg2-g10 and is not listed
    assert "zeinspect-compile" in prefixes


def test_no_cluster_is_one_line_and_exit_3(cli):
    """(With everything in the cache no cluster is needed at all; --no-cache makes one needed.)"""
    res = cli("inspect", KERNELS / "clean.cl", "-t", "tgllp", "--no-cache", "--scheduler", "tcp://127.0.0.1:9",
              env={"ZEINSPECT_SCHEDULER_TIMEOUT": "2"})
    assert res.code == 3
    (line,) = [x for x in res.err.splitlines() if x.strip()]
    assert line.startswith("zeinspect: error: no Dask cluster at tcp://127.0.0.1:9: ")
