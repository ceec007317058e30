"""What a page must be for everyone (issue 16), measured in Chromium as it draws it.

- Text contrast (WCAG 2.2, 1.4.3): the contrast ratio of each visible text's colour
  with the background it is drawn on, both as computed (alpha and opacity composited
  over the backgrounds beneath), at least 4.5:1, or 3:1 for large text (24 px, or
  18.66 px bold). Disabled controls are exempt, as WCAG says.
- Pieces on the board (1.4.11, non-text contrast): a piece's rim (or, without one,
  its colour) against its square's, at least 3:1.
- Text cut off (1.4.4, 1.4.10: text stays whole, a 400 px page reflows): a text
  whose box hides its overflow (a zone's name on a card mat) shows all of it.
- Target size (2.5.8, minimum): everything a finger taps (buttons, links, fields,
  the board's squares on the simulated board) at least 24 x 24 CSS px.

Where an element paints a gradient, the colour it is measured by is its
``background-color`` (the page gives every gradient one, its middle tone).
"""

from __future__ import annotations

from typing import Any

CHECK_JS = r"""() => {
  const parse = (c) => {
    const m = c.match(/rgba?\(([^)]+)\)/);
    if (!m) return [0, 0, 0, 0];
    const v = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number);
    return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1];
  };
  const over = (top, under) => {  // top composited over an opaque colour
    const a = top[3];
    return [0, 1, 2].map((i) => top[i] * a + under[i] * (1 - a)).concat(1);
  };
  const lum = (c) => {
    const [r, g, b] = c.slice(0, 3).map((v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const ratio = (a, b) => {
    const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05);
  };
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    if (!r.width || !r.height) return false;
    const s = getComputedStyle(el);
    return s.visibility !== "hidden" && s.display !== "none";
  };
  const opacity = (el) => {
    let o = 1;
    for (let e = el; e; e = e.parentElement) o *= Number(getComputedStyle(e).opacity);
    return o;
  };
  // The opaque colour behind an element: its own background and its ancestors',
  // composited from the page up.
  const backdrop = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) layers.push(parse(getComputedStyle(e).backgroundColor));
    let colour = [255, 255, 255, 1];
    for (const layer of layers.reverse()) colour = over(layer, colour);
    return colour;
  };
  const name = (el) => {
    const what = el.id ? `#${el.id}` : el.dataset.cell ? `[data-cell=${el.dataset.cell}]`
      : el.className && typeof el.className === "string" ? `.${el.className.split(" ")[0]}` : el.tagName;
    return `${what} "${(el.textContent || el.value || el.title || "").trim().slice(0, 30)}"`;
  };
  const text = [], pieces = [], targets = [], cut = [];
  for (const el of document.querySelectorAll("body *")) {
    if (!visible(el) || el.closest(":disabled, [aria-disabled=true]")) continue;
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (own) {
      const s = getComputedStyle(el);
      const fg = parse(s.color);
      const bg = backdrop(el);
      fg[3] *= opacity(el);
      const r = ratio(over(fg, bg), bg);
      const size = parseFloat(s.fontSize), bold = Number(s.fontWeight) >= 700;
      const need = size >= 24 || (size >= 18.66 && bold) ? 3 : 4.5;
      if (s.overflow !== "visible" && (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1)) {
        cut.push(`${name(el)}: ${el.scrollWidth} x ${el.scrollHeight} px of text in ${el.clientWidth} x ${el.clientHeight}`);
      }
      if (r < need) text.push(`${name(el)}: ${r.toFixed(2)}:1 < ${need}:1 (${s.color} on rgb(${bg.slice(0, 3).map(Math.round)}))`);
    }
    if (el.matches(".cell .piece.top:not(.piece-ball)")) {
      // What meets the square: the piece's rim where it has one, else the piece.
      const s = getComputedStyle(el);
      const rim = s.outlineStyle !== "none" && parseFloat(s.outlineWidth) >= 1;
      const square = backdrop(el.closest(".cell"));
      const piece = rim ? over(parse(s.outlineColor), square) : backdrop(el);
      const r = ratio(piece, square);
      if (r < 3) pieces.push(`${el.dataset.piece} on ${el.closest(".cell").dataset.cell}: ${r.toFixed(2)}:1 < 3:1`);
    }
    if (el.matches("button, a[href], input, select, summary, .cell.clickable")) {
      const r = el.getBoundingClientRect();
      if (r.width < 24 || r.height < 24) targets.push(`${name(el)}: ${r.width.toFixed(0)} x ${r.height.toFixed(0)} px`);
    }
  }
  return { text, pieces, targets, cut };
}"""


def readability_problems(page: Any, where: str) -> list[str]:
    """What fails on ``page`` as it stands (one line each, ``where`` first)."""
    found = page.evaluate(CHECK_JS)
    return [f"{where}: {kind}: {line}" for kind in ("text", "pieces", "targets", "cut")
            for line in dict.fromkeys(found[kind])]
