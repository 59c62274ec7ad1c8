// The console's only script (no per-page JavaScript; pages work without it).
// - Controls marked data-autosubmit submit their form on change (the language switch).
// - "/" focuses the owner lookup box in the header, the on-call engineer's shortcut.
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
