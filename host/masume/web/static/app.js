// masume web view: draws the physical board from its definition and the table's
// state (pushed by the host over Server-Sent Events), and on the simulated board
// turns clicks into lifts, placements and button presses through /api/sim/*.
// Choices (actions the sensors cannot see) go to /api/act on any board.
// The page opens from a printed link (?token=): it asks the host its role (the
// table, a player, a spectator: read only), then names it on every request (?as=).
// The picture changes only from state pushes: it shows what the host knows.
// Nothing in here knows any game: cells, pieces, buttons and zones all come
// from the board definition in the state.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);

  // ---------------------------------------------------------------- colours
  // A piece's side is the word before its first "-" ("blue-rest" -> "blue",
  // "sente-king" -> "sente", "home-10" -> "home"). A side of the game has the colour
  // its legend gives it (state.sides); other words: colour words as they are, any
  // other word a colour of its own from a hash of it.
  const COLOUR_WORDS = {
    blue: "#2563eb", red: "#dc2626", green: "#15803d", yellow: "#ca8a04",
    orange: "#ea580c", purple: "#7c3aed", pink: "#db2777", black: "#1f2937",
    white: "#e5e7eb", grey: "#6b7280", gray: "#6b7280", brown: "#92400e",
    cyan: "#0891b2", teal: "#0f766e", gold: "#b45309", silver: "#94a3b8",
  };

  function hash(text) {
    let h = 2166136261;
    for (let i = 0; i < text.length; i++) {
      h ^= text.charCodeAt(i);
      h = Math.imul(h, 16777619);
    }
    return h >>> 0;
  }

  function sideOf(name) {
    const dash = name.indexOf("-");
    return (dash > 0 ? name.slice(0, dash) : name).toLowerCase();
  }

  function sideColour(side) {
    side = String(side).toLowerCase();
    const legend = state && state.sides && state.sides[side];
    if (legend) return `rgb(${legend.join(", ")})`;
    if (COLOUR_WORDS[side]) return COLOUR_WORDS[side];
    const h = hash(side);
    return `hsl(${h % 360}, ${55 + (h >> 9) % 20}%, ${38 + (h >> 17) % 10}%)`;
  }

  // Relative luminance (WCAG) of any CSS colour, read back through a canvas.
  const paint = document.createElement("canvas").getContext("2d");
  function luminance(colour) {
    paint.fillStyle = "#000";
    paint.fillStyle = colour;
    const hexed = paint.fillStyle;  // "#rrggbb" for an opaque colour
    const [r, g, b] = [1, 3, 5].map((i) => {
      const v = parseInt(hexed.slice(i, i + 2), 16) / 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  }

  function pieceKind(name) {
    if (name === "?") return "unknown";
    if (name.startsWith("tag:") || name === "card") return "card";
    if (name === "ball" || name.endsWith("-ball")) return "ball";
    if (name.endsWith("-rest")) return "rest";
    return "token";
  }

  // Short labels: the words after the side, abbreviated to the shortest prefix
  // that is unique among the board's pieces ("king", "knight" -> "Ki", "Kn").
  let labelOf = new Map();

  function pieceWord(name) {
    let rest = name.endsWith("-rest") ? name.slice(0, -5) : name;
    const dash = rest.indexOf("-");
    return dash > 0 ? rest.slice(dash + 1) : "";
  }

  function makeLabels(pieces) {
    labelOf = new Map();
    const words = [...new Set(pieces.map(pieceWord).filter((w) => w && !/^\d+$/.test(w)))];
    for (const word of words) {
      let n = 1;
      while (n < word.length && words.some((o) => o !== word && o.startsWith(word.slice(0, n)))) n++;
      labelOf.set(word, word[0].toUpperCase() + word.slice(1, n));
    }
  }

  function pieceLabel(name) {
    const kind = pieceKind(name);
    if (kind === "unknown") return "?";
    if (kind === "ball") return "";
    if (kind === "card") {
      const tag = name.slice(4);
      return tag.length > 6 ? "\u2026" + tag.slice(-4) : tag;
    }
    const word = pieceWord(name);
    if (word) return labelOf.get(word) || word.slice(0, 3);
    // A one-word name: a colour word needs no label; any other word gets its start.
    return COLOUR_WORDS[sideOf(name)] ? "" : name.slice(0, 2);
  }

  function pieceElement(name) {
    const el = document.createElement("span");
    const kind = pieceKind(name);
    el.className = `piece piece-${kind}`;
    el.dataset.piece = name;
    el.title = name === "?" ? "a piece (this board only senses that the square is occupied)" : name;
    if (kind !== "ball" && kind !== "unknown" && kind !== "card") {
      const colour = sideColour(sideOf(name));
      el.style.setProperty("--c", colour);
      // The label in white or in ink, whichever reads better on the piece (4.5:1).
      if (luminance(colour) > 0.18) {
        el.classList.add("light");
        el.style.setProperty("--ink-on", "#111");
      }
    }
    const label = pieceLabel(name);
    if (label) {
      const text = document.createElement("span");
      text.className = "piece-label";
      text.textContent = label;
      el.appendChild(text);
    }
    return el;
  }

  // ----------------------------------------------------------------- state
  let state = null;
  let drawn = null;           // the board id and side the cells were drawn for
  let cells = new Map();      // cell name -> {el, def, stack, sig}
  let buttonsDrawn = null;
  let movesSig = null;
  let flipped = localStorage.getItem("masume-flipped") === "1";
  let hand = [];              // piece names held by the person at the simulated table
  let selected = -1;          // index in hand of the piece to put down next
  let handKey = null;
  let handDrawn = null;       // what the hand's buttons show (drawHand redraws on a change)

  // The hands of the simulated board: for anyone but a spectator.
  function simulated() {
    return !!(state && state.simulated) && access.can_act;
  }

  // ----------------------------------------------------------------- board
  function drawBoard(board) {
    const el = $("board");
    el.textContent = "";
    cells = new Map();
    const defs = board.cells || [];
    const xs = defs.length ? defs.map((c) => c.x) : [0], ys = defs.length ? defs.map((c) => c.y) : [0];
    const pad = 0.2;
    const minX = Math.min(...xs) - pad, maxX = Math.max(...xs) + 1 + pad;
    const minY = Math.min(...ys) - pad, maxY = Math.max(...ys) + 1 + pad;
    const w = maxX - minX, h = maxY - minY;
    el.style.setProperty("--cols", w);
    el.style.setProperty("--rows", h);
    el.style.aspectRatio = `${w} / ${h}`;
    el.dataset.board = board.id || "";
    el.classList.toggle("mat", defs.some((c) => c.sensor === "card"));
    const edges = edgeCoordinates(defs);
    el.classList.toggle("edge-coords", edges.size > 0);
    for (const def of defs) {
      const lamp = def.sensor === "none";
      const c = document.createElement("div");
      c.className = lamp ? "lamp" : "cell";
      c.dataset.cell = def.name;
      c.dataset.zone = def.zone || "";
      c.dataset.sensor = def.sensor || "";
      if (def.zone) c.classList.add(`zone-${def.zone.replace(/[^\w-]/g, "_")}`);
      if (!lamp && Math.floor(def.y) % 2 === 0) c.classList.add("stripe");
      // Cells are unit squares with (x, y) at their lower-left corner, y up; a
      // lamp is a round light in the middle of its unit, smaller when lamps sit
      // closer together than a unit (die pips).
      const size = lamp ? lampSize(def, defs) : 1;
      const off = (1 - size) / 2;
      const left = (flipped ? maxX - def.x - 1 : def.x - minX) + off;
      const bottom = (flipped ? maxY - def.y - 1 : def.y - minY) + off;
      c.style.left = `${(left / w) * 100}%`;
      c.style.bottom = `${(bottom / h) * 100}%`;
      c.style.width = `${(size / w) * 100}%`;
      c.style.height = `${(size / h) * 100}%`;
      c.title = def.name;
      const glow = document.createElement("span");
      glow.className = "glow";
      c.appendChild(glow);
      let stack = null;
      if (!lamp) {
        c.setAttribute("role", "gridcell");
        const label = document.createElement("span");
        label.className = "cell-name";
        label.textContent = def.name;
        c.appendChild(label);
        // A square off the grid (a goal mouth) keeps its name on a phone too.
        if (edges.size && !coordinateParts(def.name)) label.classList.add("own");
        const edge = edges.get(def.name);
        for (const [part, word] of [["rank", edge && edge.rank], ["file", edge && edge.file]]) {
          if (!word) continue;
          const e = document.createElement("span");
          e.className = `coord coord-${part}`;
          e.textContent = word;
          c.appendChild(e);
        }
        stack = document.createElement("span");
        stack.className = "stack";
        c.appendChild(stack);
      }
      el.appendChild(c);
      cells.set(def.name, { el: c, def, stack, sig: "" });
    }
    resizeBoard();
  }

  // Coordinates along the edges, as a chess app draws them on a phone: on a grid
  // whose squares are named file + rank ("G8", "5-K") with one file to a column and
  // one rank to a row, the ranks in the board's left column and the files in its
  // bottom row, as the board is seen (flipped or not). Shown instead of every
  // square's name when the squares are small (#board.small); a square named
  // otherwise (a goal mouth) keeps its name. Empty (names in every square) for a
  // board whose names are no such grid.
  function coordinateParts(name) {
    let m = /^([A-Za-z]+)(\d+)$/.exec(name);
    if (m) return { file: m[1], rank: m[2] };
    m = /^(\d+)-([A-Za-z]+)$/.exec(name);
    return m ? { file: m[1], rank: m[2] } : null;
  }

  function edgeCoordinates(defs) {
    const squares = defs.filter((d) => d.sensor !== "none" && d.sensor !== "card" && coordinateParts(d.name));
    const fileAt = new Map(), rankAt = new Map(), parts = new Map();
    for (const d of squares) {
      const p = coordinateParts(d.name);
      if ((fileAt.get(d.x) ?? p.file) !== p.file || (rankAt.get(d.y) ?? p.rank) !== p.rank) return new Map();
      fileAt.set(d.x, p.file);
      rankAt.set(d.y, p.rank);
      parts.set(d.name, p);
    }
    // The edges: the lowest row that spans at least half the files and the leftmost
    // column that spans half the ranks (not a goal mouth's few squares beyond them);
    // a file or rank off those edges is labelled in its own outermost square.
    const seen = (v) => (flipped ? -v : v);
    const count = (key) => squares.reduce((m, d) => m.set(d[key], (m.get(d[key]) || 0) + 1), new Map());
    const perRow = count("y"), perColumn = count("x");
    const edgeOf = (counts, across) => Math.min(...[...counts].filter(([, n]) => 2 * n >= across)
      .map(([v]) => seen(v)));
    const bottomRow = edgeOf(perRow, fileAt.size), leftColumn = edgeOf(perColumn, rankAt.size);
    // Is a further out than b: on the edge first, else lower (or further left).
    const outer = (a, b, edge) => (seen(a) === edge) !== (seen(b) === edge)
      ? seen(a) === edge : seen(a) < seen(b);
    const bottom = new Map(), left = new Map();
    for (const d of squares) {
      if (!bottom.has(d.x) || outer(d.y, bottom.get(d.x).y, bottomRow)) bottom.set(d.x, d);
      if (!left.has(d.y) || outer(d.x, left.get(d.y).x, leftColumn)) left.set(d.y, d);
    }
    const edges = new Map();
    for (const d of squares) {
      const file = bottom.get(d.x) === d ? parts.get(d.name).file : "";
      const rank = left.get(d.y) === d ? parts.get(d.name).rank : "";
      if (file || rank) edges.set(d.name, { file, rank });
    }
    return edges;
  }

  function lampSize(def, defs) {
    let near = 1;
    for (const o of defs) {
      if (o === def) continue;
      const d = Math.max(Math.abs(o.x - def.x), Math.abs(o.y - def.y));
      if (d > 0 && d < near) near = d;
    }
    return Math.min(0.56, near * 0.8);
  }

  function resizeBoard() {
    const el = $("board");
    const w = parseFloat(el.style.getPropertyValue("--cols")) || 1;
    const h = parseFloat(el.style.getPropertyValue("--rows")) || 1;
    // As wide as the column allows, but no taller than the window (leaving room
    // for the header, the tracker line and, on the simulated board, the trays).
    const reserve = simulated() ? 13 : 7.5;
    el.style.width = `min(100%, calc((100svh - ${reserve}rem) * ${w / h}))`;
    setUnit();
  }

  function setUnit() {
    const el = $("board");
    const w = parseFloat(el.style.getPropertyValue("--cols")) || 1;
    const unit = el.clientWidth / w;
    el.style.setProperty("--u", `${unit}px`);
    el.classList.toggle("small", unit < 38);
  }
  window.addEventListener("resize", resizeBoard);

  function hex(rgb) {
    return "#" + rgb.map((v) => Math.max(0, Math.min(255, v | 0)).toString(16).padStart(2, "0")).join("");
  }

  function drawStack(cell, pieces) {
    const sig = pieces.join("\u0000");
    if (sig === cell.sig) return;
    cell.sig = sig;
    const stack = cell.stack;
    stack.textContent = "";
    cell.el.dataset.pieces = pieces.join(" ");
    cell.el.classList.toggle("occupied", pieces.length > 0);
    pieces.forEach((name, i) => {
      const p = pieceElement(name);
      const top = i === pieces.length - 1;
      p.classList.add(top ? "top" : "under");
      p.style.setProperty("--depth", String(pieces.length - 1 - i));
      stack.appendChild(p);
    });
    if (pieces.length > 2) {
      const count = document.createElement("span");
      count.className = "count";
      count.textContent = String(pieces.length);
      stack.appendChild(count);
    }
  }

  function drawCells() {
    // A review shows its position and its better action instead of the table's.
    const shown = reviewShown();
    const pieces = shown ? shown.pieces : (state.pieces || {});
    const leds = shown ? shown.leds : (state.leds || {});
    const flagged = new Set(shown ? [] : ((state.tracker && state.tracker.squares) || []));
    for (const [name, cell] of cells) {
      const better = shown && shown.better[name];
      if (better) cell.el.dataset.better = better;
      else delete cell.el.dataset.better;
      if (cell.stack) drawStack(cell, pieces[name] || []);
      const led = leds[name];
      const el = cell.el;
      if (led && Array.isArray(led.rgb) && led.rgb.some((v) => v > 0)) {
        // data-led is the colour the host sent; the glow is that hue at full
        // brightness, as strong as the LED is bright (a dim LED is a faint light,
        // not a dark patch).
        const colour = hex(led.rgb);
        const peak = Math.max(...led.rgb);
        el.dataset.led = colour;
        el.dataset.pattern = led.pattern || "steady";
        el.style.setProperty("--led", hex(led.rgb.map((v) => (v * 255) / peak)));
        el.style.setProperty("--led-a", (0.4 + 0.6 * Math.min(1, peak / 255)).toFixed(3));
      } else if (el.dataset.led) {
        delete el.dataset.led;
        delete el.dataset.pattern;
        el.style.removeProperty("--led");
        el.style.removeProperty("--led-a");
      }
      el.classList.toggle("flagged", flagged.has(name));
      const hands = simulated() && !!cell.stack && !shown;
      el.classList.toggle("clickable", hands);
      if (hands) el.tabIndex = 0; else el.removeAttribute("tabindex");
    }
  }

  // ----------------------------------------------------------------- panel
  function chip(side) {
    const i = document.createElement("i");
    i.className = "chip";
    i.style.setProperty("--c", sideColour(side));
    return i;
  }

  function text(value) {
    if (value === null || value === undefined) return "";
    if (typeof value === "string") return value;
    if (typeof value === "number" || typeof value === "boolean") return String(value);
    if (Array.isArray(value)) return value.map(text).join(", ");
    return Object.entries(value).map(([k, v]) => `${k}: ${text(v)}`).join(", ");
  }

  const TRACKER_TEXT = {
    lifted: "a piece is lifted",
    remove: "take off the pieces the last action removed",
    mismatch: "the board does not match the game",
    ambiguous: "more than one action fits: go on, or take back",
    follow: "move the pieces as the lights show",
    setup: "set up the pieces",
    "game-over": "game over",
  };

  // The tracker's line is above the board: were it to shrink when a shorter message
  // comes (a piece lifted after a long "to put it right ..."), the board would jump
  // up under a finger on its way to the next square, and a tap whose press and
  // release fall on two squares is a click on no square. So the box keeps the
  // tallest height it has had at this width; a longer message still makes it grow.
  let trackerWidth = -1, trackerTallest = 0;
  function keepTrackerHeight(tr) {
    if (tr.clientWidth !== trackerWidth) {  // a new width (turned, resized): measured anew
      trackerWidth = tr.clientWidth;
      trackerTallest = 0;
      tr.style.minHeight = "";
    }
    const height = tr.offsetHeight;
    if (height > trackerTallest) {
      trackerTallest = height;
      tr.style.minHeight = `${height}px`;
    }
  }

  function drawPanel() {
    const board = state.board || {};
    const status = state.status || {};
    $("title").textContent = board.title || state.game || "";
    document.title = `masume \u2013 ${state.game || board.id || ""}`;

    const turn = $("turn");
    turn.textContent = "";
    if (state.outcome != null) {
      turn.textContent = "nobody: the game is over";  // no one moves after the end
    } else if (status.to_move) {
      turn.dataset.side = status.to_move;
      turn.append(chip(status.to_move), document.createTextNode(` ${status.to_move}`));
      if (status.actions_per_turn > 1 && status.action_number) {
        const a = document.createElement("span");
        a.className = "action-number";
        a.textContent = ` \u00b7 action ${status.action_number} of ${status.actions_per_turn}`;
        turn.appendChild(a);
      }
      if (status.deciding && status.deciding !== status.to_move) {
        // The other side's player makes this choice (a kick's receiver).
        const d = document.createElement("span");
        d.className = "deciding";
        d.append(document.createTextNode(" \u00b7 "), chip(status.deciding),
                 document.createTextNode(` ${status.deciding} decides`));
        turn.appendChild(d);
      }
    } else {
      delete turn.dataset.side;
      turn.textContent = "\u2013";
    }

    // What the score counts, as the game says it ("cards left in deck").
    const scoreLabel = state.score_label || "score";
    $("score-label").textContent = scoreLabel;
    const score = $("score");
    score.textContent = "";
    const entries = status.score && typeof status.score === "object" ? Object.entries(status.score) : [];
    if (!entries.length) score.textContent = status.score != null ? text(status.score) : "\u2013";
    entries.forEach(([side, n], i) => {
      if (i) score.appendChild(document.createTextNode(" \u2013 "));
      const s = document.createElement("span");
      s.className = "score-side";
      s.dataset.side = side;
      const b = document.createElement("b");
      b.textContent = text(n);
      s.append(chip(side), document.createTextNode(`${side} `), b);
      score.appendChild(s);
    });

    $("message").textContent = text(status.message);
    const awaiting = $("awaiting");
    awaiting.hidden = status.awaiting == null;
    awaiting.textContent = status.awaiting == null ? "" : `waiting for: ${text(status.awaiting)}`;

    // The tracker line keeps its place when empty, so the board never moves
    // under the pointer when a piece is lifted.
    const tracker = state.tracker || {};
    const tr = $("tracker");
    tr.dataset.state = tracker.state || "";
    // A message while in sync is news too (a refused die roll, a button's hint).
    const showTracker = (!!tracker.state && tracker.state !== "in-sync") || !!tracker.message;
    tr.classList.toggle("quiet", !showTracker);
    tr.textContent = showTracker ? (tracker.message || TRACKER_TEXT[tracker.state] || tracker.state) : "";
    keepTrackerHeight(tr);

    const outcome = $("outcome");
    outcome.hidden = state.outcome == null;
    outcome.textContent = "";
    if (state.outcome != null) {
      const o = state.outcome;
      if (typeof o === "object" && !Array.isArray(o)) {
        const head = document.createElement("strong");
        head.textContent = o.winner ? `${o.winner} wins` : (o.result ? text(o.result) : "game over");
        if (o.winner) head.prepend(chip(o.winner));
        outcome.appendChild(head);
        const rest = Object.entries(o).filter(([k]) => k !== "winner" && k !== "result" && o[k] != null);
        if (rest.length) {
          const d = document.createElement("div");
          d.textContent = rest.map(([k, v]) => (k === "reason" || k === "message" ? text(v) : `${k}: ${text(v)}`)).join(" \u00b7 ");
          outcome.appendChild(d);
        }
      } else {
        outcome.textContent = text(o);
      }
      // The score as it ended, and a new game at the same table.
      const score = Object.entries(status.score || {});
      if (score.length) {
        const s = document.createElement("div");
        s.className = "final-score";
        s.textContent = `${scoreLabel}: ` + score.map(([side, n]) => `${side} ${text(n)}`).join(" \u2013 ");
        outcome.appendChild(s);
      }
      if (access.can_act) {
        const again = document.createElement("button");
        again.type = "button";
        again.id = "new-game";
        again.textContent = "New game";
        again.title = "start again from the set-up, saved as a new game";
        again.addEventListener("click", () => {
          if (window.confirm("Start a new game? This one stays saved.")) post("/api/new-game", {}).catch(() => {});
        });
        outcome.appendChild(again);
      }
    }

    const link = state.link || {};
    const l = $("link");
    // A fault of the link or the table (a bad frame, a save that cannot be made)
    // is said here until it is over: never "connected" while something is wrong.
    const problem = (state.health || {}).problem;
    // The pill in the header: green only while the host and the board are both there.
    if (link.connected === false) setConn("lost", `${state.simulated ? "simulated board" : "board"} not connected${link.error ? `: ${link.error}` : ""}`);
    else setConn("live", "live");
    l.dataset.connected = link.connected && !problem ? "true" : "false";
    const where = state.simulated ? "simulated board" : "board";
    l.textContent = (link.connected
      ? `${where} connected${link.port ? ` on ${link.port}` : ""}`
      : `${where} not connected${link.error ? `: ${link.error}` : ""}`)
      + (problem ? ` \u2013 ${problem}` : "");

    const dieRow = $("die-row");
    dieRow.hidden = !board.die && state.last_die == null;
    // The die as people say it: "showed 3 (roll 1)", not its fields.
    const die = state.last_die;
    $("die").textContent = die == null ? "\u2013"
      : typeof die === "object" && die.value != null ? `showed ${die.value} (roll ${die.roll_id})` : text(die);

    // The rules' timers, counted by the host: a turn's time, a match clock.
    const clock = state.clock || {};
    const timers = Object.entries(clock);
    $("clock-row").hidden = !timers.length;
    $("clock").textContent = timers.map(([name, t]) => {
      const left = Math.ceil(t.left);
      const shown = left >= 60 ? `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}` : `${left} s`;
      if (name.endsWith(" clock")) return `${t.running ? "\u25b6 " : ""}${t.side} ${shown}`;
      return `${t.side ? `${t.side}'s ${name}` : name} ${shown}`;
    }).join(" \u00b7 ");
    drawKey(state.highlights || []);

    drawButtons(board);
    drawChoices(state.choices || []);
    drawMoves(state.moves || []);
  }

  // The key to the lights the rules ask for now: each meaning in its LED colour,
  // in people's words as the game's legend gives them, with its squares or lamps
  // ("ball's path: E7 E8 E9", "initiative: lamp 4 of 7: home normal, away normal").
  function drawKey(highlights) {
    const box = $("key");
    box.textContent = "";
    box.hidden = !highlights.length;
    for (const h of highlights) {
      const item = document.createElement("span");
      item.className = "key-item";
      item.dataset.meaning = h.meaning;
      item.dataset.squares = h.squares.join(" ");
      const dot = document.createElement("i");
      dot.className = `chip led-${h.pattern || "steady"}`;
      dot.style.setProperty("--c", hex(h.rgb));
      const places = h.places;
      // Coordinates read as a list ("E7 E8"); worded places as a phrase each.
      const sep = places.some((p, i) => p !== h.squares[i]) ? ", " : " ";
      const shown = places.length > 6 ? `${places.slice(0, 6).join(sep)} \u2026` : places.join(sep);
      item.title = h.squares.join(" ");
      item.append(dot, document.createTextNode(`${h.label}: ${shown}`));
      box.appendChild(item);
    }
  }

  // Choices: actions the sensors cannot see (declaring a system, calling a kick),
  // listed by the host. Few: one button each. Many (1,503 systems): a text box
  // narrows the list to the choices holding every word typed.
  const CHOICE_BUTTONS = 12;
  let choicesSig = null;

  function drawChoices(choices) {
    const sig = JSON.stringify(choices);
    if (sig === choicesSig) return;
    choicesSig = sig;
    $("choices-card").hidden = !choices.length || !access.can_act;
    const many = choices.length > CHOICE_BUTTONS;
    $("choice-form").hidden = !many;
    if (!many) $("choice-text").value = "";
    filterChoices();
  }

  // English beside the kanji of Shogi-piece soccer's notation (its pieces, its
  // systems), so that everyone reads a choice and finds it by either word.
  const KANJI = [["\u30b7\u30b9\u30c6\u30e0", "system"], ["\u306a\u3057", "none"],
    ["\u98db", "rook"], ["\u89d2", "bishop"], ["\u6842", "knight"], ["\u6b69", "pawn"],
    ["\u91d1", "gold"], ["\u9280", "silver"], ["\u9999", "lance"], ["\u738b", "king"],
    ["\u7389", "king"], ["\u5148\u624b", "sente"], ["\u5f8c\u624b", "gote"],
    ["\u540c", "same square"], ["\u6253", "drop"], ["\u6210", "promote"],
    ["\u30b7\u30e5\u30fc\u30c8", "shot"], ["\u30d1\u30b9", "pass"], ["\u307e\u3067", "end"]];
  function inEnglish(t) {
    if (!/[\u3040-\u30ff\u4e00-\u9fff]/.test(t)) return "";
    let out = t;
    for (const [k, e] of KANJI) out = out.split(k).join(` ${e} `);
    return out.replace(/\s+/g, " ").trim();
  }

  function filterChoices() {
    const choices = (state && state.choices) || [];
    const words = $("choice-text").value.toLowerCase().split(/\s+/).filter(Boolean);
    const searchable = (c) => `${c.text} ${inEnglish(c.text)}`.toLowerCase();
    const matching = choices.filter((c) => words.every((w) => searchable(c).includes(w)));
    const box = $("choices");
    box.textContent = "";
    for (const choice of matching.slice(0, CHOICE_BUTTONS)) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "choice";
      b.dataset.choice = choice.text;
      b.textContent = choice.text;
      const english = inEnglish(choice.text);
      if (english) {
        const e = document.createElement("span");
        e.className = "english";
        e.textContent = english;
        b.append(document.createElement("br"), e);
        b.title = english;
      }
      box.appendChild(b);
    }
    const rest = matching.length - Math.min(matching.length, CHOICE_BUTTONS);
    $("choices-more").textContent = rest > 0
      ? `${rest} more of ${choices.length}: type to narrow the list`
      : (choices.length > CHOICE_BUTTONS && !matching.length ? "no choice holds all these words" : "");
  }

  function choose(text) {
    return post("/api/act", { action: text }).then(() => { $("choice-text").value = ""; }, () => {});
  }

  // Why a board button does nothing now, once the game is over (masume.play.core):
  // resign, a word of the notation, a hint and the die have no game left to act on;
  // confirm only while the last action's readings are still to choose from; takeback
  // still takes the last action (or the resignation) back, into the game again.
  function overFor(name) {
    if (state.outcome == null || name === "takeback") return "";
    if (name === "confirm" && (state.tracker || {}).state === "ambiguous") return "";
    return "the game is over";
  }

  function drawButtons(board) {
    const over = state.outcome != null;
    const sig = JSON.stringify([board.id, board.buttons, board.die, simulated(), over,
                                (state.tracker || {}).state]);
    if (sig === buttonsDrawn) return;
    buttonsDrawn = sig;
    const box = $("buttons");
    box.textContent = "";
    const names = (board.buttons || []).filter((b) => !(board.die && b === "roll"));
    for (const name of names) {
      const b = document.createElement("button");
      b.type = "button";
      b.dataset.button = name;
      b.textContent = name;
      const why = overFor(name);
      b.disabled = !simulated() || !!why;
      b.title = why ? `${name}: ${why}` : simulated() ? (over && name === "takeback"
        ? "take back the last action: back into the game" : `press ${name} on the board`)
        : "press it on the board itself";
      box.appendChild(b);
    }
    $("roll-box").hidden = !board.die;
    $("roll").disabled = $("roll-value").disabled = !simulated() || over;
    $("roll").title = over ? "roll: the game is over" : "";
  }

  // The notation in words, on hover: each game's marks (docs/rules/*.md, "Notation").
  const NOTATION = [
    [/^die (\d)$/, (m) => `the die showed ${m[1]}`],
    [/^b\(([A-Z]\d+)-([A-Z]\d+)\)(f|!|goal)?$/, (m) => `the ball kicked from ${m[1]} to ${m[2]}`
      + ({ f: ", a free ball", "!": ", taken after a sandwich", goal: ": a goal" }[m[3]] || "")],
    [/^([A-Z]\d+)-([A-Z]\d+)$/, (m) => `a step from ${m[1]} to ${m[2]}`],
    [/^[A-Z]\d+(\u30fb[A-Z]\d+)+!?$/, () => "a jump over pieces (\u30fb between the squares; ! where the ball is taken)"],
    [/^([A-K]\d+) (ground|lob|inside) (\w+)$/i, (m) => `a ${m[2]} kick from ${m[1]} toward ${m[3]}`],
    [/^restart$/, () => "the pieces set up again after a goal"],
    [/^pass$/, () => "the side passes"],
    [/\u30b7\u30b9\u30c6\u30e0/, (m, t) => `declares a system: ${inEnglish(t)}`],
    [/@/, (m, t) => `a card laid: ${t.replace("@", " on ")}`],
  ];
  function explainNotation(t) {
    for (const [re, say] of NOTATION) {
      const m = t.match(re);
      if (m) return say(m, t);
    }
    return inEnglish(t) || t;
  }

  function drawMoves(moves) {
    const sig = JSON.stringify(moves);
    if (sig === movesSig) return;
    movesSig = sig;
    const list = $("moves");
    list.textContent = "";
    for (const move of moves) {
      const li = document.createElement("li");
      li.dataset.number = move.number;
      const num = document.createElement("span");
      num.className = "num";
      num.textContent = `${move.number}.`;
      li.appendChild(num);
      if (move.side) {
        const side = document.createElement("span");
        side.className = "side";
        side.append(chip(move.side), document.createTextNode(move.side));
        li.appendChild(side);
      }
      for (const action of move.actions || []) {
        const a = document.createElement("span");
        a.className = "action";
        a.textContent = text(action);
        a.title = explainNotation(text(action));
        li.appendChild(a);
      }
      list.appendChild(li);
    }
    list.scrollTop = list.scrollHeight;
  }

  // ------------------------------------------------------------------ hand
  function saveHand() {
    if (handKey) sessionStorage.setItem(handKey, JSON.stringify(hand));
  }

  function loadHand(key) {
    handKey = key;
    try {
      const saved = JSON.parse(sessionStorage.getItem(key) || "[]");
      hand = Array.isArray(saved) ? saved.filter((p) => typeof p === "string") : [];
    } catch (e) {
      hand = [];
    }
    selected = hand.length - 1;
  }

  function drawHand() {
    // Redrawn only when what it shows changes, not at every state the table sends: a
    // button replaced between a press and its release takes no click (a tap on the
    // hand while a move was read chose nothing).
    const shown = JSON.stringify([drawn, hand, selected]);
    if (shown === handDrawn) return;
    handDrawn = shown;
    const box = $("hand");
    box.textContent = "";
    if (!hand.length) {
      const e = document.createElement("span");
      e.className = "empty";
      e.textContent = "nothing in hand";
      box.appendChild(e);
    }
    hand.forEach((name, i) => {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "hand-piece" + (i === selected ? " selected" : "");
      b.dataset.handIndex = String(i);
      b.dataset.piece = name;
      b.title = `${name}${i === selected ? " (chosen: click a square to put it down)" : ""}`;
      b.setAttribute("aria-pressed", i === selected ? "true" : "false");
      b.append(pieceElement(name));
      const cap = document.createElement("span");
      cap.className = "caption";
      cap.textContent = name.startsWith("tag:") ? "card" : name;
      b.appendChild(cap);
      box.appendChild(b);
    });
    $("hand-return").disabled = selected < 0;
    document.body.classList.toggle("holding", selected >= 0);
  }

  function drawPalette(board) {
    const box = $("palette");
    box.textContent = "";
    makeLabels(board.pieces || []);
    box.classList.toggle("many", (board.pieces || []).length > 8);
    for (const name of board.pieces || []) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "palette-piece";
      b.dataset.pieceChoice = name;
      b.title = `take a ${name} from the box`;
      b.append(pieceElement(name));
      const cap = document.createElement("span");
      cap.className = "caption";
      cap.textContent = name;
      b.appendChild(cap);
      box.appendChild(b);
    }
  }

  function take(name) {
    hand.push(name);
    selected = hand.length - 1;
    saveHand();
    drawHand();
  }

  // ------------------------------------------------------------------- api
  let queue = Promise.resolve();
  let errorTimer = null;

  function showError(message) {
    const e = $("error");
    e.textContent = message;
    e.hidden = false;
    clearTimeout(errorTimer);
    errorTimer = setTimeout(() => { e.hidden = true; }, 6000);
  }

  // Requests go one after another, in the order the person clicked.
  function post(path, body) {
    const run = async () => {
      let res, data = {};
      try {
        res = await fetch(api(path), {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify(body),
        });
        data = await res.json().catch(() => ({}));
      } catch (err) {
        showError(`the host did not answer: ${err.message || err}`);
        throw err;
      }
      if (!res.ok) {
        showError(data.error || `${res.status} ${res.statusText}`);
        throw new Error(data.error || res.statusText);
      }
      return data;
    };
    const p = queue.then(run, run);
    queue = p.catch(() => {});
    return p;
  }

  function lift(square) {
    return post("/api/sim/lift", { square }).then((data) => {
      take(data.piece);
    }, () => {});
  }

  function place(square) {
    if (selected < 0) return Promise.resolve();
    const index = selected;
    const piece = hand[index];
    // Taken out of the hand only once the table has it.
    return post("/api/sim/place", { square, piece }).then(() => {
      const i = hand[index] === piece ? index : hand.lastIndexOf(piece);
      if (i >= 0) hand.splice(i, 1);
      selected = hand.length - 1;
      saveHand();
      drawHand();
    }, () => {});
  }

  // ----------------------------------------------------------------- input
  function closeMenu() {
    $("cell-menu").hidden = true;
  }

  function openMenu(cell, top) {
    const menu = $("cell-menu");
    menu.textContent = "";
    const square = cell.def.name;
    const holding = hand[selected];
    const add = (label, attr, fn) => {
      const b = document.createElement("button");
      b.type = "button";
      b.dataset.menu = attr;
      b.textContent = label;
      b.addEventListener("click", () => { closeMenu(); fn(); });
      menu.appendChild(b);
    };
    add(`put ${holding} on ${square}`, "place", () => place(square));
    add(`pick up ${top} from ${square}`, "lift", () => lift(square));
    add("cancel", "cancel", () => {});
    const r = cell.el.getBoundingClientRect();
    menu.hidden = false;
    const mw = menu.offsetWidth, mh = menu.offsetHeight;
    const x = Math.min(Math.max(4, r.left + r.width / 2 - mw / 2), window.innerWidth - mw - 4);
    const y = r.bottom + mh + 4 < window.innerHeight ? r.bottom + 4 : Math.max(4, r.top - mh - 4);
    menu.style.left = `${x}px`;
    menu.style.top = `${y}px`;
    menu.querySelector("button").focus();
  }

  function cellClicked(name) {
    const cell = cells.get(name);
    if (!cell || !cell.stack || !simulated() || review.step()) return;
    if (window.masumeCards && window.masumeCards.click(name)) return;  // cards.js: card mats
    const pieces = (state.pieces || {})[name] || [];
    const holding = selected >= 0;
    if (holding && pieces.length) openMenu(cell, pieces[pieces.length - 1]);
    else if (holding) place(name);
    else if (pieces.length) lift(name);
  }

  $("board").addEventListener("click", (ev) => {
    const el = ev.target.closest("[data-cell]");
    if (!el) return;
    ev.stopPropagation();
    closeMenu();
    cellClicked(el.dataset.cell);
  });
  $("board").addEventListener("keydown", (ev) => {
    if (ev.key !== "Enter" && ev.key !== " ") return;
    const el = ev.target.closest("[data-cell]");
    if (!el) return;
    ev.preventDefault();
    cellClicked(el.dataset.cell);
  });
  document.addEventListener("click", (ev) => {
    if (!ev.target.closest("#cell-menu")) closeMenu();
  });
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape") closeMenu();
  });

  $("hand").addEventListener("click", (ev) => {
    const b = ev.target.closest("[data-hand-index]");
    if (!b) return;
    const i = Number(b.dataset.handIndex);
    selected = selected === i ? -1 : i;
    drawHand();
  });
  $("hand-return").addEventListener("click", () => {
    if (selected < 0) return;
    hand.splice(selected, 1);
    selected = hand.length - 1;
    saveHand();
    drawHand();
  });
  $("palette").addEventListener("click", (ev) => {
    const b = ev.target.closest("[data-piece-choice]");
    if (b) take(b.dataset.pieceChoice);
  });
  $("palette-other").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const input = $("palette-name");
    const name = input.value.trim();
    if (name) take(name);
    input.value = "";
  });
  $("hint-button").addEventListener("click", () => { post("/api/hint", {}).catch(() => {}); });
  $("buttons").addEventListener("click", (ev) => {
    const b = ev.target.closest("[data-button]");
    if (b && simulated()) post("/api/sim/press", { button: b.dataset.button }).catch(() => {});
    // Resign asks again on the board (press resign twice); the page says so itself.
  });
  $("choices").addEventListener("click", (ev) => {
    const b = ev.target.closest("[data-choice]");
    if (b) choose(b.dataset.choice);
  });
  $("choice-text").addEventListener("input", filterChoices);
  $("choice-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const typed = $("choice-text").value.trim();
    const shown = $("choices").querySelectorAll("[data-choice]");
    // One match left: choose it; else send what is typed (the host parses notation).
    if (shown.length === 1) choose(shown[0].dataset.choice);
    else if (typed) choose(typed);
  });
  $("roll").addEventListener("click", () => {
    if (!simulated()) return;
    const v = $("roll-value").value;
    post("/api/sim/roll", v ? { value: Number(v) } : {}).catch(() => {});
  });
  $("flip").addEventListener("click", () => {
    flipped = !flipped;
    localStorage.setItem("masume-flipped", flipped ? "1" : "0");
    drawn = null;
    if (state) render(state);
  });

  // --------------------------------------------------------------- advice
  // The computer's side, its action (or a hint) in words, and who stands better.
  function drawAdvice() {
    const advice = state.advice;
    $("advice-card").hidden = !advice;
    if (!advice) return;
    $("advice-title").textContent = advice.computer
      ? `Computer: plays ${advice.computer}${advice.level ? ` (${advice.level})` : ""}` : "Computer";
    const says = $("computer-says");
    says.textContent = "";
    says.title = "";
    const shown = advice.shown;
    const message = ((state.tracker || {}).message) || "";
    if (message.startsWith("not the computer's action")) {
      says.dataset.kind = "not-computers";
      says.textContent = message.split(" \u2014 ")[0];
    } else if (shown) {
      says.dataset.kind = shown.kind;
      says.append(chip(shown.side), document.createTextNode(
        shown.kind === "computer" ? "computer: " : `hint for ${shown.side}: `));
      if (shown.text.includes("face-down card")) {
        const card = document.createElement("i");
        card.className = "face-down";
        card.title = "a face-down card";
        says.appendChild(card);
      }
      says.appendChild(document.createTextNode(shown.text));
      says.title = explainNotation(shown.text.split(": ")[0]) || "";
    } else if (advice.thinking) {
      says.dataset.kind = "thinking";
      says.textContent = advice.thinking === "computer" ? "the computer is thinking\u2026" : "thinking of a hint\u2026";
    } else if (advice.error) {
      says.dataset.kind = "error";
      says.textContent = advice.error;
    } else {
      delete says.dataset.kind;
    }
    // The bar: the first side's share of the two values, in its colour.
    const sides = Object.keys(state.sides || {});
    const values = sides.map((side) => (advice.standing || {})[side] ?? 0.5);
    const total = values.reduce((a, b) => a + b, 0) || 1;
    const bar = $("standing-bar");
    if (sides.length === 2) {
      const share = values[0] / total;
      bar.style.setProperty("--w", `${(100 * share).toFixed(1)}%`);
      bar.style.setProperty("--c1", sideColour(sides[0]));
      bar.style.setProperty("--c2", sideColour(sides[1]));
      bar.dataset.share = share.toFixed(3);
      const lead = Math.abs(share - 0.5) < 0.03 ? null : (share > 0.5 ? sides[0] : sides[1]);
      $("standing-text").textContent = lead ? `${lead} (${Math.round(100 * Math.max(share, 1 - share))} %)` : "level";
    }
    const hint = $("hint-button");
    hint.hidden = !access.can_act;
    hint.disabled = !!advice.thinking || state.outcome != null;
  }

  // --------------------------------------------------------------- review
  // A finished game read again by the computer (review.js, the club's page's too),
  // stepped through on this board: the better action in the side's colour, pulsing
  // where a piece leaves, blinking where one goes.
  const review = window.masumeReview.create({
    changed: () => { if (state) render(state); },
    post, api, chip, explain: explainNotation, sideText: (side) => `${side} `,
  });

  // The position a review shows and its better action's lights, instead of the table's.
  function reviewShown() {
    const shown = review.shown();
    if (!shown) return null;
    const m = shown.mistake;
    const rgb = m && ((state.sides || {})[m.side] || [255, 255, 255]);
    const looks = m && {
      path: { rgb: rgb.map((v) => Math.round((v * 40) / 255)), pattern: "steady" },
      take: { rgb, pattern: "pulse" },
      put: { rgb, pattern: "blink" },
    };
    const leds = {};
    for (const [square, kind] of Object.entries(shown.better)) leds[square] = looks[kind];
    return { pieces: shown.step.pieces || {}, leds, better: shown.better };
  }

  // The state cards.js draws the mat from: the review's position as anyone saw it.
  function shownState() {
    const step = review.step();
    if (!step) return state;
    const view = state.view && { ...state.view, viewer: null, cells: step.cells || {},
      hand: [], panel: step.panel || [], marks: {} };
    return { ...state, pieces: step.pieces || {}, choices: [], view };
  }

  // body: {} for the table's game, {record: text} for a record file a player chose.
  function startReview(body) {
    $("review-start").disabled = true;
    review.start(body);
  }

  function drawReview() {
    const open = review.open;
    $("review-card").hidden = state.outcome == null && !open;
    const start = $("review-start");
    start.hidden = open;
    $("review-file-box").hidden = open || !access.can_act;
    if (!open) start.disabled = false;
    const shown = review.shown();
    document.body.classList.toggle("reviewing", !!shown);
    review.draw();
    const banner = $("review-banner");
    banner.hidden = !shown;
    if (!shown) return;
    const score = Object.entries(shown.step.score || {}).map(([side, n]) => `${side} ${n}`).join(" \u2013 ");
    banner.textContent = `review: after action ${shown.at} of ${shown.last}${score ? ` \u00b7 ${score}` : ""}`
      + (shown.mistake ? " \u00b7 the better action is lit" : "");
  }

  $("review-start").addEventListener("click", () => startReview({}));
  $("review-file").addEventListener("change", (ev) => {
    const file = ev.target.files && ev.target.files[0];
    if (!file) return;
    file.text().then((record) => startReview({ record }), (err) => showError(`cannot read ${file.name}: ${err.message || err}`));
    ev.target.value = "";
  });
  $("review-close").addEventListener("click", () => review.close());

  // ---------------------------------------------------------------- render
  function render(next) {
    state = next;
    const board = state.board || {};
    const key = `${board.id}|${flipped}|${(board.cells || []).length}`;
    if (key !== drawn) {
      drawn = key;
      makeLabels(board.pieces || []);
      drawBoard(board);
      drawPalette(board);
      loadHand(`masume-hand:${board.id}`);
      buttonsDrawn = null;
    }
    if (document.body.classList.contains("simulated") !== simulated()) {
      document.body.classList.toggle("simulated", simulated());
      resizeBoard();
    }
    $("sim-controls").hidden = !simulated();
    drawCells();
    drawPanel();
    drawAdvice();
    drawReview();
    drawHand();
    if (window.masumeCards) window.masumeCards.render(shownState(), { post, showError, api, flipped: () => flipped });  // cards.js
    document.body.dataset.ready = "true";
  }

  // ---------------------------------------------------------------- stream
  function setConn(kind, message) {
    const c = $("conn");
    c.dataset.conn = kind;
    c.textContent = message;
  }

  // ---------------------------------------------------------------- access
  // The role is the link's: its token (?token=, as printed) on the first load, then
  // the cookie the host set, found by the role's name (?as=ROLE; none: the table).
  let access = { role: null, can_act: false, links: [] };

  function api(path) {
    if (!access.role || access.role === "table") return path;
    return `${path}${path.includes("?") ? "&" : "?"}as=${encodeURIComponent(access.role)}`;
  }

  async function loadAccess() {
    const params = new URLSearchParams(location.search);
    const token = params.get("token"), as = params.get("as");
    const query = token ? `?token=${encodeURIComponent(token)}` : (as ? `?as=${encodeURIComponent(as)}` : "");
    const res = await fetch("/api/access" + query);
    const data = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(data.error || `${res.status} ${res.statusText}`);
    access = data;
    // The secret leaves the address bar (screenshots, a shared screen); the cookie keeps it.
    history.replaceState(null, "", api("/"));
    const who = access.role === "table" ? "the table" : access.role === "spectator"
      ? "a spectator (watching only)" : access.role;
    $("role").textContent = `this page: ${who}`;
    document.body.dataset.role = access.role;
    drawLinks();
  }

  // The links this page may share, each with a QR code for a phone to scan.
  function drawLinks() {
    const list = $("links-list");
    list.textContent = "";
    for (const link of access.links || []) {
      const fig = document.createElement("figure");
      fig.className = "link";
      fig.dataset.role = link.role;
      const caption = document.createElement("figcaption");
      caption.textContent = link.role === "spectator" ? "spectators" : link.role;
      const qr = document.createElement("div");
      qr.className = "qr";
      qr.innerHTML = link.qr;  // SVG made by the host (segno), not from any input
      const a = document.createElement("a");
      a.href = link.url;
      a.textContent = link.url;
      a.target = "_blank";
      fig.append(caption, qr, a);
      list.appendChild(fig);
    }
    $("links-title").textContent = access.role === "table" ? "Links for the players' phones"
      : access.role === "spectator" ? "Link for spectators" : "Your link and the spectators'";
    $("links-note").textContent = access.phones || "";
    $("links-card").hidden = !(access.links || []).length;
  }

  function connect() {
    const source = new EventSource(api("/api/stream"));
    source.onopen = () => setConn("live", "live");
    source.onmessage = (ev) => {
      try {
        render(JSON.parse(ev.data));
      } catch (err) {
        showError(`could not draw the state: ${err.message || err}`);
        console.error(err);
      }
    };
    source.onerror = () => {
      setConn("lost", "lost contact with the host, reconnecting\u2026");
    };
  }

  if (typeof ResizeObserver !== "undefined") {
    new ResizeObserver(setUnit).observe($("board"));
  }
  loadAccess().then(connect, (err) => {
    setConn("lost", `this page cannot open: ${err.message || err}`);
  });
})();
