// live --serve's page: shows the state and the picture it arrived with (the page's
// <script id="state"> element, see BrowserView.swift), then every update from the WebSocket,
// asking for the next one when it has shown the last.
const $ = (id) => document.getElementById(id);
let shownURL = null;

// A state (PageState in LiveBoard.swift) is an action when it is its label; "low
// confidence" carries the likeliest action as its label, "starting" and "no person" none.
const isAction = (s) => s.state === s.label;
// What the headline or a person's card says for a state.
const headline = (s) => s.label === undefined || isAction(s) ? s.state : s.state + " (" + s.label + ")";

// A person's card: a count on the right, a name, and a line of details (all as text).
function card(className, count, title, details) {
  const div = document.createElement("div");
  div.className = className;
  const number = document.createElement("span");
  number.className = "reps";
  number.textContent = count;
  const name = document.createElement("b");
  name.textContent = title;
  const detail = document.createElement("div");
  detail.className = "dim";
  detail.textContent = details.join(" · ");
  div.append(number, name, detail);
  return div;
}

function show(s) {
  $("model").textContent = "model: " + s.model + " · person: " + (s.person === undefined ? "–" : "#" + s.person);
  $("label").textContent = headline(s);
  $("label").className = isAction(s) ? "" : "weak";
  const c = s.confidence === undefined ? 0 : s.confidence;
  $("bar").firstElementChild.style.width = (c * 100).toFixed(0) + "%";
  $("confidence").textContent = s.confidence === undefined ? "" : "confidence " + (c * 100).toFixed(0) + " %";
  $("rates").textContent = s.fps.toFixed(1) + " fps · " + s.dropped + " dropped · t = " + s.time.toFixed(1) + " s";
  const rows = s.summary.map(() => "<tr><td></td><td class=s></td></tr>");
  $("summary").innerHTML = rows.join("");
  s.summary.forEach((a, i) => {
    const cells = $("summary").rows[i].cells;
    cells[0].textContent = a.label;
    cells[1].textContent = a.seconds.toFixed(1) + " s";
  });
  const people = s.people || [];
  $("people").replaceChildren(...people.map((p) => {
    const parts = [];
    if (p.confidence !== undefined) parts.push((p.confidence * 100).toFixed(0) + " %");
    if (p.occurrence) parts.push("in " + p.occurrence);
    for (const [n, a] of Object.entries(p.angles || {})) parts.push(n + " " + a.toFixed(0) + "°");
    return card("person", p.repetitions + (p.repetitions === 1 ? " rep" : " reps"), "#" + p.id + " " + headline(p), parts);
  }));
  const fmt = (x, digits) => (x === undefined || x === null ? "–" : x.toFixed(digits));
  $("throwers").replaceChildren(...(s.throwers || []).map((t) => {
    const parts = ["speed " + fmt(t.last_speed, 1) + " " + t.speed_unit, "angle " + fmt(t.last_angle, 0) + "°",
                   "best " + fmt(t.best_speed, 1) + " " + t.speed_unit];
    if (t.hits !== undefined && t.hits !== null) parts.push(t.hits + (t.hits === 1 ? " hit" : " hits"));
    return card("person thrower", t.throws + (t.throws === 1 ? " throw" : " throws"), "#" + t.id + " " + (t.last_type || "throw"), parts);
  }));
  $("scene").textContent = s.scene || "";
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
show(JSON.parse($("state").textContent));
connect();
