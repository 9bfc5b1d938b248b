// The SVG flame graph's interaction, in FlameGraph's manner: click a frame
// to zoom to it (its ancestors stay, faded, at full width), "Reset Zoom" or
// Escape to undo, "Search" (or Ctrl-F) to highlight frames matching a
// regular expression and show their share, hover for a frame's numbers.
'use strict';
var fg = {
  width: 0, xpad: 10, fontSize: 12, charWidth: 0.59, zoomed: null, pattern: null,

  init: function () {
    var svg = document.documentElement;
    fg.width = +svg.getAttribute('width');
    fg.frames = Array.prototype.slice.call(document.querySelectorAll('#frames > g'));
    fg.details = document.getElementById('details').firstChild;
    fg.matched = document.getElementById('matched');
    fg.unzoom = document.getElementById('unzoom');
    fg.total = +document.getElementById('frames').getAttribute('data-total');
    fg.frames.forEach(function (g) {
      g.addEventListener('click', function () { fg.zoom(g); });
      g.addEventListener('mouseover', function () {
        fg.details.nodeValue = g.querySelector('title').textContent;
      });
      g.addEventListener('mouseout', function () { fg.details.nodeValue = ' '; });
    });
    fg.unzoom.addEventListener('click', function () { fg.reset(); });
    document.getElementById('search').addEventListener('click', function () { fg.ask(); });
    window.addEventListener('keydown', function (e) {
      if (e.key === 'Escape') fg.reset();
      if ((e.ctrlKey || e.metaKey) && e.key === 'f') {
        e.preventDefault();
        fg.ask();
      }
    });
  },

  attr: function (g, name) { return +g.getAttribute('data-' + name); },
  name: function (g) { return g.getAttribute('data-name'); },

  // Draws g's rectangle at x with width w and fits its label.
  place: function (g, x, w) {
    var rect = g.querySelector('rect');
    var text = g.querySelector('text');
    rect.setAttribute('x', x.toFixed(1));
    rect.setAttribute('width', Math.max(w, 0).toFixed(1));
    text.setAttribute('x', (x + 3).toFixed(1));
    var fit = Math.floor((w - 6) / (fg.fontSize * fg.charWidth));
    var name = fg.name(g);
    text.textContent = fit < 3 ? '' : name.length <= fit ? name : name.substr(0, fit - 2) + '..';
  },

  zoom: function (target) {
    var x0 = fg.attr(target, 'x'), w0 = fg.attr(target, 'w'), d0 = fg.attr(target, 'depth');
    var scale = (fg.width - 2 * fg.xpad) / w0;
    fg.frames.forEach(function (g) {
      var x = fg.attr(g, 'x'), w = fg.attr(g, 'w'), d = fg.attr(g, 'depth');
      g.classList.remove('faded');
      if (d >= d0 && x >= x0 - 1e-6 && x + w <= x0 + w0 + 1e-6) {
        g.style.display = '';
        fg.place(g, fg.xpad + (x - x0) * scale, w * scale);
      } else if (d < d0 && x <= x0 + 1e-6 && x + w >= x0 + w0 - 1e-6) {
        g.style.display = '';
        g.classList.add('faded');
        fg.place(g, fg.xpad, fg.width - 2 * fg.xpad);
      } else {
        g.style.display = 'none';
      }
    });
    fg.zoomed = target;
    fg.unzoom.classList.remove('hide');
  },

  reset: function () {
    fg.frames.forEach(function (g) {
      g.style.display = '';
      g.classList.remove('faded');
      fg.place(g, fg.attr(g, 'x'), fg.attr(g, 'w'));
    });
    fg.zoomed = null;
    fg.unzoom.classList.add('hide');
  },

  ask: function () {
    var term = window.prompt('Search for (a regular expression; empty to clear)', '');
    if (term === null) return;
    try {
      fg.search(term ? new RegExp(term) : null);
    } catch (err) {
      fg.matched.textContent = 'not a regular expression';
    }
  },

  // Highlights the frames whose name matches and shows the share of the
  // samples under them (a match inside another match counts once).
  search: function (pattern) {
    var ranges = [];
    fg.frames.forEach(function (g) {
      var rect = g.querySelector('rect');
      var hit = pattern !== null && pattern.test(fg.name(g));
      rect.setAttribute('fill', hit ? 'rgb(230,0,230)' : rect.getAttribute('data-fill'));
      if (hit) ranges.push([fg.attr(g, 'x'), fg.attr(g, 'w'), fg.attr(g, 'value')]);
    });
    ranges.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
    var sum = 0, end = -1;
    ranges.forEach(function (r) {
      if (r[0] >= end - 1e-6) {
        sum += r[2];
        end = r[0] + r[1];
      }
    });
    fg.matched.textContent =
        pattern ? 'Matched: ' + pkFixed(fg.total ? 100 * sum / fg.total : 0, 2) + '%' : '';
  }
};
