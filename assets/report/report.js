// Draws the charts of the sofabench result page with uPlot, from the JSON blob in
// <script id="sofabench-data">. Each <div class="chart"> names its phase and chart.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("sofabench-data").textContent);
  var COLORS = {
    bulk_insert: "#7f3c8d",
    create: "#11a579",
    read: "#3969ac",
    update: "#e68310",
    "delete": "#e73f74"
  };
  var SPARE = ["#008695", "#cf1c90", "#80ba5a", "#f2b701", "#4b4b8f", "#a5aa99"];
  var HEIGHT = 300;
  var charts = [];

  function color(name, i) {
    return COLORS[name] || SPARE[i % SPARE.length];
  }

  function width(el) {
    return Math.max(320, Math.floor(el.getBoundingClientRect().width) || 800);
  }

  function number(v, decimals) {
    return v == null ? "-" : v.toLocaleString("en-US", {
      minimumFractionDigits: decimals,
      maximumFractionDigits: decimals
    });
  }

  // x = 1 / (1 - q): 1 → 0%, 10 → 90%, 100 → 99%, …
  function percentile(x) {
    if (x == null) return "";
    return Number((100 - 100 / x).toFixed(4)) + "%";
  }

  function seconds(u, v) {
    return v == null ? "-" : number(v, 1) + " s";
  }

  function series(label, stroke, extra) {
    var s = { label: label, stroke: stroke, width: 2, spanGaps: false };
    for (var k in extra) s[k] = extra[k];
    return s;
  }

  function draw(el, opts, columns) {
    opts.width = width(el);
    opts.height = HEIGHT;
    var plot = new uPlot(opts, columns, el);
    charts.push([plot, el]);
  }

  // With one interval a line has nothing to join: show the points.
  function points(n) {
    return { show: n < 3, size: 6 };
  }

  function throughput(el, phase) {
    var t = phase.time;
    var columns = [t.x];
    var all = [{ label: "elapsed", value: seconds }];
    t.operations.forEach(function (op, i) {
      columns.push(op.throughput);
      all.push(series(op.name, color(op.name, i), {
        points: points(t.x.length),
        value: function (u, v) { return v == null ? "-" : number(v, 1) + "/s"; }
      }));
    });
    draw(el, {
      scales: { x: { time: false } },
      series: all,
      axes: [{ label: "seconds since the phase started" }, { label: "operations per second", size: 70 }]
    }, columns);
  }

  function latency(el, phase) {
    var t = phase.time;
    var columns = [t.x];
    var all = [{ label: "elapsed", value: seconds }];
    t.operations.forEach(function (op, i) {
      var ms = function (u, v) { return v == null ? "-" : number(v, 3) + " ms"; };
      columns.push(op.p50);
      all.push(series(op.name + " p50", color(op.name, i), { points: points(t.x.length), value: ms }));
      columns.push(op.p99);
      all.push(series(op.name + " p99", color(op.name, i), { dash: [6, 4], points: points(t.x.length), value: ms }));
    });
    draw(el, {
      scales: { x: { time: false } },
      series: all,
      axes: [{ label: "seconds since the phase started" }, { label: "milliseconds", size: 70 }]
    }, columns);
  }

  // Failed operations per second, 429s apart: those that failed as rate_limited, and
  // those sent again with --retry-429.
  function failures(el, phase) {
    var t = phase.time;
    var columns = [t.x];
    var all = [{ label: "elapsed", value: seconds }];
    var perSecond = function (u, v) { return v == null ? "-" : number(v, 1) + "/s"; };
    t.operations.forEach(function (op, i) {
      var kinds = [
        [op.failed, " failed", undefined],
        [op.rate_limited, " 429 failed", [6, 4]],
        [op.retried_429, " 429 sent again", [2, 3]]
      ];
      kinds.forEach(function (kind) {
        columns.push(kind[0]);
        all.push(series(op.name + kind[1], color(op.name, i), {
          dash: kind[2], points: points(t.x.length), value: perSecond
        }));
      });
    });
    draw(el, {
      scales: { x: { time: false } },
      series: all,
      axes: [{ label: "seconds since the phase started" }, { label: "per second", size: 70 }]
    }, columns);
  }

  function spectrum(el, phase) {
    var s = phase.spectrum;
    var columns = [s.x];
    var all = [{ label: "percentile", value: function (u, v) { return v == null ? "-" : percentile(v); } }];
    s.series.forEach(function (line, i) {
      columns.push(line.values);
      all.push(series(line.label, color(line.operation, i), {
        dash: line.response ? [6, 4] : undefined,
        value: function (u, v) { return v == null ? "-" : number(v, 3) + " ms"; }
      }));
    });
    var ticks = [1, 2, 10, 100, 1e3, 1e4, 1e5, 1e6];
    draw(el, {
      // Room on the right for the last label (99.9999%).
      padding: [null, 40, null, null],
      scales: { x: { time: false, distr: 3, log: 10 } },
      series: all,
      axes: [
        {
          label: "percentile",
          splits: function (u) {
            return ticks.filter(function (x) { return x >= u.scales.x.min && x <= u.scales.x.max; });
          },
          // Label every split, not only the powers of ten (50% too).
          filter: function (u, splits) { return splits; },
          values: function (u, splits) { return splits.map(percentile); }
        },
        { label: "milliseconds", size: 70 }
      ]
    }, columns);
  }

  var kinds = { throughput: throughput, latency: latency, failures: failures, spectrum: spectrum };
  var boxes = document.querySelectorAll("div.chart");
  for (var i = 0; i < boxes.length; i++) {
    var el = boxes[i];
    kinds[el.getAttribute("data-chart")](el, data.phases[Number(el.getAttribute("data-phase"))]);
  }

  var pending = null;
  window.addEventListener("resize", function () {
    clearTimeout(pending);
    pending = setTimeout(function () {
      charts.forEach(function (c) { c[0].setSize({ width: width(c[1]), height: HEIGHT }); });
    }, 100);
  });
})();
