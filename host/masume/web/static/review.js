// masume review client, shared by the table's page (app.js) and the club's (club.html):
// a finished game read again by the computer (masume.play.review). POST /api/review
// starts it on the server (or finds it made already), GET /api/review/ID says how far
// it is and, once done, its comments. The page steps through the game (first, back,
// on, last; the arrow keys, Home, End; the slider where the page has one; the list of
// comments), each position as everyone saw it, and at a mistake says the computer's
// comment and lights the better action: where a piece leaves, where it goes.
// Each page draws the board its own way: `changed` is its one call to draw it again,
// reading `shown()` (the position and the better action's squares).
"use strict";

window.masumeReview = (() => {
  const POLL_MS = 500;
  const $ = (id) => document.getElementById(id);

  // hooks: changed() draws the page again (its board, then draw() here);
  // post(path, body): the page's JSON POST (resolves to the answer, throws its error);
  // started(answer): what POST /api/review answered (optional);
  // api(path): the page's address for a GET (default: as it is);
  // explain(action): an action's notation in words (default: none);
  // chip(side): an element naming a side (default: none);
  // sideText(side): the words before an action (default "SIDE: ");
  // litNote: said after a mistake's comment (default: nothing).
  function create(hooks) {
    const api = hooks.api || ((path) => path);
    const chip = hooks.chip || (() => null);
    const sideText = hooks.sideText || ((side) => `${side}: `);
    const litNote = hooks.litNote || "";
    let review = null;  // {id, data, at}: the review open on the page
    let timer = null;

    function step() {
      const steps = review && review.data && review.data.steps;
      return steps && steps.length ? steps[review.at] : null;
    }

    function mistake() {
      const mistakes = (review && review.data && review.data.mistakes) || [];
      return mistakes.find((m) => m.index === review.at) || null;
    }

    // The position shown (its step, at, of last), the mistake there and its better
    // action's squares ({square: "path" | "take" | "put"}), or null when none is open.
    function shown() {
      const current = step();
      if (!current) return null;
      const m = mistake(), better = {};
      if (m) {
        for (const [kind, squares] of [["path", m.path], ["take", m.take], ["put", m.put]]) {
          for (const square of squares) better[square] = kind;
        }
      }
      return { step: current, at: review.at, last: review.data.steps.length - 1, mistake: m, better };
    }

    function refuse(message) {
      const progress = $("review-progress");
      progress.dataset.status = "refused";
      progress.textContent = `no review: ${message}`;
    }

    // A response's JSON body, or its error thrown.
    async function answer(res) {
      const data = await res.json().catch(() => ({}));
      if (!res.ok) throw new Error(data.error || `${res.status} ${res.statusText}`);
      return data;
    }

    // body: what POST /api/review takes; its answer goes to hooks.started, if any.
    async function start(body) {
      const progress = $("review-progress");
      progress.textContent = "asking the computer\u2026";
      delete progress.dataset.status;
      let data;
      try {
        data = await hooks.post("/api/review", body || {});
      } catch (err) {
        hooks.changed();
        refuse(err.message || err);
        return;
      }
      if (hooks.started) hooks.started(data);
      review = { id: data.id, data: null, at: 0 };
      fetchReview(true);
    }

    async function fetchReview(full) {
      const id = review && review.id;
      if (!id) return;
      let data;
      try {
        data = await answer(await fetch(api(`/api/review/${encodeURIComponent(id)}${full ? "" : "?steps=0"}`)));
      } catch (err) {
        if (review && review.id === id) review = null;
        hooks.changed();
        refuse(err.message || err);
        return;
      }
      if (!review || review.id !== id) return;  // closed meanwhile
      const steps = full ? data.steps : (review.data && review.data.steps);
      review.data = { ...data, steps: steps || [] };
      review.at = Math.min(review.at, Math.max(0, review.data.steps.length - 1));
      hooks.changed();
      clearTimeout(timer);
      if (data.status === "queued" || data.status === "running") {
        timer = setTimeout(() => fetchReview(false), POLL_MS);
      }
    }

    function go(at) {
      if (!step()) return;
      review.at = Math.max(0, Math.min(review.data.steps.length - 1, at));
      hooks.changed();
    }

    function close() {
      clearTimeout(timer);
      review = null;
      const progress = $("review-progress");
      progress.textContent = "";
      delete progress.dataset.status;
      hooks.changed();
    }

    // The review's words and controls: its progress, where it is, the comment there,
    // the list of comments.
    function draw() {
      const data = review && review.data;
      const current = step();
      $("review-nav").hidden = !current;
      const at = $("review-at"), comment = $("review-comment"), list = $("review-mistakes");
      at.textContent = "";
      comment.textContent = "";
      if (!data) { list.textContent = ""; delete list.dataset.sig; return; }
      const progress = $("review-progress");
      progress.textContent = "";
      progress.dataset.status = data.status;
      if (data.status === "queued" || data.status === "running") {
        progress.append(`the computer is reading the game: ${data.done} of ${data.total} actions`);
        const bar = document.createElement("progress");
        bar.max = Math.max(1, data.total);
        bar.value = data.done;
        bar.setAttribute("aria-label", "the review's progress");
        progress.appendChild(bar);
      } else if (data.status === "failed") {
        progress.textContent = `the review failed: ${data.error}`;
      } else {
        const n = (data.mistakes || []).length;
        progress.textContent = n ? `${n} comment${n > 1 ? "s" : ""}, the worst first (${data.outcome})`
          : `no mistakes the computer is sure of (${data.outcome})`;
      }
      if (!current) { list.textContent = ""; delete list.dataset.sig; return; }
      const last = data.steps.length - 1;
      const slider = $("review-slider");
      if (slider) {
        slider.max = last;
        slider.value = review.at;
      }
      $("review-first").disabled = $("review-prev").disabled = review.at === 0;
      $("review-next").disabled = $("review-last").disabled = review.at === last;
      at.dataset.at = String(review.at);
      at.append(`after action ${review.at} of ${last}`);
      if (current.played != null) {
        at.append(" \u00b7 next: ");
        if (current.side) at.append(...[chip(current.side), sideText(current.side)].filter(Boolean));
        else at.append("chance: ");
        const action = document.createElement("span");
        action.className = "action";
        action.textContent = current.played;
        if (hooks.explain) action.title = hooks.explain(current.played);
        at.appendChild(action);
      } else {
        at.append(" \u00b7 the end");
      }
      const m = mistake();
      if (m) {
        comment.dataset.index = String(m.index);
        comment.append(...[chip(m.side), m.comment + litNote].filter(Boolean));
      } else {
        delete comment.dataset.index;
      }
      const sig = JSON.stringify([data.id, data.mistakes, review.at]);
      if (list.dataset.sig === sig) return;
      list.dataset.sig = sig;
      list.textContent = "";
      for (const x of data.mistakes || []) {
        const li = document.createElement("li");
        const b = document.createElement("button");
        b.type = "button";
        b.dataset.reviewIndex = String(x.index);
        b.setAttribute("aria-current", x.index === review.at ? "true" : "false");
        b.append(...[chip(x.side), `action ${x.index + 1}: ${x.comment}`].filter(Boolean));
        li.appendChild(b);
        list.appendChild(li);
      }
    }

    $("review-first").addEventListener("click", () => go(0));
    $("review-prev").addEventListener("click", () => go(review.at - 1));
    $("review-next").addEventListener("click", () => go(review.at + 1));
    $("review-last").addEventListener("click", () => go(Infinity));
    if ($("review-slider")) $("review-slider").addEventListener("input", (ev) => go(Number(ev.target.value)));
    $("review-mistakes").addEventListener("click", (ev) => {
      const b = ev.target.closest("[data-review-index]");
      if (b) go(Number(b.dataset.reviewIndex));
    });
    document.addEventListener("keydown", (ev) => {
      if (!step() || ev.altKey || ev.ctrlKey || ev.metaKey) return;
      if (ev.target.closest && ev.target.closest("input, select, textarea, [contenteditable]")) return;
      const to = { ArrowLeft: review.at - 1, ArrowRight: review.at + 1, Home: 0, End: Infinity }[ev.key];
      if (to === undefined) return;
      ev.preventDefault();
      go(to);
    });

    return { start, close, step, shown, draw, get open() { return !!review; } };
  }

  return { create };
})();
