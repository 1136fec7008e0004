// The page's CSS and JavaScript as raw string literals: compiled into the
// binary, so an installed aic-onnx needs no data files, and kept apart from
// render_html.cc so that the C++ there is only the drawing and the data.
// No fonts are loaded: text uses the viewer's own sans-serif.
#include "analysis/html_assets.h"

namespace aic::analysis {

const char kHtmlErrorScript[] = R"JS(
window.__aicErrors = [];
window.__aicError = function (m) {
  window.__aicErrors.push(m);
  var e = document.getElementById('errors');
  if (e) { e.textContent += m + '\n'; e.className = 'has'; }
};
window.addEventListener('error', function (e) {
  window.__aicError('error: ' + (e.message || e) + (e.lineno ? ' (line ' + e.lineno + ')' : ''));
});
window.addEventListener('unhandledrejection', function (e) {
  window.__aicError('unhandled rejection: ' + e.reason);
});
)JS";

const char kHtmlStyle[] = R"CSS(
* { box-sizing: border-box; }
html, body { margin: 0; height: 100%; }
body { display: flex; flex-direction: column; font: 13px/1.4 system-ui, -apple-system, "Segoe UI",
       Roboto, "DejaVu Sans", "Liberation Sans", sans-serif; color: #222; background: #fafafa; }
header { display: flex; align-items: center; gap: 14px; padding: 6px 12px; border-bottom: 1px solid #ddd;
         background: #fff; position: relative; flex-wrap: wrap; }
header h1 { font-size: 15px; margin: 0; white-space: nowrap; }
#search { width: 240px; padding: 3px 6px; }
#hits { position: absolute; top: 36px; left: 150px; z-index: 5; background: #fff; border: 1px solid #ccc;
        max-height: 50vh; overflow: auto; min-width: 320px; display: none; box-shadow: 0 2px 8px #0002; }
#hits.open { display: block; }
#hits a { display: block; padding: 2px 8px; color: #222; text-decoration: none; white-space: nowrap; }
#hits a:hover, #hits a.first { background: #e8f0fb; }
#legend { display: flex; gap: 10px; align-items: center; font-size: 12px; }
#legend i { display: inline-block; width: 12px; height: 12px; border: 1px solid #555; vertical-align: -2px;
            margin-right: 3px; }
#legend .bar { width: 120px; height: 10px; border: 1px solid #555;
               background: linear-gradient(90deg, #f7f7f7, #fdcc8a, #fc8d59, #d7301f); }
#help { position: absolute; right: 8px; bottom: 6px; color: #777; font-size: 11px; background: #fffc;
        pointer-events: none; }
#main { flex: 1; display: flex; min-height: 0; }
#side { width: 310px; overflow: auto; border-right: 1px solid #ddd; background: #fff; padding: 4px 10px; }
#side h2, #panel h2 { font-size: 13px; margin: 12px 0 4px; text-transform: uppercase; letter-spacing: .04em;
                      color: #555; }
#side table, #panel table { border-collapse: collapse; width: 100%; }
#side th, #panel th { text-align: left; font-weight: 600; padding: 1px 8px 1px 0; vertical-align: top;
                      white-space: nowrap; color: #444; }
#side td, #panel td { padding: 1px 0; word-break: break-word; }
#side ul { padding-left: 16px; margin: 2px 0; }
#side li { margin: 2px 0; }
.none { color: #888; margin: 2px 0; }
a { color: #1a5fb4; }
#canvas { flex: 1; position: relative; overflow: hidden; background: #fff; }
#graph { width: 100%; height: 100%; display: block; cursor: grab; user-select: none; touch-action: none; }
#graph.dragging { cursor: grabbing; }
#panel { width: 380px; overflow: auto; border-left: 1px solid #ddd; background: #fff; padding: 4px 12px 12px;
         font-size: 12px; }
#panel[hidden] { display: none; }
#panel h1 { font-size: 15px; margin: 8px 0 2px; }
#panel .close { float: right; cursor: pointer; border: none; background: none; font-size: 18px; }
#panel .onnx { color: #555; font-size: 12px; }
#panel svg { display: block; margin: 4px 0; background: #fcfcfc; border: 1px solid #eee; }
#errors { display: none; }
#errors.has { display: block; position: fixed; bottom: 0; left: 0; right: 0; margin: 0; padding: 6px 10px;
              background: #fdd; color: #900; max-height: 30vh; overflow: auto; z-index: 10; }
g.n rect { stroke: #555; stroke-width: 1; }
g.n { cursor: pointer; }
.c-linear rect, i.c-linear { fill: #cfe3f7; background: #cfe3f7; }
.c-collapse rect, i.c-collapse { fill: #f4a6a0; background: #f4a6a0; }
.c-expanding rect, i.c-expanding { fill: #bfe6b4; background: #bfe6b4; }
.c-contracting rect, i.c-contracting { fill: #fbd98a; background: #fbd98a; }
.c-opaque rect, i.c-opaque { fill: #c8c8c8; background: #c8c8c8; }
.c-opaque rect { stroke-dasharray: 4 2; }
.c-other rect, i.c-other { fill: #f3f3f3; background: #f3f3f3; }
g.off { opacity: .55; }
g.cp rect { stroke: #b3261e; stroke-width: 2.2; }
g.hit rect { stroke: #e66100; stroke-width: 3.5; }
g.sel rect { stroke: #1a5fb4; stroke-width: 4; }
g.io rect { fill: #fff; stroke: #555; }
#graph text { text-anchor: middle; text-rendering: optimizeSpeed; font-family: system-ui, "DejaVu Sans", "Liberation Sans", sans-serif;
              pointer-events: none; }
#graph text.o { font-size: 12px; font-weight: 600; fill: #111; }
#graph text.m { font-size: 10px; fill: #444; }
path.e { fill: none; stroke: #8a8a8a; stroke-width: 1; }
path.e.hl { stroke: #1a5fb4; stroke-width: 2.2; }
#arrows { fill: #8a8a8a; }
#edge-labels text { font-size: 9px; fill: #666; text-anchor: start; }
#graph.mid #edge-labels { display: none; }
#graph.far text { display: none; }
)CSS";

const char kHtmlScript[] = R"JS(
(function () {
'use strict';
for (const m of window.__aicErrors) {
  const e = document.getElementById('errors');
  if (!e.textContent.includes(m)) { e.textContent += m + '\n'; e.className = 'has'; }
}
try {
const data = JSON.parse(document.getElementById('report-data').textContent);
const nodes = data.nodes, totals = data.totals;
const svg = document.getElementById('graph');
const viewport = document.getElementById('viewport');
const canvas = document.getElementById('canvas');
const panel = document.getElementById('panel');
const margin = 20;
const graphW = +svg.dataset.width, graphH = +svg.dataset.height;

const boxes = new Array(nodes.length);
for (const g of svg.querySelectorAll('#nodes g.n')) boxes[+g.dataset.i] = g;
// Edges touching each node, for highlighting the selection's neighbourhood.
const incident = new Map();
for (const p of svg.querySelectorAll('#edges path.e')) {
  for (const k of [+p.dataset.f, +p.dataset.t]) {
    if (!incident.has(k)) incident.set(k, []);
    incident.get(k).push(p);
  }
}

// ---- pan and zoom: one transform on one group, applied once per frame ----
let scale = 1, tx = 0, ty = 0, frame = 0;
function apply() {
  frame = 0;
  viewport.setAttribute('transform', 'translate(' + tx.toFixed(1) + ',' + ty.toFixed(1) + ') scale(' +
                        scale.toFixed(4) + ')');
  // Level of detail: labels too small to read are not drawn at all.
  svg.classList.toggle('mid', scale < 0.75);
  svg.classList.toggle('far', scale < 0.4);
}
function schedule() { if (!frame) frame = requestAnimationFrame(apply); }
function fit(all) {
  const w = canvas.clientWidth, h = canvas.clientHeight;
  const whole = Math.min(w / graphW, h / graphH);
  // A tall graph fitted whole is unreadable: fit its width, from the top.
  scale = all || whole >= 0.5 ? Math.min(1.5, whole) : Math.min(1, w / graphW);
  tx = (w - graphW * scale) / 2;
  ty = all || whole >= 0.5 ? (h - graphH * scale) / 2 : 0;
  apply();
}
let drag = null, dragged = false;
svg.addEventListener('pointerdown', function (e) {
  if (e.button !== 0) return;
  drag = { x: e.clientX, y: e.clientY, tx: tx, ty: ty, id: e.pointerId };
  dragged = false;
});
svg.addEventListener('pointermove', function (e) {
  if (!drag) return;
  const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
  if (!dragged && Math.abs(dx) + Math.abs(dy) < 4) return;
  if (!dragged) { dragged = true; svg.setPointerCapture(drag.id); svg.classList.add('dragging'); }
  tx = drag.tx + dx; ty = drag.ty + dy;
  schedule();
});
function endDrag() { drag = null; svg.classList.remove('dragging'); }
svg.addEventListener('pointerup', endDrag);
svg.addEventListener('pointercancel', endDrag);
svg.addEventListener('wheel', function (e) {
  e.preventDefault();
  const r = svg.getBoundingClientRect();
  const px = e.clientX - r.left, py = e.clientY - r.top;
  const f = Math.exp(-e.deltaY * (e.deltaMode === 1 ? 0.05 : 0.0015));
  const s = Math.min(4, Math.max(0.02, scale * f));
  tx = px - (px - tx) * (s / scale);
  ty = py - (py - ty) * (s / scale);
  scale = s;
  schedule();
}, { passive: false });
svg.addEventListener('click', function (e) {
  if (dragged) { dragged = false; return; }
  const g = e.target.closest('g.n');
  if (g) select(+g.dataset.i, false);
});
document.addEventListener('keydown', function (e) {
  if (e.target.tagName === 'INPUT') return;
  if (e.key === '0') fit(true);
  if (e.key === 'Escape') closePanel();
});
function centerOn(i) {
  const n = nodes[i];
  if (scale < 0.8) scale = 1;
  tx = canvas.clientWidth / 2 - (n.x + margin) * scale;
  ty = canvas.clientHeight / 2 - (n.y + margin) * scale;
  apply();
}

// ---- the node panel ----
function el(tag, attrs, text) {
  const e = document.createElement(tag);
  if (attrs) for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}
function nodeLink(i) {
  const a = el('a', { href: '#node=' + i, 'data-node': i }, 'Node ' + i + ' ' + nodes[i].op);
  return a;
}
const svgNs = 'http://www.w3.org/2000/svg';
function s(tag, attrs, text) {
  const e = document.createElementNS(svgNs, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}
function fmt(v) {
  if (v === 0) return '0';
  const a = Math.abs(v);
  return a >= 1e4 || a < 1e-2 ? v.toExponential(2) : (+v.toPrecision(4)).toString();
}
// Singular values on a log axis, with the ranks marked where they fall.
function spectrumPlot(n) {
  const sp = n.spec, sv = sp.sv;
  const W = 336, H = 190, L = 44, R = 8, T = 10, B = 30;
  const plot = s('svg', { width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, class: 'spectrum' });
  const positive = sv.filter(v => v > 0);
  if (!positive.length) return plot;
  let hi = Math.log10(positive[0]), lo = Math.log10(positive[positive.length - 1]);
  if (hi - lo < 0.5) { lo -= 0.25; hi += 0.25; }
  const floor = lo - 0.3;
  const k = sv.length;
  const X = i => L + (k === 1 ? 0.5 : i / (k - 1)) * (W - L - R);
  const Y = v => T + (hi - Math.max(floor, v > 0 ? Math.log10(v) : floor)) / (hi - floor) * (H - T - B);
  plot.appendChild(s('rect', { x: L, y: T, width: W - L - R, height: H - T - B, fill: 'none', stroke: '#ccc' }));
  for (let d = Math.ceil(floor); d <= Math.floor(hi); d++) {
    const y = Y(Math.pow(10, d));
    plot.appendChild(s('line', { x1: L, x2: W - R, y1: y, y2: y, stroke: '#eee' }));
    plot.appendChild(s('text', { x: L - 4, y: y + 3, 'text-anchor': 'end', 'font-size': 9, fill: '#666' }, '1e' + d));
  }
  let pts = '';
  for (let i = 0; i < k; i++) pts += X(i).toFixed(1) + ',' + Y(sv[i]).toFixed(1) + ' ';
  plot.appendChild(s('polyline', { points: pts, fill: 'none', stroke: '#1a5fb4', 'stroke-width': 1.5 }));
  if (k <= 64) {
    for (let i = 0; i < k; i++) plot.appendChild(s('circle', { cx: X(i), cy: Y(sv[i]), r: 2, fill: '#1a5fb4' }));
  }
  if (sp.tol > 0 && Math.log10(sp.tol) >= floor) {
    const y = Y(sp.tol);
    plot.appendChild(s('line', { x1: L, x2: W - R, y1: y, y2: y, stroke: '#999', 'stroke-dasharray': '4 3' }));
    plot.appendChild(s('text', { x: W - R - 2, y: y - 3, 'text-anchor': 'end', 'font-size': 9, fill: '#666' }, 'tolerance'));
  }
  // A rank r sits between the r-th and (r+1)-th value: at index r - 1 + 0.5... drawn at r - 0.5.
  const marks = [['effective', sp.er, '#c0392b'], ['stable', sp.sr, '#7b3294'], ['numerical', sp.nr, '#1b7837']];
  if (n.lr) marks.push(['low-rank', n.lr.rank, '#e66100']);
  marks.forEach(function (m, j) {
    const pos = Math.min(k - 1, Math.max(0, m[1] - 0.5));
    const x = L + (k === 1 ? 0.5 : pos / (k - 1)) * (W - L - R);
    plot.appendChild(s('line', { x1: x, x2: x, y1: T, y2: H - B, stroke: m[2], 'stroke-width': 1.2,
                                 'stroke-dasharray': j % 2 ? '3 2' : '' , class: 'rank-' + m[0] }));
    plot.appendChild(s('text', { x: Math.min(W - R - 2, x + 3), y: T + 10 + 10 * j, 'font-size': 9, fill: m[2],
                                 stroke: '#fcfcfc', 'stroke-width': 3, 'paint-order': 'stroke',
                                 'text-anchor': x > W - 90 ? 'end' : 'start' },
                       m[0] + ' ' + fmt(m[1])));
  });
  plot.appendChild(s('text', { x: L, y: H - B + 12, 'font-size': 9, fill: '#666' }, '1'));
  plot.appendChild(s('text', { x: W - R, y: H - B + 12, 'font-size': 9, fill: '#666', 'text-anchor': 'end' }, String(k)));
  plot.appendChild(s('text', { x: (L + W - R) / 2, y: H - 4, 'font-size': 10, fill: '#444', 'text-anchor': 'middle' },
                     'singular values σᵢ, i = 1…' + k + ' (log scale)'));
  return plot;
}
// Each unit's share of active positions, sorted: dead units sit at 0.
function unitPlot(act) {
  const u = act.units.slice().sort((a, b) => b - a);
  const W = 336, H = 70, L = 4, B = 4;
  const plot = s('svg', { width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, class: 'units' });
  const bw = (W - 2 * L) / Math.max(1, u.length);
  let d = '';
  for (let i = 0; i < u.length; i++) {
    const h = u[i] * (H - B - 4);
    d += 'M' + (L + i * bw).toFixed(2) + ' ' + (H - B) + 'v' + (-h).toFixed(2) + 'h' + Math.max(0.5, bw * 0.9).toFixed(2) + 'v' + h.toFixed(2) + 'Z';
  }
  plot.appendChild(s('path', { d: d, fill: '#e66100' }));
  return plot;
}
let selected = -1;
function closePanel() {
  if (selected >= 0) unmark(selected);
  selected = -1;
  panel.hidden = true;
}
function unmark(i) {
  boxes[i].classList.remove('sel');
  for (const p of incident.get(i) || []) p.classList.remove('hl');
}
function showPanel(n) {
  panel.textContent = '';
  const close = el('button', { class: 'close', title: 'close (Esc)' }, '×');
  close.onclick = closePanel;
  panel.appendChild(close);
  panel.appendChild(el('h1', { id: 'panel-title' }, 'Node ' + n.i + ': ' + n.op));
  panel.appendChild(el('div', { class: 'onnx' },
      'ONNX: ' + n.src.map(x => (x[1] ? "'" + x[1] + "'" : 'unnamed') + ' (' + x[0] + ')').join(', ')));
  const t = el('table');
  function row(k, v) {
    const tr = el('tr');
    tr.appendChild(el('th', null, k));
    const td = el('td');
    if (v instanceof Node) td.appendChild(v); else td.textContent = v;
    tr.appendChild(td);
    t.appendChild(tr);
  }
  row(n.in.length === 1 ? 'Input shape' : 'Input shapes', n.in.length ? n.in.join(', ') : 'none');
  row(n.out.length === 1 ? 'Output shape' : 'Output shapes', n.out.join(', '));
  if (n.in_at) row('analysed at', n.in_at.concat(['→']).concat(n.out_at).join(' '));
  if (n.params > 0) row('Parameters', String(n.params));
  row('Properties', n.props.length ? n.props.join(', ') : 'none known');
  if (n.meaning) row('Meaning', n.meaning);
  if (n.known) {
    row('MACs', n.macs_t + (totals.macs > 0 ? '  (' + (100 * n.macs / totals.macs).toFixed(2) + '% of the model)' : ''));
    row('FLOPs', n.flops_t);
    row('Memory', n.br + ' bytes read, ' + n.bw + ' bytes written' + (n.bytes_x ? ' (' + n.bytes_x.trim() + ')' : '') +
        (totals.bytes > 0 ? '  (' + (100 * (n.br + n.bw) / totals.bytes).toFixed(2) + '% of the model)' : ''));
  } else {
    row('MACs', 'unknown (shapes not static)');
    row('FLOPs', 'unknown (shapes not static)');
  }
  if (n.layer) {
    row('Representation', n.layer.rep);
    row('Weight', n.layer.weight + ' [' + n.layer.wshape.join(', ') + ']' +
        (n.layer.group > 1 ? ', group ' + n.layer.group : '') + (n.layer.pointwise ? ', pointwise' : ''));
  }
  row('Semantic class', n.cls);
  if (n.effect) row('Representation effect', n.effect + (n.effect_detail ? ': ' + n.effect_detail : ''));
  if (n.how) row('Collapse', n.how + (n.cp ? ' (a collapse point)' : ''));
  else if (n.collapse) row('Collapse kind', n.collapse);
  if (n.off_path) row('Data path', 'off the representation path (shape, index or mask arithmetic)');
  if (n.spec) row('Weight spectrum', '(' + n.spec.rows + ' × ' + n.spec.cols + '): ' + n.spec.text);
  if (n.lr) row('Low rank', n.lr.text);
  if (n.act) row('Activation ratio', n.act.text);
  else if (n.cp && !totals.calibrated) row('Activation ratio', 'not measured (run with --calib)');
  panel.appendChild(t);
  if (n.spec && n.spec.sv && n.spec.sv.length) {
    panel.appendChild(el('h2', null, 'Weight spectrum'));
    panel.appendChild(spectrumPlot(n));
    panel.appendChild(el('div', { class: 'onnx' }, n.spec.method + '; tolerance ' + fmt(n.spec.tol)));
  }
  if (n.act && n.act.units.length) {
    panel.appendChild(el('h2', null, 'Active share per unit (sorted)'));
    panel.appendChild(unitPlot(n.act));
  }
  const links = el('table');
  function link(k, v) {
    const tr = el('tr');
    tr.appendChild(el('th', null, k));
    tr.appendChild(v);
    links.appendChild(tr);
  }
  const from = el('td');
  n.from.forEach(function (p, k) {
    if (k) from.appendChild(document.createTextNode(', '));
    if (p >= 0) from.appendChild(nodeLink(p)); else from.appendChild(document.createTextNode("graph input '" + n.inv[k] + "'"));
  });
  if (n.from.length) link('Inputs from', from);
  const users = (incident.get(n.i) || []).filter(p => +p.dataset.f === n.i && +p.dataset.t < nodes.length);
  if (users.length) {
    const to = el('td');
    users.forEach(function (p, k) {
      if (k) to.appendChild(document.createTextNode(', '));
      to.appendChild(nodeLink(+p.dataset.t));
    });
    link('Read by', to);
  }
  panel.appendChild(el('h2', null, 'Neighbours'));
  panel.appendChild(links);
  panel.hidden = false;
}
function select(i, center) {
  if (!(i >= 0 && i < nodes.length)) return;
  if (selected >= 0) unmark(selected);
  selected = i;
  boxes[i].classList.add('sel');
  for (const p of incident.get(i) || []) p.classList.add('hl');
  showPanel(nodes[i]);
  if (center) centerOn(i);
  try { history.replaceState(null, '', '#node=' + i); } catch (e) { /* file: URLs in some browsers */ }
}

// ---- colouring ----
const legend = document.getElementById('legend');
const classes = [['linear', 'linear'], ['collapse', 'collapse-producing'], ['expanding', 'expanding'],
                 ['contracting', 'contracting'], ['opaque', 'opaque (unknown op)'], ['other', 'other']];
function ramp(t) {
  const stops = [[247, 247, 247], [253, 204, 138], [252, 141, 89], [215, 48, 31]];
  const x = Math.max(0, Math.min(1, t)) * (stops.length - 1), k = Math.min(stops.length - 2, Math.floor(x)), f = x - k;
  const c = stops[k].map((v, j) => Math.round(v + (stops[k + 1][j] - v) * f));
  return 'rgb(' + c.join(',') + ')';
}
function colour(mode) {
  legend.textContent = '';
  if (mode === 'class') {
    for (const g of boxes) g.firstChild.style.fill = '';
    for (const [c, label] of classes) {
      const span = el('span');
      span.appendChild(el('i', { class: 'c-' + c }));
      span.appendChild(document.createTextNode(label));
      legend.appendChild(span);
    }
    return;
  }
  const value = mode === 'macs' ? n => n.macs : n => n.br + n.bw;
  const total = mode === 'macs' ? totals.macs : totals.bytes;
  let max = 0, at = -1;
  for (const n of nodes) if (n.known && value(n) > max) { max = value(n); at = n.i; }
  for (const n of nodes) {
    boxes[n.i].firstChild.style.fill = !n.known ? '#e0e0e0' : max > 0 ? ramp(Math.sqrt(value(n) / max)) : ramp(0);
  }
  legend.appendChild(el('span', null, '0'));
  legend.appendChild(el('span', { class: 'bar' }));
  const top = el('span', null, (total > 0 ? (100 * max / total).toFixed(1) : '0') + '% ');
  if (at >= 0) top.appendChild(nodeLink(at));
  legend.appendChild(top);
  legend.appendChild(el('span', null, '(√ scale; grey: unknown)'));
}
const colourSelect = document.getElementById('colour');
colourSelect.addEventListener('change', () => colour(colourSelect.value));

// ---- search ----
const search = document.getElementById('search'), hits = document.getElementById('hits');
let marked = [];
function find(q) {
  for (const i of marked) boxes[i].classList.remove('hit');
  marked = [];
  hits.textContent = '';
  q = q.trim().toLowerCase();
  if (!q) { hits.className = ''; return []; }
  for (const n of nodes) {
    if (n.op.toLowerCase().includes(q) || String(n.i) === q ||
        n.src.some(x => x[0].toLowerCase().includes(q) || x[1].toLowerCase().includes(q))) marked.push(n.i);
  }
  for (const i of marked) boxes[i].classList.add('hit');
  const shown = marked.slice(0, 50);
  shown.forEach(function (i, k) {
    const n = nodes[i];
    const a = el('a', { href: '#node=' + i, 'data-node': i, class: k ? '' : 'first' },
                 'Node ' + i + ' ' + n.op + (n.src.length ? ' — ' + n.src[0][1] : ''));
    hits.appendChild(a);
  });
  hits.appendChild(el('div', { class: 'none', id: 'hit-count' },
      marked.length + (marked.length === 1 ? ' node' : ' nodes') + (marked.length > 50 ? ' (first 50 listed)' : '')));
  hits.className = 'open';
  return marked;
}
search.addEventListener('input', () => find(search.value));
search.addEventListener('keydown', function (e) {
  if (e.key === 'Enter' && marked.length) { select(marked[0], true); hits.className = ''; }
  if (e.key === 'Escape') { search.value = ''; find(''); }
});
document.addEventListener('click', function (e) {
  const a = e.target.closest && e.target.closest('a[data-node], a[data-find]');
  if (!a) { if (!e.target.closest || !e.target.closest('#hits, #search')) hits.className = ''; return; }
  e.preventDefault();
  if (a.dataset.find !== undefined) { search.value = a.dataset.find; find(a.dataset.find); return; }
  hits.className = '';
  select(+a.dataset.node, true);
});

// ---- #node=NAME (index, ONNX node name or op) and #find=TEXT ----
function open(fragment) {
  const m = /^#(node|find)=(.*)$/.exec(fragment);
  if (!m) return;
  let key = m[2];
  try { key = decodeURIComponent(key); } catch (e) { /* a literal '%' in a name */ }
  if (m[1] === 'find') { search.value = key; find(key); return; }
  let i = /^\d+$/.test(key) ? +key : -1;
  if (i < 0) i = nodes.findIndex(n => n.src.some(x => x[1] === key));
  if (i < 0) i = nodes.findIndex(n => n.op === key);
  // No node of that name: what a search finds for it (perhaps nothing).
  if (i < 0 || i >= nodes.length) { search.value = key; find(key); return; }
  // The same path as a click on the node.
  boxes[i].dispatchEvent(new MouseEvent('click', { bubbles: true }));
  centerOn(i);
}
window.addEventListener('hashchange', () => open(location.hash));

fit(false);
colour('class');
open(location.hash);
svg.getBoundingClientRect();
document.body.dataset.nodesDrawn = String(svg.querySelectorAll('#nodes g.n').length);
document.body.dataset.edgesDrawn = String(svg.querySelectorAll('#edges path.e').length);
document.body.dataset.renderMs = String(Math.round(performance.now()));
document.body.dataset.ready = '1';
} catch (e) {
  window.__aicError('error: ' + (e && e.stack ? e.stack : e));
}
})();
)JS";

}  // namespace aic::analysis
