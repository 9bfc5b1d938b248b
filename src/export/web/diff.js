// perfkit diff --html: a differential flame graph, as FlameGraph's
// difffolded.pl + flamegraph.pl draw one. Widths are the new recording's;
// each frame is coloured by how its share (its inclusive samples over the
// recording's) changed against the baseline: red grew, blue shrank, the
// deeper the more. Below it, the functions whose self share changed most.
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('diff-data').textContent);
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const pct = (v) => pkFixed(v, 2) + '%';
  const points = (v) => (v >= 0 ? '+' : '') + pkFixed(v, 2);

  // The merged tree of both recordings' stacks (comm first, callers first).
  const names = [], parent = [], children = [], before = [], after = [], depth = [];
  const child = new Map();  // parent + '\u0000' + name -> node
  const node = (p, name) => {
    const key = p + '\u0000' + name;
    let n = child.get(key);
    if (n === undefined) {
      n = names.length;
      names.push(name);
      parent.push(p);
      children.push([]);
      before.push(0);
      after.push(0);
      depth.push(p < 0 ? 0 : depth[p] + 1);
      child.set(key, n);
      if (p >= 0) children[p].push(n);
    }
    return n;
  };
  const root = node(-1, 'all');
  const selfBefore = new Map(), selfAfter = new Map();
  for (const [stack, b, a] of data.stacks) {
    let n = root;
    before[n] += b;
    after[n] += a;
    const frames = stack.split(';');
    for (const f of frames) {
      n = node(n, f);
      before[n] += b;
      after[n] += a;
    }
    const leaf = frames[frames.length - 1];
    selfBefore.set(leaf, (selfBefore.get(leaf) || 0) + b);
    selfAfter.set(leaf, (selfAfter.get(leaf) || 0) + a);
  }
  const totalBefore = before[root] || 1, totalAfter = after[root] || 1;
  const shareBefore = (n) => 100 * before[n] / totalBefore;
  const shareAfter = (n) => 100 * after[n] / totalAfter;
  const delta = (n) => shareAfter(n) - shareBefore(n);
  let maxDelta = 0;
  for (let n = 1; n < names.length; ++n) maxDelta = Math.max(maxDelta, Math.abs(delta(n)));
  for (const kids of children) kids.sort((x, y) => (names[x] < names[y] ? -1 : names[x] > names[y] ? 1 : 0));

  // FlameGraph's differential colours: white for no change, red or blue
  // deepening with the change against the largest one.
  const colour = (n) => {
    const d = delta(n);
    const k = maxDelta > 0 ? Math.min(1, Math.abs(d) / maxDelta) : 0;
    const fade = Math.round(235 - 195 * k);
    return d > 0 ? `rgb(255,${fade},${fade})` : d < 0 ? `rgb(${fade},${fade},255)` : 'rgb(235,235,235)';
  };
  const describe = (n) => `${names[n]}: ${pct(shareBefore(n))} \u2192 ${pct(shareAfter(n))} ` +
    `(${points(delta(n))} points; ${before[n]} \u2192 ${after[n]} ${data.unit})`;

  const state = {zoom: 0, search: ''};
  const readHash = () => {
    const h = new URLSearchParams(location.hash.slice(1));
    state.zoom = Number(h.get('zoom') || 0);
    state.search = h.get('search') || '';
  };
  const writeHash = () => {
    const h = new URLSearchParams();
    if (state.zoom) h.set('zoom', state.zoom);
    if (state.search) h.set('search', state.search);
    history.replaceState(null, '', '#' + h.toString());
  };
  const pattern = () => {
    if (!state.search) return null;
    try { return new RegExp(state.search); } catch (e) { return null; }
  };

  function summary() {
    $('title').textContent = data.title;
    const dl = $('summary');
    for (const [k, v] of [['Baseline', data.before.file], ['New', data.after.file],
      ['Event', data.before.event === data.after.event ? data.before.event : data.before.event + ' / ' + data.after.event],
      ['Samples', `${data.before.samples} \u2192 ${data.after.samples}`]]) {
      dl.appendChild(el('dt', '', k));
      dl.appendChild(el('dd', '', v));
    }
  }

  function flame() {
    const box = el('div');
    const reset = el('button', '', 'Reset zoom');
    reset.type = 'button';
    reset.id = 'reset-zoom';
    reset.addEventListener('click', () => { state.zoom = 0; update(); });
    box.appendChild(reset);
    const scroller = el('div', 'chart-box');
    const chart = el('div');
    chart.id = 'chart';
    scroller.appendChild(chart);
    box.appendChild(scroller);
    const ROW = 16;
    const zoom = names[state.zoom] !== undefined && after[state.zoom] > 0 ? state.zoom : 0;
    const width = Math.max(300, ($('view').clientWidth || 1200) - 24);
    const re = pattern();
    const placed = [];
    let maxDepth = 0, matched = 0;
    const place = (n, x, w) => {
      if (w < 0.5) return;
      placed.push([n, x, w]);
      maxDepth = Math.max(maxDepth, depth[n]);
      let cx = x;
      for (const c of children[n]) {
        const cw = after[n] ? w * after[c] / after[n] : 0;
        place(c, cx, cw);
        cx += cw;
      }
    };
    place(zoom, 0, width);
    const ancestors = [];
    for (let a = parent[zoom]; a >= 0; a = parent[a]) ancestors.push(a);
    chart.style.height = (maxDepth + 1) * ROW + 'px';
    const draw = (n, x, w, faded) => {
      const d = el('div', 'frame');
      d.style.left = x + 'px';
      d.style.width = w + 'px';
      d.style.top = (maxDepth - depth[n]) * ROW + 'px';
      d.style.background = colour(n);
      if (faded) d.classList.add('faded');
      if (re && n !== root && re.test(names[n])) {
        d.classList.add('match');
        let a = parent[n];
        while (a >= 0 && !(re.test(names[a]))) a = parent[a];
        if (a < 0) matched += after[n];
      }
      if (w > 30) d.textContent = names[n];
      d.title = describe(n);
      d.dataset.node = n;
      chart.appendChild(d);
    };
    for (const a of ancestors) draw(a, 0, width, true);
    for (const [n, x, w] of placed) draw(n, x, w, false);
    $('matched').textContent = re ? `${pct(100 * matched / totalAfter)} of the new samples match` : '';
    chart.addEventListener('click', (e) => {
      const n = e.target.dataset && e.target.dataset.node;
      if (n === undefined) return;
      state.zoom = Number(n);
      update();
    });
    chart.addEventListener('mousemove', (e) => { if (e.target.title) $('details').textContent = e.target.title; });
    return box;
  }

  // The functions whose self share changed most, by the size of the change.
  function changes() {
    const box = el('div');
    box.appendChild(el('h2', '', 'Biggest changes (self share of each function)'));
    const table = el('table', 'changes');
    table.id = 'changes';
    const head = el('tr');
    for (const t of ['Function', 'Baseline', 'New', 'Change (points)']) head.appendChild(el('th', '', t));
    table.appendChild(head);
    const all = new Set([...selfBefore.keys(), ...selfAfter.keys()]);
    const rows = [];
    for (const f of all) {
      const b = 100 * (selfBefore.get(f) || 0) / totalBefore, a = 100 * (selfAfter.get(f) || 0) / totalAfter;
      rows.push([f, b, a, a - b]);
    }
    rows.sort((x, y) => Math.abs(y[3]) - Math.abs(x[3]) || (x[0] < y[0] ? -1 : 1));
    for (const [f, b, a, d] of rows.slice(0, 30)) {
      const tr = el('tr');
      tr.appendChild(el('td', '', f));
      tr.appendChild(el('td', 'num', pct(b)));
      tr.appendChild(el('td', 'num', pct(a)));
      tr.appendChild(el('td', 'num ' + (d > 0 ? 'grew' : d < 0 ? 'shrank' : ''), points(d)));
      table.appendChild(tr);
    }
    box.appendChild(table);
    return box;
  }

  function update() {
    writeHash();
    const view = $('view');
    view.textContent = '';
    $('totals').textContent = `${data.after.samples} new samples drawn; ${names.length - 1} frames`;
    view.appendChild(flame());
    view.appendChild(changes());
    const scroller = view.querySelector('.chart-box');
    if (scroller) scroller.scrollTop = scroller.scrollHeight;  // the root first
    document.body.dataset.ready = '1';
  }

  readHash();
  summary();
  $('search').value = state.search;
  $('search').addEventListener('input', (e) => { state.search = e.target.value; update(); });
  update();
})();
