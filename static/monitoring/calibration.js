// Calibration pages: measured latencies against the engine's predictions before and after
// calibration, one chart per quantity. Data comes from a json_script element (CSP: no inline JS).
(function () {
  "use strict";
  var data = document.getElementById("calibration-residuals");
  if (!data || typeof window.Plotly === "undefined") { return; }
  var residuals = JSON.parse(data.textContent);
  document.querySelectorAll("[data-calibration-chart]").forEach(function (el) {
    var quantity = el.dataset.calibrationChart;
    var rows = residuals.filter(function (r) { return r.quantity === quantity; });
    rows.sort(function (a, b) { return a.concurrency - b.concurrency; });
    if (!rows.length) { el.hidden = true; return; }
    var x = rows.map(function (r) { return r.concurrency; });
    function trace(key, name, mode, dash) {
      return { type: "scatter", mode: mode, name: name, x: x,
        y: rows.map(function (r) { return r[key]; }),
        text: rows.map(function (r) { return r.source; }),
        line: { dash: dash }, hovertemplate: "%{text}: %{y:.3g}<extra>" + name + "</extra>" };
    }
    var traces = [
      trace("measured", el.dataset.measured, "markers"),
      trace("before", el.dataset.before, "lines+markers", "dash"),
      trace("after", el.dataset.after, "lines+markers", "solid"),
    ];
    window.Plotly.react(el, traces, {
      title: { text: el.dataset.title, font: { size: 14 } },
      height: 300, margin: { l: 60, r: 20, t: 40, b: 40 },
      xaxis: { title: { text: el.dataset.xTitle } },
      yaxis: { title: { text: el.dataset.unit }, rangemode: "tozero" },
      legend: { orientation: "h", y: -0.25 }, paper_bgcolor: "rgba(0,0,0,0)",
    }, { displaylogo: false, responsive: true });
    el.dataset.drawn = String(rows.length);
  });
})();
