// Draw every server-built Plotly figure on the page: <div class="chart" data-figure="ID">
// reads the JSON from <script type="application/json" id="ID"> (json_script, no inline code).
// A chart inside a closed <details> is drawn when it is first opened: drawn while hidden,
// Plotly would size it to zero width.
(function () {
  "use strict";
  if (typeof window.Plotly === "undefined") { return; }
  var config = { responsive: true, displaylogo: false };
  function draw(el) {
    if (el.hasAttribute("data-drawing")) { return; }
    var source = document.getElementById(el.getAttribute("data-figure"));
    if (!source) { return; }
    el.setAttribute("data-drawing", "true");
    var figure = JSON.parse(source.textContent);
    window.Plotly.newPlot(el, figure.data, figure.layout, config).then(function () {
      el.setAttribute("data-rendered", "true");
    });
  }
  document.querySelectorAll("[data-figure]").forEach(function (el) {
    var fold = el.closest("details");
    if (fold && !fold.open) {
      fold.addEventListener("toggle", function () { if (fold.open) { draw(el); } });
    } else {
      draw(el);
    }
  });
})();
