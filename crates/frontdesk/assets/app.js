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

  // A form submitted twice (a double click) sends once: its buttons are disabled while the answer is on its way.
  // Not by cancelling the second submit event: Chromium then drops the first submission too, and nothing is sent.
  // Disabled only after this event, so that the clicked button's name and value still go with the form.
  // A form's elements include the buttons outside it that name it (`form="…"`).
  function setButtons(form, disabled) {
    Array.prototype.forEach.call(form.elements, function (b) {
      if (b.matches("button:not([type=button]), input[type=submit]")) b.disabled = disabled;
    });
  }
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (event.defaultPrevented || form.hasAttribute("hx-get") || form.hasAttribute("hx-post")) return;
    setTimeout(function () { setButtons(form, true); }, 0);
    setTimeout(function () { setButtons(form, false); }, 4000);
  });
  // A page shown again from the back/forward cache gets its buttons back.
  window.addEventListener("pageshow", function (event) {
    if (event.persisted) document.querySelectorAll("form").forEach(function (form) { setButtons(form, false); });
  });

  // After a refused form, the first field to fix takes the focus (the message beside it is read out with it).
  function focusFirstError() {
    var field = document.querySelector("form[data-focus-error] [aria-invalid=true]");
    if (field) field.focus();
  }

  // A secret shown once gets a Copy button; without JavaScript the text is there to select and copy by hand.
  function copyButtons(root) {
    root.querySelectorAll("button[data-copy]").forEach(function (button) {
      var field = document.getElementById(button.getAttribute("data-copy"));
      if (!field || !navigator.clipboard) return;
      button.hidden = false;
      button.addEventListener("click", function () {
        navigator.clipboard.writeText(field.value).then(function () {
          button.textContent = "Copied";
        }, function () {
          field.select();
        });
      });
    });
  }

  // The rates calendar's night panel (templates/rates.html): the form that opens in it takes the focus (the first
  // field to fix, after a refusal); Cancel and Escape close it; once the night is saved and the table replaced, the
  // focus goes back to that night's cell, so a keyboard user carries on where they were.
  var lastNight = null;
  function nightCell() {
    if (!lastNight) return null;
    return document.querySelector('#rates-table a.night[href="' + CSS.escape(lastNight) + '"]');
  }
  function markEditing(link) {
    document.querySelectorAll("#rates-table td.editing").forEach(function (td) { td.classList.remove("editing"); });
    if (link) link.closest("td").classList.add("editing");
  }
  function closeNight() {
    var panel = document.getElementById("night-editor");
    if (panel) panel.replaceChildren();
    markEditing(null);
    var cell = nightCell();
    if (cell) cell.focus();
  }
  document.addEventListener("click", function (event) {
    if (!(event.target instanceof Element)) return;
    var link = event.target.closest("#rates-table a.night");
    if (link) {
      lastNight = link.getAttribute("href");
      markEditing(link);
    }
    if (event.target.closest("#night-editor [data-close-night]") && document.getElementById("rates-table")) {
      event.preventDefault();
      closeNight();
    }
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && document.querySelector("#night-editor:not(:empty)")) closeNight();
  });
  // When the panel cannot show the answer (the session ran out and the answer is the sign-in page, a 404 or 500, no
  // network), the browser does what it does without JavaScript: it opens the night's page, or posts the form, and
  // shows whatever the server answers there.
  function withoutPanel(elt) {
    if (!(elt instanceof Element)) return false;
    if (elt.matches("#night-editor form")) {
      elt.submit();
      return true;
    }
    if (elt.matches("#rates-table a.night")) {
      window.location.assign(elt.href);
      return true;
    }
    return false;
  }
  document.addEventListener("htmx:responseError", function (event) { withoutPanel(event.detail.elt); });
  document.addEventListener("htmx:sendError", function (event) { withoutPanel(event.detail.elt); });
  document.addEventListener("htmx:afterSettle", function (event) {
    var panel = document.getElementById("night-editor");
    if (!panel || event.target !== panel) return;
    var request = event.detail.requestConfig;
    if (!panel.firstElementChild && request && request.verb === "get") {
      withoutPanel(request.elt);
      return;
    }
    var field = panel.querySelector("[aria-invalid=true]") || panel.querySelector("input:not([type=hidden])");
    if (field) field.focus();
    else {
      var cell = nightCell();
      if (cell) cell.focus();
    }
  });

  function ready() { autoSubmit(document); focusFirstError(); copyButtons(document); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", ready);
  else ready();
  document.addEventListener("htmx:afterSwap", function (event) { autoSubmit(event.target); });
})();
