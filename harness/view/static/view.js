// harness view: table sorting and filtering, tabs, prompts on demand, live refresh.
// Plain JavaScript, no library; the pages work without it (links and forms).
"use strict";

function sortTable(th) {
  const table = th.closest("table");
  const idx = Array.from(th.parentNode.children).indexOf(th);
  const kind = th.dataset.sort;
  if (kind === "none") return;
  const asc = !th.classList.contains("sorted-asc");
  table.querySelectorAll("th").forEach(h => h.classList.remove("sorted-asc", "sorted-desc"));
  th.classList.add(asc ? "sorted-asc" : "sorted-desc");
  const body = table.tBodies[0];
  const rows = Array.from(body.rows);
  const key = r => {
    const c = r.cells[idx];
    if (!c) return "";
    const v = c.dataset.value !== undefined ? c.dataset.value : c.textContent.trim();
    return kind === "num" ? parseFloat(v.replace(/,/g, "")) || 0 : v.toLowerCase();
  };
  rows.sort((a, b) => { const x = key(a), y = key(b); return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1); });
  rows.forEach(r => body.appendChild(r));
}

function filterRows(input) {
  const table = document.querySelector(input.dataset.filter);
  if (!table) return;
  const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
  const only = document.getElementById("only-differs");
  Array.from(table.tBodies[0].rows).forEach(r => {
    const text = r.textContent.toLowerCase();
    const hit = words.every(w => text.includes(w)) && (!only || !only.checked || r.classList.contains("differs"));
    r.classList.toggle("hide", !hit);
  });
}

function wire(root) {
  root.querySelectorAll("th[data-sort]").forEach(th => th.addEventListener("click", () => sortTable(th)));
  root.querySelectorAll("input[data-filter]").forEach(inp => inp.addEventListener("input", () => filterRows(inp)));
  const only = root.querySelector("#only-differs");
  if (only) only.addEventListener("change", () => root.querySelectorAll("input[data-filter]").forEach(filterRows));
  root.querySelectorAll(".code-pane").forEach(pane => {
    pane.querySelectorAll(".tab").forEach(tab => tab.addEventListener("click", () => {
      pane.querySelectorAll(".tab").forEach(t => t.setAttribute("aria-selected", String(t === tab)));
      pane.querySelectorAll("[data-pane]").forEach(p => { p.hidden = p.dataset.pane !== tab.dataset.show; });
    }));
  });
  root.querySelectorAll("details.prompt").forEach(d => d.addEventListener("toggle", () => {
    if (!d.open || d.dataset.loaded) return;
    d.dataset.loaded = "1";
    const token = document.querySelector('meta[name="view-token"]');
    fetch(d.dataset.src, { headers: { "X-View-Token": token ? token.content : "" } }).then(r => r.text()).then(html => { d.querySelector(".slot").innerHTML = html; })
      .catch(e => { d.querySelector(".slot").textContent = "could not load the prompt: " + e; });
  }));
  const pick = root.querySelector("#compare-selected");
  if (pick) pick.addEventListener("click", () => {
    const ids = Array.from(root.querySelectorAll("input.pick:checked")).map(i => "run=" + encodeURIComponent(i.value));
    window.location.href = "/compare?" + ids.join("&");
  });
}

// Live: while a page's run is running, poll its state; when trials land, fetch the
// same URL again and swap the page body, keeping open <details> and the scroll place.
function live() {
  const run = document.body.dataset.liveRun;
  if (!run) return;
  const badge = document.getElementById("live");
  const url = run === "*" ? "/api/runs" : "/api/runs/" + encodeURIComponent(run) + "/state";
  let last = null;
  async function tick() {
    try {
      const r = await fetch(url, { cache: "no-store" });
      if (r.ok) {
        const state = await r.json();
        const sig = JSON.stringify(run === "*" ? state.runs.map(s => [s.run, s.version, s.status]) : [state.version, state.status]);
        const running = run === "*" ? state.runs.some(s => s.state === "running") : state.state === "running";
        if (badge) badge.hidden = !running;
        if (last !== null && sig !== last) await swap();
        last = sig;
      }
    } catch (e) { /* the server went away: try again later */ }
    setTimeout(tick, 1500);
  }
  tick();
}

async function swap() {
  const r = await fetch(window.location.href, { cache: "no-store" });
  if (!r.ok) return;
  const doc = new DOMParser().parseFromString(await r.text(), "text/html");
  const fresh = doc.getElementById("main");
  const main = document.getElementById("main");
  if (!fresh || !main) return;
  const open = new Set(Array.from(main.querySelectorAll("details[open]")).map(d => d.id || d.dataset.src).filter(Boolean));
  main.replaceWith(fresh);
  fresh.querySelectorAll("details").forEach(d => { if (open.has(d.id || d.dataset.src)) d.open = true; });
  wire(fresh);
  document.dispatchEvent(new CustomEvent("view:updated"));
}

document.addEventListener("DOMContentLoaded", () => { wire(document); live(); });
