// The page of `git swarm serve`. No framework and no build step: it fetches
// the JSON routes, builds the document with DOM calls, and follows /events.
// Every string that comes from .swarm/ is put in the page as text
// (textContent, createTextNode, setAttribute), never parsed as HTML.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
// Okabe-Ito and Tableau colours: distinguishable with the common colour deficiencies.
const COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#4E79A7", "#B07AA1", "#59A14F", "#9C755F", "#76B7B2"];
const MAX_STREAM = 200;
// Ids already shown, so that the latest events a reconnect sends again are
// skipped; the oldest are forgotten past this many.
const MAX_SEEN = 2000;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

function fill(target, nodes, emptyText) {
  target.replaceChildren(...nodes);
  if (nodes.length === 0 && emptyText) {
    target.append(el(target.tagName === "TBODY" ? "tr" : "li", { class: "empty" }, emptyText));
  }
}

async function getJson(path) {
  const reply = await fetch(path, { cache: "no-store", credentials: "same-origin" });
  if (!reply.ok) throw new Error(path + ": HTTP " + reply.status);
  return reply.json();
}

function setStatus(text) {
  document.getElementById("status").textContent = text;
}

function renderDirectives(rows) {
  const body = document.querySelector("#directives tbody");
  const trs = rows.map((d) => {
    const level = (name) => {
      const cell = el("td", { class: "level" }, d.effective[name]);
      if (d.effective[name] !== d.declared[name]) cell.title = "declared " + d.declared[name];
      return cell;
    };
    const id = el("td", { class: "id" }, d.id);
    if (d.escalated) id.append(el("span", { class: "badge" }, "escalated"));
    const tr = el("tr", { "data-id": d.id }, id, level("priority"), level("enforcement"),
      el("td", {}, d.state), el("td", {}, d.violations), el("td", {}, d.prevented), el("td", {}, d.events),
      el("td", { class: "lesson" }, d.lesson));
    if (d.escalated) tr.classList.add("escalated");
    return tr;
  });
  fill(body, trs, "No directives.");
  if (trs.length === 0) body.firstChild.replaceChildren(el("td", { colspan: "7" }, "No directives."));
}

function renderOverview(o) {
  renderDirectives(o.directives);
  fill(document.getElementById("escalations"), o.escalations.map((e) =>
    el("li", {}, e.directive + "  escalated " + e.since +
      (e.open ? "  (open)" : "  (ended " + e.ended + ")"))), "None.");
  fill(document.getElementById("violations"), o.violations.map((v) =>
    el("li", {}, v.ts + "  " + v.kind + "  " + v.directives.join(", ") +
      (v.role ? "  role=" + v.role : "") + (v.detail ? "  " + v.detail : ""))), "None.");
  const patterns = document.getElementById("patterns");
  const groups = o.patterns.map((g) => {
    const list = el("ul", { class: "rows" }, ...g.patterns.map((p) =>
      el("li", {}, p.state + "  " + p.score.toFixed(2) + "  " + p.record + "  " + p.text)));
    return el("div", { class: "role", "data-role": g.role }, el("h3", {}, g.role), list);
  });
  patterns.replaceChildren(...groups);
  if (groups.length === 0) patterns.append(el("p", { class: "empty" }, "No patterns."));
  fill(document.getElementById("handoffs"), o.handoffs.map((h) =>
    el("li", {}, h.task + "  " + h.standing + (h.role ? "  role=" + h.role : "") +
      (h.epic ? "  epic=" + h.epic : "") + "  owns " + h.owns.join(", ") +
      (h.summary ? "  — " + h.summary : ""))), "None.");
  const problems = document.getElementById("problems");
  fill(problems, o.problems.map((p) => el("li", {}, p.location + ": " + p.message)));
  document.getElementById("problems-section").hidden = o.problems.length === 0;
}

// Stacked bars: one colour per directive, one bar per day; a triangle over
// the bar marks the day an escalation episode of that directive began.
function renderPlot(s) {
  const target = document.getElementById("plot");
  const legend = document.getElementById("legend");
  const W = 900, H = 300, left = 40, right = 10, top = 16, bottom = 40;
  const days = s.days.length;
  const totals = s.days.map((_, i) => s.series.reduce((n, d) => n + d.violations[i], 0));
  const max = Math.max(1, ...totals);
  const step = Math.max(1, Math.ceil(max / 5));
  const yMax = step * Math.ceil(max / step);
  const slot = (W - left - right) / Math.max(1, days);
  const y = (v) => top + (H - top - bottom) * (1 - v / yMax);
  const root = svg("svg", { id: "plot-svg", viewBox: `0 0 ${W} ${H}`, role: "img" });
  root.append(svg("title", {}, "Violations per day per directive, stacked; triangles mark escalations"));
  const axis = svg("g", { class: "axis" });
  for (let v = 0; v <= yMax; v += step) {
    axis.append(svg("line", { x1: left, x2: W - right, y1: y(v), y2: y(v) }));
    axis.append(svg("text", { x: left - 6, y: y(v) + 4, "text-anchor": "end" }, v));
  }
  s.days.forEach((day, i) => {
    if (i % 5 === 0 || i === days - 1) {
      const x = left + slot * (i + 0.5);
      axis.append(svg("line", { x1: x, x2: x, y1: H - bottom, y2: H - bottom + 4 }));
      axis.append(svg("text", { x, y: H - bottom + 16, "text-anchor": "middle" }, day.slice(5)));
    }
  });
  axis.append(svg("text", { x: left, y: H - 6, class: "label" }, s.days[0] + " to " + s.days[days - 1] + " (UTC)"));
  root.append(axis);
  const stacked = s.days.map(() => 0);
  const items = [];
  s.series.forEach((d, k) => {
    const colour = COLOURS[k % COLOURS.length];
    const g = svg("g", { class: "series", "data-directive": d.directive, fill: colour });
    d.violations.forEach((n, i) => {
      if (n === 0) return;
      const x = left + slot * i + slot * 0.15;
      const rect = svg("rect", { class: "bar", x, y: y(stacked[i] + n), width: slot * 0.7, height: y(stacked[i]) - y(stacked[i] + n) });
      rect.append(svg("title", {}, d.directive + ": " + n + " violation(s) on " + s.days[i]));
      g.append(rect);
      stacked[i] += n;
    });
    d.escalations.forEach((n, i) => {
      if (n === 0) return;
      const cx = left + slot * (i + 0.5), cy = y(stacked[i]) - 8;
      const mark = svg("polygon", { class: "escalation", points: `${cx - 5},${cy + 4} ${cx + 5},${cy + 4} ${cx},${cy - 5}`, stroke: "#1d2430" });
      mark.append(svg("title", {}, d.directive + ": escalated on " + s.days[i]));
      g.append(mark);
    });
    root.append(g);
    const v = d.violations.reduce((a, b) => a + b, 0), e = d.escalations.reduce((a, b) => a + b, 0);
    // A style property, not a style attribute: the CSP forbids inline styles.
    const swatch = el("span", { class: "swatch" });
    swatch.style.backgroundColor = colour;
    items.push(el("li", { "data-directive": d.directive }, swatch, d.directive,
      el("span", { class: "esc" }, "  " + v + " violation(s)" + (e ? ", " + e + " escalation(s)" : ""))));
  });
  if (s.series.length === 0) {
    root.append(svg("text", { x: W / 2, y: H / 2, "text-anchor": "middle", class: "label" }, "No violations or escalations in these 30 days."));
  }
  target.replaceChildren(root);
  legend.replaceChildren(...items);
}

async function refresh() {
  try {
    const [o, s] = await Promise.all([getJson("/api/overview.json"), getJson("/api/series.json")]);
    renderOverview(o);
    renderPlot(s);
    setStatus("Updated " + o.generated_at + ".");
    document.body.dataset.loaded = "true";
  } catch (e) {
    setStatus("Could not load: " + e.message);
  }
}

let pending = null;
function refreshSoon() {
  if (pending) return;
  pending = setTimeout(() => { pending = null; refresh(); }, 300);
}

function streamLine(e) {
  const parts = [e.ts, e.kind];
  if (e.directive) parts.push(e.directive);
  if (e.actor && e.actor.role) parts.push("role=" + e.actor.role);
  for (const [k, v] of Object.entries(e)) {
    if (["id", "ts", "kind", "directive", "actor"].includes(k)) continue;
    parts.push(k + "=" + (typeof v === "string" ? v : JSON.stringify(v)));
  }
  return parts.join("  ");
}

function follow() {
  const stream = document.getElementById("stream");
  const state = document.getElementById("stream-state");
  const source = new EventSource("/events");
  // Each connection starts with the latest events (not new, and maybe seen
  // before the reconnect), then sends `live`.
  let backlog = true;
  let opened = false;
  const seen = new Set();
  const add = (text, attrs, live) => {
    const li = el("li", attrs, text);
    if (live) li.classList.add("new");
    stream.append(li);
    while (stream.children.length > MAX_STREAM) stream.firstChild.remove();
    stream.scrollTop = stream.scrollHeight;
  };
  source.addEventListener("open", () => {
    state.textContent = "(following)";
    backlog = true;
    // What changed while the stream was down is in the tables, not the backlog.
    if (opened) refreshSoon();
    opened = true;
  });
  source.addEventListener("error", () => { state.textContent = "(reconnecting…)"; });
  source.addEventListener("live", () => { backlog = false; });
  source.addEventListener("message", (m) => {
    let e;
    try { e = JSON.parse(m.data); } catch (_) { return; }
    const id = typeof e.id === "string" ? e.id : "";
    if (seen.has(id)) return;
    seen.add(id);
    // A Set iterates in insertion order: the first is the oldest.
    if (seen.size > MAX_SEEN) seen.delete(seen.values().next().value);
    add(streamLine(e), { "data-id": id, "data-kind": e.kind || "" }, !backlog);
    if (!backlog) refreshSoon();
  });
  source.addEventListener("problem", (m) => {
    let p;
    try { p = JSON.parse(m.data); } catch (_) { return; }
    add("skipped " + p.location + ": " + p.message, { class: "problem" }, true);
  });
}

document.addEventListener("DOMContentLoaded", () => {
  refresh();
  follow();
});
