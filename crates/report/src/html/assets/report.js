'use strict';
// Parallax's HTML report. Everything the page shows is in the JSON element
// #px-data; bulky columns (timeline visits, levels of detail, arrows) are
// gzip+base64 and inflated with the browser's DecompressionStream only when
// a view needs them.

// Control and bidirectional-formatting characters in names (any string
// of the data) are shown as escapes, \x1b or \u{202e}, as in the SVG
// charts: they could otherwise hide or reorder the text around them.
const INERT = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;
const INERT_ALL = new RegExp(INERT.source, 'g');
function inert(s) {
  return s.replace(INERT_ALL, c => {
    const n = c.charCodeAt(0);
    return n < 256 ? '\\x' + n.toString(16).padStart(2, '0') : '\\u{' + n.toString(16) + '}';
  });
}
function inertAll(v) {
  if (typeof v === 'string') return INERT.test(v) ? inert(v) : v;
  if (Array.isArray(v)) { for (let i = 0; i < v.length; i++) v[i] = inertAll(v[i]); }
  else if (v && typeof v === 'object') { for (const k of Object.keys(v)) v[k] = inertAll(v[k]); }
  return v;
}

const DOC = inertAll(JSON.parse(document.getElementById('px-data').textContent));
const MEAS = DOC.measured;
const COMP = DOC.compensated;
const RUNS = DOC.runs;
const CATS = ['computation', 'communication', 'synchronization', 'io', 'measurement'];
const CAT_COLOURS = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#9c9c9c'];
window.pxState = { views: {}, timelines: [] };

// === helpers ===

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const k of kids.flat()) {
    if (k == null) continue;
    e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return e;
}

function fmtNs(v) {
  const a = Math.abs(v);
  if (a >= 1e9) return (v / 1e9).toFixed(3) + ' s';
  if (a >= 1e6) return (v / 1e6).toFixed(3) + ' ms';
  if (a >= 1e3) return (v / 1e3).toFixed(3) + ' µs';
  return v.toFixed(0) + ' ns';
}

function fmtBytes(v) {
  if (v >= 1e9) return (v / 1e9).toFixed(2) + ' GB';
  if (v >= 1e6) return (v / 1e6).toFixed(2) + ' MB';
  if (v >= 1e3) return (v / 1e3).toFixed(1) + ' kB';
  return v + ' B';
}

function colour(i) {
  return 'hsl(' + ((i * 137.508) % 360).toFixed(0) + ',55%,55%)';
}

// One colour per region name across the page's experiments: the measured
// experiment's region order first (as in the SVG charts), then new names.
const COLOUR_OF = new Map();
for (const d of [MEAS, COMP]) {
  if (!d) continue;
  d.colourIdx = d.regions.map(r => {
    if (!COLOUR_OF.has(r.name)) COLOUR_OF.set(r.name, COLOUR_OF.size);
    return COLOUR_OF.get(r.name);
  });
}

function regionColour(d, r) {
  return colour(d.colourIdx[r] != null ? d.colourIdx[r] : r);
}

// A --window argument for the time range t0..t1 (ns), in seconds.
function windowArg(t0, t1) {
  return (Math.max(0, t0) / 1e9).toFixed(6) + '..' + (t1 / 1e9).toFixed(6);
}

function locLabel(d, i) {
  const l = d.locs[i];
  return l ? l.rank + ':' + l.thread + (l.name ? ' ' + l.name : '') : '?';
}

// Packed columns: varint row count, column count, then each column.
async function unpack(b64) {
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  const raw = new Uint8Array(await new Response(stream).arrayBuffer());
  let p = 0;
  const next = () => {
    let v = 0, m = 1, b;
    do {
      b = raw[p++];
      v += (b & 0x7f) * m;
      m *= 128;
    } while (b & 0x80 && p < raw.length);
    return v;
  };
  const n = next(), k = next();
  const cols = [];
  for (let c = 0; c < k; c++) {
    const a = new Float64Array(n);
    for (let i = 0; i < n; i++) a[i] = next();
    cols.push(a);
  }
  return { n, cols };
}

function sortableTable(cols, rows, opts) {
  // cols: [{name, key, left, fmt}], rows: objects.
  opts = opts || {};
  let sortKey = opts.sort || cols[0].key, desc = opts.desc !== false;
  const tbody = el('tbody');
  const head = el('tr', {}, cols.map(c => el('th', {
    class: c.left ? 'l' : '', 'data-key': c.key,
    onclick: () => { if (sortKey === c.key) desc = !desc; else { sortKey = c.key; desc = !c.left; } fill(); },
  }, c.name)));
  function fill() {
    const f = opts.filter ? rows.filter(opts.filter) : rows.slice();
    f.sort((a, b) => {
      const x = a[sortKey], y = b[sortKey];
      const r = typeof x === 'string' ? String(x).localeCompare(String(y)) : (x || 0) - (y || 0);
      return desc ? -r : r;
    });
    tbody.replaceChildren(...f.slice(0, opts.limit || 2000).map(r => el('tr', { onclick: opts.onclick ? () => opts.onclick(r) : null },
      cols.map(c => el('td', { class: c.left ? 'l' : '' }, c.fmt ? c.fmt(r[c.key], r) : r[c.key]))))
    );
  }
  fill();
  const t = el('table', { class: opts.class || '' }, el('thead', {}, head), tbody);
  t.refill = fill;
  return t;
}

// === profiles ===

// The merged call tree of some locations: nodes keyed by their region path.
function mergeTrees(d, locs) {
  const root = { children: new Map(), region: -1, count: 0, incl: 0, excl: 0, max: 0, locs: 0 };
  for (const li of locs) {
    const nodes = d.trees[li] || [];
    const mine = new Array(nodes.length);
    nodes.forEach((n, i) => {
      const parent = n[0] >= 0 && n[0] < i ? mine[n[0]] : root;
      let c = parent.children.get(n[1]);
      if (!c) {
        c = { children: new Map(), region: n[1], count: 0, incl: 0, excl: 0, max: 0, locs: 0, parent };
        parent.children.set(n[1], c);
      }
      c.count += n[2]; c.incl += n[3]; c.excl += n[4]; c.max = Math.max(c.max, n[3]); c.locs += 1;
      mine[i] = c;
    });
  }
  return root;
}

function flatOf(d, locs) {
  const by = new Map();
  for (const li of locs) {
    const nodes = d.trees[li] || [];
    const anc = nodes.map(() => null);
    nodes.forEach((n, i) => {
      // A recursive region's inclusive time counts once.
      let p = n[0], rec = false;
      while (p >= 0 && p < i) { if (nodes[p][1] === n[1]) { rec = true; break; } p = nodes[p][0]; }
      let r = by.get(n[1]);
      if (!r) { r = { region: n[1], count: 0, incl: 0, excl: 0 }; by.set(n[1], r); }
      r.count += n[2]; r.excl += n[4]; if (!rec) r.incl += n[3];
      anc[i] = r;
    });
  }
  const rows = [...by.values()];
  const total = rows.reduce((s, r) => s + r.excl, 0) || 1;
  for (const r of rows) {
    const g = d.regions[r.region] || {};
    r.name = g.name || '?'; r.kind = g.kind || ''; r.pct = 100 * r.excl / total;
    r.mean = r.count ? r.incl / r.count : 0;
  }
  return rows;
}

function viewProfile(sec) {
  const d = MEAS;
  const sel = el('select', {}, el('option', { value: 'all' }, 'All locations (' + d.locs.length + ')'),
    d.locs.map((l, i) => el('option', { value: i }, 'Location ' + locLabel(d, i))));
  const search = el('input', { type: 'search', placeholder: 'search regions' });
  const flatBox = el('div', { class: 'scroll' });
  const treeBox = el('div', { class: 'scroll' });
  sec.append(el('div', { class: 'controls' }, sel, search,
    COMP ? el('span', { class: 'dim' }, 'compensated columns from ' + COMP.summary.dir) : null));
  sec.append(el('div', { class: 'cols2' },
    el('div', {}, el('h2', {}, 'Flat profile'), flatBox),
    el('div', {}, el('h2', {}, 'Call tree'), treeBox)));
  function render() {
    const locs = sel.value === 'all' ? d.locs.map((_, i) => i) : [Number(sel.value)];
    const q = search.value.trim().toLowerCase();
    const rows = flatOf(d, locs);
    const cols = [
      { name: 'region', key: 'name', left: true, fmt: v => hl(v, q) },
      { name: 'kind', key: 'kind', left: true },
      { name: 'excl %', key: 'pct', fmt: v => v.toFixed(1) },
      { name: 'exclusive', key: 'excl', fmt: fmtNs },
      { name: 'inclusive', key: 'incl', fmt: fmtNs },
      { name: 'calls', key: 'count', fmt: v => v.toLocaleString('en') },
      { name: 'mean', key: 'mean', fmt: fmtNs },
    ];
    if (COMP) {
      const comp = new Map(flatOf(COMP, sel.value === 'all' ? COMP.locs.map((_, i) => i) : [Number(sel.value)].filter(i => i < COMP.locs.length)).map(r => [r.name, r]));
      for (const r of rows) {
        const c = comp.get(r.name);
        r.cexcl = c ? c.excl : null;
        r.delta = c && r.excl > 0 ? 100 * (c.excl - r.excl) / r.excl : null;
      }
      cols.push({ name: 'excl (compensated)', key: 'cexcl', fmt: v => v == null ? '-' : fmtNs(v) });
      cols.push({ name: 'Δ %', key: 'delta', fmt: v => v == null ? '-' : v.toFixed(1) });
    }
    flatBox.replaceChildren(sortableTable(cols, rows, { sort: 'excl', filter: r => !q || r.name.toLowerCase().includes(q), class: 'flat' }));
    treeBox.replaceChildren(treeTable(d, mergeTrees(d, locs), q));
  }
  sel.addEventListener('change', render);
  search.addEventListener('input', render);
  render();
  pxState.views.profile = { render, select: sel, search };
}

function hl(text, q) {
  if (!q) return text;
  const i = text.toLowerCase().indexOf(q);
  if (i < 0) return text;
  return el('span', {}, text.slice(0, i), el('mark', {}, text.slice(i, i + q.length)), text.slice(i + q.length));
}

function treeTable(d, root, q) {
  const tbody = el('tbody');
  const total = [...root.children.values()].reduce((s, c) => s + c.incl, 0) || 1;
  const matches = n => !q || (d.regions[n.region] || {}).name.toLowerCase().includes(q);
  const hasMatch = n => matches(n) || [...n.children.values()].some(hasMatch);
  const open = new Set();
  // Open the heaviest path, and every path to a match when searching.
  (function openAll(n, depth) {
    for (const c of n.children.values()) {
      if ((q && hasMatch(c)) || (!q && depth < 2)) { open.add(c); openAll(c, depth + 1); }
    }
  })(root, 0);
  function rows(n, depth, out) {
    const kids = [...n.children.values()].sort((a, b) => b.incl - a.incl);
    for (const c of kids) {
      if (q && !hasMatch(c)) continue;
      const name = (d.regions[c.region] || {}).name || '?';
      const tw = el('span', { class: 'tw' }, c.children.size ? (open.has(c) ? '▾' : '▸') : '');
      tw.addEventListener('click', () => { if (open.has(c)) open.delete(c); else open.add(c); fill(); });
      out.push(el('tr', {},
        el('td', { class: 'l' }, el('span', { style: 'padding-left:' + (depth * 14) + 'px' }), tw, hl(name, q)),
        el('td', {}, (100 * c.incl / total).toFixed(1)),
        el('td', {}, fmtNs(c.incl)), el('td', {}, fmtNs(c.excl)),
        el('td', {}, c.count.toLocaleString('en')), el('td', {}, c.locs)));
      if (open.has(c)) rows(c, depth + 1, out);
    }
  }
  function fill() {
    const out = [];
    rows(root, 0, out);
    tbody.replaceChildren(...out);
  }
  fill();
  return el('table', { class: 'tree' }, el('thead', {}, el('tr', {},
    ['call path', 'incl %', 'inclusive', 'exclusive', 'calls', 'locs'].map((h, i) => el('th', { class: i ? '' : 'l' }, h)))), tbody);
}

// === timeline ===

class Timeline {
  constructor(d, title, shared) {
    this.d = d;
    this.t = d.timeline;
    this.nrows = this.t.labels.length;
    // The locations shown: rows first..last (exclusive), all by default.
    this.first = 0;
    this.last = this.nrows;
    // The view, shared by the timelines shown together; `span` is the
    // longest of their spans, the extent that zooming and panning keep to.
    this.view = shared || { t0: 0, t1: this.t.span, span: this.t.span, listeners: [] };
    this.view.listeners.push(() => this.draw());
    // Where the page has single visits; elsewhere only the levels of detail.
    this.detail = this.t.detail || { t0: 0, t1: this.t.span, complete: true };
    this.lod = this.t.levels.map(() => null);
    this.pending = new Map();
    this.long = null;
    this.longOff = [];
    this.tiles = new Array(this.t.tiles.length);
    this.arrows = null;
    this.showArrows = true;
    this.highlight = null;
    this.canvas = el('canvas', { height: 420 });
    this.box = el('div', { class: 'tl' }, this.canvas, el('div', { class: 'lbl' }, title));
    this.info = el('div', { class: 'info' }, 'Drag to pan, wheel to zoom, double-click to see everything; click a region for its details.');
    this.drawn = 0;
    this.mode = '';
    this.bind();
  }

  rowsLayout() {
    const h = this.canvas.height - 20;
    const n = this.last - this.first;
    const maxRows = Math.max(1, Math.floor(h / 4));
    const group = Math.ceil(n / maxRows);
    const shown = Math.ceil(n / group);
    return { group, shown, rowH: h / shown, top: 20, first: this.first, last: this.last };
  }

  // The display row of location row `r`, or -1 when it is not shown.
  slot(L, r) {
    return r < L.first || r >= L.last ? -1 : Math.floor((r - L.first) / L.group);
  }

  setRows(first, last) {
    this.first = Math.max(0, Math.min(first, this.nrows - 1));
    this.last = Math.max(this.first + 1, Math.min(last, this.nrows));
    this.draw();
  }

  // Unpacks `b64` once, whoever asks first.
  once(key, b64) {
    if (!this.pending.has(key)) this.pending.set(key, unpack(b64));
    return this.pending.get(key);
  }

  async ensureLod(level) {
    if (!this.lod[level]) this.lod[level] = (await this.once('lod' + level, this.t.lod[level])).cols[0];
  }

  async ensureLong() {
    if (this.long) return;
    const u = await this.once('long', this.t.long);
    let o = 0;
    this.longOff = this.t.long_count.map(c => { const x = o; o += c; return x; });
    this.long = u;
  }

  longInView() {
    const u = this.long;
    let n = 0;
    for (let i = 0; i < u.n; i++) if (u.cols[0][i] <= this.view.t1 && u.cols[0][i] + u.cols[1][i] >= this.view.t0) n++;
    return n;
  }

  async ensureTiles(list) {
    await Promise.all(list.filter(k => !this.tiles[k]).map(async k => {
      const u = await this.once('tile' + k, this.t.tiles[k].data);
      if (this.tiles[k]) return;
      const st = u.cols[0];
      for (let i = 1; i < u.n; i++) st[i] += st[i - 1];
      this.tiles[k] = u;
    }));
  }

  tilesInView() {
    const list = [];
    let visits = 0;
    this.t.tiles.forEach((tile, k) => {
      if (tile.t1 >= this.view.t0 && tile.t0 <= this.view.t1) { list.push(k); visits += tile.n; }
    });
    return { list, visits };
  }

  async draw() {
    const cv = this.canvas;
    const w = cv.clientWidth || 1000;
    if (cv.width !== w) cv.width = w;
    const L = this.rowsLayout();
    const frac = (this.view.t1 - this.view.t0) / this.t.span;
    const D = this.detail;
    // Whether all of the view, or some of it, has single visits here.
    const whole = D.complete || (D.t0 <= this.view.t0 && this.view.t1 <= D.t1);
    const some = Math.min(this.view.t1, D.t1) > Math.max(this.view.t0, D.t0);
    const tv = this.tilesInView();
    let inView = tv.visits + this.t.nlong;
    // Single visits when there are few enough to draw and no level of
    // detail has a bin for every two pixels; a row of one location also
    // shows its visits when they are few anyway. Rows of many locations
    // keep the summary until no level is fine enough.
    const lodEnough = this.t.levels.some(b => b * frac >= w / 2);
    if (!lodEnough && inView > 400000) {
      // Long visits outside the view cost nothing to skip: count those in it.
      await this.ensureLong();
      inView = tv.visits + this.longInView();
    }
    const exact = some && inView <= 400000 && (!lodEnough || (L.group === 1 && inView <= 20000));
    let level = this.t.levels.findIndex(b => b * frac >= w / 2);
    if (level < 0) level = this.t.levels.length - 1;
    if (exact) { await this.ensureLong(); await this.ensureTiles(tv.list); }
    if (!exact || !whole) await this.ensureLod(level);
    this.mode = exact ? (whole ? 'visits' : 'visits and summary') : 'level ' + level + ' (' + this.t.levels[level] + ' bins)';
    this.paint(L, level, exact, whole, tv.list);
    this.drawn++;
  }

  x(t, w) { return (t - this.view.t0) / (this.view.t1 - this.view.t0) * w; }

  paint(L, level, exact, whole, tiles) {
    const cv = this.canvas, g = cv.getContext('2d'), w = cv.width;
    g.fillStyle = '#fff';
    g.fillRect(0, 0, w, cv.height);
    this.axis(g, w);
    const n = L.last;
    const D = this.detail;
    if (!exact || !whole) {
      for (let s = 0; s < L.shown; s++) {
        const members = [];
        for (let r = L.first + s * L.group; r < Math.min(n, L.first + (s + 1) * L.group); r++) members.push(r);
        this.paintBins(g, members, level, L.top + s * L.rowH, L.rowH, w);
      }
    }
    if (exact && whole) this.paintVisits(g, L, w, tiles);
    else if (exact) {
      // Single visits where the page has them, the summary around.
      const x0 = Math.max(0, this.x(D.t0, w)), x1 = Math.min(w, this.x(D.t1, w));
      g.save();
      g.fillStyle = '#fff';
      g.fillRect(x0, L.top, x1 - x0, cv.height - L.top);
      g.beginPath();
      g.rect(x0, 0, x1 - x0, cv.height);
      g.clip();
      this.paintVisits(g, L, w, tiles);
      g.restore();
    }
    if (!D.complete) {
      // The part with single visits, marked on the time axis.
      const x0 = this.x(D.t0, w), x1 = this.x(D.t1, w);
      g.fillStyle = 'rgba(47,95,179,.8)';
      g.fillRect(x0, 17, Math.max(1, x1 - x0), 3);
    }
    if (this.showArrows && this.t.narrows > 0) this.paintArrows(g, L, w);
    if (this.highlight && this.slot(L, this.highlight.row) >= 0) {
      const h = this.highlight;
      const s = this.slot(L, h.row);
      const x0 = this.x(h.t0, w), x1 = this.x(h.t1, w);
      g.strokeStyle = '#d00';
      g.lineWidth = 2;
      g.strokeRect(x0 - 2, L.top + s * L.rowH - 1, Math.max(4, x1 - x0 + 4), L.rowH + 2);
      g.lineWidth = 1;
    }
    // Row labels where they fit: full names for rows of one location,
    // rank:thread ranges for shared rows.
    g.font = '10px sans-serif';
    const every = Math.ceil(13 / L.rowH);
    for (let s = 0; s < L.shown; s += every) {
      const a = L.first + s * L.group, b = Math.min(n, L.first + (s + 1) * L.group) - 1;
      const text = L.group === 1 ? (L.rowH >= 14 ? this.t.labels[a] : this.t.short[a]) : this.t.short[a] + '–' + this.t.short[b];
      const y = L.top + s * L.rowH;
      g.fillStyle = 'rgba(255,255,255,.8)';
      g.fillRect(0, y, g.measureText(text).width + 6, 12);
      g.fillStyle = 'rgba(20,20,30,.9)';
      g.fillText(text, 3, y + 10);
    }
    this.legend();
  }

  axis(g, w) {
    const span = this.view.t1 - this.view.t0;
    const step = Math.pow(10, Math.floor(Math.log10(span / 8)));
    const mult = span / step > 40 ? 5 : span / step > 16 ? 2 : 1;
    const st = step * mult;
    g.fillStyle = '#667085';
    g.font = '10px sans-serif';
    for (let t = Math.ceil(this.view.t0 / st) * st; t <= this.view.t1; t += st) {
      const x = this.x(t, w);
      g.fillRect(x, 12, 1, 6);
      g.fillText(fmtNs(t), x + 2, 10);
    }
  }

  paintBins(g, members, level, y, h, w) {
    const bins = this.t.levels[level];
    const span = this.t.span;
    const lod = this.lod[level];
    if (!lod) return;
    const b0 = Math.max(0, Math.floor(this.view.t0 / span * bins));
    const b1 = Math.min(bins - 1, Math.ceil(this.view.t1 / span * bins));
    const count = new Map();
    let runStart = b0, runVal = -1;
    const flush = (end) => {
      if (runVal > 0) {
        g.fillStyle = regionColour(this.d, runVal - 1);
        const x0 = this.x(runStart / bins * span, w), x1 = this.x(end / bins * span, w);
        g.fillRect(x0, y, Math.max(1, x1 - x0), Math.max(1, h - 1));
      }
    };
    for (let b = b0; b <= b1; b++) {
      let v;
      if (members.length === 1) v = lod[members[0] * bins + b];
      else {
        // A row of many locations shows the region most of them are in.
        count.clear();
        let best = 0, bestN = 0;
        for (const r of members) {
          const x = lod[r * bins + b];
          const c = (count.get(x) || 0) + 1;
          count.set(x, c);
          if (c > bestN || (c === bestN && x > 0 && best === 0)) { best = x; bestN = c; }
        }
        v = best;
      }
      if (v !== runVal) { flush(b); runStart = b; runVal = v; }
    }
    flush(b1 + 1);
  }

  paintVisits(g, L, w, tiles) {
    const t0 = this.view.t0, t1 = this.view.t1;
    const flame = L.group === 1 && L.rowH >= 36;
    const draw = (start, dur, region, dep, row) => {
      const end = start + dur;
      if (end < t0 || start > t1) return;
      const s = this.slot(L, row);
      if (s < 0) return;
      const y = L.top + s * L.rowH;
      const x0 = this.x(start, w), x1 = this.x(end, w);
      g.fillStyle = regionColour(this.d, region);
      if (flame) {
        const lane = Math.max(3, (L.rowH - 1) / Math.min(Math.max(this.t.depth[row], 1), 16));
        if (dep >= 16) return;
        g.fillRect(x0, y + dep * lane, Math.max(0.5, x1 - x0), lane - 1);
        if (x1 - x0 > 40 && lane >= 10) {
          g.fillStyle = '#fff';
          g.font = '10px sans-serif';
          const name = (this.d.regions[region] || {}).name || '';
          g.fillText(name.slice(0, Math.floor((x1 - x0) / 6)), Math.max(x0, 0) + 2, y + dep * lane + lane - 3);
        }
      } else {
        g.fillRect(x0, y, Math.max(0.5, x1 - x0), Math.max(1, L.rowH - 1));
      }
    };
    // Long visits first: a short visit is never a long one's parent, and
    // within each list parents come before their children.
    const u = this.long;
    for (let i = 0; i < u.n; i++) draw(u.cols[0][i], u.cols[1][i], u.cols[2][i], u.cols[3][i], u.cols[4][i]);
    for (const k of tiles) {
      const v = this.tiles[k];
      if (!v) continue;
      for (let i = 0; i < v.n; i++) draw(v.cols[0][i], v.cols[1][i], v.cols[2][i], v.cols[3][i], v.cols[4][i]);
    }
  }

  async paintArrows(g, L, w) {
    if (!this.arrows) {
      this.arrows = await this.once('arrows', this.t.arrows);
      this.draw();
      return;
    }
    const a = this.arrows.cols;
    const inView = i => {
      if (a[3][i] < this.view.t0 || a[1][i] > this.view.t1) return false;
      const p = this.slot(L, a[0][i]), q = this.slot(L, a[2][i]);
      return p >= 0 && q >= 0 && p !== q;
    };
    let total = 0;
    for (let i = 0; i < this.arrows.n; i++) if (inView(i)) total++;
    // Too many to tell apart: an even sample of them.
    const stride = Math.max(1, Math.ceil(total / 1500));
    let seen = 0;
    g.lineWidth = 1;
    for (let i = 0; i < this.arrows.n; i++) {
      if (!inView(i) || seen++ % stride) continue;
      const ts = a[1][i], tr = a[3][i];
      const ys = L.top + (this.slot(L, a[0][i]) + 0.5) * L.rowH;
      const yr = L.top + (this.slot(L, a[2][i]) + 0.5) * L.rowH;
      const xs = this.x(ts, w), xr = this.x(tr, w);
      g.strokeStyle = g.fillStyle = a[5][i] ? 'rgba(120,120,120,.7)' : 'rgba(0,0,0,.75)';
      g.beginPath();
      g.moveTo(xs, ys);
      g.lineTo(xr, yr);
      g.stroke();
      const ang = Math.atan2(yr - ys, xr - xs);
      g.beginPath();
      g.moveTo(xr, yr);
      g.lineTo(xr - 6 * Math.cos(ang - 0.4), yr - 6 * Math.sin(ang - 0.4));
      g.lineTo(xr - 6 * Math.cos(ang + 0.4), yr - 6 * Math.sin(ang + 0.4));
      g.fill();
    }
  }

  legend() {
    if (!this.legendBox) return;
    const seen = new Map();
    for (const tr of this.d.trees) for (const n of tr) seen.set(n[1], (seen.get(n[1]) || 0) + n[4]);
    const top = [...seen.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12);
    this.legendBox.replaceChildren(...top.map(([r]) => el('span', {}, el('i', { style: 'background:' + regionColour(this.d, r) }), (this.d.regions[r] || {}).name)),
      el('span', { class: 'dim' }, 'showing ' + this.mode));
  }

  // The deepest visit under x on display row `s`, or the bin's region.
  pick(px, py) {
    const L = this.rowsLayout();
    const s = Math.floor((py - L.top) / L.rowH);
    if (s < 0 || s >= L.shown) return null;
    const w = this.canvas.width;
    const t = this.view.t0 + px / w * (this.view.t1 - this.view.t0);
    const r0 = L.first + s * L.group, r1 = Math.min(L.last, L.first + (s + 1) * L.group);
    let best = null;
    const lists = [this.long, ...this.tiles].filter(x => x);
    for (const u of lists) {
      for (let i = 0; i < u.n; i++) {
        const a = u.cols[0][i], d = u.cols[1][i], r = u.cols[4][i];
        if (r >= r0 && r < r1 && a <= t && t <= a + d && (!best || u.cols[3][i] > best.depth)) {
          best = { row: r, start: a, dur: d, region: u.cols[2][i], depth: u.cols[3][i] };
        }
      }
    }
    const D = this.detail;
    const outside = !D.complete && (t < D.t0 || t > D.t1);
    if (best && this.mode.startsWith('visits') && !outside) return best;
    for (let k = this.t.levels.length - 1; k >= 0; k--) {
      const a = this.lod[k];
      if (a) {
        const bins = this.t.levels[k];
        const b = Math.min(bins - 1, Math.floor(t / this.t.span * bins));
        return { row: r0, region: a[r0 * bins + b] - 1, bin: true, t, outside, view: [this.view.t0, this.view.t1] };
      }
    }
    return best;
  }

  bind() {
    const cv = this.canvas;
    let drag = null;
    const set = (t0, t1) => {
      const minSpan = 50;
      if (t1 - t0 < minSpan) { const c = (t0 + t1) / 2; t0 = c - minSpan / 2; t1 = c + minSpan / 2; }
      this.view.t0 = Math.max(-this.view.span * 0.05, t0);
      this.view.t1 = Math.min(this.view.span * 1.05, t1);
      this.view.listeners.forEach(f => f());
    };
    this.zoom = (f, cx) => {
      const w = cv.width;
      const t = this.view.t0 + (cx == null ? 0.5 : cx / w) * (this.view.t1 - this.view.t0);
      set(t - (t - this.view.t0) * f, t + (this.view.t1 - t) * f);
    };
    this.setView = set;
    cv.addEventListener('wheel', e => {
      e.preventDefault();
      const r = cv.getBoundingClientRect();
      this.zoom(e.deltaY > 0 ? 1.25 : 0.8, (e.clientX - r.left) * cv.width / r.width);
    }, { passive: false });
    cv.addEventListener('mousedown', e => { drag = { x: e.clientX, t0: this.view.t0, t1: this.view.t1, moved: false }; });
    window.addEventListener('mouseup', () => { setTimeout(() => { drag = null; }, 0); });
    window.addEventListener('mousemove', e => {
      if (!drag) return;
      const dx = (e.clientX - drag.x) / cv.getBoundingClientRect().width * (drag.t1 - drag.t0);
      if (Math.abs(e.clientX - drag.x) > 2) drag.moved = true;
      if (drag.moved) set(drag.t0 - dx, drag.t1 - dx);
    });
    cv.addEventListener('dblclick', () => set(0, this.view.span));
    cv.addEventListener('click', e => {
      if (drag && drag.moved) return;
      const r = cv.getBoundingClientRect();
      const p = this.pick((e.clientX - r.left) * cv.width / r.width, (e.clientY - r.top) * cv.height / r.height);
      this.info.textContent = describe(this.d, this.t, p);
    });
  }
}

function describe(d, t, p) {
  if (!p) return 'nothing here';
  const reg = d.regions[p.region] || {};
  const where = t.labels[p.row];
  if (p.bin) {
    const more = p.outside
      ? ' (single visits of this part of the run are not in this page: parallax html ' + d.summary.dir + ' --window ' + windowArg(p.view[0], p.view[1]) + ')'
      : ' (zoom in for single visits)';
    return where + ': mostly ' + (p.region >= 0 ? reg.name + ' (' + reg.kind + ')' : 'idle') + ' around ' + fmtNs(p.t) + more;
  }
  return where + ': ' + reg.name + ' (' + reg.kind + (reg.file ? ', ' + reg.file + ':' + reg.line : '') + ')\nstart ' + fmtNs(p.start) + ', duration ' + fmtNs(p.dur) + ', depth ' + p.depth;
}

function viewTimeline(sec) {
  if (!MEAS.timeline) { sec.append(el('p', { class: 'dim' }, 'This experiment has no event trace (profile mode): no timeline.')); return; }
  const D = MEAS.timeline.detail;
  const shared = { t0: 0, t1: MEAS.timeline.span, span: MEAS.timeline.span, listeners: [] };
  const tls = [new Timeline(MEAS, 'measured', shared)];
  if (COMP && COMP.timeline) {
    tls.push(new Timeline(COMP, 'compensated', shared));
    shared.t1 = shared.span = Math.max(MEAS.timeline.span, COMP.timeline.span);
  }
  // A window asked for is where the timeline opens.
  if (D && D.window) { shared.t0 = D.t0; shared.t1 = Math.max(D.t1, D.t0 + 50); }
  const arrows = el('input', { type: 'checkbox', id: 'tl-arrows', checked: '' });
  arrows.addEventListener('change', () => { tls.forEach(t => { t.showArrows = arrows.checked; t.draw(); }); });
  const legend = el('div', { class: 'legend' });
  tls[0].legendBox = legend;
  // A range of locations (rows in the order shown, from 0) to look at
  // closely, e.g. 100-149; empty for all.
  const n = MEAS.timeline.labels.length;
  const rows = el('input', { type: 'text', id: 'tl-rows', size: 10, placeholder: '0-' + (n - 1) });
  rows.addEventListener('change', () => {
    const m = rows.value.trim().match(/^(\d+)\s*(?:-\s*(\d+))?$/);
    const [a, b] = m ? [Number(m[1]), m[2] == null ? Number(m[1]) : Number(m[2])] : [0, n - 1];
    tls.forEach(t => t.setRows(Math.min(a, b), Math.max(a, b) + 1));
  });
  sec.append(el('div', { class: 'controls' },
    el('button', { id: 'tl-in', onclick: () => tls[0].zoom(0.5) }, 'zoom in'),
    el('button', { id: 'tl-out', onclick: () => tls[0].zoom(2) }, 'zoom out'),
    el('button', { id: 'tl-all', onclick: () => tls[0].setView(0, shared.span) }, 'all'),
    el('label', {}, arrows, ' messages and thread hand-offs (' + MEAS.timeline.narrows + ')'),
    el('label', {}, 'locations ', rows),
    el('span', { class: 'dim' }, MEAS.timeline.labels.length + ' locations; many locations share a row, showing the region most of them are in')));
  if (D && !D.complete) sec.append(el('p', { class: 'note', id: 'tl-detail' }, detailNote(MEAS)));
  sec.append(legend);
  for (const t of tls) sec.append(t.box);
  sec.append(tls[0].info);
  pxState.timelines = tls;
  pxState.views.timeline = { timelines: tls };
  return tls;
}

// What the page holds of a trace it summarizes, and how to see the rest.
function detailNote(d) {
  const t = d.timeline, D = t.detail;
  const slice = t.span / t.levels[t.levels.length - 1];
  const part = fmtNs(D.t0) + ' to ' + fmtNs(D.t1) + ' of the run (' + fmtNs(t.span) + ')';
  const what = D.window
    ? 'This page holds single visits for the window asked for, ' + part
    : 'This page holds single visits for ' + part;
  return what + ': ' + D.kept.toLocaleString('en') + ' of ' + D.visits.toLocaleString('en') + ' visits, at most ' +
    D.max_visits.toLocaleString('en') + ' (--max-visits). Elsewhere each row shows, per slice of the run (' + fmtNs(slice) +
    ' at the finest), the region its location was in for most of the slice, and the arrows of messages are not drawn. ' +
    'For single visits of another part: parallax html ' + d.summary.dir + ' --window START..END (seconds since the start, e.g. ' +
    windowArg(t.span / 2, t.span / 2 + Math.max(D.t1 - D.t0, 1000)) + '), or a larger --max-visits.';
}

// === other views ===

function viewSummary(sec) {
  const s = MEAS.summary;
  const total = MEAS.cats.reduce((a, c) => a.map((x, i) => x + c[i]), [0, 0, 0, 0, 0]);
  const sum = total.reduce((a, b) => a + b, 0) || 1;
  const kv = el('div', { class: 'kv' });
  const add = (k, v) => { if (v != null && v !== '') kv.append(el('div', {}, k), el('div', {}, v)); };
  add('Experiment', s.dir);
  add('Program', [s.program].concat(s.args || []).join(' '));
  add('Size', s.ranks + ' process(es), ' + s.locations + ' location(s) on ' + (s.hosts || []).join(', '));
  add('Mode', s.mode + ' (Parallax ' + s.version + ')');
  if (s.start_unix_ns) add('Started', new Date(s.start_unix_ns / 1e6).toISOString().replace('T', ' ').slice(0, 19) + ' UTC');
  if (s.wall_s != null) add('Wall time', fmtNs(s.wall_s * 1e9) + (s.status ? ' (' + s.status + ')' : ''));
  add('Probe cost', (s.probes || []).map(p => p.probe + ' ' + p.mean_ns.toFixed(1) + '±' + p.sd_ns.toFixed(1) + ' ns').join(', '));
  if (MEAS.concurrency) add('Concurrency', 'CEFF ' + (100 * MEAS.concurrency.ceff).toFixed(1) + '%, CAVG ' + MEAS.concurrency.cavg.toFixed(2) + ' of ' + MEAS.concurrency.locations + ' locations busy');
  if (MEAS.timeline) {
    const D = MEAS.timeline.detail;
    add('Trace', MEAS.timeline.labels.length + ' traced locations over ' + fmtNs(MEAS.timeline.span) + ', ' + MEAS.timeline.narrows + ' arrows' +
      (D && !D.complete ? '; single visits of ' + fmtNs(D.t0) + ' to ' + fmtNs(D.t1) + ' only, summaries elsewhere (see Timeline)' : ''));
  }
  if (s.unfinished) add('Note', s.unfinished + ' process(es) did not finish measuring cleanly');
  if (s.killed) add('Note', s.killed + ' process(es) were killed while measuring: every event they recorded up to then is kept');
  sec.append(el('h2', {}, 'Run'), kv);
  sec.append(el('h2', {}, 'Where the time went (all locations)'),
    el('div', {}, CATS.map((c, i) => total[i] > 0 ? el('div', {}, el('span', { class: 'bar', style: 'width:' + (300 * total[i] / sum) + 'px;background:' + CAT_COLOURS[i] }), ' ' + c + ' ' + fmtNs(total[i]) + ' (' + (100 * total[i] / sum).toFixed(1) + '%)') : null)));
  const flat = flatOf(MEAS, MEAS.locs.map((_, i) => i)).sort((a, b) => b.excl - a.excl).slice(0, 8);
  sec.append(el('h2', {}, 'Heaviest regions'), sortableTable([
    { name: 'region', key: 'name', left: true }, { name: 'excl %', key: 'pct', fmt: v => v.toFixed(1) },
    { name: 'exclusive', key: 'excl', fmt: fmtNs }, { name: 'calls', key: 'count', fmt: v => v.toLocaleString('en') }], flat, { sort: 'excl' }));
  if (COMP) {
    const ct = COMP.cats.reduce((a, c) => a.map((x, i) => x + c[i]), [0, 0, 0, 0, 0]);
    sec.append(el('h2', {}, 'Measured and compensated'), sortableTable([
      { name: 'category', key: 'c', left: true }, { name: 'measured', key: 'm', fmt: fmtNs }, { name: 'compensated', key: 'k', fmt: fmtNs },
      { name: 'Δ %', key: 'd', fmt: v => v.toFixed(1) }],
      CATS.map((c, i) => ({ c, m: total[i], k: ct[i], d: total[i] ? 100 * (ct[i] - total[i]) / total[i] : 0 })).filter(r => r.m || r.k), { sort: 'm' }));
  }
  const warnings = MEAS.warnings || [];
  if (warnings.length) sec.append(el('h2', { class: 'warn' }, 'Warnings'), el('ul', {}, warnings.map(w => el('li', {}, w))));
  if (MEAS.findings.length) sec.append(el('p', {}, MEAS.findings.length + ' finding(s): see Findings.'));
}

function viewComm(sec) {
  const m = MEAS.matrix;
  if (!m.cells.length) { sec.append(el('p', { class: 'dim' }, 'No point-to-point or one-sided communication was recorded.')); return; }
  const what = el('select', {}, el('option', { value: '2' }, 'messages'), el('option', { value: '3' }, 'bytes'));
  const cv = el('canvas', { class: 'chart', width: 520, height: 520, style: 'max-width:520px' });
  const info = el('div', { class: 'info' }, 'Hover a cell: sender row, receiver column.');
  sec.append(el('div', { class: 'controls' }, 'colour by ', what), cv, info);
  const n = Math.max(1, m.ranks);
  const grid = new Map(m.cells.map(c => [c[0] * n + c[1], c]));
  function draw() {
    const g = cv.getContext('2d'), k = Number(what.value);
    const max = Math.max(...m.cells.map(c => c[k]), 1);
    g.fillStyle = '#fff';
    g.fillRect(0, 0, cv.width, cv.height);
    const s = (cv.width - 30) / n;
    for (const c of m.cells) {
      const v = Math.log1p(c[k]) / Math.log1p(max);
      g.fillStyle = 'rgba(47,95,179,' + (0.15 + 0.85 * v).toFixed(3) + ')';
      g.fillRect(30 + c[1] * s, 30 + c[0] * s, Math.max(1, s - (s > 4 ? 1 : 0)), Math.max(1, s - (s > 4 ? 1 : 0)));
    }
    g.fillStyle = '#333';
    g.font = '10px sans-serif';
    g.fillText('to rank →', 30, 12);
    g.save(); g.translate(10, 30); g.rotate(Math.PI / 2); g.fillText('from rank →', 0, 0); g.restore();
  }
  cv.addEventListener('mousemove', e => {
    const r = cv.getBoundingClientRect();
    const s = (cv.width - 30) / n;
    const x = Math.floor(((e.clientX - r.left) * cv.width / r.width - 30) / s), y = Math.floor(((e.clientY - r.top) * cv.height / r.height - 30) / s);
    const c = grid.get(y * n + x);
    info.textContent = c ? 'rank ' + c[0] + ' → rank ' + c[1] + ': ' + c[2] + ' messages, ' + fmtBytes(c[3]) : (x >= 0 && y >= 0 && x < n && y < n ? 'rank ' + y + ' → rank ' + x + ': nothing' : '');
  });
  what.addEventListener('change', draw);
  draw();
  sec.append(el('h2', {}, 'Heaviest pairs'), sortableTable([
    { name: 'from', key: 'f' }, { name: 'to', key: 't' }, { name: 'messages', key: 'n' }, { name: 'bytes', key: 'b', fmt: fmtBytes }],
    m.cells.map(c => ({ f: c[0], t: c[1], n: c[2], b: c[3] })), { sort: 'b', limit: 50 }));
}

function viewBalance(sec) {
  const d = MEAS, n = d.cats.length;
  const cv = el('canvas', { class: 'chart', width: 1000, height: 260 });
  const info = el('div', { class: 'info' }, 'Hover a bar for its location.');
  sec.append(el('div', { class: 'legend' }, CATS.map((c, i) => el('span', {}, el('i', { style: 'background:' + CAT_COLOURS[i] }), c))), cv, info);
  const max = Math.max(...d.cats.map(c => c.reduce((a, b) => a + b, 0)), 1);
  const g = cv.getContext('2d');
  const bw = (cv.width - 40) / Math.max(n, 1);
  g.fillStyle = '#fff';
  g.fillRect(0, 0, cv.width, cv.height);
  d.cats.forEach((c, i) => {
    let y = cv.height - 20;
    c.forEach((v, k) => {
      const h = (cv.height - 40) * v / max;
      g.fillStyle = CAT_COLOURS[k];
      g.fillRect(40 + i * bw, y - h, Math.max(1, bw - (bw > 3 ? 1 : 0)), h);
      y -= h;
    });
  });
  g.fillStyle = '#333';
  g.font = '10px sans-serif';
  g.fillText(fmtNs(max), 2, 14);
  cv.addEventListener('mousemove', e => {
    const r = cv.getBoundingClientRect();
    const i = Math.floor(((e.clientX - r.left) * cv.width / r.width - 40) / bw);
    if (i >= 0 && i < n) info.textContent = 'location ' + locLabel(d, i) + ': ' + CATS.map((c, k) => c + ' ' + fmtNs(d.cats[i][k])).join(', ');
  });
  const rows = CATS.map((c, k) => {
    const v = d.cats.map(x => x[k]);
    const sum = v.reduce((a, b) => a + b, 0), mean = sum / Math.max(n, 1), mx = Math.max(...v);
    return { c, min: Math.min(...v), mean, max: mx, imb: mean > 0 ? mx / mean : 0, sum };
  }).filter(r => r.sum > 0);
  sec.append(el('h2', {}, 'Per category over locations'), sortableTable([
    { name: 'category', key: 'c', left: true }, { name: 'min', key: 'min', fmt: fmtNs }, { name: 'mean', key: 'mean', fmt: fmtNs },
    { name: 'max', key: 'max', fmt: fmtNs }, { name: 'imbalance (max/mean)', key: 'imb', fmt: v => v.toFixed(2) }], rows, { sort: 'sum' }));
}

function viewConcurrency(sec) {
  const c = MEAS.concurrency;
  if (!c) { sec.append(el('p', { class: 'dim' }, 'No trace: the concurrency profile needs events.')); return; }
  sec.append(el('p', {}, 'CEFF ' + (100 * c.ceff).toFixed(1) + '% (busy share of location time), CAVG ' + c.cavg.toFixed(2) + ' locations busy on average, an upper bound on speedup.'));
  if (c.exact === false) {
    sec.append(el('p', { class: 'note', id: 'conc-estimate' }, 'Estimated: the trace changes between busy and waiting more often than the page follows one by one, so the histogram comes from each location\'s busy time per slice of ' +
      fmtNs(c.slice_ns) + ' (exact for slices in which no location changes state). CEFF and CAVG are exact.'));
  }
  const cv = el('canvas', { class: 'chart', width: 1000, height: 240 });
  sec.append(cv);
  const g = cv.getContext('2d');
  const total = c.time_ns.reduce((a, b) => a + b, 0) || 1;
  const n = c.time_ns.length;
  const bw = (cv.width - 40) / n;
  const max = Math.max(...c.time_ns) / total || 1;
  g.fillStyle = '#fff';
  g.fillRect(0, 0, cv.width, cv.height);
  g.font = '10px sans-serif';
  c.time_ns.forEach((t, k) => {
    const h = (cv.height - 40) * (t / total) / max;
    g.fillStyle = '#4e79a7';
    g.fillRect(40 + k * bw, cv.height - 20 - h, Math.max(1, bw - 2), h);
    if (bw > 14 || k % Math.ceil(14 / bw) === 0) { g.fillStyle = '#333'; g.fillText(String(k), 40 + k * bw, cv.height - 6); }
  });
  g.fillStyle = '#333';
  g.fillText((100 * max).toFixed(0) + '% of time', 2, 12);
  sec.append(el('p', { class: 'dim' }, 'Share of the run with exactly k locations busy (x: k).'));
}

function viewFindings(sec) {
  const f = MEAS.findings;
  if (!f.length) {
    sec.append(el('p', { class: MEAS.findings_note ? 'note' : 'dim' }, MEAS.findings_note ||
      'No findings were given (parallax html DIR --findings FILE.json, with FILE from parallax analyze DIR --json).'));
    return;
  }
  const src = el('div');
  const rows = f.map((x, i) => Object.assign({ i, where: x.rank == null ? '-' : x.rank + ':' + (x.thread == null ? '*' : x.thread), culp: (x.culprits || []).map(c => c.rank + ':' + (c.thread == null ? '*' : c.thread)).join(' ') }, x));
  sec.append(sortableTable([
    { name: '#', key: 'i' }, { name: 'pattern', key: 'pattern', left: true }, { name: 'severity', key: 'severity_s', fmt: v => fmtNs(v * 1e9) },
    { name: 'location', key: 'where', left: true }, { name: 'region', key: 'region', left: true, fmt: v => v || '-' },
    { name: 'caused by', key: 'culp', left: true }, { name: 'source', key: 'file', left: true, fmt: (v, r) => v ? v + ':' + r.line : '-' }],
  rows, { sort: 'severity_s', class: 'findings', onclick: r => showFinding(r, src) }));
  sec.append(el('p', { class: 'dim' }, 'Click a finding to see it on the timeline and in the source.'), src);
}

function showFinding(x, src) {
  src.replaceChildren();
  if (x.hint) src.append(el('p', { class: 'hint' }, x.hint));
  if (x.source) {
    src.append(el('h2', {}, x.file + ':' + x.line), el('pre', { class: 'src' }, x.source.lines.map((l, i) => {
      const no = x.source.first + i;
      const text = String(no).padStart(5) + '  ' + l + '\n';
      return no === x.line ? el('b', {}, text) : text;
    })));
  } else if (x.file) {
    src.append(el('p', { class: 'dim source-note' }, 'Source ' + x.file + ':' + x.line + ' is not embedded: ' + (x.source_note || 'not readable here') + '.'));
  }
  if (x.row != null && x.t0 != null && pxState.timelines.length) {
    const tl = pxState.timelines[0];
    tl.highlight = { row: x.row, t0: x.t0, t1: x.t1 };
    if (x.row < tl.first || x.row >= tl.last) pxState.timelines.forEach(t => t.setRows(0, t.nrows));
    show('timeline');
    const pad = Math.max((x.t1 - x.t0) * 0.5, 1000);
    tl.setView(x.t0 - pad, x.t1 + pad);
    tl.info.textContent = 'Finding ' + x.pattern + ' at ' + x.where + (x.region ? ' in ' + x.region : '') + ': its longest visit is outlined.';
  }
}

function viewRuns(sec) {
  if (!RUNS) {
    sec.append(el('p', { class: 'dim' }, 'One run. Give several experiment directories (parallax html DIR1 DIR2 ...) or runs of the database (--runs 3,4,5) to compare them.'));
    return;
  }
  sec.append(el('h2', {}, 'Runs'), sortableTable([
    { name: 'run', key: 'id' }, { name: 'program', key: 'program', left: true }, { name: 'ranks', key: 'ranks' },
    { name: 'locations', key: 'threads' }, { name: 'wall', key: 'wall_s', fmt: v => v == null ? '-' : fmtNs(v * 1e9) },
    { name: 'revision', key: 'git_revision', left: true, fmt: v => v ? v.slice(0, 10) : '-' }, { name: 'tags', key: 'tags', left: true, fmt: v => (v || []).join(',') },
    { name: 'command', key: 'command', left: true }], RUNS.runs, { sort: 'id', desc: false }));
  const cols = [{ name: 'call path', key: 'path', left: true }].concat(RUNS.runs.map((r, i) => ({ name: 'run ' + r.id, key: 'v' + i, fmt: v => v == null ? '-' : fmtNs(v) })));
  const rows = RUNS.rows.map(r => { const o = { path: r.path }; r.values.forEach((v, i) => { o['v' + i] = v; }); o.max = Math.max(...r.values.map(v => v || 0)); return o; });
  sec.append(el('h2', {}, 'Call paths × runs (' + ({ incl: 'inclusive time, summed over locations', excl: 'exclusive time, summed over locations', max: 'inclusive time of the slowest location' }[RUNS.metric] || RUNS.metric) + ')'), el('div', { class: 'scroll' }, sortableTable(cols, rows, { sort: 'v0', class: 'compare' })));
  // Grouped bars of the heaviest paths.
  const top = rows.slice().sort((a, b) => b.max - a.max).slice(0, 8);
  const cv = el('canvas', { class: 'chart', width: 1000, height: 40 + top.length * (RUNS.runs.length * 8 + 10) });
  sec.append(el('h2', {}, 'Heaviest call paths by run'), cv);
  const g = cv.getContext('2d'), max = Math.max(...top.map(r => r.max), 1);
  g.fillStyle = '#fff'; g.fillRect(0, 0, cv.width, cv.height); g.font = '10px sans-serif';
  let y = 10;
  for (const r of top) {
    g.fillStyle = '#333';
    g.fillText(r.path.slice(-60), 4, y + 8);
    RUNS.runs.forEach((_, i) => {
      const v = r['v' + i] || 0;
      g.fillStyle = colour(i);
      g.fillRect(360, y + i * 8, 560 * v / max, 7);
    });
    y += RUNS.runs.length * 8 + 10;
  }
  RUNS.runs.forEach((run, i) => { g.fillStyle = colour(i); g.fillRect(360 + i * 80, cv.height - 14, 10, 10); g.fillStyle = '#333'; g.fillText('run ' + run.id, 374 + i * 80, cv.height - 5); });
  if (RUNS.scaling.length > 1) sec.append(el('h2', {}, 'Scaling'), scalingChart(RUNS.scaling));
}

function scalingChart(pts) {
  const W = 480, H = 300, m = 50;
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('width', W); svg.setAttribute('height', H); svg.setAttribute('id', 'scaling');
  const lx = v => Math.log10(v);
  const ideal = pts.map(p => ({ threads: p.threads, wall_s: pts[0].wall_s * pts[0].threads / p.threads }));
  const xs = pts.map(p => lx(p.threads)), ys = pts.concat(ideal).map(p => lx(p.wall_s));
  const x0 = Math.min(...xs) - 0.1, x1 = Math.max(...xs) + 0.1, y0 = Math.min(...ys) - 0.1, y1 = Math.max(...ys) + 0.1;
  const px = v => m + (lx(v) - x0) / (x1 - x0) * (W - 2 * m), py = v => H - m - (lx(v) - y0) / (y1 - y0) * (H - 2 * m);
  const add = (tag, a, text) => { const e = document.createElementNS(ns, tag); for (const [k, v] of Object.entries(a)) e.setAttribute(k, v); if (text) e.textContent = text; svg.append(e); };
  add('line', { x1: m, y1: H - m, x2: W - m, y2: H - m, stroke: '#000' });
  add('line', { x1: m, y1: m, x2: m, y2: H - m, stroke: '#000' });
  add('text', { x: W / 2, y: H - 12, 'text-anchor': 'middle', 'font-size': 11 }, 'locations (log)');
  add('text', { x: 12, y: m - 10, 'font-size': 11 }, 'wall time (log)');
  add('polyline', { fill: 'none', stroke: '#999', 'stroke-dasharray': '4 3', points: ideal.map(p => px(p.threads) + ',' + py(p.wall_s)).join(' ') });
  add('polyline', { fill: 'none', stroke: '#4e79a7', 'stroke-width': 2, points: pts.map(p => px(p.threads) + ',' + py(p.wall_s)).join(' ') });
  for (const p of pts) {
    add('circle', { cx: px(p.threads), cy: py(p.wall_s), r: 3, fill: '#4e79a7' });
    add('text', { x: px(p.threads) + 5, y: py(p.wall_s) - 5, 'font-size': 10 }, p.threads + ' · ' + fmtNs(p.wall_s * 1e9));
  }
  return svg;
}

// === page ===

const VIEWS = [
  ['summary', 'Summary', viewSummary],
  ['profile', 'Profile', viewProfile],
  ['timeline', 'Timeline', viewTimeline],
  ['comm', 'Communication', viewComm],
  ['balance', 'Load balance', viewBalance],
  ['concurrency', 'Concurrency', viewConcurrency],
  ['findings', 'Findings', viewFindings],
  ['runs', 'Runs', viewRuns],
];

const built = new Set();

function show(id) {
  for (const [v] of VIEWS) {
    document.getElementById('view-' + v).classList.toggle('on', v === id);
    document.getElementById('nav-' + v).classList.toggle('on', v === id);
  }
  const sec = document.getElementById('view-' + id);
  if (!built.has(id)) {
    built.add(id);
    const f = VIEWS.find(v => v[0] === id)[2];
    f(sec);
  }
  if (id === 'timeline') pxState.timelines.forEach(t => t.draw());
  pxState.current = id;
}

window.addEventListener('error', e => { (window.pxErrors = window.pxErrors || []).push(String(e.message)); });
window.addEventListener('unhandledrejection', e => { (window.pxErrors = window.pxErrors || []).push(String(e.reason)); });

function start() {
  document.body.append(el('header', {}, el('h1', { title: DOC.title }, DOC.title),
    el('nav', {}, VIEWS.map(([id, name]) => el('button', { id: 'nav-' + id, onclick: () => show(id) }, name)))));
  const main = el('main');
  for (const [id] of VIEWS) main.append(el('section', { class: 'view', id: 'view-' + id }));
  document.body.append(main);
  show('summary');
  // The timeline overview is made ready too, so that switching to it is
  // immediate; the page counts as open once both are drawn.
  const tlSec = document.getElementById('view-timeline');
  built.add('timeline');
  const tls = viewTimeline(tlSec) || [];
  // Drawing reads the canvas width before its first wait.
  tlSec.classList.add('on');
  const drawn = tls.map(t => t.draw());
  if (pxState.current !== 'timeline') tlSec.classList.remove('on');
  Promise.all(drawn).then(() => { window.pxReady = performance.now(); });
}

start();
