// Decision records: show the guidance of the chosen pool kind; print button. No inline script.
(function () {
  "use strict";
  var select = document.querySelector("select[data-pool-select]");
  function showGuidance() {
    var pool = select.value;
    document.querySelectorAll(".dr-resp-guidance [data-pool]").forEach(function (el) {
      el.hidden = el.getAttribute("data-pool") !== pool;
    });
  }
  if (select) {
    select.addEventListener("change", showGuidance);
    showGuidance();
  }
  document.querySelectorAll("[data-print]").forEach(function (button) {
    button.addEventListener("click", function () { window.print(); });
  });
})();
