// `cleaner annotate`: label the blocks of a page and save them as a CleanEval gold file.
// All page text goes into the DOM with textContent (pages are hostile input); the only
// network use is fetch() to this server's own JSON endpoints.
(function () {
  "use strict";
  var LABELS = ["header", "paragraph", "list", "continuation", "other"];
  var KEYS = { h: "header", p: "paragraph", l: "list", c: "continuation", o: "other" };
  var $ = function (id) { return document.getElementById(id); };
  var state = { pages: [], name: null, page: null, labels: [], saved: [], cur: -1, anchor: -1,
    els: [], busy: false, warn: {} };

  // This session's token (the server put it in the page): every API call carries it in a header,
  // which no page of another site can send here (cleaner/tools/annotate_server.py).
  var meta = document.querySelector('meta[name="cleaner-token"]');
  var TOKEN = meta ? meta.content : "";

  function api(path, body) {
    var headers = { "X-Cleaner-Token": TOKEN };
    var opts = { headers: headers, credentials: "omit" };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      opts.method = "POST";
      opts.body = JSON.stringify(body);
    }
    return fetch(path, opts).then(function (r) {
      return r.text().then(function (t) {
        var data;
        try { data = JSON.parse(t); } catch (e) { data = { error: "unexpected answer from the server (" + r.status + ")" }; }
        if (!r.ok) throw new Error(data.error || ("HTTP " + r.status));
        return data;
      });
    });
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function message(text) { var m = $("message"); m.textContent = text || ""; m.hidden = !text; }
  function status(text) { $("status").textContent = text || ""; }
  function dirty() {
    for (var i = 0; i < state.labels.length; i++) if (state.labels[i] !== state.saved[i]) return true;
    return false;
  }

  // -- page list ---------------------------------------------------------------------------
  function renderPages() {
    var ul = $("pages");
    ul.textContent = "";
    state.pages.forEach(function (p) {
      var li = el("li", p.name === state.name ? "current" : "");
      li.dataset.name = p.name;
      if (p.gold) li.classList.add("has-gold");
      li.appendChild(el("span", "mark", p.gold ? "\u2713" : ""));
      li.appendChild(document.createTextNode(p.name));
      li.title = p.gold ? p.name + " (gold file saved)" : p.name;
      ul.appendChild(li);
    });
  }
  function loadPages() {
    return api("/api/pages").then(function (d) {
      state.pages = d.pages;
      $("folder").textContent = d.folder + (d.model ? "" : " (no model)");
      renderPages();
    });
  }
  $("pages").addEventListener("click", function (ev) {
    var li = ev.target.closest("li");
    if (li) go(li.dataset.name);
  });
  function go(name) {
    if (name === state.name) return;
    if (dirty() && !window.confirm("Discard the unsaved labels of " + state.name + "?")) return;
    location.hash = encodeURIComponent(name);
  }
  function step(delta) {
    var i = state.pages.findIndex(function (p) { return p.name === state.name; });
    var j = i + delta;
    if (j >= 0 && j < state.pages.length) go(state.pages[j].name);
  }

  // -- one page ----------------------------------------------------------------------------
  function openPage(name) {
    state.name = name;
    renderPages();
    $("page-name").textContent = name;
    message(""); status("loading…");
    $("notices").textContent = "";
    $("blocks").textContent = "";
    state.page = null; state.labels = []; state.saved = []; state.els = []; state.warn = {};
    updateBar();
    return api("/api/page?name=" + encodeURIComponent(name)).then(function (d) {
      if (state.name !== name) return;
      state.page = d;
      if (d.status !== "ok") {
        message(d.message || "This page cannot be shown.");
        status("");
        updateBar();
        return;
      }
      state.labels = d.labels.slice();
      state.saved = d.labels.slice();
      (d.notices || []).forEach(function (n) { $("notices").appendChild(el("div", "notice " + n.level, n.text)); });
      renderBlocks();
      setCursor(0, false);
      var src = { gold: "labels from " + d.gold_file, model: "labels from the model (no gold file yet)",
        none: "no model: every block starts as other" }[d.source] || "";
      if (d.source === "model" && d.gold && d.gold.exists) src = "labels from the model (the gold file does not align)";
      $("source").textContent = src + (d.encoding ? " \u00b7 " + d.encoding : "") + (d.url ? " \u00b7 " + d.url : "");
      status(d.blocks.length + " blocks");
      updateBar();
    }).catch(function (e) { if (state.name === name) { message(e.message); status(""); } });
  }
  function renderBlocks() {
    var box = $("blocks"), frag = document.createDocumentFragment();
    state.els = state.page.blocks.map(function (b, i) {
      var d = el("div", "blk");
      d.dataset.i = i;
      d.appendChild(el("span", "idx", i));
      d.appendChild(el("span", "badge lab"));
      d.appendChild(el("span", "text", b.text));
      d.appendChild(el("span", "pred"));
      d.appendChild(el("span", "cont", b.path));
      d.title = b.path;
      frag.appendChild(d);
      return d;
    });
    box.appendChild(frag);
    for (var i = 0; i < state.els.length; i++) paint(i);
  }
  function paint(i) {
    var d = state.els[i], y = state.labels[i], b = state.page.blocks[i];
    d.className = "blk L-" + y;
    d.dataset.label = y;
    d.querySelector(".lab").textContent = y;
    var pred = d.querySelector(".pred");
    pred.textContent = "";
    if (b.pred && b.pred !== y) {
      pred.appendChild(document.createTextNode("model "));
      pred.appendChild(el("span", "badge L-" + b.pred, b.pred + (b.p !== null ? " " + b.p.toFixed(2) : "")));
    }
    if (y !== state.saved[i]) d.classList.add("changed");
    if (state.warn[i]) { d.classList.add("warn"); d.title = state.warn[i] + " \u2014 " + b.path; }
    var lo = Math.min(state.anchor, state.cur), hi = Math.max(state.anchor, state.cur);
    if (i >= lo && i <= hi && state.cur >= 0) d.classList.add("sel");
    if (i === state.cur) d.classList.add("cur");
  }
  function repaintAll() { for (var i = 0; i < state.els.length; i++) paint(i); updateBar(); }
  function updateBar() {
    var counts = {};
    LABELS.forEach(function (y) { counts[y] = 0; });
    state.labels.forEach(function (y) { counts[y]++; });
    var c = $("counts");
    c.textContent = "";
    if (state.labels.length) {
      LABELS.forEach(function (y) {
        var s = el("span", "L-" + y);
        s.appendChild(el("span", "swatch"));
        s.appendChild(document.createTextNode(y + " " + counts[y]));
        c.appendChild(s);
      });
      var lo = Math.min(state.anchor, state.cur), hi = Math.max(state.anchor, state.cur);
      c.appendChild(el("span", "", "selected: " + (lo === hi ? "#" + lo : "#" + lo + "\u2013#" + hi)));
    }
    $("dirty").hidden = !dirty();
    var usable = !!(state.page && state.page.status === "ok");
    document.querySelectorAll("#toolbar button").forEach(function (b) { b.disabled = !usable || state.busy; });
  }

  // -- selection and labels -----------------------------------------------------------------
  function setCursor(i, extend) {
    if (!state.els.length) return;
    i = Math.max(0, Math.min(state.els.length - 1, i));
    var old = [Math.min(state.anchor, state.cur), Math.max(state.anchor, state.cur)];
    state.cur = i;
    if (!extend || state.anchor < 0) state.anchor = i;
    var lo = Math.min(old[0], state.anchor, state.cur), hi = Math.max(old[1], state.anchor, state.cur);
    for (var k = Math.max(0, lo); k <= hi; k++) paint(k);
    state.els[i].scrollIntoView({ block: "nearest" });
    updateBar();
  }
  function setLabel(y) {
    if (!state.els.length || state.cur < 0) return;
    var lo = Math.min(state.anchor, state.cur), hi = Math.max(state.anchor, state.cur);
    for (var i = lo; i <= hi; i++) { state.labels[i] = y; delete state.warn[i]; }
    if (lo === hi && hi + 1 < state.els.length) setCursor(hi + 1, false);  // one block: move on
    for (var k = lo; k <= hi; k++) paint(k);
    updateBar();
  }
  function useModel() {
    if (!state.page || !state.page.blocks.length || !state.page.blocks[0].pred) return;
    var lo = Math.min(state.anchor, state.cur), hi = Math.max(state.anchor, state.cur);
    for (var i = lo; i <= hi; i++) state.labels[i] = state.page.blocks[i].pred;
    for (var k = lo; k <= hi; k++) paint(k);
    updateBar();
  }
  $("blocks").addEventListener("mousedown", function (ev) { if (ev.shiftKey) ev.preventDefault(); });
  $("blocks").addEventListener("click", function (ev) {
    var d = ev.target.closest(".blk");
    if (d) setCursor(+d.dataset.i, ev.shiftKey);
  });
  $("toolbar").addEventListener("click", function (ev) {
    var b = ev.target.closest("button");
    if (!b || b.disabled) return;
    if (b.dataset.label) setLabel(b.dataset.label);
    else if (b.id === "use-model") useModel();
    else if (b.id === "save") save();
  });

  // -- saving ------------------------------------------------------------------------------
  function save() {
    if (!state.page || state.page.status !== "ok" || state.busy) return;
    state.busy = true; updateBar();
    status("saving…");
    var name = state.name;
    api("/api/save", { name: name, version: state.page.version, labels: state.labels }).then(function (r) {
      if (state.name !== name) return;
      var rt = r.round_trip;
      // Show what the gold file says: the labels the aligner reads back from it.
      state.labels = rt.labels.slice();
      state.saved = rt.labels.slice();
      state.warn = {};
      rt.mismatches.forEach(function (m) { state.warn[m.i] = "saved as " + m.given + ", reads back as " + m.reads_back + ": " + m.why; });
      var text = "Saved " + r.file + ": " + r.segments + " segments, " + r.words + " words; round trip F1 " +
        rt.f1.toFixed(3) + (rt.markup_f1 === null ? "" : ", markup F1 " + rt.markup_f1.toFixed(3)) + ".";
      if (rt.mismatches.length) {
        text += " " + rt.mismatches.length + " block(s) read back differently (outlined): " +
          rt.mismatches.slice(0, 5).map(function (m) { return "#" + m.i + " " + m.why; }).join("; ") +
          (rt.mismatches.length > 5 ? "; \u2026" : "");
      }
      if (!r.trainable) text += " No content: `cleaner train` leaves a page with an empty gold file out.";
      status(text);
      message("");
      state.pages.forEach(function (p) { if (p.name === name) p.gold = true; });
      renderPages();
      repaintAll();
    }).catch(function (e) { message("Not saved: " + e.message); status(""); })
      .then(function () { state.busy = false; updateBar(); });
  }

  // -- keys --------------------------------------------------------------------------------
  document.addEventListener("keydown", function (ev) {
    if (ev.target.tagName === "INPUT" || ev.target.tagName === "TEXTAREA") return;
    var k = ev.key;
    if ((ev.ctrlKey || ev.metaKey) && (k === "s" || k === "S")) { ev.preventDefault(); save(); return; }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    var lower = k.length === 1 ? k.toLowerCase() : k;
    if (KEYS[lower] && !ev.shiftKey) { ev.preventDefault(); setLabel(KEYS[lower]); }
    else if (k === "ArrowDown" || lower === "j") { ev.preventDefault(); setCursor(state.cur + 1, ev.shiftKey); }
    else if (k === "ArrowUp" || lower === "k") { ev.preventDefault(); setCursor(state.cur - 1, ev.shiftKey); }
    else if (k === "Home") { ev.preventDefault(); setCursor(0, ev.shiftKey); }
    else if (k === "End") { ev.preventDefault(); setCursor(state.els.length - 1, ev.shiftKey); }
    else if (k === "m") { ev.preventDefault(); useModel(); }
    else if (k === "s") { ev.preventDefault(); save(); }
    else if (k === "]") { step(1); }
    else if (k === "[") { step(-1); }
  });
  window.addEventListener("beforeunload", function (ev) { if (dirty()) { ev.preventDefault(); ev.returnValue = ""; } });
  function fromHash() {
    var name = decodeURIComponent(location.hash.slice(1));
    if (!name && state.pages.length) { location.replace("#" + encodeURIComponent(state.pages[0].name)); return; }
    if (name && name !== state.name) openPage(name);
  }
  window.addEventListener("hashchange", fromHash);
  loadPages().then(fromHash).catch(function (e) { message(e.message); });
})();
