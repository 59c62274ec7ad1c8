// The console's only script (no per-page JavaScript; pages work without it).
// - Controls marked data-autosubmit submit their form on change (the language switch).
// - "/" focuses the owner lookup box in the header, the on-call engineer's shortcut.
// - A checkbox marked data-check-all="KEY" ticks or clears every checkbox marked data-group="KEY" (findings).
document.addEventListener("change", (event) => {
  const control = event.target.closest("[data-autosubmit]");
  if (control && control.form) control.form.requestSubmit();
});
document.addEventListener("keydown", (event) => {
  const typing = event.target.closest("input, textarea, select, [contenteditable]");
  if (event.key === "/" && !typing && !event.ctrlKey && !event.metaKey && !event.altKey) {
    const box = document.getElementById("header-lookup");
    if (box) {
      event.preventDefault();
      box.focus();
    }
  }
});
document.addEventListener("change", (event) => {
  const all = event.target.closest("[data-check-all]");
  if (!all) return;
  for (const box of document.querySelectorAll(`input[type=checkbox][data-group="${all.dataset.checkAll}"]`)) {
    box.checked = all.checked;
  }
});
// - A refused or failed htmx request is shown, never silent (issue 23): a role="alert" message right after the
//   element that made the request (inside it for a form), with the server's own short refusal text (our 403s say
//   why: "you translated … ; another reviewer must review it"), else "That did not work (HTTP 403)". The words
//   come translated from data- attributes of #htmx-error in base.html (no JavaScript i18n); English otherwise.
function htmxErrorText(detail, failed) {
  const box = document.getElementById("htmx-error");
  const words = (name, fallback) => (box && box.dataset[name]) || fallback;
  if (failed) return words("msgNetwork", "That did not work: the server did not answer. Try again.");
  const xhr = detail.xhr;
  const type = xhr.getResponseHeader("Content-Type") || "";
  const body = (xhr.responseText || "").trim();
  let reason = "";
  // A short plain-text or fragment answer is the server's reason; a whole error page is not shown inline.
  if (body && body.length <= 600 && /^text\/(plain|html)/.test(type) && !/<(html|body|head|!doctype)\b/i.test(body)) {
    reason = (new DOMParser().parseFromString(body, "text/html").body.textContent || "").trim();
  }
  const head = words("msgHttp", "That did not work (HTTP {status})").replace("{status}", String(xhr.status));
  return reason ? head + ": " + reason : head + ".";
}
function showHtmxError(event, failed) {
  const text = htmxErrorText(event.detail, failed);
  const elt = event.detail.elt;
  const anchor = elt && elt.isConnected ? (elt.closest("form") || elt) : null;
  document.querySelectorAll("p.htmx-error[data-htmx-error]").forEach((old) => old.remove());
  if (anchor) {
    const note = document.createElement("p");
    note.className = "htmx-error";
    note.setAttribute("role", "alert");
    note.dataset.htmxError = "";
    note.textContent = text;
    if (anchor.tagName === "FORM") anchor.append(note);
    else anchor.after(note);
    return;
  }
  const box = document.getElementById("htmx-error");
  if (box) box.textContent = text;
}
document.addEventListener("htmx:responseError", (event) => showHtmxError(event, false));
document.addEventListener("htmx:sendError", (event) => showHtmxError(event, true));
document.addEventListener("htmx:beforeRequest", () => {
  const box = document.getElementById("htmx-error");
  if (box) box.textContent = "";
});
// - Content swapped into an element marked data-reveal is scrolled into view when it is off screen (the card
//   strings panel sits above the matrix on a phone: a tap on a cell far down would otherwise change nothing visible).
document.addEventListener("htmx:afterSwap", (event) => {
  const target = event.detail.target;
  const shown = target && target.isConnected ? target : document.getElementById(target && target.id);
  if (!shown || !shown.hasAttribute("data-reveal")) return;
  const box = shown.getBoundingClientRect();
  if (box.top < 0 || box.top > window.innerHeight) shown.scrollIntoView({block: "start"});
});
// The header's menu on a phone: folded behind the menu button once the page has loaded (without this script the
// links simply stay open), and a "More" / account panel closes when one clicks elsewhere or presses Escape.
(() => {
  const narrow = window.matchMedia("(max-width: 79.9rem)");
  const button = document.querySelector("[data-nav-toggle]");
  const links = document.getElementById("site-nav");
  const fold = (folded) => {
    if (!button || !links) return;
    links.toggleAttribute("data-folded", folded);
    button.setAttribute("aria-expanded", String(!folded));
  };
  fold(narrow.matches);
  narrow.addEventListener("change", (event) => fold(event.matches));
  if (button) button.addEventListener("click", () => fold(!links.hasAttribute("data-folded")));
  const closePanels = (except) => {
    document.querySelectorAll("header details[open]").forEach((d) => { if (d !== except) d.open = false; });
  };
  document.addEventListener("click", (event) => closePanels(event.target.closest("header details")));
  document.addEventListener("keydown", (event) => { if (event.key === "Escape") closePanels(null); });
})();
