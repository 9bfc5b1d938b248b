// Draws the flame graph (root on top, callees below) of perf's flamegraph.py tree ({n, l, v, c}) embedded
// in the page: click a frame to zoom to it, search by regular expression
// (the matched share of the samples is shown), hover for the numbers.
'use strict';
(function () {
  const ROW = 18;
  const data = JSON.parse(document.getElementById('flame-data').textContent);
  const options = JSON.parse(document.getElementById('flame-options').textContent);
  const chart = document.getElementById('chart');
  const details = document.getElementById('details');
  const matched = document.getElementById('matched');
  const search = document.getElementById('search');
  document.getElementById('title').textContent = document.title;
  document.getElementById('context').textContent = options.context || '';
  if (!options.context) document.getElementById('context-box').hidden = true;

  // Totals, parents and depths, without recursion (deep stacks).
  let maxDepth = 0;
  const order = [];
  data.parent = null;
  data.depth = 0;
  for (const stack = [data]; stack.length;) {
    const n = stack.pop();
    order.push(n);
    maxDepth = Math.max(maxDepth, n.depth);
    for (const c of n.c) {
      c.parent = n;
      c.depth = n.depth + 1;
      stack.push(c);
    }
  }
  for (let i = order.length - 1; i >= 0; i--) {
    const n = order[i];
    n.t = n.v + n.c.reduce((sum, c) => sum + c.t, 0);
  }

  function hash(s) {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
    return (h >>> 0) / 4294967296;
  }
  function colour(n) {
    const r = hash(n.n);
    const kernel = n.l === 'kernel';
    if (options.colorscheme === 'orange')
      return kernel ? `hsl(${(0 + 15 * r).toFixed(1)},75%,62%)`
                    : `hsl(${(25 + 20 * r).toFixed(1)},90%,${(55 + 10 * r).toFixed(1)}%)`;
    return kernel ? `hsl(${(95 + 40 * r).toFixed(1)},45%,58%)`
                  : `hsl(${(180 + 45 * r).toFixed(1)},55%,${(62 + 10 * r).toFixed(1)}%)`;
  }
  function percent(x) { return pkFixed(data.t ? 100 * x / data.t : 0, 2) + '%'; }
  function describe(n) {
    const s = n.t === 1 ? 'sample' : 'samples';
    return `${n.n} (${n.t.toLocaleString('en')} ${s}, ${percent(n.t)})`;
  }

  let zoomed = data;
  let pattern = null;
  function isAncestor(a, n) {
    for (let p = n; p; p = p.parent) if (p === a) return true;
    return false;
  }

  function draw() {
    const width = chart.clientWidth || 1200;
    chart.style.height = (maxDepth + 1) * ROW + 'px';
    const fragment = document.createDocumentFragment();
    const place = (n, x, w) => {
      if (w < 0.5) return;
      const div = document.createElement('div');
      div.className = 'frame';
      if (pattern && pattern.test(n.n)) div.classList.add('match');
      if (!isAncestor(zoomed, n) && n !== zoomed) div.classList.add('faded');
      div.style.left = x + 'px';
      div.style.width = w + 'px';
      div.style.top = n.depth * ROW + 'px';
      div.style.background = colour(n);
      div.textContent = w > 30 ? n.n : '';
      div.title = describe(n);
      div.node = n;
      fragment.appendChild(div);
      let cx = x;
      for (const c of n.c) {
        const cw = n.t ? w * c.t / n.t : 0;
        place(c, cx, cw);
        cx += cw;
      }
    };
    // The zoomed frame's ancestors span the whole width above their row.
    for (let a = zoomed.parent; a; a = a.parent) {
      const div = document.createElement('div');
      div.className = 'frame faded';
      div.style.left = '0px';
      div.style.width = width + 'px';
      div.style.top = a.depth * ROW + 'px';
      div.style.background = colour(a);
      div.textContent = a.n;
      div.title = describe(a);
      div.node = a;
      fragment.appendChild(div);
    }
    place(zoomed, 0, width);
    chart.replaceChildren(fragment);
    showMatches();
  }

  function showMatches() {
    if (!pattern) {
      matched.textContent = '';
      return;
    }
    // A match under another match counts once.
    let sum = 0;
    const walk = [data];
    while (walk.length) {
      const n = walk.pop();
      if (pattern.test(n.n)) sum += n.t;
      else walk.push(...n.c);
    }
    matched.textContent = 'Matched: ' + percent(sum);
  }

  chart.addEventListener('click', (e) => {
    if (e.target.node) {
      zoomed = e.target.node;
      draw();
    }
  });
  chart.addEventListener('mouseover', (e) => {
    if (e.target.node) details.textContent = describe(e.target.node);
  });
  document.getElementById('reset').addEventListener('click', () => {
    zoomed = data;
    draw();
  });
  search.addEventListener('input', () => {
    try {
      pattern = search.value ? new RegExp(search.value) : null;
      search.setCustomValidity('');
    } catch (err) {
      pattern = null;
      search.setCustomValidity('not a regular expression');
    }
    draw();
  });
  window.addEventListener('resize', draw);
  draw();
})();
