// Live monitoring dashboards: poll JSON and update Plotly charts in place (Plotly.react), and
// re-fetch the server-rendered panels. Configuration comes from data-* attributes only (the CSP
// forbids inline scripts). Plotly itself is served at /vendor/plotly.min.js.
(function () {
  "use strict";

  var root = document.getElementById("dashboard");
  if (!root || typeof window.Plotly === "undefined") {
    return;
  }
  var Plotly = window.Plotly;
  var refreshMs = parseInt(root.dataset.refreshMs, 10) || 15000;
  var range = root.dataset.range || "1h";
  var pageState = root.dataset.state || "up";
  var inflight = false;
  var charts = Array.prototype.slice.call(root.querySelectorAll("[data-chart]"));
  var lineCharts = charts.filter(function (c) { return c.dataset.chart === "line"; });
  var heatmaps = charts.filter(function (c) { return c.dataset.chart === "heatmap"; });
  // History heatmaps: one row per label value (a GPU), one column per time bucket.
  var timeheats = charts.filter(function (c) { return c.dataset.chart === "timeheat"; });
  // {Ray node label (IP:port): host name}, from the page's state.
  var nodeNames = {};

  // Split "a,b{x=\"1\",y=\"2\"}" on the commas outside braces.
  function splitSeries(text) {
    var out = [];
    var depth = 0;
    var current = "";
    for (var i = 0; i < (text || "").length; i++) {
      var ch = text.charAt(i);
      if (ch === "{") { depth += 1; }
      if (ch === "}") { depth = Math.max(0, depth - 1); }
      if (ch === "," && depth === 0) {
        if (current.trim()) { out.push(current.trim()); }
        current = "";
      } else {
        current += ch;
      }
    }
    if (current.trim()) { out.push(current.trim()); }
    return out;
  }

  var wanted = [];
  lineCharts.concat(timeheats).forEach(function (chart) {
    splitSeries(chart.dataset.series).forEach(function (s) {
      if (wanted.indexOf(s) < 0) { wanted.push(s); }
    });
  });

  function matches(request, series) {
    return request.indexOf("{") >= 0 ? series.id === request : series.key === request;
  }

  function traceName(chart, request, series, names) {
    var base = names[series.id];
    if (base === undefined) { base = names[request]; }
    if (base === undefined) { base = series.id; }
    var label = chart.dataset.label;
    var extra = [];
    Object.keys(series.labels || {}).forEach(function (name) {
      if (name === label) { return; }
      if (request.indexOf("{") >= 0) { return; }
      extra.push(name + "=" + series.labels[name]);
    });
    var text = base;
    if (label && series.labels && series.labels[label] !== undefined) {
      text = base ? base + " " + series.labels[label] : series.labels[label];
    }
    if (extra.length) { text += " (" + extra.join(", ") + ")"; }
    return text || series.id;
  }

  function emptyReason(chart) {
    if (pageState === "never" && root.dataset.emptyNever) { return root.dataset.emptyNever; }
    if (pageState === "down" && root.dataset.emptyDown) {
      return root.dataset.emptyDown + " " + (chart.dataset.empty || "");
    }
    return chart.dataset.empty || "";
  }

  function showEmpty(chart) {
    var plot = chart.querySelector(".chart-plot");
    var note = chart.querySelector(".chart-empty");
    if (plot.data) { Plotly.purge(plot); }
    plot.hidden = true;
    note.textContent = emptyReason(chart);
    note.hidden = false;
    chart.dataset.points = "0";
    chart.dataset.updated = String(Date.now());
  }

  function baseLayout(chart, extra) {
    var unit = chart.dataset.unit || "";
    var layout = {
      // No title: the card's caption above the plot already names the chart and its unit.
      height: 300,
      margin: { l: 60, r: 20, t: 16, b: 40 },
      yaxis: { title: { text: unit }, rangemode: "tozero", automargin: true },
      legend: { orientation: "h", y: -0.2 },
      uirevision: chart.id + ":" + range,
      paper_bgcolor: "rgba(0,0,0,0)",
    };
    Object.keys(extra || {}).forEach(function (k) { layout[k] = extra[k]; });
    return layout;
  }

  function draw(chart, traces, layout, points) {
    var plot = chart.querySelector(".chart-plot");
    chart.querySelector(".chart-empty").hidden = true;
    plot.hidden = false;
    Plotly.react(plot, traces, layout, { displaylogo: false, responsive: true });
    chart.dataset.points = String(points);
    chart.dataset.updated = String(Date.now());
  }

  // The x range is the chosen window, or the span of the data when the data covers less of it
  // (a fresh install has minutes of samples: a 1 h axis squeezed them into its last tenth).
  function dataRange(data) {
    var start = new Date(data.start).getTime();
    var end = new Date(data.end).getTime();
    var first = null;
    data.series.forEach(function (series) {
      if (series.t.length) {
        var t = new Date(series.t[0]).getTime();
        if (first === null || t < first) { first = t; }
      }
    });
    if (first !== null && first > start) {
      start = Math.max(start, first - (end - first) * 0.05);
    }
    return [new Date(start), new Date(end)];
  }

  function renderLine(chart, data) {
    var names = JSON.parse(chart.dataset.names || "{}");
    var scale = parseFloat(chart.dataset.scale) || 1;
    var stack = chart.dataset.stack === "1";
    var traces = [];
    var points = 0;
    splitSeries(chart.dataset.series).forEach(function (request) {
      data.series.forEach(function (series) {
        if (!matches(request, series) || !series.t.length) { return; }
        points += series.t.length;
        var trace = {
          type: "scatter",
          mode: series.t.length > 1 ? "lines" : "markers",
          name: traceName(chart, request, series, names),
          x: series.t.map(function (t) { return new Date(t); }),
          y: series.v.map(function (v) { return v === null ? null : v * scale; }),
          hovertemplate: "%{y:.4g} " + (chart.dataset.unit || "") + "<extra>%{fullData.name}</extra>",
        };
        if (stack) { trace.stackgroup = "one"; }
        traces.push(trace);
      });
    });
    if (!traces.length) { showEmpty(chart); return; }
    var extra = {
      xaxis: { type: "date", range: dataRange(data) },
      showlegend: traces.length > 1,
    };
    // Spans such as a load benchmark: shaded, labelled at the top.
    (data.marks || []).forEach(function (mark) {
      extra.shapes = extra.shapes || [];
      extra.annotations = extra.annotations || [];
      var x0 = new Date(mark.start);
      var x1 = new Date(mark.end === null ? data.end : mark.end);
      extra.shapes.push({ type: "rect", xref: "x", yref: "paper", x0: x0, x1: x1, y0: 0, y1: 1,
        fillcolor: "#e0a800", opacity: 0.15, line: { width: 0 }, layer: "below" });
      extra.annotations.push({ xref: "x", yref: "paper", x: x0, y: 1, xanchor: "left",
        yanchor: "bottom", text: mark.label, showarrow: false, font: { size: 10, color: "#8a6d00" } });
    });
    var lines = chart.dataset.lines ? JSON.parse(chart.dataset.lines) : [];
    if (lines.length) {
      // Plan predictions dashed blue, SLO thresholds solid red; the y axis keeps them in view.
      extra.shapes = extra.shapes || [];
      extra.annotations = extra.annotations || [];
      lines.forEach(function (line) {
        var color = line.kind === "slo" ? "#b03a2e" : "#1f5fa8";
        extra.shapes.push({ type: "line", xref: "paper", x0: 0, x1: 1, y0: line.y, y1: line.y,
          line: { dash: line.kind === "slo" ? "solid" : "dash", color: color, width: 1.5 } });
        extra.annotations.push({ xref: "paper", x: 1, y: line.y, xanchor: "right", yanchor: "bottom",
          text: line.name + " " + Number(line.y).toPrecision(3), showarrow: false,
          font: { size: 11, color: color } });
      });
      var top = Math.max.apply(null, lines.map(function (l) { return l.y; }));
      traces.forEach(function (t) {
        t.y.forEach(function (v) { if (v !== null && v > top) { top = v; } });
      });
      extra.yaxis = { title: { text: chart.dataset.unit || "" }, rangemode: "tozero",
        automargin: true, range: [0, top * 1.1] };
    }
    draw(chart, traces, baseLayout(chart, extra), points);
  }

  // Sequential scale, light at 0: an idle GPU reads as empty, a busy one as dark.
  var SEQUENTIAL = [[0, "#f7fbff"], [0.25, "#c6dbef"], [0.5, "#6baed6"], [0.75, "#2171b5"], [1, "#08306b"]];

  function renderTimeheat(chart, data) {
    var label = chart.dataset.label;
    var request = splitSeries(chart.dataset.series)[0];
    var rows = data.series.filter(function (s) { return matches(request, s) && s.t.length; });
    if (!rows.length) { showEmpty(chart); return; }
    // A row is "<host> GPU <index>": the node label (IP:port) is named by the Ray page's state
    // (host names from Ray's node list or the inventory) when the page has one.
    var hosts = rows.map(function (s) {
      var node = (s.labels || {}).node;
      return node === undefined ? "" : (nodeNames[node] || node);
    });
    var names = rows.map(function (s) {
      var extra = Object.keys(s.labels || {}).filter(function (k) { return k !== label && k !== "node"; })
        .map(function (k) { return k + "=" + s.labels[k]; });
      return (s.labels[label] !== undefined ? s.labels[label] : s.id) + (extra.length ? " (" + extra.join(", ") + ")" : "");
    });
    var order = names.map(function (n, i) { return i; }).sort(function (a, b) {
      if (hosts[a] !== hosts[b]) { return hosts[a] < hosts[b] ? -1 : 1; }
      var x = parseFloat(names[a]), y = parseFloat(names[b]);
      if (!isNaN(x) && !isNaN(y) && x !== y) { return x - y; }
      return names[a] < names[b] ? -1 : names[a] > names[b] ? 1 : 0;
    });
    var times = [];
    rows.forEach(function (s) { s.t.forEach(function (t) { if (times.indexOf(t) < 0) { times.push(t); } }); });
    times.sort(function (a, b) { return a - b; });
    var z = order.map(function (i) {
      var byT = {};
      rows[i].t.forEach(function (t, k) { byT[t] = rows[i].v[k]; });
      return times.map(function (t) { return byT[t] === undefined ? null : byT[t]; });
    });
    var trace = {
      type: "heatmap",
      z: z,
      x: times.map(function (t) { return new Date(t); }),
      y: order.map(function (i) {
        return (hosts[i] ? hosts[i] + " " : "") + (label ? label.toUpperCase() + " " : "") + names[i];
      }),
      colorscale: SEQUENTIAL,
      zmin: 0,
      zmax: chart.dataset.unit === "%" ? 100 : undefined,
      colorbar: { title: { text: chart.dataset.unit || "" } },
      hovertemplate: "%{y} %{x}: %{z:.4g} " + (chart.dataset.unit || "") + "<extra></extra>",
    };
    var layout = baseLayout(chart, {
      xaxis: { type: "date", range: [new Date(data.start), new Date(data.end)] },
      yaxis: { type: "category", automargin: true, autorange: "reversed" },
    });
    draw(chart, [trace], layout, times.length * rows.length);
  }

  function renderHeatmap(chart, state) {
    var ray = state && state.ray;
    var z = ray && ray[chart.dataset.field];
    var hasValue = z && z.some(function (row) { return row.some(function (v) { return v !== null; }); });
    if (!hasValue || !ray.gpu_ids.length) { showEmpty(chart); return; }
    var nodes = ray.nodes.map(function (n) { return n.name || n.node; });
    var trace = {
      type: "heatmap",
      z: z,
      x: ray.gpu_ids.map(function (g) { return "GPU " + g; }),
      y: nodes,
      colorscale: SEQUENTIAL,
      zmin: 0,
      colorbar: { title: { text: chart.dataset.unit || "" } },
      hovertemplate: "%{y} %{x}: %{z:.4g} " + (chart.dataset.unit || "") + "<extra></extra>",
    };
    if (chart.dataset.field === "gpu_utilization_pct") { trace.zmax = 100; }
    var layout = baseLayout(chart, { xaxis: { type: "category" }, yaxis: { type: "category", automargin: true } });
    draw(chart, [trace], layout, nodes.length * ray.gpu_ids.length);
  }

  function getJSON(url) {
    return fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; });
  }

  function refreshPanels() {
    var jobs = [];
    root.querySelectorAll("[data-refresh-url]").forEach(function (el) {
      jobs.push(fetch(el.dataset.refreshUrl, { credentials: "same-origin" })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (html) {
          if (html === null) { return; }
          el.innerHTML = html;
          var status = el.querySelector(".target-status[data-state]");
          if (status) { pageState = status.dataset.state; }
        }));
    });
    return Promise.all(jobs);
  }

  function refreshCharts() {
    var series = null;
    var named = Promise.resolve();
    if (heatmaps.length && root.dataset.stateUrl) {
      named = getJSON(root.dataset.stateUrl).then(function (state) {
        if (!state) { return; }
        pageState = state.state || pageState;
        ((state.ray && state.ray.nodes) || []).forEach(function (n) {
          if (n.name) { nodeNames[n.node] = n.name; }
        });
        heatmaps.forEach(function (c) { renderHeatmap(c, state); });
      });
    }
    if (wanted.length && root.dataset.seriesUrl) {
      var url = root.dataset.seriesUrl + "?series=" + encodeURIComponent(wanted.join(",")) +
        "&range=" + encodeURIComponent(range);
      series = getJSON(url).then(function (data) {
        if (!data) { return; }
        lineCharts.forEach(function (c) { renderLine(c, data); });
        // History rows are named after the state has named the nodes.
        return named.catch(function () {}).then(function () {
          timeheats.forEach(function (c) { renderTimeheat(c, data); });
        });
      });
    }
    return Promise.all([named, series]);
  }

  function tick(force) {
    if (inflight || (!force && document.hidden)) { return; }
    inflight = true;
    refreshPanels()
      .then(refreshCharts)
      .catch(function (err) { if (window.console) { window.console.warn("monitoring refresh", err); } })
      .then(function () {
        inflight = false;
        root.dataset.refreshed = String(Date.now());
      });
  }

  root.querySelectorAll(".range-selector [data-range]").forEach(function (button) {
    button.setAttribute("aria-pressed", button.dataset.range === range ? "true" : "false");
    button.addEventListener("click", function () {
      range = button.dataset.range;
      root.dataset.range = range;
      root.querySelectorAll(".range-selector [data-range]").forEach(function (b) {
        b.setAttribute("aria-pressed", b === button ? "true" : "false");
      });
      tick(true);
    });
  });

  // The panels are already server-rendered: the first tick only needs the charts.
  inflight = true;
  refreshCharts().catch(function () { return null; }).then(function () {
    inflight = false;
    root.dataset.refreshed = String(Date.now());
  });
  window.setInterval(tick, refreshMs);
})();
