// Small behaviours shared by every page. No inline scripts: the CSP forbids them.
(function () {
  "use strict";
  document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
    select.addEventListener("change", function () { select.form.submit(); });
  });
})();

// Copy buttons: <button data-copy-target="element-id">.
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-copy-target]");
    if (!button) { return; }
    var source = document.getElementById(button.getAttribute("data-copy-target"));
    if (!source || !navigator.clipboard) { return; }
    navigator.clipboard.writeText(source.textContent).then(function () {
      var label = button.textContent;
      button.textContent = button.getAttribute("data-copied-label") || "✓";
      setTimeout(function () { button.textContent = label; }, 1500);
    });
  });
})();
