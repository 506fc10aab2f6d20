/* planverify review site: index table, episode pages, decisions kept in localStorage.
   Data comes from script files (data/index.js, data/e/NNNNNN.js): browsers refuse fetch on
   file://. Text from the data is only ever set with textContent, never parsed as HTML. */
(function () {
  "use strict";

  var STORE = "planverify-review-decisions-v2";  // v1 kept decisions by episode, not by result
  var PAGE = 100;
  var PV = (window.PV = { data: null, episodes: {}, waiting: {} });
  var state = { sort: "n", desc: false, page: 0, filtered: [], cursor: 0, current: null, trim: null };
  var col = {};
  // Row columns that follow the trim switch: a row has them under each policy, in the column
  // named after it (`natural`, `minimal`), at these positions.
  var VIEWED = { refined: 0, removed: 1, levels: 2 };
  function viewed(row, k) { return row[col[state.trim]][VIEWED[k]]; }

  // ---- small helpers ---------------------------------------------------------------------
  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function pad(n) { return ("000000" + n).slice(-6); }
  function money(v) { return v === null || v === undefined ? "–" : "$" + v.toFixed(v < 0.01 && v > 0 ? 4 : 2); }

  // ---- decisions ---------------------------------------------------------------------------
  function loadStore() {
    try { return JSON.parse(localStorage.getItem(STORE) || "{}") || {}; } catch (e) { return {}; }
  }
  var decisions = loadStore();
  // Decisions are kept by episode and by the result they were made on (`result`, a digest of
  // the record): another results file of the same episodes has other steps inserted at the
  // same positions, and must not take them up.
  function key(id, result, what) { return id + "\u0000" + result + "\u0000" + what; }
  function decided(ep, what) { return decisions[key(ep.id, ep.result, what)] || null; }
  function decide(ep, what, verdict, action, note, optional) {
    var k = key(ep.id, ep.result, what);
    if (verdict === null) delete decisions[k];
    else decisions[k] = { id: ep.id, result: ep.result, input_digest: ep.digest, verdict: verdict, action: action, note: note || null,
                          index: what.charAt(0) === "s" ? +what.slice(1) : null,
                          inserted: what.charAt(0) === "i" ? +what.slice(1) : null,
                          optional: optional || null,
                          at: new Date().toISOString() };
    try { localStorage.setItem(STORE, JSON.stringify(decisions)); } catch (e) { alert("Could not save the decision: " + e); }
    updateDecided();
  }
  function siteDecisions() {
    var ids = {};
    PV.data.rows.forEach(function (r) { ids[key(r[col.id], r[col.result], "")] = true; });
    return Object.keys(decisions).filter(function (k) {
      var d = decisions[k]; return ids[key(d.id, d.result, "")] === true;
    }).map(function (k) { return decisions[k]; });
  }
  function countFor(row) {
    var prefix = key(row[col.id], row[col.result], ""), n = 0;
    for (var k in decisions) if (k.indexOf(prefix) === 0) n++;
    return n;
  }
  function updateDecided() {
    var n = siteDecisions().length;
    $("decided").textContent = n + (n === 1 ? " decision" : " decisions");
    $("download").disabled = n === 0;
  }
  // The file's version 2 names a step by its 0-based `index` and, for people, its number on
  // this page (`step`, from 1). Decisions stored before it kept the 0-based index as `step`.
  function decisionsFile() {
    var list = siteDecisions().map(function (d) {
      var out = { id: d.id, input_digest: d.input_digest, verdict: d.verdict, action: d.action };
      var index = typeof d.index === "number" ? d.index : d.step;
      if (typeof index === "number") { out.index = index; out.step = index + 1; } else out.inserted = d.inserted;
      if (d.note) out.note = d.note;
      if (d.optional) out.optional = d.optional;  // for people reading it: export ignores it
      return out;
    });
    return JSON.stringify({ format: PV.data.format, version: PV.data.version, site: PV.data.title, decisions: list }, null, 2);
  }
  PV.decisionsFile = decisionsFile;
  function download() {
    var body = decisionsFile();
    var a = el("a");
    a.href = URL.createObjectURL(new Blob([body], { type: "application/json" }));
    a.download = "decisions.json";
    document.body.appendChild(a); a.click(); a.remove();
  }

  // ---- index -------------------------------------------------------------------------------
  PV.index = function (data) {
    PV.data = data;
    data.columns.forEach(function (name, i) { col[name] = i; });
    start();
  };
  function value(row, k) {
    if (k === "decided") return countFor(row);
    return Object.prototype.hasOwnProperty.call(VIEWED, k) ? viewed(row, k) : row[col[k]];
  }
  function fillSelect(id, k) {
    var seen = new Map();  // values come from the data: "constructor" or "__proto__" are values too
    PV.data.rows.forEach(function (r) { var v = r[col[k]]; if (v !== null && v !== undefined) seen.set(v, (seen.get(v) || 0) + 1); });
    var select = $(id);
    Array.from(seen.keys()).sort().forEach(function (v) {
      var o = el("option", null, v + " (" + seen.get(v) + ")"); o.value = v; select.appendChild(o);
    });
  }
  function applyFilters() {
    var q = $("search").value.trim().toLowerCase();
    var task = $("f-task").value, split = $("f-split").value, stop = $("f-stop").value;
    var level = PV.data.levels.indexOf($("f-evidence").value);
    var changed = $("f-changed").checked, withDecisions = $("f-decided").checked;
    var rows = PV.data.rows.filter(function (r) {
      if (task && r[col.task] !== task) return false;
      if (split && r[col.split] !== split) return false;
      if (stop && r[col.stop] !== stop) return false;
      if (level >= 0 && !viewed(r, "levels")[level]) return false;
      if (changed && !(viewed(r, "removed") || r[col.inserted])) return false;
      if (withDecisions && !countFor(r)) return false;
      if (q && String(r[col.id]).toLowerCase().indexOf(q) < 0 && String(r[col.goal] || "").toLowerCase().indexOf(q) < 0) return false;
      return true;
    });
    var k = state.sort, sign = state.desc ? -1 : 1;
    rows.sort(function (a, b) {
      var x = value(a, k), y = value(b, k);
      if (x === y) return a[col.n] - b[col.n];
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      return (x < y ? -1 : 1) * sign;
    });
    state.filtered = rows;
    state.page = Math.min(state.page, Math.max(0, Math.ceil(rows.length / PAGE) - 1));
    renderRows();
  }
  function renderRows() {
    var rows = state.filtered, body = $("rows");
    var first = state.page * PAGE, page = rows.slice(first, first + PAGE);
    var frag = document.createDocumentFragment();
    page.forEach(function (r, i) {
      var tr = el("tr"); tr.dataset.n = r[col.n];
      if (first + i === state.cursor) tr.className = "cursor";
      tr.appendChild(el("td", "num muted", r[col.n] + 1));
      var idCell = el("td", "id"), link = el("a", null, r[col.id]);
      link.href = "#e=" + r[col.n]; idCell.appendChild(link);
      if (r[col.goal]) idCell.appendChild(el("div", "goal", r[col.goal]));
      tr.appendChild(idCell);
      tr.appendChild(el("td", null, r[col.task] || "–"));
      tr.appendChild(el("td", null, r[col.split] || "–"));
      var stopCell = el("td"); stopCell.appendChild(el("span", "pill stop-" + r[col.stop], r[col.stop] || "–")); tr.appendChild(stopCell);
      tr.appendChild(el("td", "num", r[col.steps] + " → " + viewed(r, "refined")));
      var removed = viewed(r, "removed");
      tr.appendChild(el("td", "num removed-cell" + (removed ? " removed-n" : " muted"), removed));
      tr.appendChild(el("td", "num optional-cell" + (r[col.optional] ? " optional-n" : " muted"), r[col.optional]));
      tr.appendChild(el("td", "num" + (r[col.inserted] ? " inserted-n" : " muted"), r[col.inserted]));
      tr.appendChild(el("td", "num", r[col.iterations]));
      tr.appendChild(el("td", "num" + (r[col.vetoes] ? "" : " muted"), r[col.vetoes]));
      tr.appendChild(el("td", "num muted", money(r[col.cost])));
      var n = countFor(r);
      tr.appendChild(el("td", "num" + (n ? " decided-n" : " muted"), n || "–"));
      tr.addEventListener("click", function (ev) { if (ev.target.tagName !== "A") location.hash = "e=" + r[col.n]; });
      frag.appendChild(tr);
    });
    body.textContent = "";
    if (!page.length) { var td = el("td", "muted", "No episode matches."); td.colSpan = 13; var tr0 = el("tr"); tr0.appendChild(td); frag.appendChild(tr0); }
    body.appendChild(frag);
    $("shown").textContent = rows.length === PV.data.rows.length ? rows.length + " episodes" : rows.length + " of " + PV.data.rows.length + " episodes";
    renderPager();
    document.querySelectorAll("#grid th").forEach(function (th) {
      th.classList.toggle("sorted", th.dataset.key === state.sort);
      th.classList.toggle("desc", th.dataset.key === state.sort && state.desc);
    });
  }
  function renderPager() {
    var pages = Math.ceil(state.filtered.length / PAGE), nav = $("pager");
    nav.textContent = "";
    if (pages <= 1) return;
    function button(label, page, disabled) {
      var b = el("button", page === state.page ? "current" : "", label);
      b.type = "button"; b.disabled = disabled;
      b.addEventListener("click", function () { state.page = page; state.cursor = page * PAGE; renderRows(); window.scrollTo(0, $("grid").offsetTop - 80); });
      nav.appendChild(b);
    }
    button("‹ Previous", state.page - 1, state.page === 0);
    var shown = {};
    [0, state.page - 2, state.page - 1, state.page, state.page + 1, state.page + 2, pages - 1].forEach(function (p) {
      if (p >= 0 && p < pages && !shown[p]) { shown[p] = true; button(String(p + 1), p, false); }
    });
    button("Next ›", state.page + 1, state.page >= pages - 1);
  }
  function moveCursor(step) {
    if (!state.filtered.length) return;
    state.cursor = Math.max(0, Math.min(state.filtered.length - 1, state.cursor + step));
    var page = Math.floor(state.cursor / PAGE);
    if (page !== state.page) { state.page = page; }
    renderRows();
    var row = document.querySelector("#rows tr.cursor");
    if (row) row.scrollIntoView({ block: "nearest" });
  }

  // ---- episode page ------------------------------------------------------------------------
  PV.episode = function (n, data) {
    PV.episodes[n] = data;
    (PV.waiting[n] || []).forEach(function (f) { f(data); });
    delete PV.waiting[n];
  };
  function load(n, done) {
    if (PV.episodes[n]) return done(PV.episodes[n]);
    if (PV.waiting[n]) return PV.waiting[n].push(done);
    PV.waiting[n] = [done];
    var s = document.createElement("script");
    s.src = "data/e/" + pad(n) + ".js";
    s.onerror = function () { $("episode-view").textContent = "Could not load data/e/" + pad(n) + ".js"; };
    document.head.appendChild(s);
  }
  function neighbour(n, step) {
    var list = state.filtered.length ? state.filtered : PV.data.rows;
    for (var i = 0; i < list.length; i++) if (list[i][col.n] === n) {
      var next = list[i + step];
      return next ? next[col.n] : null;
    }
    return null;
  }
  // A step as the chosen trim policy reads it: the site wrote its verdict under each (`t`).
  function stepIn(s) { return s.t ? Object.assign({}, s, s.t[state.trim]) : s; }
  function finalPlan(ep, steps) {
    var kept = steps.map(function (s, i) {
      var d = decided(ep, "s" + i);
      var keep = ep.mode === "static" || s.v === "keep";
      return d ? d.verdict === "keep" : keep;
    });
    var after = {};
    ep.inserted.forEach(function (ins, k) {
      var d = decided(ep, "i" + k);
      if (d && d.verdict === "remove") return;
      (after[ins[0]] = after[ins[0]] || []).push({ ins: ins, k: k });
    });
    var plan = [];
    (after[-1] || []).forEach(function (x) { plan.push({ inserted: x }); });
    steps.forEach(function (s, i) {
      if (kept[i]) plan.push({ step: s, i: i });
      (after[i] || []).forEach(function (x) { plan.push({ inserted: x }); });
    });
    return { kept: kept, plan: plan };
  }
  // A plan line: its number in the plan shown (`number`) and, in the refined plan, the original
  // step's number too (`was`: "was 5", or "new" for an insertion), so both plans can be compared.
  // Returns the item and its body, where reasons and notes go.
  function line(s, number, extra, was) {
    var li = el("li", "step" + (extra ? " " + extra : ""));
    li.appendChild(el("span", "idx", number));
    if (was !== undefined) li.appendChild(el("span", "was", was));
    var body = el("div", "body");
    if (s.who) {
      li.classList.add("say", s.who === "Commander" ? "commander" : "driver");
      var bubble = el("div", "bubble");
      bubble.appendChild(el("span", "who", s.who));
      bubble.appendChild(el("span", "text", s.say));
      body.appendChild(bubble);
    } else {
      body.appendChild(el("code", "action", s.a));
    }
    li.appendChild(body);
    return { li: li, body: body };
  }
  // A step only the minimal trim policy removes: marked with its kind whether shown kept or
  // removed; when kept, why minimal would remove it.
  function markOptional(made, s, why) {
    if (!s.o) return;
    made.li.classList.add("optional");
    var tag = el("span", "pill optional", "optional · " + s.o.kind);
    tag.title = "Kept under the natural trim policy, removed under minimal";
    made.body.insertBefore(tag, made.body.firstChild.nextSibling);
    if (why) made.body.appendChild(el("div", "reason optional-reason", "Minimal removes it: " + s.o.reason + "  · " + s.o.e));
  }
  function renderEpisode(ep) {
    state.current = ep.n;
    var steps = ep.steps.map(stepIn);
    var view = $("episode-view");
    view.textContent = "";
    var head = el("div", "ep-head");
    var nav = el("div", "ep-nav");
    var back = el("a", "back", "← All episodes"); back.href = "#"; nav.appendChild(back);
    var prev = neighbour(ep.n, -1), next = neighbour(ep.n, 1);
    var p = el("a", "step-link" + (prev === null ? " off" : ""), "‹ k"); if (prev !== null) p.href = "#e=" + prev; nav.appendChild(p);
    var q = el("a", "step-link" + (next === null ? " off" : ""), "j ›"); if (next !== null) q.href = "#e=" + next; nav.appendChild(q);
    head.appendChild(nav);
    head.appendChild(el("h1", null, ep.id));
    if (ep.goal) head.appendChild(el("p", "ep-goal", ep.goal));
    var meta = el("div", "meta");
    [["task family", ep.task], ["split", ep.split], ["stop", ep.stop || ep.status], ["Judge passes", ep.iterations], ["ran under", ep.trim],
     ["judge / planner", ep.judge ? ep.judge + " / " + ep.planner : null], ["cost", ep.cost === null ? null : money(ep.cost)]]
      .forEach(function (m) { if (m[1] !== null && m[1] !== undefined) { var s = el("span", "tag"); s.appendChild(el("b", null, m[0] + " ")); s.appendChild(document.createTextNode(String(m[1]))); meta.appendChild(s); } });
    head.appendChild(meta);
    if (ep.objects && ep.objects.length) {  // another domain's scene: the ids the plan names, by name
      var objects = el("div", "meta scene-objects");
      objects.appendChild(el("b", null, "scene objects "));
      ep.objects.forEach(function (o) { objects.appendChild(el("span", "tag", o[1] + " (" + o[0] + ")")); });
      head.appendChild(objects);
    }
    if (ep.error) head.appendChild(el("p", "error-box", ep.error));
    (ep.warnings || []).forEach(function (w) { head.appendChild(el("p", "warning-box", w)); });
    view.appendChild(head);

    var legend = el("div", "legend");
    legend.appendChild(el("span", "l-removed", "removed by the Judge, with its reason"));
    legend.appendChild(el("span", "l-inserted", "inserted by the Planner"));
    legend.appendChild(el("span", "l-optional", "optional, with its kind and reason: only minimal removes it (" + (state.trim === "minimal" ? "removed here" : "kept here") + ")"));
    legend.appendChild(el("span", "l-overruled", "overruled by you"));
    legend.appendChild(el("span", "l-help", "Keep / Remove / Reject on a step overrules the verdict; decisions stay in this browser."));
    var chosen = $("f-evidence").value;
    var pick = el("select"); pick.id = "ep-evidence"; pick.setAttribute("aria-label", "Evidence level of the changes shown");
    [""].concat(PV.data.levels).forEach(function (name) {
      var o = el("option", null, name ? name + " changes" : "changes at every level"); o.value = name; pick.appendChild(o);
    });
    pick.value = chosen;
    pick.addEventListener("change", function () {  // the index's filter too: j/k follow it
      $("f-evidence").value = pick.value; state.page = 0; applyFilters(); renderEpisode(ep);
    });
    legend.appendChild(pick);
    view.appendChild(legend);
    var levels = steps.map(function (s) { return s.e; }).filter(Boolean).concat(ep.inserted.map(function (x) { return x[4]; }));
    if (chosen) {
      var shown = levels.filter(function (e) { return e === chosen; }).length;
      view.appendChild(el("p", "level-note", "Showing " + chosen + " changes: " + shown + " of " + levels.length + "; the others are dimmed."));
    }
    function level(li, body, e) {  // the evidence pill, and dimmed when another level is chosen
      if (!e) return;
      body.insertBefore(el("span", "pill evidence e-" + e, e), body.firstChild.nextSibling);
      if (chosen && e !== chosen) li.classList.add("off-level");
    }

    var fp = finalPlan(ep, steps);
    var cols = el("div", "plans");
    // original
    var left = el("section", "plan original");
    var removedCount = fp.kept.filter(function (k) { return !k; }).length;
    var optionalCount = steps.filter(function (s) { return s.o; }).length;
    var lh = el("h2", null, "Original plan ");
    lh.appendChild(el("span", "count", steps.length + " steps, " + removedCount + " removed" + (optionalCount ? ", " + optionalCount + " optional" : "")));
    left.appendChild(lh);
    var ol = el("ol", "steps");
    steps.forEach(function (s, i) {
      var d = decided(ep, "s" + i);
      var judgeKeeps = ep.mode === "static" || s.v === "keep";
      var keep = fp.kept[i];
      var made = line(s, i + 1, keep ? "" : "removed"), li = made.li, body = made.body;
      if (d) li.classList.add("overruled");
      if (s.r && (!judgeKeeps || ep.mode === "static")) body.appendChild(el("div", "reason", (ep.mode === "static" ? "Judge proposes removing: " : "") + s.r + (s.it ? "  · pass " + s.it : "")));
      level(li, body, s.e);
      markOptional(made, s, s.v === "keep");
      if (d) body.appendChild(el("div", "decision-note", d.verdict === "keep" ? "Kept by the reviewer (the Judge removed it)" : "Removed by the reviewer"));
      if (!s.who) {
        var b = el("button", "decide " + (d ? "undo" : keep ? "to-remove" : "to-keep"), d ? "Undo" : keep ? "Remove" : "Keep");
        b.type = "button";
        b.title = d ? "Back to the Judge's verdict" : keep ? "Overrule: remove this step" : "Overrule: keep this step";
        b.addEventListener("click", function () {
          decide(ep, "s" + i, d ? null : (keep ? "remove" : "keep"), s.a, null, s.o ? s.o.kind : null);
          renderEpisode(ep);
        });
        li.appendChild(b);
      }
      ol.appendChild(li);
    });
    left.appendChild(ol);
    // refined
    var right = el("section", "plan refined");
    var ins = fp.plan.filter(function (x) { return x.inserted; }).length;
    var rh = el("h2", null, "Refined plan "); rh.appendChild(el("span", "count", fp.plan.length + " steps, " + ins + " inserted")); right.appendChild(rh);
    right.appendChild(el("p", "numbering", "Numbered as in the refined plan; the original step's number beside it."));
    var rl = el("ol", "steps");
    fp.plan.forEach(function (x, position) {
      if (x.step) {
        var kept = line(x.step, position + 1, "", "was " + (x.i + 1));
        markOptional(kept, x.step, false);
        rl.appendChild(kept.li);
        return;
      }
      var item = x.inserted.ins, k = x.inserted.k;
      var added = line({ a: item[1] }, position + 1, "inserted", "new");
      if (item[2]) added.body.appendChild(el("div", "reason", item[2] + "  · pass " + item[3]));
      level(added.li, added.body, item[4]);
      var b2 = el("button", "decide to-remove", "Reject"); b2.type = "button"; b2.title = "Overrule: leave this insertion out";
      b2.addEventListener("click", function () { decide(ep, "i" + k, "remove", item[1]); renderEpisode(ep); });
      added.li.appendChild(b2);
      rl.appendChild(added.li);
    });
    var rejected = ep.inserted.filter(function (_, k) { var d = decided(ep, "i" + k); return d && d.verdict === "remove"; });
    ep.inserted.forEach(function (item, k) {
      var d = decided(ep, "i" + k);
      if (!d || d.verdict !== "remove") return;
      var dropped = line({ a: item[1] }, "–", "inserted rejected overruled", "new");
      dropped.body.appendChild(el("div", "decision-note", "Insertion rejected by the reviewer"));
      var b3 = el("button", "decide undo", "Undo"); b3.type = "button";
      b3.addEventListener("click", function () { decide(ep, "i" + k, null, item[1]); renderEpisode(ep); });
      dropped.li.appendChild(b3);
      rl.appendChild(dropped.li);
    });
    right.appendChild(rl);
    if (rejected.length) right.appendChild(el("p", "muted small", rejected.length + " insertion(s) rejected"));
    cols.appendChild(left); cols.appendChild(right);
    view.appendChild(cols);

    // iterations
    var hist = el("section", "history");
    hist.appendChild(el("h2", null, "Judge passes"));
    if (!ep.passes.length) hist.appendChild(el("p", "muted", "No Judge pass was recorded."));
    ep.passes.forEach(function (pass, k) {
      var det = el("details"); if (k === 0 && ep.passes.length <= 3) det.open = true;
      var sum = el("summary");
      var objections = pass.flags.length + pass.missing.length;
      sum.appendChild(el("b", null, "Pass " + pass.it));
      sum.appendChild(el("span", "muted", objections ? "  " + pass.flags.length + " to remove, " + pass.missing.length + " missing, " + pass.edits.length + " edits" : "  no objections"));
      if (pass.vetoes.length) sum.appendChild(el("span", "pill veto", pass.vetoes.length + " vetoed"));
      det.appendChild(sum);
      function list(title, items, render) {
        if (!items.length) return;
        det.appendChild(el("h3", null, title));
        var ul = el("ul", "plain"); items.forEach(function (it) { ul.appendChild(render(it)); }); det.appendChild(ul);
      }
      list("Flags", pass.flags, function (f) { var li = el("li"); if (f[3]) li.appendChild(el("span", "pill evidence e-" + f[3], f[3])); li.appendChild(el("code", "action", (f[0] + 1) + ". " + f[1])); li.appendChild(el("div", "reason", f[2])); return li; });
      list("Missing", pass.missing, function (m) { var li = el("li", null, m[0]); if (m[1]) { li.appendChild(document.createTextNode(" ")); li.appendChild(el("code", "action", m[1])); } return li; });
      // an edit's reason is null when a flag above gave it for the same step: shown once
      list("Edits", pass.edits, function (e) { var li = el("li", "edit " + e[0]); li.appendChild(el("span", "pill " + e[0], e[0])); li.appendChild(el("code", "action", e[1])); li.appendChild(e[2] === null ? el("span", "muted", " as flagged") : el("div", "reason", e[2])); return li; });
      list("Dropped", pass.dropped, function (d) { var li = el("li"); li.appendChild(el("code", null, d[0])); li.appendChild(el("div", "reason", d[1])); return li; });
      list("Vetoed", pass.vetoes, function (v) { return el("li", null, v); });
      hist.appendChild(det);
    });
    view.appendChild(hist);
    view.appendChild(el("p", "hint", "Keys: j next episode, k previous, u or Esc back to the list."));
    document.title = ep.id + " · planverify review";
    window.scrollTo(0, 0);
  }

  // ---- routing and keys --------------------------------------------------------------------
  function route() {
    var m = /^#e=(\d+)$/.exec(location.hash);
    if (m) {
      var n = +m[1];
      $("index-view").hidden = true; $("episode-view").hidden = false;
      var i = -1; state.filtered.forEach(function (r, k) { if (r[col.n] === n) i = k; });
      if (i >= 0) state.cursor = i;
      if (!PV.episodes[n]) $("episode-view").textContent = "Loading…";
      load(n, renderEpisode);
    } else {
      state.current = null;
      $("episode-view").hidden = true; $("index-view").hidden = false;
      document.title = PV.data.title + " · planverify review";
      renderRows();
    }
  }
  function keys(ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    var typing = /^(INPUT|SELECT|TEXTAREA)$/.test(ev.target.tagName);
    if (typing) { if (ev.key === "Escape") ev.target.blur(); return; }
    if (state.current !== null) {
      if (ev.key === "j" || ev.key === "k") {
        var other = neighbour(state.current, ev.key === "j" ? 1 : -1);
        if (other !== null) location.hash = "e=" + other;
      } else if (ev.key === "u" || ev.key === "Escape") { location.hash = ""; }
      return;
    }
    if (ev.key === "j") moveCursor(1);
    else if (ev.key === "k") moveCursor(-1);
    else if (ev.key === "Enter" && state.filtered[state.cursor]) location.hash = "e=" + state.filtered[state.cursor][col.n];
    else if (ev.key === "/") { ev.preventDefault(); $("search").focus(); }
  }
  // Episodes with removals or insertions at a level (a row's `levels`: counts per level), as
  // the chosen trim policy reads them.
  function fillLevels() {
    var select = $("f-evidence");
    PV.data.levels.forEach(function (name) { var o = el("option"); o.value = name; select.appendChild(o); });
    labelLevels();
  }
  function labelLevels() {
    PV.data.levels.forEach(function (name, k) {
      var n = PV.data.rows.filter(function (r) { return viewed(r, "levels")[k] > 0; }).length;
      $("f-evidence").options[k + 1].textContent = "with " + name + " changes (" + n + ")";
    });
  }
  // The trim switch: every count, the summary and the episode page follow it.
  function setTrim(trim) {
    state.trim = trim;
    document.documentElement.dataset.trim = trim;
    document.querySelectorAll("#trim button").forEach(function (b) { b.setAttribute("aria-pressed", String(b.dataset.trim === trim)); });
    document.querySelectorAll(".summary .trim-view").forEach(function (v) { v.hidden = v.dataset.trim !== trim; });
    labelLevels();
    applyFilters();
    if (state.current !== null && PV.episodes[state.current]) renderEpisode(PV.episodes[state.current]);
  }
  function fillTrim() {
    var ran = Object.keys(PV.data.ran).map(function (t) { return t + " (" + PV.data.ran[t] + ")"; }).join(", ");
    $("trim").title = "Trim policy the site reads the results under; they ran under " + ran;
    document.querySelectorAll("#trim button").forEach(function (b) {
      b.addEventListener("click", function () { if (b.dataset.trim !== state.trim) setTrim(b.dataset.trim); });
    });
  }
  function start() {
    state.trim = PV.data.trim;
    document.documentElement.dataset.trim = state.trim;
    fillTrim();
    fillSelect("f-task", "task"); fillSelect("f-split", "split"); fillSelect("f-stop", "stop"); fillLevels();
    ["search", "f-task", "f-split", "f-stop", "f-evidence", "f-changed", "f-decided"].forEach(function (id) {
      $(id).addEventListener(id === "search" ? "input" : "change", function () { state.page = 0; state.cursor = 0; applyFilters(); });
    });
    document.querySelectorAll("#grid th").forEach(function (th) {
      th.addEventListener("click", function () {
        var k = th.dataset.key;
        state.desc = state.sort === k ? !state.desc : ["removed", "optional", "inserted", "vetoes", "cost", "iterations", "steps", "decided"].indexOf(k) >= 0;
        state.sort = k; applyFilters();
      });
    });
    $("download").addEventListener("click", download);
    $("home").addEventListener("click", function (ev) { ev.preventDefault(); location.hash = ""; });
    document.addEventListener("keydown", keys);
    window.addEventListener("hashchange", route);
    window.addEventListener("storage", function () { decisions = loadStore(); updateDecided(); });
    updateDecided();
    setTrim(state.trim);
    route();
    window.PV_FIRST_RENDER_MS = performance.now();
    document.documentElement.dataset.ready = "1";
  }
})();
