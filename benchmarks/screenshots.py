"""Screenshots of every tab, as a new user would see them, after each tab's main action has run
on a real model: two conversions (fp16 and int8-dynamic), the drift of the fp16 variant (and its
automatic repair where it drifts), a benchmark, a comparison, a profile, IO Binding, a tune, an
optimize run and a diagnosis. Each tab is then grabbed at every --sizes window size, and the whole
screen once (where the window was placed). Run it under a real X server (Xvfb) for the placement.

    DISPLAY=:57 QT_QPA_PLATFORM=xcb python benchmarks/screenshots.py MODEL --out /tmp/shots/x \
        [--sizes 1024x700,1600x1000] [--quick] [--dims batch=1,sequence=128] [--drift int8-dynamic]

--dims sets the model's named dimensions in the Session tab before any job runs, as a user
typing them into the inputs table would (a text model's sequence length, say).

Prints one JSON object: {"files": [...], "steps": {step: seconds or error}}.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--out", required=True)
    parser.add_argument("--sizes", default="1024x700,1600x1000")
    parser.add_argument("--quick", action="store_true", help="short budgets (tune 15 s, optimize 30 s)")
    parser.add_argument("--dims", default="", help="named dims to set first, e.g. batch=1,sequence=128")
    parser.add_argument("--drift", default="fp16", choices=("fp16", "int8-dynamic"),
                        help="the variant whose drift is found (and repaired where it drifts)")
    parser.add_argument("--only-open", action="store_true", help="open the model and grab the screen, no jobs")
    parser.add_argument("--switch-to", metavar="MODEL2", help="at the end, open MODEL2, make it the current model "
                        "and grab every tab again: no tab may show MODEL's results as MODEL2's")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    from PySide6.QtWidgets import QApplication, QMessageBox

    from app.core.store.settings import Settings
    from app.gui.shell.collector import collect_in_gui_thread
    from app.gui.shell.application import keep_crash_log
    from app.gui.shell.main_window import MainWindow
    from app.gui.shell.tabs import PANELS

    keep_crash_log()        # a native fault during the tour leaves its stacks in logs/crash.log, as the window's does
    app = QApplication.instance() or QApplication(sys.argv[:1])
    collect_in_gui_thread(app)
    QMessageBox.question = staticmethod(lambda *_a, **_k: QMessageBox.StandardButton.Yes)  # consent to replace
    window = MainWindow(Settings(), probe_providers=False)
    window.show()
    files, steps = [], {}

    def wait(condition, timeout_s: float = 600.0) -> bool:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            app.processEvents()
            if condition():
                return True
            time.sleep(0.02)
        return False

    def settle(seconds: float = 0.4) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            app.processEvents()
            time.sleep(0.02)

    def jobs_done(timeout_s: float = 900.0) -> bool:
        settle(0.3)
        return wait(lambda: not window.jobs.running(), timeout_s)

    def screen(name: str) -> None:
        path = out / f"screen-{name}.png"
        window.screen().grabWindow(0).save(str(path))
        files.append(str(path))

    def show(title: str):
        panel = window.panel(title)
        window.tabs.setCurrentWidget(panel)
        panel.ensure_built()
        settle(0.2)
        return panel

    def step(name: str, action) -> None:
        started = time.monotonic()
        try:
            action()
            steps[name] = round(time.monotonic() - started, 1)
        except Exception as exc:     # a step that fails is reported, the others still run
            steps[name] = f"{type(exc).__name__}: {exc}"

    def opened(path: str) -> None:
        window.open_paths([path])
        wait(lambda: window.current_model() is not None, 120)
        jobs_done()

    step("open", lambda: opened(args.model))
    if args.dims:
        dims = {name.strip(): int(value) for name, value in
                (part.split("=", 1) for part in args.dims.split(",") if part.strip())}
        window.context.session.set(**{"inputs.dims": dims})
        settle(0.5)
    settle(1.0)
    screen("opened")
    if args.only_open:
        print(json.dumps({"files": files, "steps": steps}))
        window.jobs.shutdown()
        return 0
    source = window.current_model()

    def convert(kind: str) -> None:
        panel = show("Convert")
        panel.select_kind(kind)
        panel.start()
        jobs_done()
        wait(lambda: panel.job is None)

    def drift() -> None:
        variant = next(m for m in window.model_list.models() if m.parent is source and m.kind == args.drift)
        window.model_list.select(variant)      # the Convert tab shows (and drifts) the selected variant's conversion
        settle(0.3)
        convert_panel = show("Convert")
        convert_panel.show_drift()
        panel = show("Drift")
        jobs_done()
        if panel.auto_button.isEnabled():
            panel.repair()
            jobs_done()

    def run_on_source(title: str, starter: str, prepare=None) -> None:
        window.model_list.select(source)
        settle(0.2)
        panel = show(title)
        if prepare:
            prepare(panel)
        getattr(panel, starter)()
        jobs_done()

    def compare() -> None:
        variants = [m for m in window.model_list.models() if m is source or m.parent is source]
        window.context.select_models(variants)
        settle(0.3)
        panel = show("Compare")
        panel.start()
        jobs_done()

    def tune_budget(panel) -> None:
        panel.budget_seconds.setValue(15 if args.quick else 30)
        panel.confirm_seconds.setValue(1.0)

    def optimize_budget(panel) -> None:
        panel.budget.setValue(30 if args.quick else 60)
        panel.screen_seconds.setValue(0.5)
        panel.force.setChecked(True)        # a second pass ships into the first one's folder

    step("convert int8-dynamic", lambda: convert("int8-dynamic"))
    step("convert fp16", lambda: convert("fp16"))
    step("session find inputs", lambda: run_on_source("Session", "find_inputs"))
    step("benchmark", lambda: run_on_source("Benchmark", "start"))
    step("compare", compare)
    step("drift", drift)        # after Compare: selecting the variants there makes the last one the Drift tab's
    step("profile", lambda: run_on_source("Profile", "profile_model"))
    step("io binding", lambda: run_on_source("IO Binding", "start"))
    step("tune", lambda: run_on_source("Tune", "start", tune_budget))
    step("optimize", lambda: run_on_source("Optimize", "start", optimize_budget))
    step("diagnose", lambda: run_on_source("Diagnose", "start"))
    window.model_list.select(source)
    for size in args.sizes.split(","):
        width, height = (int(v) for v in size.split("x"))
        window.resize(width, height)
        settle(1.0)
        screen(size)
        for index, (title, _, _) in enumerate(PANELS):
            show(title)
            jobs_done(180)           # the Graph tab draws when first shown
            settle(0.5)
            path = out / f"{size}-{index:02d}-{title.replace(' ', '_')}.png"
            window.grab().save(str(path))
            files.append(str(path))
        fp16 = next((m for m in window.model_list.models() if m.kind == "fp16"), None)
        if fp16 is not None:        # the Convert tab shows the selected variant's conversion
            window.model_list.select(fp16)
            show("Convert")
            settle(0.5)
            path = out / f"{size}-01-Convert-fp16.png"
            window.grab().save(str(path))
            files.append(str(path))
            drifted = [m for m in window.model_list.models() if m.parent is source and m.kind == args.drift]
            if drifted:             # the Drift tab follows the variant chosen: back to the one it drifted
                window.model_list.select(drifted[-1])
                settle(0.3)
            window.model_list.select(source)
    if args.switch_to:
        step("open the second model", lambda: opened(args.switch_to))
        for size in args.sizes.split(","):
            width, height = (int(v) for v in size.split("x"))
            window.resize(width, height)
            settle(1.0)
            for index, (title, _, _) in enumerate(PANELS):
                show(title)
                jobs_done(180)
                settle(0.5)
                path = out / f"{size}-switched-{index:02d}-{title.replace(' ', '_')}.png"
                window.grab().save(str(path))
                files.append(str(path))
    print(json.dumps({"files": files, "steps": steps}))
    window.jobs.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
