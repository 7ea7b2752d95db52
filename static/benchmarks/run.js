// A benchmark run's page: poll the progress JSON while it runs (reload when it ends), and draw
// the measured and predicted curves. Data comes from data-* and json_script (CSP: no inline JS).
(function () {
  "use strict";
  var box = document.getElementById("run-progress");
  if (box) {
    var text = document.getElementById("run-progress-text");
    var bar = document.getElementById("run-bar");
    var poll = function () {
      fetch(box.dataset.url, { credentials: "same-origin" }).then(function (r) { return r.json(); })
        .then(function (data) {
          if (!data.active) { window.location.reload(); return; }
          var p = data.progress || {};
          if (p.total) { bar.max = p.total; bar.value = p.done; }
          var fill = { level: p.level, levels: p.levels, done: p.done, total: p.total,
            failed: p.failed, elapsed: p.elapsed_s, eta: p.eta_s, ttft: p.ttft_median_ms,
            tpot: p.tpot_median_ms };
          text.textContent = text.dataset.template.replace(/\{(\w+)\}/g, function (_, k) {
            var v = fill[k];
            return v === null || v === undefined ? "–" : String(v);
          });
          window.setTimeout(poll, 1000);
        }).catch(function () { window.setTimeout(poll, 3000); });
    };
    poll();
  }
  var data = document.getElementById("benchmark-comparison");
  var el = document.getElementById("benchmark-curve");
  if (!data || !el || typeof window.Plotly === "undefined") { return; }
  var levels = JSON.parse(data.textContent).filter(function (l) { return l.concurrency; });
  if (levels.length < 2) { el.hidden = true; return; }
  var x = levels.map(function (l) { return l.concurrency; });
  function line(key, which, name, axis, dash) {
    return { type: "scatter", mode: "lines+markers", name: name, x: x, yaxis: axis,
      y: levels.map(function (l) { return l[key][which]; }), line: { dash: dash } };
  }
  var band = { type: "scatter", mode: "lines", name: el.dataset.predicted + " ±", x: x.concat(x.slice().reverse()),
    y: levels.map(function (l) { return l.output_tok_s.high; }).concat(levels.map(function (l) { return l.output_tok_s.low; }).reverse()),
    fill: "toself", line: { width: 0 }, opacity: 0.2, hoverinfo: "skip" };
  window.Plotly.react(el, [
    band,
    line("output_tok_s", "predicted", el.dataset.predicted + " · " + el.dataset.yTitle, "y", "dash"),
    line("output_tok_s", "measured", el.dataset.measured + " · " + el.dataset.yTitle, "y", "solid"),
    line("tpot_ms", "predicted", el.dataset.predicted + " · " + el.dataset.y2Title, "y2", "dash"),
    line("tpot_ms", "measured", el.dataset.measured + " · " + el.dataset.y2Title, "y2", "solid"),
  ], {
    height: 360, margin: { l: 60, r: 60, t: 20, b: 50 },
    xaxis: { title: { text: el.dataset.xTitle }, type: "log" },
    yaxis: { title: { text: el.dataset.yTitle }, rangemode: "tozero" },
    yaxis2: { title: { text: el.dataset.y2Title }, overlaying: "y", side: "right", rangemode: "tozero" },
    legend: { orientation: "h", y: -0.25 }, paper_bgcolor: "rgba(0,0,0,0)",
  }, { responsive: true, displaylogo: false });
})();
