// Plan vs reality on the planner's pages: the section is fetched after the page has arrived,
// so monitoring queries never hold up a plan or decision page.
(function () {
  "use strict";

  function load(section) {
    fetch(section.dataset.realityUrl, { credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) throw new Error(String(response.status));
        return response.text();
      })
      .then(function (html) {
        var holder = document.createElement("template");
        holder.innerHTML = html.trim();
        section.replaceWith(holder.content);
      })
      .catch(function () {
        section.removeAttribute("aria-busy");
        var status = section.querySelector("[data-reality-status]");
        if (status) {
          status.textContent = section.dataset.failed;
          status.setAttribute("role", "alert");
        }
      });
  }

  function start() {
    document.querySelectorAll("[data-reality-url]").forEach(load);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
