"""The benchmark's measured processes never see the user's configuration.

A config file or a ``TUI_COMPACTOR_*`` variable would change what is measured (rules, token
counter, window), so every probe runs in the same clean environment (``bench_speed.probe_env``):
a fresh ``HOME`` and config directory, no ``TUI_COMPACTOR_*`` variable.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
USER_CONFIG = "from tui_compactor.config_sources import has_user_config\nfound = has_user_config()"
CLEAN = USER_CONFIG + "\nprint('CLEAN', found)"


@pytest.fixture
def user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A user with a config file in both usual places, a named one and a setting variable."""
    for base in (tmp_path / "home" / ".config", tmp_path / "xdg"):
        (base / "tui-compactor").mkdir(parents=True)
        (base / "tui-compactor" / "config.toml").write_text('[compaction]\nrules = "omp"\n')
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    named = tmp_path / "xdg" / "tui-compactor" / "config.toml"
    monkeypatch.setenv("TUI_COMPACTOR_CONFIG", str(named))
    monkeypatch.setenv("TUI_COMPACTOR_RULES", "omp")
    monkeypatch.syspath_prepend(str(BENCHMARKS))


@pytest.mark.usefixtures("user_config")
def test_every_probe_runs_without_the_users_config() -> None:
    import bench
    import bench_speed

    assert bench_speed.run_probe(CLEAN, [], "CLEAN", "probe") == "False"  # scale, app, commands
    with bench_speed.probe_env() as env:  # tree complete, first screen, imports, plan vs pi
        assert not any(name.startswith("TUI_COMPACTOR_") for name in env)
        assert not (Path(env["HOME"]) / ".config").exists()
        assert bench_speed.run_probe(CLEAN, [], "CLEAN", "probe", env=env) == "False"
    context = bench.BenchContext(quick=True, runs=1)
    assert context.peak_rss(USER_CONFIG + "\nassert not found") > 0


ORPHAN = """
import subprocess, sys, time
# Like the app's counting process: a child in a session of its own, which the tmux server's
# end does not stop, still working (here: sleeping) when the screen is seen ready.
subprocess.Popen([sys.executable, "-c",
    "import sys, time; time.sleep(1.0); open(sys.argv[1], 'w').write('done')", sys.argv[1]],
    start_new_session=True)
print("PROBE-READY", flush=True)
time.sleep(60)
"""


@pytest.mark.skipif(
    shutil.which("tmux") is None or not Path("/proc/self/environ").exists(),
    reason="needs tmux and /proc",
)
def test_a_first_screen_run_ends_only_once_every_process_it_started_has(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The next run of the first-screen probe must not share the machine with what the last
    one left running (the 10-entry session's counting process slowed the session after it)."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import bench_speed

    script = tmp_path / "orphan.py"
    script.write_text(ORPHAN)
    done = tmp_path / "done"
    command = [sys.executable, str(script), str(done)]
    cpu: list[float] = []
    seconds = bench_speed.tmux_first_screen(command, lambda screen: "PROBE-READY" in screen, cpu)
    assert seconds is not None
    assert done.read_text() == "done"  # the orphan had finished when the probe returned
    assert len(cpu) == 1 and 0 < cpu[0] < seconds  # its main thread's CPU when seen ready
