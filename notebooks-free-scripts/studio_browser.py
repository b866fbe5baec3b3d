#!/usr/bin/env python3
"""The studio's whole path as a user walks it, in a real browser (the system's chromium,
driven by Playwright over the DevTools protocol). Run by studio-browser.sh, which makes the
venv and the data; prints one JSON object with what it measured, exits 1 on any failure.

    studio_browser.py POSEACT CHROMIUM DATA MONTAGE WORK [SCREENSHOTS]

DATA: a folder of labeled push-up clips (train/ and test/, correct/ and wrong/); MONTAGE:
an untrimmed video; WORK: an empty folder (the project and the comparisons go there);
SCREENSHOTS: where studio-{data,label,train,evaluate,preview}.png go.
"""
import json
import os
import re
import subprocess
import sys
import shlex
import time
import urllib.request

from playwright.sync_api import sync_playwright, expect

POSEACT, CHROMIUM, DATA, MONTAGE, WORK = sys.argv[1:6]
SHOTS = sys.argv[6] if len(sys.argv) > 6 else None
PROJECT = os.path.join(WORK, "project")
EPOCHS = 20   # an epoch and its checkpoint take ~0.3 s here: a Stop after epoch 3 lands in the middle
result = {}


def poseact(*arguments, cwd=PROJECT):
    run = subprocess.run([POSEACT, *arguments], cwd=cwd, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"poseact {' '.join(arguments)} failed: {run.stderr.strip()}")
    return run.stdout


def weights(path):
    return json.loads(poseact("model", "inspect", path, "--json"))["weights_sha256"]


def wait_job(page, action, status="done", timeout=180):
    """Until the job panel says the last job is `action`'s and has `status` (a failed job
    ends the test)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        title = page.locator("#job-title").text_content() or ""
        text = page.locator("#job-status").text_content() or ""
        if title.startswith(action + " ") and text.startswith(status):
            return
        if text.startswith("failed"):
            raise SystemExit("job failed: " + page.locator("#job-output").text_content()[-2000:])
        time.sleep(0.2)
    raise SystemExit(f"no {action} '{status}' after {timeout} s: " + (page.locator("#job-status").text_content() or ""))


marks = time.time()


def mark(step):
    """The seconds each step took, in the result."""
    global marks
    result.setdefault("step_seconds", {})[step] = round(time.time() - marks, 1)
    marks = time.time()


def shot(page, name):
    mark(name)
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, f"studio-{name}.png"))


os.makedirs(PROJECT)
studio = subprocess.Popen([POSEACT, "studio", PROJECT, "--serve", "0"], stderr=subprocess.PIPE, text=True)
try:
    line = studio.stderr.readline()
    url = re.search(r"http://\S+", line)
    if not url:
        raise SystemExit("the studio did not start: " + line)
    url = url.group(0)
    started = time.time()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--autoplay-policy=no-user-gesture-required"])
        page = browser.new_page(viewport={"width": 1480, "height": 1000})
        page.goto(url)
        page.on("dialog", lambda d: d.dismiss())

        # ---- Data: add the folder, see what extract will find, extract, look at a clip.
        page.fill("#source-folder", DATA)
        page.click("#add-source")
        expect(page.locator("#sources")).to_contain_text("correct")
        page.click("#extract")
        expect(page.locator("#job-command")).to_contain_text("poseact extract " + DATA + " --output keypoints.h5 --cache cache")
        wait_job(page, "extract")
        expect(page.locator("#inspect-table")).to_contain_text("wrong")
        expect(page.locator("#clips option")).not_to_have_count(0)
        page.click("#show-clip")
        page.wait_for_timeout(1500)
        shot(page, "data")
        result["extract_command"] = page.locator("#job-command").text_content().strip()

        # ---- Train: start, stop in the middle, resume; the curves come as it trains.
        page.click(".tab[data-view=train]")
        page.select_option("#recipe", "pushups")
        # A value beyond train's bounds: refused by train itself, in its own words (the page
        # keeps no second set of bounds).
        page.fill("#run-name", "too-big")
        page.fill("#batch-size", "9000")
        page.click("#train-start")
        wait_job(page, "train", "failed")
        expect(page.locator("#job-output")).to_contain_text("optimizer.batch_size must be in 2…8192")
        result["refused_by_train"] = page.locator("#job-output").text_content().strip().splitlines()[-1]
        page.fill("#batch-size", "")
        page.fill("#run-name", "pushups")
        page.fill("#epochs", str(EPOCHS))
        page.click("#train-start")
        expect(page.locator("#eta")).to_contain_text(re.compile(r"epoch ([3-9]|\d\d+)/"), timeout=60_000)
        page.click("#train-stop")
        wait_job(page, "train", "stopped")
        stopped_at = int(re.search(r"epoch (\d+)/", page.locator("#eta").text_content()).group(1))
        result["stopped_after_epoch"] = stopped_at
        if stopped_at >= EPOCHS:
            raise SystemExit("the stop came after the last epoch: nothing was resumed")
        page.click("#train-resume")
        wait_job(page, "train")
        expect(page.locator("#job-output")).to_contain_text("resuming after epoch")
        expect(page.locator("#eta")).to_contain_text(f"epoch {EPOCHS}/{EPOCHS}")
        shot(page, "train")
        result["train_commands"] = [l.strip() for l in page.locator("#job-command").text_content().splitlines()]

        # The same run, uninterrupted: the very command the page showed for Start, typed in
        # the project folder with another run folder. The same weights, bit for bit.
        with urllib.request.urlopen(url.replace("/?token=", "/state.json?token=")) as r:
            jobs = json.load(r)["jobs"]
        start = shlex.split([j for j in jobs if j["action"] == "train" and j["status"] != "failed"][0]["lines"][0])
        start[start.index("--output") + 1] = os.path.join(WORK, "uninterrupted")
        result["uninterrupted_command"] = shlex.join(start)
        poseact(*start[1:])
        page_weights = weights(os.path.join(PROJECT, "runs/pushups/model.poseact.h5"))
        cli_weights = weights(os.path.join(WORK, "uninterrupted/model.poseact.h5"))
        result["weights_stopped_and_resumed"] = page_weights
        result["weights_uninterrupted"] = cli_weights
        if page_weights != cli_weights:
            raise SystemExit(f"stopped and resumed from the page: weights {page_weights}; uninterrupted train: {cli_weights}")

        # ---- Evaluate: the report, within the page.
        page.click(".tab[data-view=evaluate]")
        page.select_option("#eval-run", "pushups")
        page.click("#evaluate")
        wait_job(page, "evaluate")
        report = page.frame_locator("#report")
        expect(report.locator("body")).to_contain_text("correct", timeout=30_000)
        page.wait_for_timeout(500)
        shot(page, "evaluate")

        # ---- Label: an untrimmed video, its skeleton, the model's proposals, one segment by keyboard.
        page.click(".tab[data-view=label]")
        page.fill("#label-path", MONTAGE)
        page.click("#label-load")
        page.wait_for_function("() => document.getElementById('label-video').readyState >= 1", timeout=20_000)
        page.click("#label-poses")
        wait_job(page, "poses")
        page.select_option("#label-run", "pushups")
        page.click("#label-propose")
        wait_job(page, "propose")
        expect(page.locator("#label-proposed")).to_contain_text("segments proposed by runs/pushups")
        with open(os.path.join(PROJECT, "proposals", os.path.splitext(os.path.basename(MONTAGE))[0] + ".json")) as f:
            proposed = sum(1 for o in json.load(f) if o.get("type") == "occurrence")
        expect(page.locator("#label-list tr.proposed")).to_have_count(proposed)
        result["proposed_segments"] = proposed
        page.locator("#label-timeline").focus()
        page.click("h2 >> text=Label")
        page.keyboard.press("1")
        page.keyboard.press("ArrowRight")
        page.wait_for_function("() => Math.abs(document.getElementById('label-video').currentTime - 1) < 0.01")
        page.keyboard.press("[")
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        page.wait_for_function("() => Math.abs(document.getElementById('label-video').currentTime - 4) < 0.01")
        page.keyboard.press("]")
        page.click("#label-save")
        expect(page.locator("#label-saved")).to_contain_text("labels/")
        page.wait_for_timeout(800)
        shot(page, "label")
        name = os.path.basename(MONTAGE)
        with open(os.path.join(PROJECT, "labels", os.path.splitext(name)[0] + ".csv")) as f:
            written = f.read()
        result["annotation_file"] = written
        if written != f"video,label,start,end\n{name},correct,1.00,4.00\n":
            raise SystemExit("the label view wrote: " + written)
        # extract --annotations reads it as it is: one clip, correct, 1 to 4 s.
        labelled = os.path.join(WORK, "labelled.h5")
        poseact("extract", os.path.dirname(MONTAGE), "--annotations", os.path.join(PROJECT, "labels", os.path.splitext(name)[0] + ".csv"),
                "--output", labelled)
        inspected = json.loads(poseact("dataset", "inspect", labelled, "--json"))
        result["labelled_store"] = {"clips": inspected["clips"], "labels": list(inspected["labels"])}
        if inspected["clips"] != 1 or list(inspected["labels"]) != ["correct"]:
            raise SystemExit("extract --annotations on the label view's file: " + json.dumps(inspected))
        # The saved segment added to the run's labels without training (enroll), into exports/.
        page.click("#label-enroll")
        wait_job(page, "enroll")
        enrolled = os.path.join(PROJECT, "exports", "pushups-" + os.path.splitext(name)[0] + ".poseact.h5")
        record = json.loads(poseact("model", "inspect", enrolled, "--json"))
        result["enrolled"] = {"labels": record["labels"], "clips": record["enrolled"][0]["clips"]}
        expect(page.locator("#exports")).to_contain_text("pushups-" + os.path.splitext(name)[0] + ".poseact.h5")

        # ---- Preview: a dropped video, the label over time, repetitions and angles; export.
        page.click(".tab[data-view=preview]")
        clip = os.path.join(DATA, "test", "correct", sorted(os.listdir(os.path.join(DATA, "test", "correct")))[0])
        page.set_input_files("#preview-file", clip)
        expect(page.locator("#preview-videos")).to_have_value(re.compile(r"^videos/"))
        page.select_option("#preview-run", "pushups")
        page.click("#preview-start")
        wait_job(page, "preview")
        expect(page.locator("#preview-people")).to_contain_text("#")
        page.evaluate("() => { const v = document.getElementById('preview-player'); v.currentTime = Math.min(1, v.duration / 2 || 0); }")
        page.wait_for_timeout(800)
        result["preview_now"] = page.locator("#preview-now").text_content()
        page.click("#export-onnx")
        wait_job(page, "export")
        expect(page.locator("#exports")).to_contain_text("pushups.onnx")
        shot(page, "preview")
        browser.close()
    result["seconds"] = round(time.time() - started, 1)
finally:
    studio.terminate()
    studio.wait(timeout=30)
print(json.dumps(result))
