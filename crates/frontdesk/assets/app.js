// Frontdesk: small conveniences on top of pages that work without JavaScript.
(function () {
  "use strict";

  // The hotel switcher goes to the chosen hotel at once; without JavaScript its "Go" button does.
  function autoSubmit(root) {
    root.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
      var button = select.form && select.form.querySelector("[data-autosubmit-button]");
      if (button) button.hidden = true;
      select.addEventListener("change", function () { select.form.requestSubmit(); });
    });
  }

  // Destructive actions ask first. Without JavaScript the server shows a confirmation page instead; with it, the
  // browser asks and the form says it was confirmed.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var question = form.getAttribute("data-confirm");
    if (!question) return;
    if (!window.confirm(question)) {
      event.preventDefault();
      return;
    }
    if (!form.querySelector("input[name=confirmed]")) {
      var input = document.createElement("input");
      input.type = "hidden";
      input.name = "confirmed";
      input.value = "yes";
      form.appendChild(input);
    }
  }, true);

  // A form submitted twice (a double click) sends once.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (event.defaultPrevented) return;
    if (form.dataset.submitted === "yes") {
      event.preventDefault();
      return;
    }
    form.dataset.submitted = "yes";
    setTimeout(function () { form.dataset.submitted = ""; }, 4000);
  });

  function ready() { autoSubmit(document); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", ready);
  else ready();
  document.addEventListener("htmx:afterSwap", function (event) { autoSubmit(event.target); });
})();
