// memtrove console: the change buttons (pin, snooze, forget, restore, confidence, type)
// and their answers.
// Every change is a same-origin JSON POST carrying the page's CSRF token.
"use strict";

(function () {
  const token = document.querySelector('meta[name="csrf-token"]').content;

  function toast(text, failed) {
    const box = document.getElementById("toast");
    box.textContent = text;
    box.className = failed ? "shown failed" : "shown";
  }

  async function act(button) {
    const holder = button.closest("[data-ref]");
    const ref = button.dataset.ref || (holder && holder.dataset.ref);
    if (!ref) return;
    if (button.dataset.confirm && !window.confirm(button.dataset.confirm)) return;
    const body = { ref: ref };
    if (button.dataset.days) body.days = Number(button.dataset.days);
    // confidence, type: the value of the control the button names, under the action's name
    // (a number field's number; an empty one is NaN, sent as null and refused).
    const input = button.dataset.input && document.getElementById(button.dataset.input);
    if (input) body[button.dataset.action] = input.type === "number" ? input.valueAsNumber : input.value;
    if (button.dataset.other) body.other = button.dataset.other; // a duplicate pair's verdict
    if (button.dataset.store) body.store = button.dataset.store;
    button.disabled = true;
    try {
      const answer = await fetch("/ui/actions/" + encodeURIComponent(button.dataset.action), {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": token },
        body: JSON.stringify(body),
        credentials: "same-origin",
      });
      const data = await answer.json();
      if (!answer.ok) {
        toast(data.error || "failed", true);
        return;
      }
      toast(button.dataset.action + ": done", false);
      if (holder && holder.classList.contains("document")) window.location.reload();
    } catch (error) {
      toast("the server did not answer: " + error, true);
    } finally {
      button.disabled = false;
    }
  }

  const login = document.getElementById("login");
  if (login) {
    login.addEventListener("submit", async function (event) {
      event.preventDefault();
      const answer = await fetch("/ui/login", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ token: document.getElementById("token").value }),
        credentials: "same-origin",
      });
      if (answer.ok) window.location.href = "/";
      else document.getElementById("login-error").textContent = "Wrong token.";
    });
  }

  // "Why this score": the legs and signals of every result of a list (a search page, or
  // one prompt of a session's audit), fetched once, when one of them is first opened.
  const explained = new WeakSet();

  function cell(row, text, tag, span) {
    const node = document.createElement(tag || "td");
    node.textContent = text;
    if (span) node.colSpan = span;
    row.appendChild(node);
  }

  function fill(details, why) {
    const legs = details.querySelector("table.legs");
    const anchor = legs.querySelector("tr.leg");
    for (const leg of why.legs) {
      const row = document.createElement("tr");
      row.className = "leg";
      cell(row, leg.name, "th");
      row.firstChild.scope = "row";
      if (leg.score === null) cell(row, leg.note, "td", 2);
      else { cell(row, leg.score.toFixed(4)); cell(row, String(leg.rank)); }
      if (anchor) anchor.parentNode.insertBefore(row, anchor);
      else legs.appendChild(row);
    }
    const signals = details.querySelector("table.signals");
    for (const [name, value] of why.signals) {
      const row = document.createElement("tr");
      cell(row, name, "th");
      row.firstChild.scope = "row";
      cell(row, value);
      signals.appendChild(row);
    }
    details.dataset.filled = "true";
  }

  async function explainAll(box) {
    if (explained.has(box)) return;
    explained.add(box);
    const all = Array.from(box.querySelectorAll("details.explain"));
    const query = new URLSearchParams({
      q: box.dataset.q, method: box.dataset.method || "search",
      collection: box.dataset.collection || "", type: box.dataset.type || "",
      ids: all.map((d) => d.dataset.doc).join(","),
    });
    const answer = await fetch("/ui/explain.json?" + query.toString(), { credentials: "same-origin" });
    const data = answer.ok ? await answer.json() : {};
    for (const details of all) {
      const why = data[details.dataset.doc];
      if (why) fill(details, why);
    }
  }

  document.addEventListener("toggle", (event) => {
    const details = event.target;
    if (!details.matches || !details.matches("details.explain") || !details.open) return;
    const box = details.closest("[data-q]");
    if (box) explainAll(box);
  }, true);

  document.addEventListener("click", function (event) {
    const button = event.target.closest("button[data-action]");
    if (button) act(button);
  });
})();
