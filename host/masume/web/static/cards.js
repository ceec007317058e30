// masume web view, card mats: what app.js draws for games that hide cards.
// The state carries `view` (the engine's TableView for this page's viewer: card
// labels per cell, the viewer's hand, the panel lines); this draws the labels on
// the mat's zones, a panel saying whose view it is (each player's own link shows
// their cards), the panel lines and the hand, and on the simulated mat a card picker: choose a
// card of the set, then a zone, and the simulated mat reads its tag there; click
// a zone that holds a card (with none chosen) to lift it off.
// Nothing in here knows a game: labels, viewers and cards come from the host.
"use strict";

window.masumeCards = (() => {
  const $ = (id) => document.getElementById(id);
  const MAX_BUTTONS = 24;
  let app = null;           // {post, showError, api} from app.js
  let state = null;
  let cardList = null;      // [{id, name, kind}] of the game's set, fetched once
  let picked = null;        // the copy id chosen in the picker
  let listSig = null;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function ensureDom() {
    if ($("cards-card")) return;
    const card = el("div", "card");
    card.id = "cards-card";
    card.innerHTML = '<div class="card-title">Cards <span class="hint" id="cards-viewer"></span></div>' +
      '<table id="cards-panel" class="cards-panel"></table>' +
      '<div class="card-title small-title">Hand</div><ul id="cards-hand" class="cards-hand"></ul>';
    const status = $("status-card");
    status.parentNode.insertBefore(card, status.nextSibling);
    const picker = el("div", "tray");
    picker.id = "card-picker";
    picker.innerHTML = '<div class="tray-title">Put a card down <span class="hint">' +
      '(choose a card, then click a zone; click a card on the mat to lift it)</span></div>' +
      '<input id="card-find" type="text" autocomplete="off" placeholder="find a card: id or words of its name" aria-label="find a card">' +
      '<div id="card-chosen" class="hint"></div><div id="card-list" class="card-list"></div>';
    const sim = $("sim-controls");
    sim.insertBefore(picker, sim.firstChild);
    $("card-find").addEventListener("input", drawList);
    $("card-list").addEventListener("click", (ev) => {
      const b = ev.target.closest("[data-card]");
      if (!b) return;
      picked = picked === b.dataset.card ? null : b.dataset.card;
      drawList();
    });
    fetch(app.api("/api/cards")).then((r) => r.json()).then((data) => {
      cardList = data.cards || [];
      listSig = null;
      drawList();
    }, () => {});
  }

  // ------------------------------------------------------------------ mat
  function drawLabels() {
    const labels = (state.view && state.view.cells) || {};
    for (const cell of document.querySelectorAll("#board [data-cell]")) {
      const name = cell.dataset.cell;
      let span = cell.querySelector(".card-text");
      const text = (labels[name] || []).join(" / ");
      if (!text) {
        if (span) span.remove();
        delete cell.dataset.card;
        continue;
      }
      if (!span) {
        span = el("span", "card-text");
        cell.appendChild(span);
      }
      span.textContent = text;
      cell.dataset.card = text;
      cell.classList.toggle("face-down", /face down/i.test(text));
    }
  }

  // Marks at the cells' edges (the half symbols printed on a card's edges): from
  // view.marks, cell -> compass point (n: toward +y) -> the mark's name, each drawn
  // as its glyph on that edge (a flipped board turns the compass round).
  const GLYPHS = { shot: "\u2299", defence: "\u25cb", link: "\u9023", press: "\u30d7", crack: "\u2612" };
  const TURNED = { n: "s", s: "n", e: "w", w: "e", c: "c" };
  function drawMarks() {
    const marks = (state.view && state.view.marks) || {};
    const flipped = app.flipped && app.flipped();
    for (const cell of document.querySelectorAll("#board [data-cell]")) {
      const edges = marks[cell.dataset.cell] || {};
      const sig = JSON.stringify([edges, flipped]);
      if (cell.dataset.marks === sig) continue;
      cell.dataset.marks = sig;
      for (const old of cell.querySelectorAll(".mark")) old.remove();
      for (const [edge, names] of Object.entries(edges)) {
        for (const name of String(names).split(" ")) {
          const m = el("span", `mark mark-${flipped ? TURNED[edge] : edge}`, GLYPHS[name] || name.slice(0, 2));
          m.dataset.mark = name;
          m.title = `${name} (half symbol on the card's edge${edge === "c" ? ", printed complete" : ""})`;
          cell.appendChild(m);
        }
      }
    }
  }

  // ---------------------------------------------------------------- panel
  function drawPanel() {
    const view = state.view;
    const me = view.viewer;
    $("cards-viewer").textContent = me ? `(as ${me})` : "(what everyone sees)";
    const table = $("cards-panel");
    table.textContent = "";
    for (const [name, value] of view.panel || []) {
      const tr = el("tr");
      tr.append(el("th", "", name), el("td", "", value));
      table.appendChild(tr);
    }
    const hand = $("cards-hand");
    hand.textContent = "";
    for (const label of view.hand || []) hand.appendChild(el("li", "", label));
    if (!(view.hand || []).length) {
      hand.appendChild(el("li", "empty", me ? "no cards in hand" : "no player's hand on this page"));
    }
  }

  // --------------------------------------------------------------- picker
  function handIds() {
    const ids = new Set();
    for (const label of (state.view && state.view.hand) || []) ids.add(label.split(/\s+/)[0]);
    return ids;
  }

  function drawList() {
    if (!state || !cardList) return;
    const words = $("card-find").value.toLowerCase().split(/\s+/).filter(Boolean);
    const hand = handIds();
    const sig = JSON.stringify([words, [...hand], picked, cardList.length]);
    if (sig === listSig) return;
    listSig = sig;
    const matching = cardList.filter((c) => {
      const text = `${c.id} ${c.name} ${c.kind}`.toLowerCase();
      return words.every((w) => text.includes(w));
    });
    // The viewer's own hand first, then the rest of the set.
    matching.sort((a, b) => (hand.has(b.id) ? 1 : 0) - (hand.has(a.id) ? 1 : 0));
    const box = $("card-list");
    box.textContent = "";
    for (const c of matching.slice(0, MAX_BUTTONS)) {
      const b = el("button", "card-choice" + (hand.has(c.id) ? " in-hand" : "") +
                   (picked === c.id ? " selected" : ""), `${c.id} ${c.name}`);
      b.type = "button";
      b.dataset.card = c.id;
      b.title = `${c.name} (${c.kind})`;
      b.setAttribute("aria-pressed", picked === c.id ? "true" : "false");
      box.appendChild(b);
    }
    if (matching.length > MAX_BUTTONS) {
      box.appendChild(el("span", "hint", `${matching.length - MAX_BUTTONS} more: type to narrow the list`));
    }
    const chosen = cardList.find((c) => c.id === picked);
    $("card-chosen").textContent = chosen ? `chosen: ${chosen.id} ${chosen.name}: click a zone` : "";
    document.body.classList.toggle("holding", !!chosen);
  }

  // ---------------------------------------------------------------- hooks
  function render(next, api) {
    state = next;
    app = api;
    const on = !!state.view;
    document.body.classList.toggle("card-mat", on);
    if (!on) {
      if ($("cards-card")) $("cards-card").hidden = true;
      if ($("card-picker")) $("card-picker").hidden = true;
      return;
    }
    ensureDom();
    $("cards-card").hidden = false;
    $("card-picker").hidden = !state.simulated;
    drawLabels();
    drawMarks();
    drawPanel();
    drawList();
  }

  // A click on a zone of the mat: put the chosen card there, or lift what lies
  // there. True when the click was a card mat's (app.js then does nothing more).
  function click(name) {
    if (!state || !state.view || !state.simulated || !app) return false;
    const def = (state.board.cells || []).find((c) => c.name === name);
    if (!def || def.sensor !== "card") return false;
    if (picked) {
      const card = picked;
      app.post("/api/sim/card", { square: name, card }).then(() => {
        picked = null;
        $("card-find").value = "";
        listSig = null;
        drawList();
      }, () => {});
    } else if (((state.pieces || {})[name] || []).length) {
      app.post("/api/sim/lift", { square: name }).catch(() => {});
    }
    return true;
  }

  return { render, click };
})();
