'use strict';
// perfkit report --html: every view computed here from the profile model's
// tables (html_report.h). No framework; text goes in with textContent only.
(function () {
  const D = JSON.parse(document.getElementById('report-data').textContent);
  const S = D.strings;
  const nStacks = D.stackFrame.length;
  // Frames in no symbol become functions of their own, named by address as
  // perf report shows them (one per DSO and address).
  const frameFunc = D.frameFunc.slice();
  const funcName = D.funcName.map((n) => S[n]);
  const funcLib = D.funcLib.slice();
  {
    const byAddress = new Map();
    for (const [frame, address] of D.unknownFrames || []) {
      const lib = D.funcLib[D.frameFunc[frame]];
      const key = lib + ' ' + address;
      let f = byAddress.get(key);
      if (f === undefined) {
        f = funcName.length;
        byAddress.set(key, f);
        funcName.push(address);
        funcLib.push(lib);
      }
      frameFunc[frame] = f;
    }
  }
  const nFuncs = funcName.length;
  const KIND = ['user', 'kernel', 'module', 'vdso', 'other'];
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };

  // ---- the model, decoded once ----
  const stackFunc = new Int32Array(nStacks);
  for (let s = 0; s < nStacks; ++s) stackFunc[s] = frameFunc[D.stackFrame[s]];
  const stackInlined = (s) => D.frameInlined[D.stackFrame[s]] === 1;
  // Stacks in an order where a prefix comes before the stacks under it.
  const stackOrder = (() => {
    let ordered = true;
    for (let s = 0; s < nStacks; ++s) if (D.stackPrefix[s] >= s) ordered = false;
    const order = Array.from({length: nStacks}, (_, i) => i);
    if (ordered) return order;
    const depth = new Int32Array(nStacks).fill(-1);
    const depthOf = (s) => {
      const path = [];
      while (s >= 0 && depth[s] < 0) { path.push(s); s = D.stackPrefix[s]; }
      let d = s >= 0 ? depth[s] : 0;
      while (path.length) depth[path.pop()] = ++d;
      return d;
    };
    for (let s = 0; s < nStacks; ++s) depthOf(s);
    return order.sort((a, b) => depth[a] - depth[b]);
  })();
  const first = D.summary.firstTime;
  const threads = D.threads.map((t, index) => {
    const n = t.stack.length;
    const time = new Float64Array(n);
    let at = first;
    for (let i = 0; i < n; ++i) {
      if (t.time[i] !== 0 || i === 0) at += t.time[i];
      time[i] = at - first;
    }
    return {index, pid: t.pid, tid: t.tid, name: S[t.name], time, stack: t.stack,
      event: t.event, weight: t.weight, n, offCpu: t.offCpu || []};
  });
  const span = Math.max(1, D.summary.lastTime - first);
  const libOf = (func) => funcLib[func];
  const libName = (lib) => (lib < 0 ? '' : S[D.libShort[lib]] || S[D.libName[lib]]);
  const kindOf = (func) => (libOf(func) < 0 ? 'none' : KIND[D.libKind[libOf(func)]]);
  const funcLabel = (func) => funcName[func];

  // The callee tree by function (flame graph, top-down): node 0 the root.
  const tree = {parent: [-1], func: [-1], frame: [-1], children: [[]], depth: [0]};
  const stackNode = new Int32Array(nStacks);
  {
    const index = new Map();
    for (const s of stackOrder) {
      const p = D.stackPrefix[s] < 0 ? 0 : stackNode[D.stackPrefix[s]];
      const key = p * nFuncs + stackFunc[s];
      let n = index.get(key);
      if (n === undefined) {
        n = tree.parent.length;
        index.set(key, n);
        tree.parent.push(p); tree.func.push(stackFunc[s]); tree.frame.push(D.stackFrame[s]);
        tree.children.push([]); tree.depth.push(tree.depth[p] + 1);
        tree.children[p].push(n);
      }
      stackNode[s] = n;
    }
    for (const c of tree.children) c.sort((a, b) => (funcLabel(tree.func[a]) < funcLabel(tree.func[b]) ? -1 : 1));
  }
  // A stack's functions, leaf first, inlined frames left out (what perf
  // report's symbols are).
  function realFuncs(s, out) {
    out.length = 0;
    for (; s >= 0; s = D.stackPrefix[s]) if (!stackInlined(s)) out.push(stackFunc[s]);
    return out;
  }

  // ---- view state, kept in the URL's fragment ----
  // The event shown first: the one with samples (an Intel PT recording's
  // own event has none; its synthesized ones do).
  let busiest = 0;
  D.events.forEach((e, i) => { if (e.samples > D.events[busiest].samples) busiest = i; });
  const defaults = {view: 'flame', event: busiest, pid: -1, tid: -1, dso: -1, search: '', range: '',
    zoom: 0, izoom: 0, fn: -1, sort: 'total'};
  let state = Object.assign({}, defaults);
  function readHash() {
    const q = new URLSearchParams(location.hash.slice(1));
    const s = Object.assign({}, defaults);
    for (const k of Object.keys(defaults)) {
      if (!q.has(k)) continue;
      s[k] = typeof defaults[k] === 'number' ? Number(q.get(k)) : q.get(k);
      if (Number.isNaN(s[k])) s[k] = defaults[k];
    }
    return s;
  }
  function writeHash() {
    const q = new URLSearchParams();
    for (const k of Object.keys(defaults)) if (state[k] !== defaults[k]) q.set(k, state[k]);
    const h = q.toString();
    if (h !== location.hash.slice(1)) history.replaceState(null, '', h ? '#' + h : location.pathname);
  }
  function range() {
    const m = /^(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?)$/.exec(state.range);
    return m ? [Number(m[1]), Number(m[2])] : null;
  }

  // ---- the samples the filters keep, by stack ----
  let agg = null;
  function aggregate() {
    const w = new Float64Array(nStacks), c = new Float64Array(nStacks);
    const r = range();
    let total = 0, count = 0, eventTotal = 0, truncated = 0, noStack = 0;
    const maxStack = D.summary.maxStack;
    for (const t of threads) {
      const byThread = (state.pid < 0 || t.pid === state.pid) && (state.tid < 0 || t.tid === state.tid);
      const evs = typeof t.event === 'number' ? null : t.event;
      const wts = typeof t.weight === 'number' ? null : t.weight;
      for (let i = 0; i < t.n; ++i) {
        if ((evs ? evs[i] : t.event) !== state.event) continue;
        const wt = wts ? wts[i] : t.weight;
        eventTotal += wt;
        if (!byThread) continue;
        if (r && (t.time[i] < r[0] || t.time[i] > r[1])) continue;
        const s = t.stack[i];
        if (state.dso >= 0) {
          if (s < 0) continue;
          let leaf = s;
          while (leaf >= 0 && stackInlined(leaf)) leaf = D.stackPrefix[leaf];
          if (leaf < 0 || libOf(stackFunc[leaf]) !== state.dso) continue;
        }
        total += wt; ++count;
        if (s < 0) { noStack += wt; continue; }
        w[s] += wt; c[s] += 1;
        if (tree.depth[stackNode[s]] >= maxStack) truncated += 1;
      }
    }
    return {w, c, total, count, eventTotal, truncated, noStack};
  }

  // Totals of the callee tree's nodes.
  function calleeTotals() {
    const n = tree.parent.length;
    const total = new Float64Array(n), self = new Float64Array(n), count = new Float64Array(n);
    for (let s = 0; s < nStacks; ++s) {
      if (!agg.w[s]) continue;
      self[stackNode[s]] += agg.w[s];
      count[stackNode[s]] += agg.c[s];
    }
    total.set(self);
    const counts = Float64Array.from(count);
    for (let i = n - 1; i > 0; --i) { total[tree.parent[i]] += total[i]; counts[tree.parent[i]] += counts[i]; }
    total[0] += agg.noStack;
    return {total, self, count: counts};
  }

  // The callers tree (bottom-up, icicle): roots are the functions samples
  // landed in, their children the callers.
  function callerTree() {
    const t = {parent: [-1], func: [-1], children: [[]], depth: [0], total: [agg.total], count: [agg.count]};
    const index = new Map();
    const funcs = [];
    for (let s = 0; s < nStacks; ++s) {
      if (!agg.w[s]) continue;
      realFuncs(s, funcs);
      let p = 0;
      for (const f of funcs) {
        const key = p * nFuncs + f;
        let n = index.get(key);
        if (n === undefined) {
          n = t.parent.length;
          index.set(key, n);
          t.parent.push(p); t.func.push(f); t.children.push([]); t.depth.push(t.depth[p] + 1);
          t.total.push(0); t.count.push(0);
          t.children[p].push(n);
        }
        t.total[n] += agg.w[s];
        t.count[n] += agg.c[s];
        p = n;
      }
    }
    return t;
  }

  // Self and total (counted once per sample) of each function.
  function functionTotals() {
    const self = new Float64Array(nFuncs), total = new Float64Array(nFuncs);
    const seen = new Int32Array(nFuncs).fill(-1);
    const funcs = [];
    for (let s = 0; s < nStacks; ++s) {
      if (!agg.w[s]) continue;
      realFuncs(s, funcs);
      if (funcs.length) self[funcs[0]] += agg.w[s];
      for (const f of funcs) if (seen[f] !== s) { seen[f] = s; total[f] += agg.w[s]; }
    }
    return {self, total};
  }

  // ---- formatting ----
  const pct = (v) => (agg.total ? pkFixed(100 * v / agg.total, 2) : '0.00') + '%';
  const num = (v) => Math.round(v).toLocaleString('en-US');
  function describe(func, weight, count, frame) {
    if (func < 0) return 'all: ' + num(count) + ' samples, ' + num(weight) + ' ' + eventName() + ' (100.00%)';
    let where = '';
    if (frame !== undefined && frame >= 0 && D.frameLine[frame]) where = ' ' + S[D.frameFile[frame]] + ':' + D.frameLine[frame];
    const lib = libName(libOf(func));
    return funcLabel(func) + (lib ? ' [' + lib + ']' : '') + where + ': ' +
      (count !== undefined ? num(count) + ' samples, ' : '') + num(weight) + ' ' + eventName() + ' (' + pct(weight) + ')';
  }
  const eventName = () => (D.events[state.event] ? S[D.events[state.event].name] : '');
  function colour(func) {
    const k = kindOf(func);
    if (func < 0) return 'hsl(0, 0%, 80%)';
    if (k === 'kernel' || k === 'module') return 'hsl(24, 85%, 62%)';
    if (k === 'none') return 'hsl(0, 0%, 72%)';
    let h = 0;
    const name = S[D.libName[libOf(func)]];
    for (let i = 0; i < name.length; ++i) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    return 'hsl(' + (40 + h % 80) + ', 70%, ' + (55 + h % 15) + '%)';
  }
  function searchPattern() {
    if (!state.search) return null;
    try { return new RegExp(state.search); } catch (e) { return null; }
  }

  // ---- the flame graph and the icicle ----
  function drawGraph(t, totals, counts, frames, zoomKey, inverted) {
    const box = el('div');
    const scroller = el('div', 'chart-box');
    const chart = el('div');
    chart.id = 'chart';
    scroller.appendChild(chart);
    box.appendChild(scroller);
    const ROW = 16;
    const zoom = t.parent[state[zoomKey]] !== undefined && totals[state[zoomKey]] > 0 ? state[zoomKey] : 0;
    let maxDepth = 0;
    const width = Math.max(300, ($('view').clientWidth || 1200) - 24);
    const pattern = searchPattern();
    const divs = [];
    const place = (n, x, w) => {
      if (w < 0.5) return;
      maxDepth = Math.max(maxDepth, t.depth[n]);
      divs.push([n, x, w]);
      let cx = x;
      for (const c of t.children[n]) {
        const cw = totals[n] ? w * totals[c] / totals[n] : 0;
        place(c, cx, cw);
        cx += cw;
      }
    };
    place(zoom, 0, width);
    const ancestors = [];
    for (let a = t.parent[zoom]; a >= 0; a = t.parent[a]) ancestors.push(a);
    const rows = maxDepth + 1;
    chart.style.height = rows * ROW + 'px';
    const draw = (n, x, w, faded) => {
      const d = el('div', 'frame');
      const func = t.func[n];
      d.style.left = x + 'px';
      d.style.width = w + 'px';
      const row = t.depth[n];
      d.style.top = (inverted ? row : maxDepth - row) * ROW + 'px';
      d.style.background = colour(func);
      if (faded) d.classList.add('faded');
      if (pattern && func >= 0 && pattern.test(funcLabel(func))) d.classList.add('match');
      const label = func < 0 ? 'all' : funcLabel(func);
      if (w > 30) d.textContent = label;
      d.title = describe(func, totals[n], counts[n], frames ? frames[n] : undefined);
      d.dataset.node = n;
      chart.appendChild(d);
    };
    for (const a of ancestors) draw(a, 0, width, true);
    for (const [n, x, w] of divs) draw(n, x, w, false);
    chart.addEventListener('click', (e) => {
      const n = e.target.dataset && e.target.dataset.node;
      if (n === undefined) return;
      state[zoomKey] = Number(n);
      update(false);
    });
    chart.addEventListener('mousemove', (e) => { if (e.target.title) $('details').textContent = e.target.title; });
    const reset = el('button', '', 'Reset zoom');
    reset.type = 'button';
    reset.id = 'reset-zoom';
    reset.addEventListener('click', () => { state[zoomKey] = 0; update(false); });
    box.insertBefore(reset, scroller);
    return box;
  }

  // ---- trees as tables ----
  function treeTable(t, totals, selfOf, counts, title, opened) {
    const table = el('table', 'tree');
    table.id = 'tree-table';
    const head = el('tr');
    for (const [key, text] of [['total', 'Total'], ['self', 'Self'], ['samples', 'Samples'], ['name', title]]) {
      const th = el('th', '', text + (state.sort === key ? ' \u25be' : ''));
      th.addEventListener('click', () => { state.sort = key; update(false); });
      head.appendChild(th);
    }
    table.appendChild(head);
    const order = (kids) => kids.slice().sort((a, b) => {
      if (state.sort === 'name') return funcLabel(t.func[a]) < funcLabel(t.func[b]) ? -1 : 1;
      if (state.sort === 'self') return selfOf(b) - selfOf(a);
      if (state.sort === 'samples') return counts[b] - counts[a];
      return totals[b] - totals[a];
    });
    const addRows = (n, depth, after) => {
      let last = after;
      for (const c of order(t.children[n])) {
        if (!totals[c]) continue;
        const tr = el('tr');
        tr.dataset.node = c;
        tr.appendChild(el('td', 'num', pct(totals[c])));
        tr.appendChild(el('td', 'num', selfOf(c) === null ? '' : pct(selfOf(c))));
        tr.appendChild(el('td', 'num', num(counts[c])));
        const name = el('td', 'name');
        name.style.paddingLeft = 6 + depth * 14 + 'px';
        const toggle = el('span', 'toggle', t.children[c].length ? (opened.has(c) ? '\u25be' : '\u25b8') : '');
        name.appendChild(toggle);
        const func = t.func[c];
        const link = el('a', 'fn ' + kindOf(func), funcLabel(func));
        link.title = describe(func, totals[c], counts[c]);
        link.addEventListener('click', (e) => { e.stopPropagation(); state.fn = func; state.view = 'butterfly'; update(false); });
        name.appendChild(link);
        const lib = libName(libOf(func));
        if (lib) name.appendChild(document.createTextNode(' [' + lib + ']'));
        tr.appendChild(name);
        toggle.addEventListener('click', () => {
          if (opened.has(c)) opened.delete(c); else opened.add(c);
          render();
        });
        last.after(tr);
        last = tr;
        if (opened.has(c)) last = addRows(c, depth + 1, last);
      }
      return last;
    };
    const body = el('tbody');
    table.appendChild(body);
    const marker = el('tr');
    body.appendChild(marker);
    addRows(0, 0, marker);
    marker.remove();
    return table;
  }
  // The heaviest path opened to a few levels, as a start.
  function openHeaviest(t, totals) {
    const opened = new Set();
    let n = 0;
    for (let depth = 0; depth < 12; ++depth) {
      let best = -1;
      for (const c of t.children[n]) if (best < 0 || totals[c] > totals[best]) best = c;
      if (best < 0 || totals[best] < 0.05 * agg.total) break;
      opened.add(best);
      n = best;
    }
    return opened;
  }

  function functionsTable(pattern) {
    const {self, total} = functionTotals();
    const funcs = [];
    for (let f = 0; f < nFuncs; ++f) if (total[f] && (!pattern || pattern.test(funcLabel(f)))) funcs.push(f);
    const key = state.sort;
    funcs.sort((a, b) => (key === 'name' ? (funcLabel(a) < funcLabel(b) ? -1 : 1)
      : key === 'self' ? self[b] - self[a] || total[b] - total[a] : total[b] - total[a] || self[b] - self[a]));
    const table = el('table', 'tree');
    table.id = 'functions-table';
    const head = el('tr');
    for (const [k, text] of [['self', 'Self'], ['total', 'Total'], ['name', 'Function'], ['dso', 'DSO']]) {
      const th = el('th', '', text + (key === k ? ' \u25be' : ''));
      th.addEventListener('click', () => { state.sort = k; update(false); });
      head.appendChild(th);
    }
    table.appendChild(head);
    for (const f of funcs.slice(0, 2000)) {
      const tr = el('tr');
      tr.appendChild(el('td', 'num', pct(self[f])));
      tr.appendChild(el('td', 'num', pct(total[f])));
      const name = el('td', 'name');
      const link = el('a', 'fn ' + kindOf(f), funcLabel(f));
      link.addEventListener('click', () => { state.fn = f; state.view = 'butterfly'; update(false); });
      name.appendChild(link);
      tr.appendChild(name);
      tr.appendChild(el('td', '', libName(libOf(f))));
      table.appendChild(tr);
    }
    return table;
  }

  // Callers and callees of one function: what called it (at its outermost
  // call on each stack) and what it called, with their weights.
  function butterfly() {
    const box = el('div', 'butterfly');
    const {self, total} = functionTotals();
    let fn = state.fn;
    if (fn < 0 || !total[fn]) {
      fn = -1;
      for (let f = 0; f < nFuncs; ++f) if (total[f] && (fn < 0 || total[f] > total[fn])) fn = f;
    }
    if (fn < 0) { box.appendChild(el('p', '', 'No samples.')); return box; }
    const callers = new Map(), callees = new Map();
    const funcs = [];
    for (let s = 0; s < nStacks; ++s) {
      if (!agg.w[s]) continue;
      realFuncs(s, funcs);
      const at = funcs.lastIndexOf(fn);  // the outermost occurrence (funcs is leaf first)
      if (at < 0) continue;
      const caller = at + 1 < funcs.length ? funcs[at + 1] : -1;
      const callee = at > 0 ? funcs[at - 1] : -2;
      callers.set(caller, (callers.get(caller) || 0) + agg.w[s]);
      callees.set(callee, (callees.get(callee) || 0) + agg.w[s]);
    }
    const h = el('h2', '', '');
    h.id = 'butterfly-function';
    h.textContent = funcLabel(fn) + ' \u2014 self ' + pct(self[fn]) + ', total ' + pct(total[fn]);
    box.appendChild(h);
    const list = (title, m, names) => {
      box.appendChild(el('h2', '', title));
      const table = el('table', 'tree');
      for (const [f, w] of [...m.entries()].sort((a, b) => b[1] - a[1])) {
        const tr = el('tr');
        tr.appendChild(el('td', 'num', pct(w)));
        const td = el('td', 'name');
        const bar = el('span', 'bar');
        bar.style.width = Math.max(1, Math.round(200 * w / total[fn])) + 'px';
        td.appendChild(bar);
        if (f >= 0) {
          const link = el('a', 'fn ' + kindOf(f), funcLabel(f));
          link.addEventListener('click', () => { state.fn = f; update(false); });
          td.appendChild(link);
        } else {
          td.appendChild(document.createTextNode(names[f]));
        }
        tr.appendChild(td);
        table.appendChild(tr);
      }
      box.appendChild(table);
    };
    list('Callers', callers, {'-1': '[no caller: a root]'});
    list('Callees', callees, {'-2': '[self]'});
    return box;
  }

  // ---- the timeline: a track per thread (the busiest first) ----
  const TRACKS = 16;
  function drawTimeline() {
    const box = $('timeline');
    box.textContent = '';
    const byThread = threads.map((t) => {
      let n = 0;
      const evs = typeof t.event === 'number' ? null : t.event;
      for (let i = 0; i < t.n; ++i) if ((evs ? evs[i] : t.event) === state.event) ++n;
      return [t, n];
    }).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]);
    const shown = byThread.slice(0, TRACKS);
    const rest = byThread.slice(TRACKS);
    const tracks = shown.map(([t]) => [t.name + ' ' + t.pid + '/' + t.tid, [t]]);
    if (rest.length) tracks.push([rest.length + ' other threads', rest.map(([t]) => t)]);
    for (const [name, list] of tracks) {
      const row = el('div', 'track');
      row.appendChild(el('div', 'track-name', name)).title = name;
      const canvas = document.createElement('canvas');
      row.appendChild(canvas);
      box.appendChild(row);
      const w = Math.max(100, canvas.clientWidth || 800);
      canvas.width = w;
      canvas.height = 18;
      const bins = new Float64Array(w);
      for (const t of list) {
        const evs = typeof t.event === 'number' ? null : t.event;
        for (let i = 0; i < t.n; ++i) {
          if ((evs ? evs[i] : t.event) !== state.event) continue;
          bins[Math.min(w - 1, Math.floor(t.time[i] / span * w))] += 1;
        }
      }
      let max = 0;
      for (const b of bins) max = Math.max(max, b);
      const g = canvas.getContext('2d');
      // A thread's switched-out time (--switch-events), under its samples.
      if (list.length === 1 && list[0].offCpu.length) {
        g.fillStyle = '#c9d3e3';
        const off = list[0].offCpu;
        for (let i = 0; i + 1 < off.length; i += 2) {
          const x0 = Math.floor(off[i] / span * w), x1 = Math.ceil(off[i + 1] / span * w);
          g.fillRect(x0, 0, Math.max(1, x1 - x0), 18);
        }
        row.classList.add('has-switches');
        row.title = name + ': blue-grey where it was switched out';
      }
      g.fillStyle = '#e8743b';
      for (let x = 0; x < w; ++x) if (bins[x]) { const h = Math.max(2, 17 * bins[x] / max); g.fillRect(x, 18 - h, 1, h); }
    }
    $('timeline-legend').textContent = box.querySelector('.has-switches')
      ? 'Orange: samples; blue-grey: switched out (context switches)' : '';
    const sel = el('div');
    sel.id = 'selection';
    box.appendChild(sel);
    showSelection();
  }
  function trackArea() {
    const c = $('timeline').querySelector('canvas');
    if (!c) return null;
    const box = $('timeline').getBoundingClientRect(), r = c.getBoundingClientRect();
    return {left: r.left - box.left, width: r.width};
  }
  function showSelection() {
    const sel = $('selection'), r = range(), a = trackArea();
    const ms = (ns) => pkFixed(ns / 1e6, 3) + ' ms';
    $('range').textContent = r ? 'Selected ' + ms(r[0]) + ' to ' + ms(r[1]) + ' (' + ms(r[1] - r[0]) + ')'
      : 'Whole recording: ' + ms(D.summary.lastTime - first) + ' (drag on the timeline to select a range)';
    if (!sel || !r || !a) { if (sel) sel.style.display = 'none'; return; }
    sel.style.display = 'block';
    sel.style.left = a.left + r[0] / span * a.width + 'px';
    sel.style.width = Math.max(1, (r[1] - r[0]) / span * a.width) + 'px';
  }
  function timelineDrag() {
    const box = $('timeline');
    let start = null;
    const at = (e) => {
      const a = trackArea();
      const x = e.clientX - box.getBoundingClientRect().left - a.left;
      return Math.min(span, Math.max(0, x / a.width * span));
    };
    box.addEventListener('mousedown', (e) => { if (trackArea()) { start = at(e); e.preventDefault(); } });
    window.addEventListener('mousemove', (e) => {
      if (start === null) return;
      const now = at(e);
      state.range = Math.round(Math.min(start, now)) + '-' + Math.round(Math.max(start, now));
      showSelection();
    });
    window.addEventListener('mouseup', () => {
      if (start === null) return;
      start = null;
      const r = range();
      if (r && r[1] - r[0] < span / 2000) state.range = '';
      state.zoom = state.izoom = 0;
      update(true);
    });
    $('clear-range').addEventListener('click', () => { state.range = ''; update(true); });
  }

  // ---- the page ----
  function summary() {
    const s = D.summary;
    $('title').textContent = s.title;
    const dl = $('summary');
    const ms = pkFixed((s.lastTime - s.firstTime) / 1e6, 3) + ' ms';
    const rows = [['Command', s.cmdline], ['Host', s.hostname], ['OS', s.osRelease], ['perf', s.perfVersion],
      ['Arch', s.arch], ['CPU', s.cpuDesc + (s.nrCpus ? ' (' + s.nrCpus + ' online)' : '')],
      ['Events', D.events.map((e) => S[e.name] + ' (' + num(e.samples) + ')').join(', ')],
      ['Duration', ms], ['Samples', num(s.samples)], ['Lost samples', num(s.lostSamples)],
      ['Lost events', s.lostEvents ? num(s.lostEvents) : '']];
    for (const [k, v] of rows) {
      if (!v) continue;
      const dt = el('dt', '', k), dd = el('dd', '', v);
      if (k === 'Lost samples') dd.id = 'lost';
      dl.appendChild(dt);
      dl.appendChild(dd);
    }
    for (const w of s.warnings) $('warnings').appendChild(el('li', '', w));
  }
  function options() {
    const fill = (select, items) => {
      select.textContent = '';
      for (const [value, text] of items) { const o = el('option', '', text); o.value = value; select.appendChild(o); }
    };
    fill($('event'), D.events.map((e, i) => [i, S[e.name]]));
    const pids = new Map();
    for (const t of threads) if (!pids.has(t.pid)) pids.set(t.pid, t.name);
    fill($('process'), [[-1, 'All processes'], ...[...pids.entries()].sort((a, b) => a[0] - b[0]).map(([p, n]) => [p, n + ' (' + p + ')'])]);
    fill($('thread'), [[-1, 'All threads'], ...threads.slice().sort((a, b) => a.tid - b.tid).map((t) => [t.tid, t.name + ' (' + t.pid + '/' + t.tid + ')'])]);
    const libs = D.libName.map((n, i) => [i, S[n]]).sort((a, b) => (a[1] < b[1] ? -1 : 1));
    fill($('dso'), [[-1, 'All DSOs'], ...libs]);
    for (const [id, key] of [['event', 'event'], ['process', 'pid'], ['thread', 'tid'], ['dso', 'dso']]) {
      $(id).addEventListener('change', () => { state[key] = Number($(id).value); state.zoom = state.izoom = 0; update(true); });
    }
    $('search').addEventListener('input', () => { state.search = $('search').value; update(false); });
    for (const b of $('tabs').querySelectorAll('button')) {
      b.addEventListener('click', () => { state.view = b.dataset.view; update(false); });
    }
  }
  function totalsLine(totals) {
    const parts = [num(agg.count) + ' samples', num(agg.total) + ' ' + eventName() +
      ' (' + (agg.eventTotal ? pkFixed(100 * agg.total / agg.eventTotal, 2) : '0.00') + '% of the event)'];
    if (agg.truncated) parts.push(num(agg.truncated) + ' samples with stacks cut at ' + D.summary.maxStack + ' frames');
    if (agg.noStack) parts.push(num(agg.noStack) + ' ' + eventName() + ' in samples without frames');
    if (D.summary.lostSamples) parts.push(num(D.summary.lostSamples) + ' samples lost');
    if (D.summary.lostEvents) parts.push(num(D.summary.lostEvents) + ' events lost (ring buffer overruns)');
    const pattern = searchPattern();
    if (pattern && totals) {
      let matched = 0;
      const walk = [0];
      while (walk.length) {
        const n = walk.pop();
        if (n > 0 && pattern.test(funcLabel(tree.func[n]))) matched += totals[n];
        else walk.push(...tree.children[n]);
      }
      $('matched').textContent = 'Matched: ' + pct(matched);
    } else {
      $('matched').textContent = '';
    }
    $('totals').textContent = parts.join(' \u00b7 ');
  }

  function render() {
    const view = $('view');
    view.textContent = '';
    for (const b of $('tabs').querySelectorAll('button')) b.classList.toggle('active', b.dataset.view === state.view);
    const ct = calleeTotals();
    totalsLine(ct.total);
    if (state.view === 'flame') {
      view.appendChild(drawGraph(tree, ct.total, ct.count, tree.frame, 'zoom', false));
      // A flame graph stands on its root: its bottom shows first.
      const box = view.querySelector('.chart-box');
      box.scrollTop = box.scrollHeight;
    } else if (state.view === 'icicle') {
      const t = callerTree();
      view.appendChild(drawGraph(t, t.total, t.count, null, 'izoom', true));
    } else if (state.view === 'topdown') {
      if (!render.opened) render.opened = openHeaviest(tree, ct.total);
      view.appendChild(treeTable(tree, ct.total, (n) => ct.self[n], ct.count, 'Function (callees below)', render.opened));
    } else if (state.view === 'bottomup') {
      const t = callerTree();
      if (!render.openedUp) render.openedUp = new Set();
      view.appendChild(treeTable(t, t.total, (n) => (t.depth[n] === 1 ? t.total[n] : null), t.count,
        'Function (callers below)', render.openedUp));
    } else if (state.view === 'functions') {
      view.appendChild(functionsTable(searchPattern()));
    } else {
      view.appendChild(butterfly());
    }
  }
  function update(filtersChanged) {
    if (filtersChanged || !agg) {
      agg = aggregate();
      render.opened = null;
      render.openedUp = null;
    }
    $('event').value = state.event;
    $('process').value = state.pid;
    $('thread').value = state.tid;
    $('dso').value = state.dso;
    if ($('search').value !== state.search) $('search').value = state.search;
    writeHash();
    if (filtersChanged) drawTimeline();
    showSelection();
    render();
  }

  summary();
  options();
  state = readHash();
  drawTimeline();
  timelineDrag();
  update(true);
  window.addEventListener('hashchange', () => { state = readHash(); update(true); });
  window.addEventListener('resize', () => { drawTimeline(); render(); });
  document.body.dataset.ready = '1';
})();
