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
svg.graph { width: 100%; height: 100%; display: block; cursor: grab; user-select: none; touch-action: none; }
svg.graph.dragging { cursor: grabbing; }
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
g.blk { cursor: pointer; }
g.blk rect { fill: #eef0f7; stroke: #5a5f80; stroke-width: 1.2; }
g.blk rect:last-of-type { fill: #dde1f2; stroke-width: 1.6; }
g.blk:hover rect:last-of-type { fill: #c9d0ee; }
g.blk.hit rect:last-of-type { stroke: #e66100; stroke-width: 3.5; }
#collapse[hidden] { display: none; }
svg.graph text { text-anchor: middle; text-rendering: optimizeSpeed; font-family: system-ui, "DejaVu Sans", "Liberation Sans", sans-serif;
              pointer-events: none; }
svg.graph text.o { font-size: 12px; font-weight: 600; fill: #111; }
svg.graph text.m { font-size: 10px; fill: #444; }
path.e { fill: none; stroke: #8a8a8a; stroke-width: 1; }
path.e.hl { stroke: #1a5fb4; stroke-width: 2.2; }
.arrows { fill: #8a8a8a; }
.edge-labels text { font-size: 9px; fill: #666; text-anchor: start; }
svg.graph.mid .edge-labels { display: none; }
svg.graph.far text { display: none; }
)CSS";

const char kHtmlPanZoomScript[] = R"JS(
// One drawing's pan and zoom (analysis/svg_graph.h's markup): one transform
// on its viewport group, applied once per animation frame; labels too small
// to read are not drawn at all. Shared by the report and opt's page.
window.aicPanZoom = function (svg, canvas) {
  'use strict';
  let viewport = svg.querySelector('g.viewport');
  const margin = 20;
  let graphW = +svg.dataset.width, graphH = +svg.dataset.height;
  let scale = 1, tx = 0, ty = 0, frame = 0;
  function apply() {
    frame = 0;
    viewport.setAttribute('transform', 'translate(' + tx.toFixed(1) + ',' + ty.toFixed(1) + ') scale(' +
                          scale.toFixed(4) + ')');
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
  // Centres the drawing's point (x, y) (layout coordinates), at a readable scale.
  function centerOn(x, y) {
    if (scale < 0.8) scale = 1;
    tx = canvas.clientWidth / 2 - (x + margin) * scale;
    ty = canvas.clientHeight / 2 - (y + margin) * scale;
    apply();
  }
  // Whether the pointer's last press was a drag (then its click is not one).
  function wasDragged() { const d = dragged; dragged = false; return d; }
  // After the viewport group or the drawing's size changed (the report's
  // expanded blocks): the same transform on the new drawing.
  function reset() {
    viewport = svg.querySelector('g.viewport');
    graphW = +svg.dataset.width; graphH = +svg.dataset.height;
    apply();
  }
  // Layout point (x, y) on the canvas, and the transform putting it at (sx, sy).
  function toScreen(x, y) { return [(x + margin) * scale + tx, (y + margin) * scale + ty]; }
  function place(x, y, sx, sy) { tx = sx - (x + margin) * scale; ty = sy - (y + margin) * scale; apply(); }
  return { fit: fit, centerOn: centerOn, wasDragged: wasDragged, reset: reset, toScreen: toScreen, place: place };
};
)JS";

const char kHtmlScript[] = R"JS(
(function () {
'use strict';
for (const m of window.__aicErrors) {
  const e = document.getElementById('errors');
  if (!e.textContent.includes(m)) { e.textContent += m + '\n'; e.className = 'has'; }
}
try {
const data = JSON.parse(document.getElementById('report-data').textContent);
const nodes = data.nodes, totals = data.totals, blocks = data.blocks;
const svg = document.getElementById('graph');
const canvas = document.getElementById('canvas');
const panel = document.getElementById('panel');

// Repeated blocks (analysis/blocks.h): all repeats but the first are drawn
// as one box; the drawing with one block expanded is text in the page,
// parsed the first time that block opens. hiddenIn[i]: the block node i is
// in when collapsed, -1 for none.
const hiddenIn = new Array(nodes.length).fill(-1);
blocks.forEach(function (b, k) { for (let i = b.start + b.size; i < b.start + b.size * b.count; i++) hiddenIn[i] = k; });
let expanded = -1;
const drawings = new Map([[-1, { vp: svg.querySelector('g.viewport'), w: svg.dataset.width, h: svg.dataset.height }]]);

// The drawn nodes' and blocks' boxes, and the edges touching each node (for
// highlighting the selection's neighbourhood), of the drawing shown.
let boxes, blockBoxes, incident;
function indexDrawing() {
  boxes = new Array(nodes.length);
  for (const g of svg.querySelectorAll('#nodes g.n')) boxes[+g.dataset.i] = g;
  blockBoxes = new Array(blocks.length);
  for (const g of svg.querySelectorAll('#nodes g.blk')) blockBoxes[+g.dataset.b] = g;
  incident = new Map();
  for (const p of svg.querySelectorAll('#edges path.e')) {
    for (const k of [+p.dataset.f, +p.dataset.t]) {
      if (!incident.has(k)) incident.set(k, []);
      incident.get(k).push(p);
    }
  }
}
indexDrawing();
// Who reads each node's outputs, from the data (a reader may be inside a collapsed block).
const readers = nodes.map(() => []);
for (const n of nodes) for (const p of n.from) if (p >= 0 && !readers[p].includes(n.i)) readers[p].push(n.i);

const pz = window.aicPanZoom(svg, canvas);
svg.addEventListener('click', function (e) {
  if (pz.wasDragged()) return;
  const k = e.target.closest('g.blk');
  if (k) { expand(+k.dataset.b); return; }
  const g = e.target.closest('g.n');
  if (g) select(+g.dataset.i, false);
});
document.addEventListener('keydown', function (e) {
  if (e.target.tagName === 'INPUT') return;
  if (e.key === '0') pz.fit(true);
  if (e.key === 'Escape') closePanel();
  if (e.key === 'c' && expanded >= 0) collapseAt(expanded);
});
function position(g) {
  const m = /translate\(([-\d.]+),([-\d.]+)\)/.exec(g.getAttribute('transform'));
  return [+m[1], +m[2]];
}
function centerOn(i) { if (boxes[i]) pz.centerOn(...position(boxes[i])); }

// Shows the drawing with block b expanded (-1: none), keeping the
// selection, the search's marks and the colouring.
function show(b) {
  if (b === expanded) return;
  if (!drawings.has(b)) {
    const t = document.createElement('template');
    t.innerHTML = document.getElementById('expanded-' + b).textContent;
    const s = t.content.querySelector('svg');
    drawings.set(b, { vp: s.querySelector('g.viewport'), w: s.dataset.width, h: s.dataset.height });
  }
  const next = drawings.get(b);
  svg.replaceChild(next.vp, svg.querySelector('g.viewport'));
  svg.dataset.width = next.w;
  svg.dataset.height = next.h;
  expanded = b;
  pz.reset();
  indexDrawing();
  colour(colourSelect.value);
  markHits();
  if (selected >= 0 && boxes[selected]) mark(selected);
  publish();
}
// Expands block b where its box is: its first hidden node lands on the box's place.
function expand(b) {
  const g = blockBoxes[b];
  const at = g ? pz.toScreen(...position(g)) : null;
  show(b);
  const first = boxes[blocks[b].start + blocks[b].size];
  if (at && first) pz.place(...position(first), at[0], at[1]);
}
function collapseAt(b) {
  const first = boxes[blocks[b].start + blocks[b].size];
  const at = first ? pz.toScreen(...position(first)) : null;
  show(-1);
  if (at && blockBoxes[b]) pz.place(...position(blockBoxes[b]), at[0], at[1]);
}
function publish() {
  const drawn = svg.querySelectorAll('#nodes g.n').length;
  document.body.dataset.nodesDrawn = String(drawn);
  document.body.dataset.nodesHidden = String(nodes.length - drawn);
  document.body.dataset.blocksShown = String(svg.querySelectorAll('#nodes g.blk').length);
  document.body.dataset.expanded = String(expanded);
  document.body.dataset.edgesDrawn = String(svg.querySelectorAll('#edges path.e').length);
  document.getElementById('collapse').hidden = expanded < 0;
}
document.getElementById('collapse').addEventListener('click', () => { if (expanded >= 0) collapseAt(expanded); });

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
  if (boxes[i]) boxes[i].classList.remove('sel');
  for (const p of incident.get(i) || []) p.classList.remove('hl');
}
function mark(i) {
  boxes[i].classList.add('sel');
  for (const p of incident.get(i) || []) p.classList.add('hl');
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
  const users = readers[n.i];
  if (users.length) {
    const to = el('td');
    users.forEach(function (u, k) {
      if (k) to.appendChild(document.createTextNode(', '));
      to.appendChild(nodeLink(u));
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
  selected = -1;
  // A node inside a collapsed block: that block opens.
  if (!boxes[i]) show(hiddenIn[i]);
  selected = i;
  mark(i);
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
    for (const g of boxes) if (g) g.firstChild.style.fill = '';
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
    if (boxes[n.i]) boxes[n.i].firstChild.style.fill = !n.known ? '#e0e0e0' : max > 0 ? ramp(Math.sqrt(value(n) / max)) : ramp(0);
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
// A hit inside a collapsed block marks the block's box.
function hitBox(i) { return boxes[i] || blockBoxes[hiddenIn[i]]; }
function markHits() { for (const i of marked) { const g = hitBox(i); if (g) g.classList.add('hit'); } }
function find(q) {
  for (const i of marked) { const g = hitBox(i); if (g) g.classList.remove('hit'); }
  marked = [];
  hits.textContent = '';
  q = q.trim().toLowerCase();
  if (!q) { hits.className = ''; return []; }
  for (const n of nodes) {
    if (n.op.toLowerCase().includes(q) || String(n.i) === q ||
        n.src.some(x => x[0].toLowerCase().includes(q) || x[1].toLowerCase().includes(q))) marked.push(n.i);
  }
  markHits();
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
  // The same path as a click on the node (one inside a collapsed block opens it first).
  if (!boxes[i]) show(hiddenIn[i]);
  boxes[i].dispatchEvent(new MouseEvent('click', { bubbles: true }));
  centerOn(i);
}
window.addEventListener('hashchange', () => open(location.hash));

pz.fit(false);
colour('class');
open(location.hash);
svg.getBoundingClientRect();
publish();
document.body.dataset.renderMs = String(Math.round(performance.now()));
document.body.dataset.ready = '1';
} catch (e) {
  window.__aicError('error: ' + (e && e.stack ? e.stack : e));
}
})();
)JS";

const char kOptHtmlStyle[] = R"CSS(
#panes { flex: 1; display: flex; min-width: 0; position: relative; }
.pane { flex: 1; display: flex; flex-direction: column; min-width: 0; border-right: 1px solid #ddd; }
.pane-title { padding: 3px 10px; font-weight: 600; background: #f3f3f3; border-bottom: 1px solid #ddd; }
.canvas { flex: 1; position: relative; overflow: hidden; background: #fff; }
#legend { flex-wrap: wrap; }
.k-kept rect, i.k-kept { fill: #f3f3f3; background: #f3f3f3; }
.k-new rect, i.k-new { fill: #bfe6b4; background: #bfe6b4; }
.k-merged rect, i.k-merged { fill: #e2f2dc; background: #e2f2dc; }
.k-replaced rect, i.k-replaced { fill: #fbd98a; background: #fbd98a; }
.k-folded rect, i.k-folded { fill: #cfe3f7; background: #cfe3f7; }
.k-bypassed rect, i.k-bypassed { fill: #e6d5ef; background: #e6d5ef; }
.k-unused rect, i.k-unused { fill: #f4a6a0; background: #f4a6a0; }
.k-folded rect, .k-bypassed rect, .k-unused rect { stroke-dasharray: 4 2; }
g.rel rect { stroke: #7b3294; stroke-width: 3.5; }
#op-table tr.changed th, #op-table tr.changed td { background: #fff6d8; }
#panel ul { padding-left: 16px; margin: 2px 0; }
#panel li { margin: 1px 0; }
)CSS";

const char kOptHtmlScript[] = R"JS(
(function () {
'use strict';
for (const m of window.__aicErrors) {
  const e = document.getElementById('errors');
  if (!e.textContent.includes(m)) { e.textContent += m + '\n'; e.className = 'has'; }
}
try {
const data = JSON.parse(document.getElementById('opt-data').textContent);
const panel = document.getElementById('panel');
const label = { a: 'original', b: 'optimized' };
const other = k => (k === 'a' ? 'b' : 'a');
const sides = {};
for (const k of ['a', 'b']) {
  const svg = document.getElementById(k + '-graph');
  const side = { nodes: data[k], svg: svg, boxes: new Array(data[k].length), incident: new Map(),
                 pz: window.aicPanZoom(svg, document.getElementById(k + '-canvas')) };
  for (const g of svg.querySelectorAll('g.nodes g.n')) side.boxes[+g.dataset.i] = g;
  for (const p of svg.querySelectorAll('g.edges path.e')) {
    for (const v of [+p.dataset.f, +p.dataset.t]) {
      if (!side.incident.has(v)) side.incident.set(v, []);
      side.incident.get(v).push(p);
    }
  }
  svg.addEventListener('click', function (e) {
    if (side.pz.wasDragged()) return;
    const g = e.target.closest('g.n');
    if (g) select(k, +g.dataset.i, false);
  });
  sides[k] = side;
}
// What a node is linked to on the other side: the original nodes an
// optimized one stands for, the optimized nodes standing for an original one.
function related(k, i) { const n = sides[k].nodes[i]; return k === 'a' ? n.by : n.rep; }

let marks = [];
function mark(k, i, c) {
  const box = sides[k].boxes[i];
  if (!box) return;
  box.classList.add(c);
  marks.push([k, i, c]);
  if (c === 'sel') for (const p of sides[k].incident.get(i) || []) p.classList.add('hl');
}
function clearMarks() {
  for (const [k, i, c] of marks) {
    sides[k].boxes[i].classList.remove(c);
    if (c === 'sel') for (const p of sides[k].incident.get(i) || []) p.classList.remove('hl');
  }
  marks = [];
}
function closePanel() { clearMarks(); panel.hidden = true; }
function el(tag, attrs, text) {
  const e = document.createElement(tag);
  if (attrs) for (const a in attrs) e.setAttribute(a, attrs[a]);
  if (text !== undefined) e.textContent = text;
  return e;
}
function nodeLink(k, i) {
  const n = sides[k].nodes[i];
  return el('a', { href: '#' + k + '=' + i, 'data-side': k, 'data-node': i },
            label[k] + ' ' + i + ': ' + n.op + (n.name ? " '" + n.name + "'" : ''));
}
function linkList(k, list) {
  const ul = el('ul', { class: 'links-' + k });
  for (const i of list) { const li = el('li'); li.appendChild(nodeLink(k, i)); ul.appendChild(li); }
  return ul;
}
const fates = { kept: 'kept as it was', replaced: 'replaced by what the rules made of it' };
function showPanel(k, i) {
  const n = sides[k].nodes[i];
  panel.textContent = '';
  const close = el('button', { class: 'close', title: 'close (Esc)' }, '×');
  close.onclick = closePanel;
  panel.appendChild(close);
  panel.appendChild(el('h1', { id: 'panel-title' }, (k === 'a' ? 'Original' : 'Optimized') + ' node ' + i + ': ' + n.op));
  panel.appendChild(el('div', { class: 'onnx' }, n.name ? "ONNX node '" + n.name + "'" : 'unnamed node'));
  const t = el('table');
  function row(key, v, id) {
    const tr = el('tr');
    tr.appendChild(el('th', null, key));
    tr.appendChild(el('td', id ? { id: id } : null, v));
    t.appendChild(tr);
  }
  if (k === 'b') {
    row('Rule', n.rule === 'original'
        ? (n.rep.length === 1 ? 'none: the original node, kept' : 'none: an original node, standing for others merged into it')
        : n.rule, 'panel-rule');
  } else {
    row('Fate', fates[n.fate] || n.why || n.fate, 'panel-fate');
  }
  row('Inputs', n.in.length ? n.in.map(v => v[0] + ' ' + v[1]).join(', ') : 'none');
  row('Outputs', n.out.map(v => v[0] + ' ' + v[1]).join(', '));
  panel.appendChild(t);
  if (k === 'b') {
    panel.appendChild(el('h2', null, (n.prod === 0 ? 'A new intermediate, part of the rewrite of (' :
                                      'Original nodes it stands for (') + n.rep.length + ')'));
    panel.appendChild(linkList('a', n.rep));
  } else if (n.by.length) {
    panel.appendChild(el('h2', null, 'In the optimized graph (' + n.by.length + ')'));
    panel.appendChild(linkList('b', n.by));
  }
  panel.hidden = false;
}
function select(k, i, center) {
  const side = sides[k];
  if (!(i >= 0 && i < side.nodes.length)) return;
  clearMarks();
  mark(k, i, 'sel');
  const rel = related(k, i), o = sides[other(k)];
  for (const j of rel) mark(other(k), j, 'rel');
  showPanel(k, i);
  if (center) side.pz.centerOn(side.nodes[i].x, side.nodes[i].y);
  // The other side follows: to the first node this one is linked to.
  if (rel.length) o.pz.centerOn(o.nodes[rel[0]].x, o.nodes[rel[0]].y);
  try { history.replaceState(null, '', '#' + k + '=' + i); } catch (e) { /* file: URLs in some browsers */ }
}
document.addEventListener('keydown', function (e) {
  if (e.target.tagName === 'INPUT') return;
  if (e.key === '0') { sides.a.pz.fit(true); sides.b.pz.fit(true); }
  if (e.key === 'Escape') closePanel();
});

// ---- search: both sides, by op, name or rule ----
const search = document.getElementById('search'), hits = document.getElementById('hits');
let found = [];
function find(q) {
  for (const [k, i] of found) sides[k].boxes[i].classList.remove('hit');
  found = [];
  hits.textContent = '';
  q = q.trim().toLowerCase();
  if (!q) { hits.className = ''; return found; }
  for (const k of ['b', 'a']) {
    sides[k].nodes.forEach(function (n, i) {
      if (n.op.toLowerCase().includes(q) || n.name.toLowerCase().includes(q) || String(i) === q ||
          (n.rule && n.rule.toLowerCase().includes(q))) found.push([k, i]);
    });
  }
  for (const [k, i] of found) sides[k].boxes[i].classList.add('hit');
  found.slice(0, 50).forEach(function ([k, i], j) {
    const a = nodeLink(k, i);
    if (!j) a.className = 'first';
    hits.appendChild(a);
  });
  hits.appendChild(el('div', { class: 'none', id: 'hit-count' },
      found.length + (found.length === 1 ? ' node' : ' nodes') + (found.length > 50 ? ' (first 50 listed)' : '')));
  hits.className = 'open';
  return found;
}
search.addEventListener('input', () => find(search.value));
search.addEventListener('keydown', function (e) {
  if (e.key === 'Enter' && found.length) { select(found[0][0], found[0][1], true); hits.className = ''; }
  if (e.key === 'Escape') { search.value = ''; find(''); }
});
document.addEventListener('click', function (e) {
  const a = e.target.closest && e.target.closest('a[data-node], a[data-find]');
  if (!a) { if (!e.target.closest || !e.target.closest('#hits, #search')) hits.className = ''; return; }
  e.preventDefault();
  if (a.dataset.find !== undefined) { search.value = a.dataset.find; find(a.dataset.find); return; }
  hits.className = '';
  select(a.dataset.side, +a.dataset.node, true);
});

// ---- #a=I, #b=I, #node=NAME (an optimized node's name, else an original's), #find=TEXT ----
function open(fragment) {
  const m = /^#(a|b|node|find)=(.*)$/.exec(fragment);
  if (!m) return;
  let key = m[2];
  try { key = decodeURIComponent(key); } catch (e) { /* a literal '%' in a name */ }
  if (m[1] === 'find') { search.value = key; find(key); return; }
  let k = m[1], i = /^\d+$/.test(key) ? +key : -1;
  if (k === 'node') {
    k = 'b';
    i = sides.b.nodes.findIndex(n => n.name === key);
    if (i < 0) { k = 'a'; i = sides.a.nodes.findIndex(n => n.name === key); }
  }
  if (i < 0 || i >= sides[k].nodes.length) { search.value = key; find(key); return; }
  select(k, i, true);
}
window.addEventListener('hashchange', () => open(location.hash));

sides.a.pz.fit(false);
sides.b.pz.fit(false);
open(location.hash);
document.body.getBoundingClientRect();
document.body.dataset.nodesDrawnA = String(sides.a.svg.querySelectorAll('g.nodes g.n').length);
document.body.dataset.nodesDrawnB = String(sides.b.svg.querySelectorAll('g.nodes g.n').length);
document.body.dataset.renderMs = String(Math.round(performance.now()));
document.body.dataset.ready = '1';
} catch (e) {
  window.__aicError('error: ' + (e && e.stack ? e.stack : e));
}
})();
)JS";

}  // namespace aic::analysis
