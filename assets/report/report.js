// Draws the charts of the sofabench result page with uPlot, from the JSON blob in
// <script id="sofabench-data">. Each <div class="chart"> says what it draws: the run
// (data-run), a sweep (data-sweep) or a phase (data-phase), and which chart (data-chart).
// Charts in a folded phase section are drawn when it is opened. Every drawn chart gets
// data-points: how many values it drew, and data-scale: its y axis' "log" or "linear"
// (the page's test reads both).
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("sofabench-data").textContent);
  var OPERATION_COLORS = {
    bulk_insert: "#7f3c8d",
    create: "#11a579",
    read: "#3969ac",
    update: "#e68310",
    "delete": "#e73f74"
  };
  var SPARE = ["#008695", "#cf1c90", "#80ba5a", "#f2b701", "#4b4b8f", "#a5aa99"];
  // Failure kinds as the data names them: a color for the run's chart, a dash for a
  // phase's (where the color is the operation's).
  var KINDS = {
    "timeout": { color: "#e73f74", dash: undefined },
    "429, failed": { color: "#f2b701", dash: [6, 4] },
    "other failure": { color: "#a12b2b", dash: [8, 3, 2, 3] },
    "429, sent again": { color: "#80ba5a", dash: [2, 3] }
  };
  var HEIGHT = { run: 220, phase: 260, sweep: 280 };
  var charts = [];

  function color(name, i) {
    return OPERATION_COLORS[name] || SPARE[i % SPARE.length];
  }

  function width(el) {
    return Math.max(320, Math.floor(el.getBoundingClientRect().width) || 800);
  }

  function number(v, decimals) {
    return v.toLocaleString("en-US", {
      minimumFractionDigits: decimals,
      maximumFractionDigits: decimals
    });
  }

  // Legend values: empty when the cursor is off the chart or on a gap, never a dash.
  function shown(format) {
    return function (u, v) { return v == null ? "" : format(v); };
  }
  var perSecond = shown(function (v) { return number(v, 1) + "/s"; });
  var ms = shown(function (v) { return number(v, 3) + " ms"; });
  var percent = shown(function (v) { return number(v, 1) + " %"; });
  var mib = shown(function (v) { return number(v, 1) + " MiB"; });
  var seconds = shown(function (v) { return number(v, 3) + " s"; });
  var whole = shown(function (v) { return number(v, 0); });

  // Every y axis starts at 0, whatever the values.
  function fromZero(u, min, max) {
    return [0, max > 0 ? max * 1.08 : 1];
  }

  function line(label, stroke, extra) {
    var s = { label: label, stroke: stroke, width: 2, spanGaps: false, points: { show: false } };
    for (var k in extra) s[k] = extra[k];
    return s;
  }

  // Over time, a point's value holds from the point before it to itself: an interval's
  // value over the interval (the page's data puts a point of nothing at each phase's
  // start). A value after nothing starts where the nothing was, so an interval after one
  // with no value is drawn whole, not as a dot at its end.
  function held(u, seriesIdx, idx0, idx1) {
    var xs = u.data[0], ys = u.data[seriesIdx], stroke = new Path2D();
    var scale = u.series[seriesIdx].scale;
    var joined = false;
    for (var i = Math.max(1, idx0); i <= idx1; i++) {
      if (ys[i] == null) {
        joined = false;
        continue;
      }
      var x0 = Math.round(u.valToPos(xs[i - 1], "x", true));
      var x1 = Math.round(u.valToPos(xs[i], "x", true));
      var y = Math.round(u.valToPos(ys[i], scale, true));
      if (joined) stroke.lineTo(x0, y); else stroke.moveTo(x0, y);
      stroke.lineTo(x1, y);
      joined = true;
    }
    return { stroke: stroke, fill: null, clip: null, band: null, gaps: null, flags: 0 };
  }

  function step(label, stroke, extra) {
    var s = line(label, stroke, extra);
    s.paths = held;
    return s;
  }

  function yAxis(label) {
    return { label: label, size: 72 };
  }

  // A log axis has no place for 0: such a value is left out of the line.
  function positive(column) {
    return column.map(function (v) { return v != null && v > 0 ? v : null; });
  }

  // On a log axis, ticks and grid lines at the powers of ten only (1, 10, 100 ms), not
  // at every 2…9 between them.
  function decades(u, splits) {
    return splits.map(function (v) {
      var power = Math.pow(10, Math.round(Math.log10(v)));
      return Math.abs(v - power) < power * 1e-6 ? v : null;
    });
  }

  // A box with data-log (its values span more than tenfold: the page decides) has a log
  // y axis, which its label says; every other y axis starts at 0.
  function draw(el, kind, opts, columns) {
    opts.width = width(el);
    opts.height = HEIGHT[kind];
    opts.scales = opts.scales || {};
    opts.scales.x = opts.scales.x || { time: false };
    var log = el.hasAttribute("data-log");
    if (log) {
      opts.scales.y = { distr: 3, log: 10 };
      opts.axes[1].label += " (log scale)";
      opts.axes[1].filter = decades;
      opts.axes[1].grid = { filter: decades };
      opts.axes[1].ticks = { filter: decades };
      columns = [columns[0]].concat(columns.slice(1).map(positive));
    } else {
      opts.scales.y = { range: fromZero };
    }
    var plot = new uPlot(opts, columns, el);
    el.setAttribute("data-scale", plot.scales.y.distr == 3 ? "log" : "linear");
    var points = 0;
    for (var i = 1; i < columns.length; i++) {
      columns[i].forEach(function (v) { if (v != null) points++; });
    }
    el.setAttribute("data-points", String(points));
    charts.push([plot, el, kind]);
  }

  // ---- over time ----

  // The cursor picks the interval under it: the first point at or after it, since a
  // point's value holds back to the point before it.
  function intervalUnder(u, seriesIdx, closest, x) {
    var xs = u.data[0];
    return xs[closest] < x && closest + 1 < xs.length ? closest + 1 : closest;
  }

  // The time a point's value holds over: "2.65–2.90 s".
  function span(u, v, idx) {
    if (v == null || idx == null) return "";
    if (idx == 0) return number(v, 1) + " s";
    var from = u.data[0][idx - 1], decimals = v - from < 1 ? 2 : 1;
    return number(from, decimals) + "–" + number(v, decimals) + " s";
  }

  // ---- the run on one time axis ----

  // The phase a point's interval belongs to; a phase's start point ends the time before
  // the phase.
  function phaseOf(x) {
    var phases = data.run.phases;
    for (var i = 0; i < phases.length; i++) {
      if (x > phases[i].start && x <= phases[i].end) return phases[i].name;
    }
    for (i = 0; i < phases.length; i++) {
      if (x == phases[i].start) return "before " + phases[i].name;
    }
    return "between phases";
  }

  var runX = {
    label: "",
    value: function (u, v, s, idx) {
      var time = span(u, v, idx);
      return time && time + " · " + phaseOf(v);
    }
  };

  // The phases as bands behind the lines, each named above the plot where its name fits
  // in its band (with fifty short phases, few are named; hovering names any).
  var phaseBands = {
    hooks: {
      drawAxes: [function (u) {
        var ctx = u.ctx, top = u.bbox.top, height = u.bbox.height;
        ctx.save();
        data.run.phases.forEach(function (p, i) {
          var x0 = u.valToPos(p.start, "x", true), x1 = u.valToPos(p.end, "x", true);
          ctx.fillStyle = i % 2 == 0 ? "rgba(57, 105, 172, 0.08)" : "rgba(57, 105, 172, 0.03)";
          ctx.fillRect(x0, top, Math.max(1, x1 - x0), height);
        });
        ctx.restore();
      }],
      draw: [function (u) {
        var ctx = u.ctx, ratio = window.devicePixelRatio || 1;
        var right = u.bbox.left + u.bbox.width;
        ctx.save();
        ctx.font = (11 * ratio) + "px system-ui, sans-serif";
        ctx.fillStyle = "#5b6570";
        ctx.textAlign = "left";
        ctx.textBaseline = "bottom";
        data.run.phases.forEach(function (p) {
          var x0 = u.valToPos(p.start, "x", true), x1 = u.valToPos(p.end, "x", true);
          var w = ctx.measureText(p.name).width;
          if (w + 6 * ratio <= x1 - x0 && x0 + w <= right) {
            ctx.fillText(p.name, x0 + 3 * ratio, u.bbox.top - 3 * ratio);
          }
        });
        ctx.restore();
      }]
    }
  };

  function runChart(el, series, columns, yLabel) {
    var s = data.run.series;
    draw(el, "run", {
      padding: [18, 12, null, null],
      cursor: { sync: { key: "run" }, dataIdx: intervalUnder },
      plugins: [phaseBands],
      series: [runX].concat(series),
      axes: [{ label: "seconds since the run started" }, yAxis(yLabel)]
    }, [data.run.x].concat(columns.map(function (name) { return s[name]; })));
  }

  var RUN = {
    "run-throughput": function (el) {
      var series = [step("all operations", "#3969ac", { value: perSecond })];
      var columns = ["throughput"];
      if (data.run.series.target.some(function (v) { return v != null; })) {
        series.push(step("target rate", "#5b6570", { dash: [6, 4], width: 1.5, value: perSecond }));
        columns.push("target");
      }
      runChart(el, series, columns, "operations per second");
    },
    "run-documents": function (el) {
      runChart(el, [step("documents", "#7f3c8d", { value: perSecond })], ["documents"], "documents per second");
    },
    "run-latency": function (el) {
      runChart(el, [
        step("p50", "#3969ac", { value: ms }),
        step("p99", "#3969ac", { dash: [6, 4], value: ms })
      ], ["p50", "p99"], "milliseconds");
    },
    "run-failures": function (el) {
      var names = Object.keys(KINDS);
      runChart(el, names.map(function (kind) {
        return step(kind, KINDS[kind].color, { dash: kind == "429, sent again" ? [2, 3] : undefined, value: perSecond });
      }), names, "per second");
    },
    "run-late": function (el) {
      runChart(el, [step("late starts", "#e73f74", { value: perSecond })], ["late"], "operations per second");
    },
    "run-cpu": function (el) {
      var series = [step("sofabench", "#3969ac", { value: percent })];
      var columns = ["cpu"];
      if (data.run.series.machine_cpu.some(function (v) { return v != null; })) {
        series.push(step("whole machine", "#a5aa99", { dash: [6, 4], value: percent }));
        columns.push("machine_cpu");
      }
      runChart(el, series, columns, "percent of cores");
    }
  };

  // ---- a sweep: its phases against the swept setting ----

  function sweepX(sweep) {
    return {
      label: "",
      value: function (u, v, s, idx) {
        if (v == null || idx == null) return "";
        var names = sweep.series.map(function (line) { return line.phases[idx]; })
          .filter(function (name) { return name != null; });
        return number(v, 0) + " · " + names.join(", ");
      }
    };
  }

  function sweepChart(el, sweep, series, columns, yLabel) {
    var few = sweep.x.length <= 12;
    draw(el, "sweep", {
      scales: { x: sweep.log ? { time: false, distr: 3, log: 10 } : { time: false } },
      series: [sweepX(sweep)].concat(series),
      axes: [
        {
          label: sweep.axis,
          // Few values: a tick at each value swept.
          splits: few ? function () { return sweep.x; } : undefined,
          values: function (u, splits) { return splits.map(function (v) { return number(v, 0); }); }
        },
        yAxis(yLabel)
      ]
    }, [sweep.x].concat(columns));
  }

  function sweepLine(label, stroke, extra) {
    var s = line(label, stroke, extra);
    s.spanGaps = true;
    s.points = { show: true, size: 7 };
    return s;
  }

  var SWEEP = {
    "sweep-throughput": function (el, sweep) {
      var units = {};
      var series = sweep.series.map(function (line, i) {
        units[line.unit] = true;
        return sweepLine(line.name + " " + line.unit + "/s", SPARE[i % SPARE.length], { value: perSecond });
      });
      var unit = Object.keys(units).length == 1 ? Object.keys(units)[0] + " per second" : "per second (see legend)";
      sweepChart(el, sweep, series, sweep.series.map(function (line) { return line.throughput; }), unit);
    },
    "sweep-latency": function (el, sweep) {
      var series = [], columns = [];
      var lines = [["p50", undefined], ["p99", [6, 4]], ["p999", [2, 3]]];
      sweep.series.forEach(function (line, i) {
        lines.forEach(function (p) {
          // A percentile no phase had the operations for has no line, nor a legend.
          if (!line[p[0]].some(function (v) { return v != null; })) return;
          var name = p[0] == "p999" ? "p99.9" : p[0];
          var label = sweep.series.length > 1 ? line.name + " " + name : name;
          series.push(sweepLine(label, SPARE[i % SPARE.length], { dash: p[1], value: ms }));
          columns.push(line[p[0]]);
        });
      });
      sweepChart(el, sweep, series, columns, "milliseconds (" + sweep.latency + ")");
    }
  };

  // ---- one phase ----

  var phaseX = {
    label: "",
    value: function (u, v, s, idx) { return span(u, v, idx); }
  };

  // A phase's charts over time all keep room for a right axis, so their time axes line
  // up whether a chart has one or not.
  var RIGHT_AXIS_SIZE = 72;
  var noRightAxis = {
    scale: "y", side: 1, size: RIGHT_AXIS_SIZE, label: " ", grid: { show: false }, ticks: { show: false },
    values: function (u, splits) { return splits.map(function () { return ""; }); }
  };

  function phaseChart(el, phase, series, columns, yLabel) {
    draw(el, "phase", {
      cursor: { dataIdx: intervalUnder },
      series: [phaseX].concat(series),
      axes: [{ label: "seconds since the phase started" }, yAxis(yLabel), noRightAxis]
    }, [phase.time.x].concat(columns));
  }

  // The same, with a second y axis on the right for the series whose scale is "right".
  function phaseChartRight(el, phase, series, columns, yLabel, rightLabel) {
    draw(el, "phase", {
      cursor: { dataIdx: intervalUnder },
      series: [phaseX].concat(series),
      scales: { right: { range: fromZero } },
      axes: [{ label: "seconds since the phase started" }, yAxis(yLabel),
        { scale: "right", side: 1, label: rightLabel, size: RIGHT_AXIS_SIZE, grid: { show: false } }]
    }, [phase.time.x].concat(columns));
  }

  // Per node of the server: a color each, the node's address in the label when several.
  function perNode(phase, lines) {
    var nodes = phase.time.server || [], series = [], columns = [];
    nodes.forEach(function (n, i) {
      var name = nodes.length > 1 ? n.node + " " : "";
      lines.forEach(function (l) {
        var extra = { value: l.value };
        if (l.dash) extra.dash = l.dash;
        if (l.scale) extra.scale = l.scale;
        series.push(step(name + l.label, SPARE[i % SPARE.length], extra));
        columns.push(n[l.field]);
      });
    });
    return { series: series, columns: columns };
  }

  var BESIDE = {
    "server-requests": function (el, phase) {
      var c = perNode(phase, [
        { field: "requests", label: "requests", value: perSecond },
        { field: "request_p99", label: "p99 (its own)", value: ms, dash: [6, 4], scale: "right" }
      ]);
      phaseChartRight(el, phase, c.series, c.columns, "requests per second", "milliseconds");
    },
    "server-memory": function (el, phase) {
      var c = perNode(phase, [{ field: "memory_mib", label: "memory", value: mib }]);
      phaseChart(el, phase, c.series, c.columns, "MiB");
    },
    "server-work": function (el, phase) {
      var c = perNode(phase, [
        { field: "tasks", label: "background tasks", value: whole },
        { field: "run_queue", label: "run queue", value: whole, dash: [6, 4] }
      ]);
      phaseChart(el, phase, c.series, c.columns, "count");
    },
    changes: function (el, phase) {
      var c = phase.time.changes;
      phaseChartRight(el, phase, [
        step("changes", "#008695", { value: perSecond }),
        step("lag", "#cf1c90", { dash: [6, 4], scale: "right", value: seconds })
      ], [c.changes_per_second, c.lag_seconds], "changes per second", "seconds");
    },
    replication: function (el, phase) {
      var series = [], columns = [];
      phase.time.replication.forEach(function (r, i) {
        var c = SPARE[i % SPARE.length];
        series.push(step(r.replica, c, { value: perSecond }));
        columns.push(r.docs_per_second);
        series.push(step(r.replica + " lag", c, { dash: [6, 4], scale: "right", value: seconds }));
        columns.push(r.lag_seconds);
      });
      phaseChartRight(el, phase, series, columns, "documents per second", "seconds");
    },
    disk: function (el, phase) {
      var d = phase.time.disk;
      phaseChart(el, phase, [
        step("file", "#4b4b8f", { value: mib }),
        step("active", "#80ba5a", { dash: [6, 4], value: mib })
      ], [d.file_mib, d.active_mib], "MiB");
    }
  };

  var PHASE = {
    throughput: function (el, phase) {
      var t = phase.time, series = [], columns = [];
      t.operations.forEach(function (op, i) {
        series.push(step(op.name, color(op.name, i), { value: perSecond }));
        columns.push(op.throughput);
      });
      if (t.target) {
        series.push(step("target rate", "#5b6570", { dash: [6, 4], width: 1.5, value: perSecond }));
        columns.push(t.target);
      }
      phaseChart(el, phase, series, columns, "operations per second");
    },
    documents: function (el, phase) {
      phaseChart(el, phase, [step("documents", "#7f3c8d", { value: perSecond })],
        [phase.time.documents || []], "documents per second");
    },
    latency: function (el, phase) {
      var series = [], columns = [];
      phase.time.operations.forEach(function (op, i) {
        series.push(step(op.name + " p50", color(op.name, i), { value: ms }));
        columns.push(op.p50);
        series.push(step(op.name + " p99", color(op.name, i), { dash: [6, 4], value: ms }));
        columns.push(op.p99);
      });
      phaseChart(el, phase, series, columns, "milliseconds");
    },
    failures: function (el, phase) {
      var names = phase.time.operations.map(function (op) { return op.name; });
      var series = phase.time.failures.map(function (f) {
        var i = names.indexOf(f.operation);
        return step(f.operation + " " + f.kind, color(f.operation, i), { dash: KINDS[f.kind].dash, value: perSecond });
      });
      phaseChart(el, phase, series, phase.time.failures.map(function (f) { return f.values; }), "per second");
    },
    late: function (el, phase) {
      phaseChart(el, phase, [step("late starts", "#e73f74", { value: perSecond })],
        [phase.time.late || []], "operations per second");
    },
    spectrum: spectrum
  };

  // x = 1 / (1 - q): 1 → 0 %, 10 → 90 %, 100 → 99 %, …; with as many decimals as the
  // nines need (8 → 87.5 %, 24 → 95.83 %, 10^6 → 99.9999 %).
  function percentile(x) {
    var decimals = Math.min(6, Math.max(0, Math.ceil(Math.log10(x))));
    return Number((100 - 100 / x).toFixed(decimals)) + " %";
  }

  function spectrum(el, phase) {
    var s = phase.spectrum;
    var most = s.x[s.x.length - 1];
    var ticks = [1, 2, 10, 100, 1e3, 1e4, 1e5, 1e6].filter(function (x) { return x < most * 0.8; });
    ticks.push(most);
    draw(el, "phase", {
      padding: [null, 48, null, null],
      // The axis ends where the values stop supporting percentiles, not at a power of ten.
      scales: { x: { time: false, distr: 3, log: 10, range: function () { return [1, most]; } } },
      series: [{ label: "", value: shown(percentile) }].concat(s.series.map(function (l, i) {
        return line(l.label, color(l.operation, i), { dash: l.response ? [6, 4] : undefined, value: ms });
      })),
      axes: [
        {
          label: "percentile (log scale of 1 / (1 − percentile))",
          splits: function () { return ticks; },
          filter: function (u, splits) { return splits; },
          values: function (u, splits) { return splits.map(percentile); }
        },
        yAxis("milliseconds")
      ]
    }, [s.x].concat(s.series.map(function (l) { return l.values; })));
  }

  // ---- drawing, folded sections, resizing ----

  function drawBox(el) {
    if (el.getAttribute("data-points") != null) return;
    var kind = el.getAttribute("data-chart");
    if (el.hasAttribute("data-run")) {
      RUN[kind](el);
    } else if (el.hasAttribute("data-sweep")) {
      SWEEP[kind](el, data.sweeps[Number(el.getAttribute("data-sweep"))]);
    } else {
      (PHASE[kind] || BESIDE[kind])(el, data.phases[Number(el.getAttribute("data-phase"))]);
    }
  }

  function drawVisible(root) {
    var boxes = root.querySelectorAll("div.chart");
    for (var i = 0; i < boxes.length; i++) {
      var folded = boxes[i].closest("details:not([open])");
      if (!folded) drawBox(boxes[i]);
    }
  }

  drawVisible(document);
  var sections = document.querySelectorAll("details");
  for (var i = 0; i < sections.length; i++) {
    sections[i].addEventListener("toggle", function (e) {
      if (e.target.open) drawVisible(e.target);
    });
  }

  var pending = null;
  window.addEventListener("resize", function () {
    clearTimeout(pending);
    pending = setTimeout(function () {
      charts.forEach(function (c) { c[0].setSize({ width: width(c[1]), height: HEIGHT[c[2]] }); });
    }, 100);
  });
})();
