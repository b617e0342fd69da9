"""`make prod-local`'s secret and beat's schedule: the key is never printed, one generated key
survives restarts, and the schedule file lives in the checkout, not in a path shared by all."""

import shutil
import stat
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _make(cwd: Path, *args: str, env_secret: str | None = None) -> str:
    env = {"PATH": "/usr/bin:/bin", "DATABASE_URL": "postgres://x/y", "REDIS_URL": "redis://x/0"}
    if env_secret is not None:
        env["SECRET_KEY"] = env_secret
    done = subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout + done.stderr


def test_the_secret_is_generated_once_kept_private_and_never_printed(tmp_path):
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    printed = _make(tmp_path, ".prod-local-secret")
    secret_file = tmp_path / ".prod-local-secret"
    key = secret_file.read_text().strip()
    assert len(key) >= 50
    assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600
    assert key not in printed
    # A second start keeps the same key (sessions survive), and the dry run of the whole target
    # shows where the key comes from, never the key itself.
    assert "A new SECRET_KEY" not in _make(tmp_path, ".prod-local-secret")
    assert secret_file.read_text().strip() == key
    dry_run = _make(tmp_path, "-n", "-o", ".venv/.installed-stamp", "prod-local")
    assert key not in dry_run
    assert "$(cat .prod-local-secret)" in dry_run


def test_a_secret_from_the_environment_is_used_and_not_printed(tmp_path):
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    (tmp_path / ".prod-local-secret").write_text("file-key\n")
    dry_run = _make(
        tmp_path,
        "-n",
        "-o",
        ".venv/.installed-stamp",
        "prod-local",
        env_secret="env-key-" + "k" * 50,
    )
    assert "env-key-" not in dry_run
    assert 'SECRET_KEY="${SECRET_KEY:-$(cat .prod-local-secret)}"' in dry_run


def test_beat_keeps_its_schedule_in_the_checkout():
    procfile = (ROOT / "Procfile").read_text()
    beat = next(line for line in procfile.splitlines() if line.startswith("beat:"))
    assert "/tmp" not in beat
    assert "--schedule ${CELERY_BEAT_SCHEDULE_FILE:-.celerybeat-schedule}" in beat
    assert ".celerybeat-schedule" in (ROOT / ".gitignore").read_text()
    assert "/.prod-local-secret" in (ROOT / ".gitignore").read_text()
