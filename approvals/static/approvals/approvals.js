// Approvers' keyboard shortcuts (the pages work without this script; every action is a real button).
//   j / k   next / previous request in the queue        o or Enter   open the focused request
//   a       approve the focused request (queue) or this request (detail page); a tier-high or ungated request
//           first asks: the button turns into "Press Enter to approve <tool> for <patient>", Enter (or a click)
//           approves, Escape or any other key cancels. One stray keystroke never approves a prescription.
//
// No undo window after a decision: the runtime long-polls the request and consumes an approval the moment it is
// decided, so an "undo" shown for a few seconds would promise what the system cannot keep. Holding consumption
// back for a window would slow every approval, including the urgent ones; the confirmation comes before instead.
//   r       reject: focuses the reason first when it is empty; Enter in the reason field then rejects
(() => {
  const rows = () => Array.from(document.querySelectorAll("[data-request-row]"));
  const scope = (el) => (el && el.closest("[data-request-row]")) || document.querySelector("[data-request-detail]");
  const disarm = (button) => {
    if (!button.classList.contains("confirming")) return;
    button.textContent = button.dataset.label;
    button.classList.remove("confirming");
  };
  const arm = (button) => {
    button.dataset.label = button.textContent;
    button.textContent = `${button.dataset.confirm} · ${button.dataset.confirmHint || "Esc"}`;
    button.classList.add("confirming");
    button.addEventListener("blur", () => disarm(button), { once: true });
    button.focus();
  };
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const armed = document.querySelector("button.confirming");
    if (armed) {
      // Enter on the armed button is the button's own click (the deliberate second step): let it through.
      if (event.key === "Enter" && document.activeElement === armed) return;
      event.preventDefault();
      if (event.key === "Escape" || event.key !== "a") disarm(armed);
      return;
    }
    const typing = event.target.closest("input, textarea, select, [contenteditable]");
    if (typing) {
      // Enter in a reason field rejects with that reason (the form's implicit submit is disabled on purpose,
      // so Enter never approves by accident).
      if (event.key === "Enter" && typing.matches("input[name=reason]") && typing.value.trim()) {
        const reject = scope(typing)?.querySelector("button[value=reject]");
        if (reject) { event.preventDefault(); reject.click(); }
      }
      return;
    }
    const all = rows();
    const current = scope(document.activeElement);
    if (event.key === "j" || event.key === "k") {
      if (!all.length) return;
      const at = all.indexOf(document.activeElement.closest("[data-request-row]"));
      const next = event.key === "j" ? Math.min(at + 1, all.length - 1) : Math.max(at - 1, 0);
      all[at < 0 ? 0 : next].focus();
      event.preventDefault();
    } else if ((event.key === "o" || event.key === "Enter") && current && current.matches("[data-request-row]")) {
      const link = current.querySelector("a[data-open]");
      if (link) { link.click(); event.preventDefault(); }
    } else if (event.key === "a" && current) {
      const approve = current.querySelector("button[value=approve]");
      if (approve && approve.dataset.confirm) { arm(approve); event.preventDefault(); }
      else if (approve) { approve.click(); event.preventDefault(); }
    } else if (event.key === "r" && current) {
      const reason = current.querySelector("input[name=reason]");
      const reject = current.querySelector("button[value=reject]");
      if (reason && !reason.value.trim()) { reason.focus(); event.preventDefault(); }
      else if (reject) { reject.click(); event.preventDefault(); }
    }
  });
})();
