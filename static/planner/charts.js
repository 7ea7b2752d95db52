// Draw every server-built Plotly figure on the page: <div class="chart" data-figure="ID">
// reads the JSON from <script type="application/json" id="ID"> (json_script, no inline code).
(function () {
  "use strict";
  if (typeof window.Plotly === "undefined") { return; }
  var config = { responsive: true, displaylogo: false };
  document.querySelectorAll("[data-figure]").forEach(function (el) {
    var source = document.getElementById(el.getAttribute("data-figure"));
    if (!source) { return; }
    var figure = JSON.parse(source.textContent);
    window.Plotly.newPlot(el, figure.data, figure.layout, config).then(function () {
      el.setAttribute("data-rendered", "true");
    });
  });
})();
