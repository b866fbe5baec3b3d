// poseact studio's page: five views over the project's state (Studio.swift), which arrives
// inside the page (<script id="state">) and then over the WebSocket each time it changes.
// Every action is a POST to /api/ACTION; the server runs the poseact command it stands for
// and the job panel shows that command, its progress and what it printed.
const $ = (id) => document.getElementById(id);
const query = JSON.parse($("query").textContent);
let state = JSON.parse($("state").textContent);

// A URL of the page's server, with the token (beyond loopback) and parameters.
function address(path, params) {
  const search = new URLSearchParams(params || {});
  const token = new URLSearchParams(query).get("token");
  if (token) search.set("token", token);
  const s = search.toString();
  return path + (s ? "?" + s : "");
}

async function api(action, body) {
  $("error").textContent = "";
  const response = await fetch(address("/api/" + action), {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}),
  });
  const text = await response.text();
  if (!response.ok) { $("error").textContent = text; throw new Error(text); }
  return JSON.parse(text);
}

async function getJSON(path, params) {
  const response = await fetch(address(path, params));
  if (response.status === 404) return null;
  if (!response.ok) { $("error").textContent = await response.text(); return null; }
  return response.json();
}

function option(select, value, text) {
  const o = document.createElement("option");
  o.value = value;
  o.textContent = text === undefined ? value : text;
  select.append(o);
}

// Replaces a select's options, keeping the chosen one when it is still there.
function fill(select, values, labels) {
  const chosen = select.value;
  select.replaceChildren();
  values.forEach((v, i) => option(select, v, labels ? labels[i] : v));
  if (values.includes(chosen)) select.value = chosen;
}

function row(table, cells, header) {
  const tr = document.createElement("tr");
  for (const c of cells) {
    const td = document.createElement(header ? "th" : "td");
    td.textContent = c;
    tr.append(td);
  }
  table.append(tr);
  return tr;
}

const lastJob = (action) => state.jobs.filter((j) => !action || j.action === action).slice(-1)[0];
const events = (job) => (job ? job.events.map((e) => { try { return JSON.parse(e); } catch { return {}; } }) : []);
const runsWithModel = () => state.runs.filter((r) => r.has_model).map((r) => r.name);
const fmt = (x, digits) => (x === undefined || x === null ? "–" : Number(x).toFixed(digits));

// ---- Views
let view = location.hash.slice(1) || "data";
function showView(name) {
  view = name;
  for (const s of document.querySelectorAll(".view")) s.classList.toggle("on", s.id === "view-" + name);
  for (const t of document.querySelectorAll(".tab")) t.classList.toggle("on", t.dataset.view === name);
  if (location.hash.slice(1) !== name) history.replaceState(null, "", "#" + name + (query ? "" : ""));
  render();
}
for (const t of document.querySelectorAll(".tab")) t.addEventListener("click", () => showView(t.dataset.view));

// ---- The job panel
function renderJob() {
  const job = lastJob();
  if (!job) return;
  $("job-title").textContent = job.action + " " + job.subject;
  $("job-status").textContent = job.status + (job.status === "running" ? "" : " in " + job.seconds.toFixed(1) + " s");
  $("job-command").textContent = job.lines.map((l, i) => (i === job.step && job.status === "running" ? "▶ " : "  ") + l).join("\n");
  const p = job.progress;
  const share = job.status === "done" ? 1 : p ? p.done / Math.max(1, p.total) : 0;
  $("job-progress").firstElementChild.style.width = (share * 100).toFixed(1) + "%";
  $("job-progress-text").textContent = p ? p.text : "";
  $("job-output").textContent = job.output.slice(-60).join("\n");
  $("job-stop").disabled = job.status !== "running";
  // The jobs before it, newest first: each command line, to copy into a terminal.
  const history = $("job-history");
  history.replaceChildren();
  for (const earlier of state.jobs.slice(0, -1).reverse()) {
    const li = document.createElement("li");
    li.className = earlier.status;
    li.textContent = earlier.status + ": " + earlier.lines.join(" && ");
    history.append(li);
  }
}
// Stop names its job: a late click does not stop the next one.
const stopJob = () => { const job = lastJob(); if (job) api("stop", { job: job.id }); };
$("job-stop").addEventListener("click", stopJob);

// ---- Data
let clipsShown = null;   // the job whose store the clip list shows
function renderData() {
  const t = $("sources");
  t.replaceChildren();
  row(t, ["folder", "annotations", "clips", "per label (split: clips)", "not used"], true);
  for (const s of state.sources) {
    const labels = Object.entries(s.labels).map(([l, splits]) => l + " (" + Object.entries(splits).map(([k, n]) => (k || "–") + ": " + n).join(", ") + ")");
    row(t, [s.folder, s.annotations || "", s.error ? "error" : s.clips, labels.join(" · "), s.error || s.problems.length + " " + s.problems.slice(0, 3).join("; ")]);
  }
  const job = state.jobs.filter((j) => (j.action === "extract" || j.action === "inspect") && j.status === "done").slice(-1)[0];
  const report = events(job).filter((e) => e.store).slice(-1)[0];
  const table = $("inspect-table");
  table.replaceChildren();
  $("inspect-warnings").replaceChildren();
  if (report) {
    $("inspect-summary").textContent = report.store + ": " + report.clips + " clips, " + report.frames + " frames, a person in "
      + (100 * report.frames_with_person / Math.max(1, report.frames)).toFixed(1) + " % · " + report.learning_curve;
    row(table, ["label", "clips", "frames", "with a person", "per split"], true);
    for (const [label, l] of Object.entries(report.labels)) {
      row(table, [label, l.clips, l.frames, l.frames_with_person, Object.entries(l.splits).map(([k, v]) => k + ": " + v.clips).join(", ")]);
    }
    const warnings = (report.warnings || []).concat((report.short_clips || []).map((c) => "short clip: " + JSON.stringify(c)))
      .concat((report.empty_clips || []).map((c) => "no person: " + JSON.stringify(c)));
    for (const w of warnings) { const li = document.createElement("li"); li.textContent = typeof w === "string" ? w : JSON.stringify(w); $("inspect-warnings").append(li); }
  } else {
    $("inspect-summary").textContent = state.store ? "keypoints.h5 is there: Inspect the store to see it" : "no store yet: add a folder, then Extract keypoints";
  }
  const made = state.jobs.filter((j) => j.action === "extract" && j.status === "done").slice(-1)[0];
  const store = made ? made.id : 0;
  if (state.store && clipsShown !== store) { clipsShown = store; loadClips(); }
}
async function loadClips() {
  const clips = await getJSON("/data/clips");
  if (clips) fill($("clips"), clips.map((c) => c.id), clips.map((c) => c.label + " · " + c.id + " (" + c.frames + " frames)"));
}
$("add-source").addEventListener("click", () => api("sources", { folder: $("source-folder").value, annotations: $("source-annotations").value }));
$("extract").addEventListener("click", () => api("extract"));
$("inspect").addEventListener("click", () => api("inspect"));

// A skeleton over a video: landmarks 0–1 of the frame, drawn on the canvas laid over it.
function drawSkeleton(canvas, video, points, edges, stride) {
  const w = video.clientWidth, h = video.clientHeight;
  if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
  const g = canvas.getContext("2d");
  g.clearRect(0, 0, w, h);
  if (!points) return;
  const at = (i) => [points[i * stride] * w, points[i * stride + 1] * h, points[i * stride + 2]];
  g.lineWidth = 3;
  g.strokeStyle = "#5ef08a";
  for (const [a, b] of edges) {
    const p = at(a), q = at(b);
    if (p[0] < 0 || q[0] < 0 || p[2] < 0.3 || q[2] < 0.3) continue;
    g.beginPath(); g.moveTo(p[0], p[1]); g.lineTo(q[0], q[1]); g.stroke();
  }
  g.fillStyle = "#ffffff";
  for (let i = 0; i < points.length / stride; i++) {
    const p = at(i);
    if (p[0] >= 0 && p[2] >= 0.3) { g.beginPath(); g.arc(p[0], p[1], 3, 0, 7); g.fill(); }
  }
}

// The index of the last time ≤ t in sorted `times` (0 before the first).
function frameAt(times, t) {
  let lo = 0, hi = times.length - 1;
  while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (times[mid] <= t) lo = mid; else hi = mid - 1; }
  return lo;
}

let clip = null;
$("show-clip").addEventListener("click", async () => {
  clip = await getJSON("/data/clip", { id: $("clips").value });
  if (!clip) return;
  const video = $("clip-video");
  if (clip.video) { video.src = address("/media", { path: clip.video }); video.currentTime = clip.start; video.play().catch(() => {}); }
});
function drawClip() {
  const video = $("clip-video");
  if (clip && view === "data") {
    const t = video.currentTime - clip.start;
    if (t > clip.times[clip.times.length - 1] + 0.1) video.currentTime = clip.start;   // the clip, looped
    const f = frameAt(clip.times, t), j = clip.joints;
    drawSkeleton($("clip-canvas"), video, clip.keypoints.slice(f * j * 3, (f + 1) * j * 3), clip.edges, 3);
  }
}

// ---- Label
const label = { video: null, poses: null, segments: [], proposals: [], selected: -1, start: null, current: 0 };
const labelNames = () => $("label-names").value.split(",").map((s) => s.trim()).filter((s) => s);
function labelVideos() { return state.label_videos.concat(state.uploads); }

async function openLabelVideo(path) {
  label.video = path;
  $("label-video").src = address("/media", { path: path });
  label.poses = await getJSON("/data/poses", { video: path });
  if (label.poses) label.poses.times = label.poses.frames.map((f) => f[0]);
  label.segments = [];
  label.proposals = [];
  const csv = await fetch(address("/data/labels", { video: path }));
  if (csv.ok) {
    for (const f of csvRows(await csv.text()).slice(1)) {
      if (f.length === 4) label.segments.push({ label: f[1], start: Number(f[2]), end: Number(f[3]) });
    }
  }
  const proposals = await getJSON("/data/proposals", { video: path });
  if (Array.isArray(proposals)) label.proposals = proposals.filter((o) => o.type === "occurrence").map((o) => ({ label: o.label, start: o.start, end: o.end, proposed: true }));
  renderLabelList();
}
$("label-load").addEventListener("click", async () => {
  const path = $("label-path").value;
  await api("label-video", { video: path });
  openLabelVideo(path);
});
$("label-videos").addEventListener("change", () => openLabelVideo($("label-videos").value));
// A finished `pose` or `annotate --timeline` job of the open video: its poses or proposals are drawn.
async function refreshLabel() {
  for (const [action, key] of [["poses", "posesJob"], ["propose", "proposalsJob"]]) {
    const job = lastJob(action);
    if (!label.video || !job || job.status !== "done" || label[key] === job.id) continue;
    label[key] = job.id;
    if (action === "poses") {
      label.poses = await getJSON("/data/poses", { video: label.video });
      if (label.poses) label.poses.times = label.poses.frames.map((f) => f[0]);
    } else {
      const proposals = await getJSON("/data/proposals", { video: label.video });
      if (Array.isArray(proposals)) label.proposals = proposals.filter((o) => o.type === "occurrence").map((o) => ({ label: o.label, start: o.start, end: o.end, proposed: true }));
      $("label-proposed").textContent = label.proposals.length + " segments proposed by " + job.lines[0].split("--model ")[1].split(" ")[0]
        + (label.proposals.length ? ": ↑ ↓ to choose, Enter to accept, 1–9 to relabel, s / e to move" : "");
      renderLabelList();
    }
  }
}
$("label-poses").addEventListener("click", () => api("poses", { video: label.video }));
$("label-propose").addEventListener("click", () => api("propose", { video: label.video, run: $("label-run").value }));

// RFC 4180 rows (quoted fields may hold commas, quotes and line breaks), as the studio writes them.
function csvRows(text) {
  const rows = [];
  let row = [], field = "", quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++; } else if (c === '"') quoted = false; else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") { row.push(field); field = ""; }
    else if (c === "\n") { row.push(field); rows.push(row); row = []; field = ""; }
    else if (c !== "\r") field += c;
  }
  if (field || row.length) { row.push(field); rows.push(row); }
  return rows;
}

function allSegments() { return label.segments.concat(label.proposals); }
function renderLabelList() {
  const t = $("label-list");
  t.replaceChildren();
  row(t, ["", "label", "start (s)", "end (s)"], true);
  allSegments().forEach((s, i) => {
    const tr = row(t, [s.proposed ? "proposed" : "", s.label, s.start.toFixed(2), s.end.toFixed(2)]);
    if (s.proposed) tr.classList.add("proposed");
    if (i === label.selected) tr.classList.add("selected");
    tr.addEventListener("click", () => { label.selected = i; $("label-video").currentTime = s.start; renderLabelList(); });
  });
  const names = labelNames();
  $("label-current").textContent = names[label.current] || "";
}

const colours = ["#2e7dd7", "#e0792b", "#3c9d5a", "#b04ad0", "#c9a227", "#d0434a", "#5a6cd0", "#2aa3a3", "#8a5a2b"];
function colour(name) { const i = labelNames().indexOf(name); return colours[(i < 0 ? 8 : i) % colours.length]; }

function drawLabel() {
  const video = $("label-video");
  if (!label.video || view !== "label") return;
  const t = video.currentTime;
  if (label.poses && label.poses.frames.length) {
    const f = label.poses.frames[frameAt(label.poses.times, t)];
    drawSkeleton($("label-canvas"), video, f.slice(1), label.poses.edges, 3);
  }
  const c = $("label-timeline"), g = c.getContext("2d"), w = c.clientWidth;
  if (c.width !== w) c.width = w;
  const d = video.duration || 1;
  g.clearRect(0, 0, w, c.height);
  allSegments().forEach((s, i) => {
    g.fillStyle = colour(s.label);
    g.globalAlpha = s.proposed ? 0.35 : 0.85;
    const y = s.proposed ? 26 : 4;
    g.fillRect(s.start / d * w, y, (s.end - s.start) / d * w, 18);
    g.globalAlpha = 1;
    if (i === label.selected) { g.strokeStyle = "#000"; g.lineWidth = 2; g.strokeRect(s.start / d * w, y, (s.end - s.start) / d * w, 18); }
  });
  if (label.start !== null) { g.fillStyle = "#000"; g.fillRect(label.start / d * w, 0, 2, c.height); }
  g.fillStyle = "#d00";
  g.fillRect(t / d * w - 1, 0, 2, c.height);
  $("label-time").textContent = t.toFixed(2) + " s / " + d.toFixed(2) + " s" + (label.start !== null ? " · segment from " + label.start.toFixed(2) + " s" : "");
}
$("label-timeline").addEventListener("click", (e) => {
  const video = $("label-video"), c = $("label-timeline");
  video.currentTime = (e.offsetX / c.clientWidth) * (video.duration || 0);
});

document.addEventListener("keydown", (e) => {
  if (view !== "label" || !label.video || e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
  const video = $("label-video"), t = video.currentTime, segments = allSegments();
  const chosen = segments[label.selected];
  let handled = true;
  if (e.key === " ") { if (video.paused) video.play(); else video.pause(); }
  else if (e.key === "ArrowRight") video.currentTime = t + (e.shiftKey ? 0.1 : 1);
  else if (e.key === "ArrowLeft") video.currentTime = Math.max(0, t - (e.shiftKey ? 0.1 : 1));
  else if (e.key === "[") label.start = t;
  else if (e.key === "]" && label.start !== null && t > label.start) {
    label.segments.push({ label: labelNames()[label.current] || "action", start: label.start, end: t });
    label.segments.sort((a, b) => a.start - b.start);
    label.start = null;
    label.selected = -1;   // a digit now chooses the next segment's label, not this one's
  } else if (/^[1-9]$/.test(e.key)) {
    label.current = Number(e.key) - 1;
    if (chosen) chosen.label = labelNames()[label.current] || chosen.label;   // relabel the chosen segment
  } else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
    label.selected = Math.max(0, Math.min(segments.length - 1, label.selected + (e.key === "ArrowDown" ? 1 : -1)));
    if (segments[label.selected]) video.currentTime = segments[label.selected].start;
  } else if (e.key === "s" && chosen && t < chosen.end) chosen.start = t;
  else if (e.key === "e" && chosen && t > chosen.start) chosen.end = t;
  else if (e.key === "Enter" && chosen && chosen.proposed) {
    label.proposals.splice(label.proposals.indexOf(chosen), 1);
    delete chosen.proposed;
    label.segments.push(chosen);
    label.segments.sort((a, b) => a.start - b.start);
    label.selected = label.segments.indexOf(chosen);
  } else if ((e.key === "Delete" || e.key === "Backspace") && chosen) {
    const list = chosen.proposed ? label.proposals : label.segments;
    list.splice(list.indexOf(chosen), 1);
    label.selected = -1;
  } else handled = false;
  if (handled) { e.preventDefault(); renderLabelList(); }
});
$("label-names").addEventListener("change", renderLabelList);
$("label-save").addEventListener("click", async () => {
  const saved = await api("labels", { video: label.video, segments: label.segments.map((s) => ({ label: s.label, start: s.start, end: s.end })) });
  label.saved = saved;
  $("label-saved").textContent = "saved " + saved.file + " (" + label.segments.length + " segments): extract reads it with --annotations";
});
$("label-enroll").addEventListener("click", () => {
  if (!label.saved) { $("error").textContent = "save the annotations first"; return; }
  api("enroll", { video: label.video, run: $("label-run").value });
});
$("label-use").addEventListener("click", () => {
  if (!label.saved) { $("error").textContent = "save the annotations first"; return; }
  api("sources", { folder: label.saved.folder, annotations: label.saved.file });
});

// ---- Train
function renderTrain() {
  fill($("recipe"), state.recipes.map((r) => r.name));
  if (!$("recipe").value && state.recipes.some((r) => r.name === "pushups")) $("recipe").value = "pushups";
  const recipe = state.recipes.find((r) => r.name === $("recipe").value);
  $("recipe-text").textContent = recipe ? recipe.text : "";
  drawCurves();
}
$("recipe").addEventListener("change", renderTrain);
function number(id) { const v = $(id).value; return v === "" ? undefined : Number(v); }
$("train-start").addEventListener("click", () => {
  const body = { recipe: $("recipe").value, name: $("run-name").value, epochs: number("epochs"), model: $("model").value || undefined,
    learning_rate: number("learning-rate"), window: number("window"), batch_size: number("batch-size"), seed: number("seed") };
  if ($("crossval").checked) { body.folds = number("folds"); api("crossval", body); } else api("train", body);
});
$("train-stop").addEventListener("click", stopJob);
$("train-resume").addEventListener("click", () => api("resume", { name: $("run-name").value }));

// The run's epochs: its metrics.csv, then the last job's epochs as they come (a resumed
// run's job begins after the checkpoint's epoch).
function epochsOf(name) {
  const job = state.jobs.filter((j) => j.action === "train" && j.subject === name).slice(-1)[0];
  const live = events(job).filter((e) => e.type === "epoch");
  const run = state.runs.find((r) => r.name === name);
  const saved = run ? run.history : [];
  const first = live.length ? live[0].epoch : Infinity;
  return saved.filter((e) => e.epoch < first).concat(live);
}
function drawCurves() {
  const svg = $("curves"), name = $("run-name").value, epochs = epochsOf(name);
  const W = 480, H = 240, left = 36, bottom = 20;
  const total = epochs.reduce((m, e) => Math.max(m, e.epochs || e.epoch), 1);
  const maxLoss = epochs.reduce((m, e) => Math.max(m, e.train_loss || 0, e.validation_loss || 0), 0.1);
  const x = (ep) => left + (ep / total) * (W - left - 8);
  const y = (v, max) => H - bottom - (v / max) * (H - bottom - 8);
  const path = (key, max) => epochs.filter((e) => e[key] !== undefined).map((e, i) => (i ? "L" : "M") + x(e.epoch).toFixed(1) + "," + y(e[key], max).toFixed(1)).join("");
  const lines = [["train_loss", maxLoss, "#d0434a", ""], ["validation_loss", maxLoss, "#d0434a", "4 3"], ["train_accuracy", 1, "#2e7dd7", ""], ["validation_accuracy", 1, "#2e7dd7", "4 3"]];
  let markup = '<line x1="' + left + '" y1="' + (H - bottom) + '" x2="' + W + '" y2="' + (H - bottom) + '" stroke="#999"/>'
    + '<text x="2" y="14" font-size="11">' + maxLoss.toFixed(2) + ' / 100%</text><text x="' + (W - 60) + '" y="' + (H - 4) + '" font-size="11">epoch ' + total + '</text>';
  for (const [key, max, colourName, dash] of lines) {
    const d = path(key, max);
    if (d) markup += '<path d="' + d + '" fill="none" stroke="' + colourName + '" stroke-width="2" stroke-dasharray="' + dash + '"/>';
  }
  svg.innerHTML = markup;
  const last = epochs[epochs.length - 1];
  const job = state.jobs.filter((j) => j.action === "train" && j.subject === name).slice(-1)[0];
  if (last) {
    const mean = epochs.reduce((s, e) => s + (e.seconds || 0), 0) / epochs.length;
    const left = (last.epochs || total) - last.epoch;
    $("eta").textContent = "epoch " + last.epoch + "/" + (last.epochs || total) + " · loss " + fmt(last.train_loss, 3) + " · val acc "
      + fmt(100 * last.validation_accuracy, 1) + " %" + (job && job.status === "running" && left > 0 ? " · ETA " + (left * mean).toFixed(0) + " s" : "")
      + (job ? " · " + job.status : "");
  } else $("eta").textContent = "";
  const cv = lastJob("crossval"), summary = events(cv).slice(-1)[0];
  const t = $("crossval-summary");
  t.replaceChildren();
  if (summary && cv.status === "done") {
    for (const [k, v] of Object.entries(summary)) if (typeof v !== "object") row(t, [k, typeof v === "number" ? v.toFixed(4) : v]);
  }
}

// ---- Evaluate
let reportShown = "";
function renderEvaluate() {
  fill($("eval-run"), runsWithModel());
  const run = state.runs.find((r) => r.name === $("eval-run").value);
  const src = run && run.has_report ? address("/report/" + run.name + "/index.html", { v: String(lastJob("evaluate") ? lastJob("evaluate").id : 0) }) : "";
  if (src !== reportShown) { reportShown = src; $("report").src = src || "about:blank"; }
}
$("eval-run").addEventListener("change", renderEvaluate);
$("evaluate").addEventListener("click", () => api("evaluate", { run: $("eval-run").value }));

// ---- Preview
const preview = { video: null, result: null };
function renderPreview() {
  const videos = labelVideos().concat(...state.sources.map((s) => s.videos));
  fill($("preview-videos"), videos);
  fill($("preview-run"), runsWithModel());
  fill($("label-run"), runsWithModel());
  fill($("label-videos"), labelVideos());
  const links = $("exports");
  links.replaceChildren();
  for (const file of state.exports) {
    const a = document.createElement("a");
    a.href = address("/download", { file: file });
    a.textContent = file;
    links.append(a, " ");
  }
  const job = lastJob("preview");
  if (job && job.status === "done" && preview.loaded !== job.id && preview.video) { preview.loaded = job.id; loadPreview(); }
}
async function upload(file) {
  const response = await fetch(address("/api/upload", { name: file.name }), { method: "POST", body: file });
  const text = await response.text();
  if (!response.ok) { $("error").textContent = text; return; }
  const done = JSON.parse(text);
  state.uploads.push(done.video);
  renderPreview();
  $("preview-videos").value = done.video;
  choosePreview();
}
$("preview-file").addEventListener("change", () => { if ($("preview-file").files[0]) upload($("preview-file").files[0]); });
const drop = $("preview-drop");
drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
drop.addEventListener("dragleave", () => drop.classList.remove("over"));
drop.addEventListener("drop", (e) => { e.preventDefault(); drop.classList.remove("over"); if (e.dataTransfer.files[0]) upload(e.dataTransfer.files[0]); });
function choosePreview() {
  preview.video = $("preview-videos").value;
  preview.result = null;
  $("preview-player").src = address("/media", { path: preview.video });
  loadPreview();
}
$("preview-videos").addEventListener("change", choosePreview);
$("preview-start").addEventListener("click", () => {
  if (!preview.video) choosePreview();
  api("preview", { video: preview.video, run: $("preview-run").value });
});
$("camera").addEventListener("click", () => api("camera", { run: $("preview-run").value }));
$("export-weights").addEventListener("click", () => api("export", { run: $("preview-run").value, format: "poseact" }));
$("export-onnx").addEventListener("click", () => api("export", { run: $("preview-run").value, format: "onnx" }));

async function loadPreview() {
  if (!preview.video) return;
  preview.result = await getJSON("/data/preview", { video: preview.video });
  const people = $("preview-people"), occurrences = $("preview-occurrences");
  people.replaceChildren();
  occurrences.replaceChildren();
  const r = preview.result;
  if (!r) return;
  row(people, ["person", "repetitions", "angles at the turn (mean °)"], true);
  for (const p of r.people) {
    const reps = r.repetitions.filter((x) => x.person === p.person);
    const angles = {};
    for (const x of reps) for (const [k, a] of Object.entries(x.angles || {})) (angles[k] = angles[k] || []).push(a.at_turn);
    row(people, ["#" + p.person, p.repetitions, Object.entries(angles).map(([k, v]) => k + " " + (v.reduce((s, a) => s + a, 0) / v.length).toFixed(0)).join(" · ")]);
  }
  row(occurrences, ["person", "label", "from (s)", "to (s)", "confidence", "repetitions"], true);
  for (const o of r.occurrences) row(occurrences, ["#" + o.person, o.label, o.start.toFixed(2), o.end.toFixed(2), (100 * o.mean_confidence).toFixed(0) + " %", o.repetitions]);
}
function drawPreview() {
  const r = preview.result, video = $("preview-player");
  if (!r || view !== "preview") return;
  const t = video.currentTime, d = r.duration || video.duration || 1;
  const now = r.timeline.find((s) => s.start <= t && t < s.end);
  $("preview-now").textContent = now ? now.label + " · " + (100 * now.confidence).toFixed(0) + " %" : "–";
  const c = $("preview-timeline"), g = c.getContext("2d"), w = c.clientWidth;
  if (c.width !== w) c.width = w;
  g.clearRect(0, 0, w, c.height);
  for (const s of r.timeline) {
    g.fillStyle = s.label === "low confidence" || s.label === "no person" ? "#ccc" : colour(s.label);
    g.globalAlpha = 0.3 + 0.7 * s.confidence;
    g.fillRect(s.start / d * w, 4, (s.end - s.start) / d * w, 22);
  }
  g.globalAlpha = 1;
  for (const o of r.occurrences) {
    g.fillStyle = colour(o.label);
    g.fillRect(o.start / d * w, 32, (o.end - o.start) / d * w, 12);
  }
  g.fillStyle = "#000";
  for (const x of r.repetitions) g.fillRect(x.turn / d * w - 1, 46, 2, 10);
  g.fillStyle = "#d00";
  g.fillRect(t / d * w - 1, 0, 2, c.height);
}
$("preview-timeline").addEventListener("click", (e) => {
  const video = $("preview-player"), c = $("preview-timeline");
  video.currentTime = (e.offsetX / c.clientWidth) * (video.duration || 0);
});

// ---- Everything, each frame and each state
function render() {
  $("project").textContent = state.project;
  renderJob();
  if (view === "data") renderData();
  if (view === "train") renderTrain();
  if (view === "evaluate") renderEvaluate();
  if (view === "label") refreshLabel();
  renderPreview();
}
function frame() {
  drawClip();
  drawLabel();
  drawPreview();
  requestAnimationFrame(frame);
}

// The state over the WebSocket: one message per "next", each the whole state.
function connect() {
  const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + address("/ws"));
  ws.onopen = () => ws.send("next");
  ws.onmessage = (e) => {
    state = JSON.parse(e.data);
    render();
    ws.send("next");
  };
  ws.onclose = () => setTimeout(connect, 1000);
}

showView(view);
requestAnimationFrame(frame);
connect();
