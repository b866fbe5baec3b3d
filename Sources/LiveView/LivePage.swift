/// The page `live --serve` serves: the video with its overlay on the left; the action, its
/// confidence, everyone's label and repetitions, the rates and the seconds per action on the right. It arrives with the
/// state and the newest frame of the moment (`initialState` is replaced by the state's
/// JSON, the picture is /frame.jpg), so it shows them at once; then every update comes
/// over one WebSocket (see BrowserView), and the page asks for the next one when it has
/// shown the last.
let initialState = "/*INITIAL_STATE*/null"

let livePage = """
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>poseact live</title>
<style>
  body { margin: 0; background: #111; color: #eee; font: 15px/1.4 system-ui, sans-serif; }
  main { display: flex; flex-wrap: wrap; gap: 16px; padding: 16px; align-items: flex-start; }
  #video { max-width: min(100%, 960px); background: #000; min-width: 320px; min-height: 180px; }
  aside { min-width: 260px; flex: 1; }
  #label { font-size: 40px; font-weight: 700; margin: 0; color: #7CFC00; word-break: break-word; }
  #label.weak { color: #ffd24a; }
  #bar { height: 10px; background: #333; border-radius: 5px; overflow: hidden; margin: 6px 0 4px; }
  #bar div { height: 100%; width: 0; background: #7CFC00; transition: width .2s; }
  .dim { color: #999; }
  table { border-collapse: collapse; margin-top: 12px; width: 100%; }
  td { padding: 3px 8px 3px 0; border-bottom: 1px solid #2a2a2a; }
  td.s { text-align: right; font-variant-numeric: tabular-nums; }
  #message { margin-top: 12px; color: #ffd24a; }
  #people { margin-top: 12px; }
  .person { padding: 6px 8px; margin: 4px 0; background: #1c1c1c; border-left: 4px solid #4682b4; }
  .person b { font-size: 18px; }
  .person .reps { font-size: 22px; font-weight: 700; color: #7CFC00; float: right; }
</style>
</head>
<body>
<main>
  <img id="video" alt="live video" src="/frame.jpg" onerror="this.removeAttribute('src')">
  <aside>
    <div class="dim" id="model"></div>
    <p id="label">starting…</p>
    <div id="bar"><div></div></div>
    <div id="confidence" class="dim"></div>
    <div id="rates" class="dim"></div>
    <div id="people"></div>
    <table id="summary"></table>
    <div id="message"></div>
  </aside>
</main>
<script>
const $ = (id) => document.getElementById(id);
let shownURL = null;

function show(s) {
  $("model").textContent = "model: " + s.model + " · person: " + (s.person === undefined ? "–" : "#" + s.person);
  const isAction = s.state !== "starting" && s.state !== "no person" && s.state !== "low confidence";
  $("label").textContent = s.state === "low confidence" ? "low confidence (" + s.label + ")" : s.state;
  $("label").className = isAction ? "" : "weak";
  const c = s.confidence === undefined ? 0 : s.confidence;
  $("bar").firstElementChild.style.width = (c * 100).toFixed(0) + "%";
  $("confidence").textContent = s.confidence === undefined ? "" : "confidence " + (c * 100).toFixed(0) + " %";
  $("rates").textContent = s.fps.toFixed(1) + " fps · " + s.dropped + " dropped · t = " + s.time.toFixed(1) + " s";
  const rows = s.summary.map((a) => "<tr><td></td><td class=s></td></tr>");
  $("summary").innerHTML = rows.join("");
  s.summary.forEach((a, i) => {
    const cells = $("summary").rows[i].cells;
    cells[0].textContent = a.label;
    cells[1].textContent = a.seconds.toFixed(1) + " s";
  });
  const people = s.people || [];
  $("people").replaceChildren(...people.map((p) => {
    const div = document.createElement("div");
    div.className = "person";
    const reps = document.createElement("span");
    reps.className = "reps";
    reps.textContent = p.repetitions + (p.repetitions === 1 ? " rep" : " reps");
    const name = document.createElement("b");
    name.textContent = "#" + p.id + " " + (p.state === "low confidence" ? "low confidence (" + p.label + ")" : p.state);
    const detail = document.createElement("div");
    detail.className = "dim";
    const parts = [];
    if (p.confidence !== undefined) parts.push((p.confidence * 100).toFixed(0) + " %");
    if (p.occurrence) parts.push("in " + p.occurrence);
    for (const [n, a] of Object.entries(p.angles || {})) parts.push(n + " " + a.toFixed(0) + "°");
    detail.textContent = parts.join(" · ");
    div.append(reps, name, detail);
    return div;
  }));
  $("message").textContent = s.message || "";
}

function connect() {
  const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws" + location.search);
  ws.binaryType = "arraybuffer";
  ws.onopen = () => ws.send("next");
  ws.onmessage = (event) => {
    const bytes = new Uint8Array(event.data);
    const n = new DataView(event.data).getUint32(0);
    show(JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + n))));
    if (bytes.length > 4 + n) {
      const url = URL.createObjectURL(new Blob([bytes.subarray(4 + n)], { type: "image/jpeg" }));
      $("video").onload = $("video").onerror = () => {
        if (shownURL) URL.revokeObjectURL(shownURL);
        shownURL = url;
        ws.send("next");
      };
      $("video").src = url;
    } else {
      ws.send("next");
    }
  };
  ws.onclose = () => {
    $("message").textContent = "poseact stopped serving this page.";
  };
}
const initial = /*INITIAL_STATE*/null;
if (initial) show(initial);
connect();
</script>
</body>
</html>
"""
