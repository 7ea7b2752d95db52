// Plotly's own texts (modebar tooltips, month and day names on date axes) in the page's
// language. The server renders them as JSON ({% plotly_locale %}, core/templatetags/plotly_i18n.py);
// this registers them before the page's charts are drawn. No inline script (CSP).
(function () {
  "use strict";
  var source = document.getElementById("plotly-locale");
  if (!source || typeof window.Plotly === "undefined") { return; }
  var locale = JSON.parse(source.textContent);
  window.Plotly.register({
    moduleType: "locale",
    name: locale.name,
    dictionary: locale.dictionary,
    format: locale.format
  });
  window.Plotly.setPlotConfig({ locale: locale.name });
})();
