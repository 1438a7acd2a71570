"""Build ORTune for the platform this runs on.

    python packaging/build.py [--dist DIR] [--no-installers]

1. renders the icons (resources/make_icons.py),
2. freezes the app into one folder with PyInstaller (packaging/ortune.spec),
3. smoke-runs the frozen app: `ortune --self-test` (every step runs in a job process of
   the frozen app) and its window, offscreen,
4. makes the installers: on Linux a portable tarball and a .deb, on Windows an Inno Setup
   installer.

Writes DIR/build-report.json (sizes and times) and prints the bundle's folder on its last
line. Needs the app's dependencies and packaging/requirements-build.txt installed."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WINDOWS = sys.platform == "win32"
SELF_TEST_TIMEOUT_S = 600


def app_info() -> dict:
    """Name and version from the app package (their one source), description from pyproject."""
    sys.path.insert(0, str(ROOT))
    import app
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {"name": app.APP_NAME, "id": app.APP_ID, "version": app.__version__,
            "description": project["description"]}


def say(message: str) -> None:
    print(message, flush=True)


def render_icons(work: Path) -> Path:
    out = work / "icons"
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run([sys.executable, str(ROOT / "resources" / "make_icons.py"), str(out)], check=True,
                   stdout=subprocess.DEVNULL)
    return out


def freeze(dist: Path, work: Path, icons: Path) -> Path:
    try:
        import PyInstaller  # noqa: F401
    except ImportError:
        raise SystemExit("build: PyInstaller is missing: pip install -r packaging/requirements-build.txt")
    env = dict(os.environ, ORTUNE_ICON_DIR=str(icons))
    subprocess.run([sys.executable, "-m", "PyInstaller", str(ROOT / "packaging" / "ortune.spec"),
                    "--noconfirm", "--log-level", "WARN", "--distpath", str(dist),
                    "--workpath", str(work / "pyinstaller")], check=True, env=env)
    return dist / "ortune"


def frozen_env(home: Path) -> dict:
    """The frozen app alone: no Python path of the build, settings and data in a scratch folder."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    env.update(ORTUNE_CONFIG_DIR=str(home / "config"), ORTUNE_DATA_DIR=str(home / "data"),
               QT_QPA_PLATFORM="offscreen")
    return env


def executable(bundle: Path) -> Path:
    return bundle / ("ortune.exe" if WINDOWS else "ortune")


def self_test(program: Path) -> float:
    """Run `ortune --self-test` as a user would; return its wall time in seconds."""
    with tempfile.TemporaryDirectory(prefix="ortune-selftest-") as home:
        started = time.monotonic()
        done = subprocess.run([str(program), "--self-test"], cwd=home, env=frozen_env(Path(home)),
                              capture_output=True, text=True, timeout=SELF_TEST_TIMEOUT_S)
        seconds = time.monotonic() - started
    sys.stdout.write(done.stdout)
    if done.returncode != 0 or "self-test passed" not in done.stdout:
        raise SystemExit(f"build: the frozen self-test failed (exit {done.returncode})\n{done.stderr[-3000:]}")
    return seconds


def window_opens(program: Path) -> float:
    """Start the frozen window offscreen; it reports its first paint and leaves."""
    with tempfile.TemporaryDirectory(prefix="ortune-window-") as home:
        env = dict(frozen_env(Path(home)), ORTUNE_STARTUP_PROBE="1")
        started = time.monotonic()
        done = subprocess.run([str(program), "--demo"], cwd=home, env=env, capture_output=True, text=True,
                              timeout=120)
        seconds = time.monotonic() - started
    if "painted" not in done.stdout:
        raise SystemExit(f"build: the frozen window did not open (exit {done.returncode})\n{done.stderr[-3000:]}")
    return seconds


def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file() and not path.is_symlink())


def largest_files(folder: Path, count: int = 6) -> list[dict]:
    files = [path for path in folder.rglob("*") if path.is_file() and not path.is_symlink()]
    files.sort(key=lambda path: path.stat().st_size, reverse=True)
    return [{"path": path.relative_to(folder).as_posix(), "bytes": path.stat().st_size} for path in files[:count]]


def make_installers(bundle: Path, dist: Path, work: Path, info: dict, icons: Path, level: int | None) -> list[Path]:
    if WINDOWS:
        from windows_installer import make_installer
        return [make_installer(bundle, dist, info, icons / "ortune.ico")]
    from linux_packages import GZIP_LEVEL, make_deb, make_tarball
    level = GZIP_LEVEL if level is None else level
    return [make_tarball(bundle, dist, info, level), make_deb(bundle, dist, work, info, level)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist", type=Path, default=ROOT / "dist", help="where the results go (default: dist/)")
    parser.add_argument("--no-installers", action="store_true", help="stop after the smoke test")
    parser.add_argument("--gzip-level", type=int, choices=range(1, 10), metavar="1-9",
                        help="the Linux packages' gzip level (default 6; the tests take 1: the same files, faster)")
    args = parser.parse_args()
    dist, work = args.dist.resolve(), ROOT / "build"
    info = app_info()
    say(f"building {info['name']} {info['version']} for {sys.platform}")

    icons = render_icons(work)
    started = time.monotonic()
    bundle = freeze(dist, work, icons)
    build_seconds = time.monotonic() - started
    bundle_bytes = folder_bytes(bundle)
    say(f"bundle: {bundle} ({bundle_bytes / 2**20:.0f} MiB) in {build_seconds:.0f} s")

    self_test_seconds = self_test(executable(bundle))
    window_seconds = window_opens(executable(bundle))
    say(f"smoke test passed: self-test {self_test_seconds:.1f} s, window {window_seconds:.1f} s")

    installers = [] if args.no_installers else make_installers(bundle, dist, work, info, icons, args.gzip_level)
    for path in installers:
        say(f"installer: {path} ({path.stat().st_size / 2**20:.0f} MiB)")
    report = {
        "version": info["version"], "platform": sys.platform,
        "bundle": str(bundle), "bundle_bytes": bundle_bytes, "largest_files": largest_files(bundle),
        "build_seconds": round(build_seconds, 1), "self_test_seconds": round(self_test_seconds, 2),
        "window_seconds": round(window_seconds, 2),
        "installers": [{"path": str(path), "bytes": path.stat().st_size} for path in installers],
    }
    (dist / "build-report.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    say(str(bundle))
    return 0


if __name__ == "__main__":
    sys.exit(main())
