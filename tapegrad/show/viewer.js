// tapegrad's step-through viewer: the page's data is the JSON above (tapegrad.show.viewer_data);
// this script draws it and plays the reverse sweep. No network, no library.
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("tapegrad-data").textContent);
  var ROW = 22;
  var steps = DATA.steps, forward = DATA.forward, source = DATA.source;
  var N = steps.length;
  var pos = N ? 0 : 0;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // A virtualized list: only the rows in view (and a few around them) are in the page.
  function VList(host, count, render) {
    var inner = el("div", "vinner");
    inner.style.height = (count * ROW) + "px";
    host.textContent = "";
    host.appendChild(inner);
    function refresh() {
      var top = host.scrollTop, h = host.clientHeight || 400;
      var first = Math.max(0, Math.floor(top / ROW) - 8);
      var last = Math.min(count, Math.ceil((top + h) / ROW) + 8);
      var frag = document.createDocumentFragment();
      for (var i = first; i < last; i++) {
        var row = render(i);
        row.classList.add("vrow");
        row.style.top = (i * ROW) + "px";
        row.setAttribute("data-index", String(i));
        frag.appendChild(row);
      }
      inner.textContent = "";
      inner.appendChild(frag);
    }
    function show(i) {  // scroll row i into view (to the middle) if it is not in view
      if (i < 0 || i >= count) return;
      var top = i * ROW, h = host.clientHeight || 400;
      if (top < host.scrollTop || top + ROW > host.scrollTop + h) host.scrollTop = Math.max(0, top - h / 2);
    }
    host.addEventListener("scroll", refresh);
    return { refresh: refresh, show: show };
  }

  function span(cls, text) { return el("span", cls, text); }

  // --- what each position of the sweep holds -------------------------------------------
  var forwardIndex = {};
  forward.forEach(function (r, i) { forwardIndex[r.name] = i; });
  var targets = [], targetIndex = {}, firstStep = {};
  steps.forEach(function (s, i) {
    if (!(s.target in targetIndex)) {
      targetIndex[s.target] = targets.length;
      targets.push(s.target);
      firstStep[s.target] = i;
    }
  });
  var sourceIndex = {};
  source.forEach(function (line, i) {
    var m = /^\s+(\w+) = /.exec(line);
    if (m && !(m[1] in sourceIndex)) sourceIndex[m[1]] = i;
  });

  // the table after `p` steps: target -> {value, step, kind}
  function tableAt(p) {
    var t = {};
    for (var i = 0; i < p; i++) t[steps[i].target] = { value: steps[i].total, step: i, kind: steps[i].kind };
    return t;
  }

  var table = {};
  function current() { return pos > 0 ? steps[pos - 1] : null; }

  // --- the four lists -------------------------------------------------------------------
  var forwardList = VList(document.getElementById("forward"), forward.length, function (i) {
    var r = forward[i], s = current();
    var row = el("div", r.kind === "input" ? "input" : "");
    row.setAttribute("data-name", r.name);
    row.title = r.text + " = " + r.value.text;
    row.appendChild(span("name", r.text));
    row.appendChild(span("val", " = " + r.value.text));
    if (s) {
      if (s.reads.indexOf(r.name) >= 0) row.classList.add("reads");
      if (s.holder === r.name) row.classList.add("holder");
      if (s.target === r.name) row.classList.add("target");
    }
    return row;
  });

  var stepList = VList(document.getElementById("steps"), N, function (i) {
    var s = steps[i];
    var row = el("div", i === pos - 1 ? "current" : (i >= pos ? "future" : ""));
    row.setAttribute("data-step", String(i + 1));
    var text = stepText(s);
    row.title = text;
    row.appendChild(span("name", (i + 1) + ". "));
    row.appendChild(document.createTextNode(text));
    return row;
  });

  var ybarList = VList(document.getElementById("ybar"), targets.length, function (i) {
    var name = targets[i], entry = table[name], s = current();
    var row = el("div", "ybar-row");
    row.setAttribute("data-name", name);
    var adjoint = "d" + name;
    if (!entry) {
      row.classList.add("pending");
      row.appendChild(span("name", adjoint));
      row.appendChild(document.createTextNode("  not reached yet"));
      return row;
    }
    row.setAttribute("data-value", JSON.stringify(entry.value.data));
    row.title = adjoint + " = " + entry.value.text;
    row.appendChild(span("name", adjoint));
    row.appendChild(document.createTextNode(" = " + entry.value.text));
    row.appendChild(span("val", "  (" + (entry.kind === "add" ? "added" : entry.kind === "seed" ? "seed" : "set") +
                             " at step " + (entry.step + 1) + ")"));
    if (s && s.target === name) row.classList.add(s.kind === "add" ? "add" : "set");
    else if (s && s.holder === name) row.classList.add("consumed");
    return row;
  });

  var sourceList = VList(document.getElementById("source"), source.length, function (i) {
    var s = current();
    var row = el("div", "");
    row.textContent = source[i];
    row.title = source[i];
    if (s && (sourceIndex[s.tangent] === i || sourceIndex[s.source] === i)) row.classList.add("current");
    return row;
  });

  function stepText(s) {
    if (s.kind === "seed") return s.adjoint + " = " + s.value.text + "   (seed)";
    if (s.kind === "add") return s.adjoint + " += " + s.formula + " = " + s.value.text;
    return s.adjoint + " = " + s.formula + " = " + s.value.text;
  }

  // --- the step's panel and the gradient ------------------------------------------------
  function dd(dl, term, node) {
    dl.appendChild(el("dt", "", term));
    var d = el("dd");
    if (typeof node === "string") d.textContent = node; else d.appendChild(node);
    dl.appendChild(d);
  }

  function drawDetail() {
    var box = document.getElementById("detail"), s = current();
    box.textContent = "";
    if (!N) {
      box.appendChild(el("p", "empty", "A traced tape: no reverse sweep is recorded on it. " +
                                       "tapegrad.show.viewer(f, *args) records one and shows it here."));
      return;
    }
    if (!s) {
      box.removeAttribute("data-var");
      box.appendChild(el("p", "kind", "The forward pass has run: every value of the forward program is known. " +
                                       "Step on to run the reverse sweep, from the seed back to the inputs."));
      return;
    }
    box.setAttribute("data-var", s.var);
    box.setAttribute("data-target", s.target);
    box.setAttribute("data-value", JSON.stringify(s.value.data));
    box.setAttribute("data-total", JSON.stringify(s.total.data));
    var head = el("div", "kind");
    head.appendChild(span("tag " + s.kind, s.kind === "add" ? "add" : s.kind === "seed" ? "seed" : "set"));
    head.appendChild(document.createTextNode("  step " + pos + " of " + N));
    box.appendChild(head);
    var line = el("div", "line");
    line.appendChild(el("code", "", stepText(s)));
    box.appendChild(line);
    var dl = el("dl");
    if (s.kind === "seed") {
      dd(dl, "means", "d" + s.target + " = \u2202result/\u2202" + s.target + " = 1 (or the seed given): where the sweep starts");
    } else {
      dd(dl, "pullback", "pb" + s.holder + ", the pullback of " + s.holder + ", run on d" + s.holder);
      dd(dl, "formula", s.formula);
    }
    var value = el("code", "value", s.value.text);
    value.setAttribute("data-value", JSON.stringify(s.value.data));
    dd(dl, "value", value);
    if (s.value.shape && s.value.shape.length) dd(dl, "shape", "(" + s.value.shape.join(", ") + ")");
    if (s.reads.length) {
      var reads = el("div");
      s.reads.forEach(function (name) {
        var r = forward[forwardIndex[name]];
        reads.appendChild(el("div", "", name + " = " + (r ? r.value.text : "?")));
      });
      dd(dl, "reads", reads);
    }
    if (s.kind === "add") dd(dl, "d" + s.target + " is now", s.total.text);
    else if (s.kind === "set") dd(dl, "d" + s.target, "set: its first share");
    dd(dl, "on the tape", s.var + " (" + s.tangent + " in the source)");
    box.appendChild(dl);
  }

  function drawGradient() {
    var box = document.getElementById("gradient");
    box.textContent = "";
    if (!DATA.gradient.length) {
      box.appendChild(el("p", "empty", N ? "No input reaches the result." : "No sweep, no gradient."));
      return;
    }
    var done = pos === N;
    box.className = done ? "" : "waiting";
    if (!done) box.appendChild(el("div", "", "after the last step:"));
    DATA.gradient.forEach(function (g) {
      var row = el("div", "grad-row");
      row.setAttribute("data-name", g.name);
      row.setAttribute("data-value", JSON.stringify(g.value.data));
      row.appendChild(el("code", "", "\u2202f/\u2202" + g.name + " = " + g.adjoint + " = " + (done ? g.value.text : "\u2026")));
      box.appendChild(row);
    });
  }

  function draw() {
    table = tableAt(pos);
    document.getElementById("pos").textContent = N ? ("step " + pos + " / " + N) : "forward only";
    document.getElementById("first").disabled = document.getElementById("prev").disabled = pos === 0;
    document.getElementById("next").disabled = document.getElementById("last").disabled = pos === N;
    var s = current();
    if (s) {
      stepList.show(pos - 1);
      if (s.holder in forwardIndex) forwardList.show(forwardIndex[s.holder]);
      else if (s.target in forwardIndex) forwardList.show(forwardIndex[s.target]);
      ybarList.show(targetIndex[s.target]);
      if (s.tangent in sourceIndex) sourceList.show(sourceIndex[s.tangent]);
    }
    forwardList.refresh(); stepList.refresh(); ybarList.refresh(); sourceList.refresh();
    drawDetail();
    drawGradient();
  }

  function go(p) {
    p = Math.max(0, Math.min(N, p));
    if (p !== pos) { pos = p; draw(); }
  }

  document.getElementById("first").addEventListener("click", function () { go(0); });
  document.getElementById("prev").addEventListener("click", function () { go(pos - 1); });
  document.getElementById("next").addEventListener("click", function () { go(pos + 1); });
  document.getElementById("last").addEventListener("click", function () { go(N); });
  document.addEventListener("keydown", function (e) {
    var keys = { ArrowRight: pos + 1, ArrowLeft: pos - 1, Home: 0, End: N };
    if (e.key in keys && !e.altKey && !e.ctrlKey && !e.metaKey) { e.preventDefault(); go(keys[e.key]); }
  });
  window.addEventListener("resize", draw);
  // for the tests and the curious: the position, and the table of adjoints at it
  window.tapegradViewer = { go: go, position: function () { return pos; }, steps: N,
                            table: function () { return tableAt(pos); } };
  draw();
})();
