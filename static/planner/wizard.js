// Wizard enhancements: the live side panel and showing only the fieldsets that apply.
// Every step works without this file: it only saves a round trip.
(function () {
  "use strict";
  var form = document.getElementById("wizard-form");
  if (!form) { return; }
  var panel = document.getElementById("side-panel");
  var previewUrl = form.getAttribute("data-preview-url");
  var timer = null;
  var inFlight = null;

  document.querySelectorAll(".js-hide").forEach(function (el) { el.hidden = true; });

  function radioValue(name) {
    var checked = form.querySelector('input[name="' + name + '"]:checked');
    return checked ? checked.value : "";
  }

  function applyVisibility() {
    form.querySelectorAll("[data-show-when]").forEach(function (box) {
      var show = box.getAttribute("data-show-when").split(" ").some(function (cond) {
        var parts = cond.split("=");
        return radioValue(parts[0]) === parts[1];
      });
      box.hidden = !show;
    });
  }

  function refresh() {
    if (!previewUrl || !panel) { return; }
    if (inFlight) { inFlight.abort(); }
    inFlight = new AbortController();
    panel.setAttribute("aria-busy", "true");
    fetch(previewUrl, {
      method: "POST",
      body: new FormData(form),
      headers: { "X-Requested-With": "fetch" },
      credentials: "same-origin",
      signal: inFlight.signal
    }).then(function (response) {
      // 429: the panel says the evaluation limit is reached; show it like any answer.
      if (!response.ok && response.status !== 429) { throw new Error("preview " + response.status); }
      return response.text();
    }).then(function (html) {
      panel.innerHTML = html;
      panel.setAttribute("data-refreshed", String(Date.now()));
    }).catch(function (err) {
      if (err.name !== "AbortError") { panel.setAttribute("data-error", err.message); }
    }).finally(function () {
      panel.removeAttribute("aria-busy");
    });
  }

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(refresh, 350);
  }

  // Ticking a machine while "the whole fleet" is chosen selects "these machines".
  form.addEventListener("change", function (event) {
    var target = event.target;
    if (target.name === "machines" && target.checked && radioValue("source") === "fleet") {
      var these = form.querySelector('input[name="source"][value="machines"]');
      if (these) { these.checked = true; }
    }
  });
  form.addEventListener("change", function () { applyVisibility(); schedule(); });
  form.addEventListener("input", schedule);
  applyVisibility();
})();
