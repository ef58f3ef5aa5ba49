"""The zeinspect-audit pre-commit hook, run by the real pre-commit tool on a sample repository
(tests/precommit_sample): a commit that changes a clean kernel passes, one that changes a
kernel with unlisted private memory is stopped, naming it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env=dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid",
                            GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid"))


@pytest.fixture(scope="module")
def sample(tmp_path_factory, sid_compiler):
    repo = tmp_path_factory.mktemp("precommit") / "project"
    shutil.copytree(ROOT / "tests" / "precommit_sample", repo)
    # The project's kernel with unlisted private memory, under the sample's own name.
    shutil.copy(ROOT / "kernels" / "private_array.cl", repo / "kernels" / "histogram.cl")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "kernels")
    return repo


def _hook(repo: Path, *files: str, home: Path) -> subprocess.CompletedProcess:
    pre_commit = Path(sys.executable).with_name("pre-commit")
    env = dict(os.environ, PRE_COMMIT_HOME=str(home))
    env.pop("PYTHONPATH", None)
    return subprocess.run([str(pre_commit), "try-repo", str(ROOT), "zeinspect-audit", "--files", *files],
                          cwd=repo, capture_output=True, text=True, env=env, timeout=900)


def test_the_hook_passes_a_clean_kernel_and_stops_a_new_scratch_user(sample, tmp_path_factory):
    home = tmp_path_factory.mktemp("pre-commit-home")
    clean = _hook(sample, "kernels/scale.cl", home=home)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "zeinspect scratch-memory gate" in clean.stdout and "Passed" in clean.stdout
    spills = _hook(sample, "kernels/histogram.cl", home=home)
    assert spills.returncode == 1, spills.stdout + spills.stderr
    assert "Failed" in spills.stdout and "NEW: private_histogram" in spills.stdout
