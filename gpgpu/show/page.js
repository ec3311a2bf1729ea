
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("gpgpu-data").textContent);
  var passes = data.passes, n = passes.length, current = 0, timer = null, textures = data.textures;
  var $ = function (id) { return document.getElementById(id); };
  var img = $("frame"), caption = $("caption"), slider = $("slider"), counter = $("counter");
  var playButton = $("play");
  var pinned = null, hovered = null, liveOn = false, staticChosen = false;
  $("trace-text").textContent = data.trace;
  if (data.summary) { $("summary").hidden = false; $("summary").textContent = "What the passes compute: " + data.summary; }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function bytes(s) {
    var bin = atob(s), u = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) u[i] = bin.charCodeAt(i);
    return u.buffer;
  }
  function f32(s) { return new Float32Array(bytes(s)); }
  function i32(s) { return new Int32Array(bytes(s)); }
  function b64(a) {
    var u = new Uint8Array(a.buffer, a.byteOffset, a.byteLength), s = "";
    for (var i = 0; i < u.length; i += 8192) s += String.fromCharCode.apply(null, u.subarray(i, i + 8192));
    return btoa(s);
  }
  // Python's "%g" (6 significant digits, or digits), as gpgpu.show writes coordinates
  function g(v, digits) {
    var P = digits || 6;
    if (isNaN(v)) return "nan";
    if (!isFinite(v)) return v > 0 ? "inf" : "-inf";
    if (v === 0) return (1 / v < 0) ? "-0" : "0";
    var s = v.toExponential(P - 1), parts = s.split("e"), exp = parseInt(parts[1], 10);
    var strip = function (t) { return t.indexOf(".") >= 0 ? t.replace(/0+$/, "").replace(/\.$/, "") : t; };
    if (exp < -4 || exp >= P) {
      var a = Math.abs(exp);
      return strip(parts[0]) + "e" + (exp < 0 ? "-" : "+") + (a < 10 ? "0" : "") + a;
    }
    return strip(v.toFixed(P - 1 - exp));
  }
  function xy(t) {
    var c = Array.prototype.map.call(t, function (v) { return g(v); });
    if (c.length === 3 && c[2] === "0") c = c.slice(0, 2);
    return "(" + c.join(", ") + ")";
  }
  function shape(serial) { return textures[String(serial)]; }
  // the page's passes: the recorded ones, or in live mode those the browser ran (usePasses)
  function usePasses(list) {
    passes = list; n = list.length;
    slider.max = String(n);
  }
  // a vertex buffer (V.xy, T0.xyz, T1.xyz per vertex, float32) as the vertex list shows it
  function vertsOf(a) {
    var out = [];
    for (var i = 0; i + 7 < a.length; i += 8) out.push([[a[i], a[i + 1]], [a[i + 2], a[i + 3], a[i + 4]], [a[i + 5], a[i + 6], a[i + 7]]]);
    return out;
  }

  // ------------------------------------------------------------------ the values of every pass
  // values[k]: the target after pass k; inputs[k]: [sampler, serial, values] as pass k read them.
  // list: the page's passes; base: serial -> the values of a texture's first upload, where the
  // student chose them (a seed, an edit) instead of the recorded ones
  function walk(list, valuesOf, base) {
    var known = {}, out = [], seen = {};
    for (var k = 0; k < list.length; k++) {
      var p = list[k];
      p.uploads.forEach(function (u) {
        var first = !seen[u[0]];
        seen[u[0]] = true;
        known[u[0]] = (first && base[u[0]]) ? base[u[0]] : f32(u[1]);
      });
      var v = valuesOf(k);
      if (v === null) { out.push(null); continue; }
      out.push({inputs: p.inputs.map(function (q) { return [q[0], q[1], known[q[1]]]; }), values: v});
      known[p.target_serial] = v;
    }
    return out;
  }
  var recorded = walk(passes, function (k) { return f32(passes[k].values); }, {});
  var recordedNotes = passes.map(function (p) {
    if (!p.notes) return null;
    var t = p.target[0] * p.target[1];
    return {count: i32(p.notes.count), T0: f32(p.notes.T0), T1: f32(p.notes.T1), texels: i32(p.notes.texels),
            sites: i32(p.notes.sites), cells: t};
  });

  // ------------------------------------------------------------------ a fragment explained
  function explain(k, x, y, notes) {
    var p = passes[k];
    if (!notes) return null;
    var rows = p.target[0], cols = p.target[1], M = data.max_fetches;
    if (x < 0 || y < 0 || x >= cols || y >= rows) return null;
    var c = y * cols + x, count = notes.count[c];
    if (count < 0) return {x: x, y: y, shaded: false};
    var f = {x: x, y: y, shaded: true, wpos: xy([x + 0.5, y + 0.5]),
             T0: xy(notes.T0.subarray(3 * c, 3 * c + 3)), T1: xy(notes.T1.subarray(3 * c, 3 * c + 3)),
             fetch_count: count, fetches: []};
    for (var i = 0; i < Math.min(count, M); i++) {
      var site = notes.sites[c * M + i], s = data.sites[p.source] ? data.sites[p.source][site] : null;
      f.fetches.push({sampler: s ? s[0] : "?", call: s ? s[1] : "?", site: site,
                      texel: [notes.texels[2 * (c * M + i)], notes.texels[2 * (c * M + i) + 1]],
                      lines: p.site_lines.length ? p.site_lines[site] : null});
    }
    return f;
  }
  function currentNotes(k) { return liveOn ? live.notes(k) : recordedNotes[k]; }
  function fragmentOf(k) {
    var at = pinned || hovered;
    var notes = currentNotes(k);
    if (at) {
      var f = explain(k, at[0], at[1], notes);
      if (f) return f;
    }
    if (!liveOn) return passes[k].fragment ? Object.assign({shaded: true}, passes[k].fragment,
        {fetches: passes[k].fetches, fetch_count: passes[k].fetch_count}) : null;
    var ch = passes[k].fragment;
    return ch ? explain(k, ch.x, ch.y, notes) : null;
  }

  function showSource(p, f) {
    var pre = $("kernel-source");
    pre.textContent = "";
    $("kernel-title").textContent = p.source ? "glsl/" + p.source : p.file;
    $("kernel-doc").textContent = p.doc;
    var info = [];
    if (!p.source) {
      info.push("A copy into the texture (" + p.file + "): no fragment program runs.");
    } else if (!p.recorded) {
      info.push("Its vertex program places this pass's primitive, so the recorder notes no fetches for it.");
    } else if (!f) {
      info.push("This pass shaded no fragment.");
    } else if (!f.shaded) {
      info.push("fragment (" + f.x + ", " + f.y + "): not shaded by this pass (outside its primitive); " +
                "point at an outlined cell.");
    } else {
      info.push("fragment (" + f.x + ", " + f.y + "): WPOS" + f.wpos, "T0 = " + f.T0, "T1 = " + f.T1);
      f.fetches.forEach(function (q, k) {
        info.push((k + 1) + ". " + q.call + " -> " + q.sampler + "(" + q.texel[0] + ", " + q.texel[1] + ")" +
                  (q.lines ? "   line " + q.lines[0] + (q.lines[1] > q.lines[0] ? "-" + q.lines[1] : "") : ""));
      });
      if (f.fetch_count > f.fetches.length)
        info.push("... " + f.fetch_count + " fetches in all, the first " + f.fetches.length + " shown");
    }
    $("fragment-info").textContent = info.join("\n");
    if (!p.source) return;
    var lines = data.sources[p.source], tags = {}, sites = {};
    p.site_lines.forEach(function (s) { for (var i = s[0]; i <= s[1]; i++) sites[i] = true; });
    ((f && f.shaded) ? f.fetches : []).forEach(function (q, k) {
      if (!q.lines) return;
      for (var i = q.lines[0]; i <= q.lines[1]; i++) (tags[i] = tags[i] || []).push(k + 1);
    });
    lines.forEach(function (text, i) {
      var no = i + 1;
      if (no === lines.length && text === "") return;
      var line = el("span", "line");
      line.dataset.line = no;
      if (tags[no]) { line.classList.add("fetch"); line.dataset.fetches = tags[no].join(","); }
      else if (sites[no]) line.classList.add("site");
      line.appendChild(el("span", "no", String(no)));
      var c = text.indexOf("//");
      if (c >= 0) {
        line.appendChild(document.createTextNode(text.slice(0, c)));
        line.appendChild(el("span", "comment", text.slice(c)));
      } else {
        line.appendChild(document.createTextNode(text));
      }
      if (tags[no]) line.appendChild(el("span", "tag", "\u2190 fetch " + tags[no].join(", ")));
      pre.appendChild(line);
    });
  }

  // ------------------------------------------------------------------ a fragment's arithmetic
  // the kernel's expression (one table, gpgpu/show/arithmetic.py: data.arithmetic) with the values
  // its fetches read from the pass's input textures (this browser's, live; the recorded ones, static)
  var FUNCS = {sqrt: Math.sqrt, abs: Math.abs, min: Math.min, max: Math.max,
               where: function (c, a, b) { return c ? a : b; }, pick: function (v, i) { return v[Math.floor(i)]; },
               finite: function (v) { return isFinite(v); },
               dot: function (a, b) { var t = 0; for (var i = 0; i < Math.min(a.length, b.length); i++) t += a[i] * b[i]; return t; }};
  function texelOf(values, serial, tx, ty) {
    var s = shape(serial), at = (ty * s[1] + tx) * s[2];
    if (!values || tx < 0 || ty < 0 || tx >= s[1] || ty >= s[0]) return null;
    return s[2] === 1 ? values[at] : Array.prototype.slice.call(values, at, at + s[2]);
  }
  function numText(v) {
    if (Array.isArray(v)) return "[" + v.map(exact).join(", ") + "]";
    return v < 0 || (v === 0 && 1 / v < 0) ? "(" + exact(v) + ")" : exact(v);
  }
  // a replayed kernel's dot(a, b) as the sum of its products: the first SHOWN_TERMS, then "+ ..."
  var SHOWN_TERMS = 16;
  function sumText(a, b) {
    var terms = [];
    for (var i = 0; i < Math.min(a.length, b.length); i++) terms.push(numText(a[i]) + " * " + numText(b[i]));
    if (!terms.length) return "0";
    return "(" + terms.slice(0, SHOWN_TERMS).join(" + ") + (terms.length > SHOWN_TERMS ? " + ..." : "") + ")";
  }
  function substitute(formula, names, more, expand) {
    function name(w) {
      if (!(w in names)) return w;
      var v = names[w];
      return Array.isArray(v) && more[w] ? numText(v).replace(/\]$/, ", ...]") : numText(v);
    }
    var re = /\bdot\(\s*([A-Za-z_]\w*)\s*,\s*([A-Za-z_]\w*)\s*\)|\b[A-Za-z_]\w*\b(?!\s*\()/g;
    return formula.replace(re, function (w, a, b) {
      if (a === undefined) return name(w);
      if (expand && Array.isArray(names[a]) && Array.isArray(names[b])) return sumText(names[a], names[b]);
      return "dot(" + name(a) + ", " + name(b) + ")";
    });
  }
  // name -> value of every operand of a kernel with a replay (gpgpu/show/arithmetic.py: replayed):
  // its loop read again from the pass's input textures; null where a texel it needs is not there
  function replayOperands(entry, p, f, view) {
    var R = entry.replay, u = p.uniforms || {}, names = {}, first = {}, ok = true, sites = data.sites[p.source] || [];
    Object.keys(u).forEach(function (k) { names[k] = u[k]; });
    var n = Math.floor(Number(names[R.count])), bare = entry.operands.map(function (o) { return o.replace(/\*$/, ""); });
    f.fetches.forEach(function (q) { if (!(q.site in first)) first[q.site] = q.texel; });
    function at(name, tx, ty) {
      var s = sites[bare.indexOf(name)], inp = s ? view.inputs.filter(function (i) { return i[0] === s[0]; })[0] : null;
      var v = inp ? texelOf(inp[2], inp[1], tx, ty) : null;
      if (v === null || v === undefined) ok = false;
      return v;
    }
    var cut = n;
    Object.keys(R.walk || {}).forEach(function (name) {
      var d = typeof R.walk[name] === "string" ? names[R.walk[name]] : R.walk[name], s = cut ? first[bare.indexOf(name)] : [0, 0];
      if (!s) { ok = false; names[name] = []; return; }
      names[name] = [];
      for (var k = 0; k < cut; k++) names[name].push(at(name, s[0] + k * Math.trunc(d[0]), s[1] + k * Math.trunc(d[1])));
      if (name === R.until) {  // the loop stops at the first negative index (ELLPACK's padding)
        var stop = names[name].findIndex(function (j) { return j !== null && j !== undefined && j < 0; });
        if (stop >= 0) { cut = stop; names[name] = names[name].slice(0, cut); }
      }
    });
    Object.keys(R.gather || {}).forEach(function (name) {
      var w = Math.trunc(Number(names[R.gather[name][1]]));
      names[name] = (names[R.gather[name][0]] || []).map(function (j) { j = Math.trunc(j); return at(name, j % w, Math.floor(j / w)); });
    });
    (R.here || []).forEach(function (name) { names[name] = at(name, f.x, f.y); });
    names.x = f.x; names.y = f.y;
    return ok ? names : null;
  }
  // {entry, formula (null: shown only), names, more: name -> its list is cut} of fragment f of pass k
  function bindOperands(p, f, view) {
    var entry = data.arithmetic && p.source ? data.arithmetic[p.source.replace(/\.frag$/, "")] : null;
    if (!entry || !view) return null;
    if (entry.replay) {
      var replay = replayOperands(entry, p, f, view);
      return {entry: entry, formula: replay && entry.exact ? entry.formula : null, shown: entry.formula,
              names: replay || {}, more: {}, expand: true};
    }
    var made = {}, names = {}, more = {}, ok = f.fetch_count <= f.fetches.length, formula = entry.formula;
    f.fetches.forEach(function (q) {
      var inp = view.inputs.filter(function (i) { return i[0] === q.sampler; })[0];
      var v = inp ? texelOf(inp[2], inp[1], q.texel[0], q.texel[1]) : null;
      (made[q.site] = made[q.site] || []).push(v);
      if (v === null) ok = false;
    });
    entry.operands.forEach(function (name, site) {
      var vs = made[site] || [];
      if (name.slice(-1) === "*") { names[name.slice(0, -1)] = vs; more[name.slice(0, -1)] = !ok; }
      else if (vs.length === 1) names[name] = vs[0];
      else if (!vs.length && site === entry.operands.length - 1 && entry.short !== null) formula = entry.short;
      else ok = false;
    });
    var u = p.uniforms || {};
    Object.keys(u).forEach(function (k) { if (!(k in names)) names[k] = u[k]; });
    names.x = f.x; names.y = f.y;
    return {entry: entry, formula: ok && entry.exact ? formula : null, shown: formula, names: names, more: more};
  }
  function evaluateFormula(formula, names) {
    var keys = Object.keys(FUNCS).concat(Object.keys(names));
    var args = Object.keys(FUNCS).map(function (k) { return FUNCS[k]; }).concat(Object.keys(names).map(function (k) { return names[k]; }));
    return Function.apply(null, keys.concat(["return (" + formula + ");"])).apply(null, args);
  }
  function showArithmetic(k, p, f) {
    var box = $("arithmetic"), view = liveOn ? live.view(k) : recorded[k];
    box.textContent = "";
    if (!f || !f.shaded || !p.source) return;
    var b = bindOperands(p, f, view);
    if (!b) return;
    var s = shape(p.target_serial) || [p.target[0], p.target[1], 1], at = (f.y * p.target[1] + f.x) * s[2];
    box.appendChild(el("div", "arith-what", "arithmetic of fragment (" + f.x + ", " + f.y + "): " + b.entry.expression));
    var forms = typeof b.shown === "string" ? [b.shown] : b.shown, comps = "rgba";
    forms.forEach(function (form, c) {
      if (form === null || !view || !view.values) return;
      var line = el("div", b.formula ? "arith exact" : "arith shown"), written = view.values[at + c];
      line.dataset.component = String(c);
      if (forms.length > 1) line.appendChild(document.createTextNode("result." + comps[c] + ": "));
      line.appendChild(el("span", "formula", form));
      line.appendChild(document.createTextNode(" = "));
      line.appendChild(el("span", "expr", substitute(form, b.names, b.more, b.expand)));
      line.appendChild(document.createTextNode(" = "));
      line.appendChild(el("span", "result", exact(written)));
      if (b.formula) {
        var v = evaluateFormula(form, b.names);
        line.appendChild(document.createTextNode("   (written; the expression in float64: " + g(Number(v), 9) + ")"));
      } else {
        line.appendChild(document.createTextNode("   (written; shown, not evaluated: " +
          (f.fetch_count > f.fetches.length ? f.fetch_count + " fetches, the recorder notes the first " + f.fetches.length
           : "the recorder's notes do not hold every operand") + ")"));
      }
      box.appendChild(line);
    });
  }

  // ------------------------------------------------------------------ the pass drawn from values
  var canvas = $("explorer"), layout = [];
  var SENTINEL = 1e37;
  function colour(v, scale) {
    if (isNaN(v)) return "#9e9e9e";
    if (Math.abs(v) >= SENTINEL) return "#d8bfd8";
    var t = scale > 0 ? Math.min(1, Math.abs(v) / scale) : 0, a = Math.round(255 - 200 * t), b = Math.round(255 - 120 * t);
    return v >= 0 ? "rgb(255," + a + "," + a + ")" : "rgb(" + a + "," + a + ",255)";
  }
  function label(v) {
    if (isNaN(v)) return "NaN";
    if (!isFinite(v)) return v > 0 ? "inf" : "-inf";
    if (Math.abs(v) >= SENTINEL) return v.toExponential(0).replace("e+", "e");
    var s = v.toPrecision(3);
    if (s.indexOf("e") >= 0) s = v.toExponential(1);
    else if (s.indexOf(".") >= 0) s = s.replace(/0+$/, "").replace(/\.$/, "");
    return s;
  }
  function panelsOf(k, view) {
    var p = passes[k], names = {}, order = [];
    view.inputs.forEach(function (q) {
      if (!names[q[1]]) { names[q[1]] = []; order.push(q); }
      names[q[1]].push(q[0]);
    });
    var out = order.map(function (q) {
      var s = shape(q[1]);
      return {title: "input " + names[q[1]].join(" = ") + " (read)", rows: s[0], cols: s[1], comps: s[2],
              values: q[2], serial: q[1], names: names[q[1]]};
    });
    out.push({title: "target (written), after pass " + (k + 1), rows: p.target[0], cols: p.target[1],
              comps: shape(p.target_serial)[2], values: view.values, target: true});
    return out;
  }
  function drawGrid(ctx, P, notes, f) {
    var c = P.cell, fin = [], comps = P.comps;
    for (var i = 0; i < P.rows * P.cols; i++) {
      var v = P.values ? P.values[i * comps] : NaN;
      if (isFinite(v) && Math.abs(v) < SENTINEL) fin.push(Math.abs(v));
    }
    var scale = fin.length ? Math.max.apply(null, fin) : 1;
    ctx.font = "bold 12px system-ui, sans-serif";
    ctx.fillStyle = "#222";
    ctx.textAlign = "left"; ctx.textBaseline = "bottom";
    ctx.fillText(P.title, P.x, P.y - 18);
    ctx.font = "10px system-ui, sans-serif";
    ctx.fillStyle = "#777"; ctx.textAlign = "center";
    for (var x = 0; x < P.cols; x++) ctx.fillText(String(x), P.x + (x + 0.5) * c, P.y - 3);
    ctx.textAlign = "right"; ctx.textBaseline = "middle";
    for (var y = 0; y < P.rows; y++) ctx.fillText(String(y), P.x - 3, P.y + (y + 0.5) * c);
    for (y = 0; y < P.rows; y++) for (x = 0; x < P.cols; x++) {
      v = P.values ? P.values[(y * P.cols + x) * comps] : NaN;
      ctx.fillStyle = colour(v, scale);
      ctx.fillRect(P.x + x * c, P.y + y * c, c, c);
    }
    ctx.strokeStyle = "#ccc"; ctx.lineWidth = 1;
    ctx.strokeRect(P.x, P.y, P.cols * c, P.rows * c);
    if (P.target && notes) {                                  // the shaded fragments
      ctx.strokeStyle = "orange"; ctx.lineWidth = 2;
      for (y = 0; y < P.rows; y++) for (x = 0; x < P.cols; x++)
        if (notes.count[y * P.cols + x] >= 0) ctx.strokeRect(P.x + x * c + 1.5, P.y + y * c + 1.5, c - 3, c - 3);
    }
  }
  function drawValues(ctx, P) {
    var c = P.cell, comps = P.comps;
    if (c < 18) return;
    ctx.textAlign = "center"; ctx.textBaseline = "middle";
    ctx.lineWidth = 3; ctx.strokeStyle = "rgba(255,255,255,0.85)"; ctx.fillStyle = "#111";
    for (var y = 0; y < P.rows; y++) for (var x = 0; x < P.cols; x++) {
      var v = P.values ? P.values[(y * P.cols + x) * comps] : NaN, t = label(v);
      var cx = P.x + (x + 0.5) * c, cy = P.y + (y + 0.5) * c, size = Math.min(12, Math.floor(c / 3.2));
      ctx.font = size + "px ui-monospace, monospace";
      var w = ctx.measureText(t).width;
      if (w > c - 4) { size = Math.max(6, Math.floor(size * (c - 4) / w)); ctx.font = size + "px ui-monospace, monospace"; }
      ctx.strokeText(t, cx, cy); ctx.fillText(t, cx, cy);
    }
  }
  function drawPass(k) {
    var ctx = canvas.getContext("2d"), view = liveOn ? live.view(k) : recorded[k];
    var W = canvas.clientWidth || 1000, dpr = window.devicePixelRatio || 1;
    layout = [];
    if (!view) {
      canvas.width = W * dpr; canvas.height = 60 * dpr; canvas.style.height = "60px";
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.fillStyle = "#555"; ctx.font = "14px system-ui, sans-serif";
      ctx.fillText("pass " + (k + 1) + " was not run: the run stopped at pass " + (live.error.pass + 1) + ".", 10, 30);
      return;
    }
    var P = panelsOf(k, view), gap = 40, left = 30, top = 42;
    var cols = P.reduce(function (s, q) { return s + q.cols; }, 0), rows = Math.max.apply(null, P.map(function (q) { return q.rows; }));
    var cell = Math.max(6, Math.min(46, Math.floor((W - left - gap * (P.length - 1) - 10) / cols), Math.floor(520 / rows)));
    var H = top + rows * cell + 24;
    canvas.width = W * dpr; canvas.height = H * dpr; canvas.style.height = H + "px";
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    var x0 = left;
    P.forEach(function (q) { q.x = x0; q.y = top; q.cell = cell; x0 += q.cols * cell + gap; });
    layout = P;
    var notes = currentNotes(k), T = P[P.length - 1], f = fragmentOf(k);
    P.forEach(function (q) { drawGrid(ctx, q, notes, f); });
    var p = passes[k];                                       // the primitive
    ctx.save();
    ctx.beginPath(); ctx.rect(T.x - 8, T.y - 8, T.cols * cell + 16, T.rows * cell + 16); ctx.clip();
    ctx.strokeStyle = "#000"; ctx.lineWidth = 1.6;
    var V = p.verts.map(function (v) { return [T.x + v[0][0] * cell, T.y + v[0][1] * cell]; });
    var polys = [];
    if (p.primitive === "triangle") for (var t = 0; t + 2 < V.length; t += 3) polys.push(V.slice(t, t + 3));
    else if (p.primitive === "rect" || p.primitive === "texel") polys.push(V);
    polys.forEach(function (poly) {
      ctx.beginPath(); ctx.moveTo(poly[0][0], poly[0][1]);
      poly.slice(1).forEach(function (q) { ctx.lineTo(q[0], q[1]); });
      ctx.closePath(); ctx.stroke();
    });
    if (p.primitive === "line") for (t = 0; t + 1 < V.length; t += 2) {
      ctx.beginPath(); ctx.moveTo(V[t][0], V[t][1]); ctx.lineTo(V[t + 1][0], V[t + 1][1]); ctx.stroke();
    }
    ctx.restore();
    if (f && f.shaded) {                                     // the fragment and its fetches
      ctx.strokeStyle = "lime"; ctx.lineWidth = 3;
      ctx.strokeRect(T.x + f.x * cell + 1, T.y + f.y * cell + 1, cell - 2, cell - 2);
      f.fetches.forEach(function (q, i) {
        var panel = P.find(function (pp) { return pp.names && pp.names.indexOf(q.sampler) >= 0; });
        if (!panel) return;
        var tx = panel.x + q.texel[0] * cell, ty = panel.y + q.texel[1] * cell;
        ctx.strokeStyle = "lime"; ctx.lineWidth = 2.5; ctx.strokeRect(tx + 1, ty + 1, cell - 2, cell - 2);
        ctx.strokeStyle = "rgba(0,100,0,0.55)"; ctx.lineWidth = 1.2;
        var ax = T.x + (f.x + 0.5) * cell, ay = T.y + (f.y + 0.5) * cell, bx = tx + cell / 2, by = ty + cell / 2;
        var bend = 0.25 * (i + 1), mx = (ax + bx) / 2, my = (ay + by) / 2 - bend * Math.abs(ax - bx) * 0.3 - 8;
        ctx.beginPath(); ctx.moveTo(ax, ay); ctx.quadraticCurveTo(mx, my, bx, by); ctx.stroke();
        var ang = Math.atan2(by - my, bx - mx);
        ctx.beginPath(); ctx.moveTo(bx, by);
        ctx.lineTo(bx - 8 * Math.cos(ang - 0.4), by - 8 * Math.sin(ang - 0.4));
        ctx.lineTo(bx - 8 * Math.cos(ang + 0.4), by - 8 * Math.sin(ang + 0.4));
        ctx.closePath(); ctx.fillStyle = "rgba(0,100,0,0.7)"; ctx.fill();
        ctx.font = "bold 9px system-ui, sans-serif"; ctx.fillStyle = "#006400";
        ctx.textAlign = "left"; ctx.textBaseline = "top"; ctx.fillText(String(i + 1), tx + 2, ty + 1);
      });
    }
    P.forEach(function (q) { drawValues(ctx, q); });
    ctx.font = "11px system-ui, sans-serif"; ctx.fillStyle = "#555"; ctx.textAlign = "left"; ctx.textBaseline = "top";
    ctx.fillText("col \u2192   row \u2193   (a cell is (col, row); point at a cell of the target, click to pin it)",
                 left, top + rows * cell + 6);
  }
  function cellAt(ev) {
    var r = canvas.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
    var T = layout[layout.length - 1];
    if (!T) return null;
    var cx = Math.floor((x - T.x) / T.cell), cy = Math.floor((y - T.y) / T.cell);
    return (cx >= 0 && cy >= 0 && cx < T.cols && cy < T.rows) ? [cx, cy] : null;
  }
  canvas.addEventListener("mousemove", function (ev) {
    var c = cellAt(ev);
    if (pinned || !c || (hovered && c[0] === hovered[0] && c[1] === hovered[1])) return;
    hovered = c; refresh();
  });
  canvas.addEventListener("click", function (ev) {
    var c = cellAt(ev);
    pinned = (c && !(pinned && pinned[0] === c[0] && pinned[1] === c[1])) ? c : null;
    refresh();
  });

  // ------------------------------------------------------------------ live: the passes on this GPU
  var live = (function () {
    var L = data.live, pages = data.passes;
    var api = {state: "off", error: null, why: null, edits: {}, results: null, seconds: 0, exponent: 0};
    if (!L) { api.why = "this page carries no live data (written with --no-live)"; return api; }
    var gl = null, progs = {}, tex = {}, vbo = null, notesCache = {}, views = null;
    api.init = function () {
      if (gl) return true;
      var c = document.createElement("canvas");
      var ctx = c.getContext("webgl2", {antialias: false, depth: false, stencil: false});
      if (!ctx) { api.why = "this browser gives no WebGL2 context"; return false; }
      if (!ctx.getExtension("EXT_color_buffer_float")) {
        api.why = "WebGL2 here has no float render targets (EXT_color_buffer_float)"; return false;
      }
      gl = ctx;
      gl.disable(gl.DEPTH_TEST); gl.disable(gl.BLEND); gl.disable(gl.CULL_FACE); gl.disable(gl.DITHER);
      gl.disable(gl.SCISSOR_TEST);
      vbo = gl.createBuffer();
      var dbg = gl.getExtension("WEBGL_debug_renderer_info");
      api.renderer = dbg ? gl.getParameter(dbg.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER);
      return true;
    };
    function shader(type, src, what) {
      var s = gl.createShader(type);
      gl.shaderSource(s, src); gl.compileShader(s);
      if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(what + " does not compile: " + gl.getShaderInfoLog(s));
      return s;
    }
    function program(i, inst) {
      var key = i + (inst ? "i" : "");
      if (progs[key]) return progs[key];
      var q = L.programs[i], pr = gl.createProgram();
      gl.attachShader(pr, shader(gl.VERTEX_SHADER, q.vs, "the vertex program of " + q.file));
      gl.attachShader(pr, shader(gl.FRAGMENT_SHADER, inst ? q.inst : q.fs, (inst ? "the instrumented " : "") + q.file));
      gl.linkProgram(pr);
      if (!gl.getProgramParameter(pr, gl.LINK_STATUS)) throw new Error(q.file + " does not link: " + gl.getProgramInfoLog(pr));
      var vao = gl.createVertexArray();
      gl.bindVertexArray(vao);
      gl.bindBuffer(gl.ARRAY_BUFFER, vbo);
      [["V", 2, 0], ["in_T0", 3, 8], ["in_T1", 3, 20]].forEach(function (a) {
        var loc = gl.getAttribLocation(pr, a[0]);
        if (loc >= 0) { gl.enableVertexAttribArray(loc); gl.vertexAttribPointer(loc, a[1], gl.FLOAT, false, 32, a[2]); }
      });
      gl.bindVertexArray(null);
      return (progs[key] = {pr: pr, vao: vao, types: q.types});
    }
    function texture(store, serial, rows, cols, comps) {
      var t = store[serial];
      if (t) return t;
      t = gl.createTexture();
      gl.bindTexture(gl.TEXTURE_2D, t);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
      gl.texStorage2D(gl.TEXTURE_2D, 1, comps === 4 ? gl.RGBA32F : gl.R32F, cols, rows);
      t.rows = rows; t.cols = cols; t.comps = comps;
      return (store[serial] = t);
    }
    function upload(t, values) {
      gl.bindTexture(gl.TEXTURE_2D, t);
      gl.pixelStorei(gl.UNPACK_ALIGNMENT, 1);
      gl.texSubImage2D(gl.TEXTURE_2D, 0, 0, 0, t.cols, t.rows, t.comps === 4 ? gl.RGBA : gl.RED, gl.FLOAT, values);
    }
    function target(t) {
      if (!t.fbo) {
        t.fbo = gl.createFramebuffer();
        gl.bindFramebuffer(gl.FRAMEBUFFER, t.fbo);
        gl.framebufferTexture2D(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.TEXTURE_2D, t, 0);
        var st = gl.checkFramebufferStatus(gl.FRAMEBUFFER);
        if (st !== gl.FRAMEBUFFER_COMPLETE) throw new Error("a float framebuffer is not complete here (" + st + ")");
      }
      gl.bindFramebuffer(gl.FRAMEBUFFER, t.fbo);
      gl.viewport(0, 0, t.cols, t.rows);
    }
    function read(t) {
      target(t);
      var all = new Float32Array(4 * t.rows * t.cols);
      gl.readPixels(0, 0, t.cols, t.rows, gl.RGBA, gl.FLOAT, all);
      if (t.comps === 4) return all;
      var out = new Float32Array(t.rows * t.cols);
      for (var i = 0; i < out.length; i++) out[i] = all[4 * i];
      return out;
    }
    function setUniform(pr, types, name, kind, v) {
      var loc = gl.getUniformLocation(pr, name);
      if (loc === null) return;
      var t = types[name] || kind;
      if (t === "float") gl.uniform1f(loc, v[0]);
      else if (t === "int" || t === "bool") gl.uniform1i(loc, v[0]);
      else if (t === "vec2") gl.uniform2f(loc, v[0], v[1]);
      else if (t === "ivec2") gl.uniform2i(loc, v[0], v[1]);
      else if (t === "vec3") gl.uniform3f(loc, v[0], v[1], v[2]);
      else if (t === "ivec3") gl.uniform3i(loc, v[0], v[1], v[2]);
      else if (t === "vec4") gl.uniform4f(loc, v[0], v[1], v[2], v[3]);
      else if (t === "ivec4") gl.uniform4i(loc, v[0], v[1], v[2], v[3]);
      else throw new Error("uniform " + name + " of type " + t + " is not handled");
    }
    function draw(q, prog, out, store, extra) {
      gl.useProgram(prog.pr);
      target(out);
      gl.bindVertexArray(prog.vao);
      if (q.count && L.programs[q.program].attributes) {
        gl.bindBuffer(gl.ARRAY_BUFFER, vbo);
        gl.bufferData(gl.ARRAY_BUFFER, f32(q.vertices), gl.DYNAMIC_DRAW);
      }
      q.inputs.forEach(function (inp, unit) {
        gl.activeTexture(gl.TEXTURE0 + unit);
        gl.bindTexture(gl.TEXTURE_2D, store[inp[1]]);
        var loc = gl.getUniformLocation(prog.pr, inp[0]);
        if (loc !== null) gl.uniform1i(loc, unit);
      });
      setUniform(prog.pr, {}, "viewport", "vec2", [out.cols, out.rows]);
      q.uniforms.forEach(function (u) { setUniform(prog.pr, prog.types, u[0], u[1], u[2]); });
      if (extra) extra(prog.pr);
      if (q.blend) { gl.enable(gl.BLEND); gl.blendFunc(gl.ONE, gl.ONE); gl.blendEquation(gl.FUNC_ADD); }
      gl.drawArrays(q.mode, 0, q.count);
      gl.disable(gl.BLEND);
      q.inputs.forEach(function (inp, unit) { gl.activeTexture(gl.TEXTURE0 + unit); gl.bindTexture(gl.TEXTURE_2D, null); });
      gl.bindVertexArray(null);
    }
    // ---- the host's decisions, from this browser's textures (gpgpu.show.live.decisions)
    // Python's power_of_two_exponent: the e with 2^e amax in [0.5, 1) ([0.5, 2) and e even)
    function exponentOf(amax, even) {
      if (!(amax > 0)) return 0;
      var E = Math.floor(Math.log2(amax)) + 1;
      while (amax * Math.pow(2, -E) >= 1) E++;
      while (amax * Math.pow(2, -E) < 0.5) E--;
      var e = -E;
      return (even && e % 2 !== 0) ? e + 1 : e;
    }
    function singular(d, value, threshold) {          // SingularMatrixError's words, in A's units
      var u = Math.pow(2, -api.exponent), piv = value * u, thr = threshold * u;
      return (piv !== 0 && thr !== 0) ? d.messages.small.replace("{pivot}", g(piv, 3)).replace("{threshold}", g(thr, 3))
        : d.messages.zero;
    }
    // swap_lines (gpgpu.dense_common): rows (columns) a and b as two lines into T, each reading the
    // other's texels in S, then both copied back into S; a line of Line.row(i, 0, len) runs from
    // (0.5, i + 0.5) to (len + 0.5, i + 0.5), T0 the other line's texels (or WPOS), T1 zero
    function lineVerts(i, len, axis, src) {
      var out = [];
      [0, len].forEach(function (e) {
        var x = axis === "row" ? e + 0.5 : i + 0.5, y = axis === "row" ? i + 0.5 : e + 0.5;
        var t = src === null ? [x, y] : (axis === "row" ? [x, src + 0.5] : [src + 0.5, y]);
        out.push(x, y, t[0], t[1], 0, 0, 0, 0);
      });
      return out;
    }
    function swapPair(d, a, b, axis, value, at) {
      var len = axis === "row" ? d.length : d.order, q0 = L.passes[d.copy], p0 = pages[d.copy];
      var first = lineVerts(a, len, axis, b).concat(lineVerts(b, len, axis, a));
      var back = lineVerts(a, len, axis, null).concat(lineVerts(b, len, axis, null));
      return [[first, d.T, d.S, false], [back, d.S, d.T, true]].map(function (w) {
        var v = new Float32Array(w[0]), s = shape(w[1]);
        var q = {program: q0.program, mode: 1, count: 4, vertices: b64(v), target: w[1], inputs: [["A", w[2]]],
                 uniforms: [], uploads: [], blend: false, snapshot: null};
        var p = {kernel: p0.kernel, file: p0.file, doc: p0.doc, source: p0.source, site_lines: p0.site_lines,
                 primitive: "line", vertices: 4, fragments: 2 * len, target: [s[0], s[1]], recorded: true,
                 fragment: axis === "row" ? {x: Math.floor(len / 2), y: a} : {x: a, y: Math.floor(len / 2)},
                 fetches: [], fetch_count: 0, png: null, values: null, notes: null, generated: true,
                 verts: vertsOf(v), target_serial: w[1], inputs: [["A", w[2]]], uploads: [],
                 plain: "Step k = " + d.step + " of " + d.order + ": " + (w[3] ? "the swap's second half: the " + axis +
                   "s " + a + " and " + b + " copied back from T into S." : "the pivot's swap: " + axis + "s " + a +
                   " and " + b + " exchanged, two lines into T, each reading the other's texels in S (this browser " +
                   "chose the pivot from its own textures)."), answer: false,
                 caption: (w[3] ? "the " + axis + " swap of step k = " + d.step + ", copied back: " + axis + "s " + a +
                   " and " + b + " of T into S (two lines, T0 = WPOS)" :
                   "the " + axis + " swap of step k = " + d.step + ": " + axis + "s " + a + " and " + b +
                   " exchanged, two lines into T, each reading the other's texels in S") +
                   ".\nThis browser chose the pivot from its own textures: |pivot| = " + g(value) + " at (col, row) (" +
                   at[0] + ", " + at[1] + "); the recorded run chose (" + d.recorded[1] + ", " + d.recorded[0] +
                   "), so the page draws this swap itself (as gpgpu.dense_common.swap_lines draws it)."};
        return {q: q, p: p};
      });
    }
    // the decisions after a pass that left values v: null, or {error}, or {swaps, skip}
    function decide(d, v, state) {
      if (d.kind === "pivot_flags") {
        if (v[0] > 1e38) return null;
        var j = Math.trunc(v[0]);
        return {error: {message: d.messages[j] || ("pivot flag " + v[0]), step: j}};
      }
      if (d.kind === "threshold") { state.threshold = d.order * Math.pow(2, -24) * v[0]; return null; }
      if (d.kind !== "pivot") return null;
      var value = v[0], q = Math.trunc(v[1]), p = Math.trunc(v[2]), t = state.threshold === null ? 0 : state.threshold;
      if (!(value > t)) return {error: {message: singular(d, value, t), step: d.step}};
      if (p === d.recorded[0] && (d.pivoting !== "full" || q === d.recorded[1])) return null;   // as recorded
      var out = [];
      if (p !== d.step) out = out.concat(swapPair(d, d.step, p, "row", value, [q, p]));
      if (d.pivoting === "full" && q !== d.step) out = out.concat(swapPair(d, d.step, q, "column", value, [q, p]));
      return {swaps: out, skip: d.skip};
    }
    // the first uploads the student chose (a seed, edits), serial -> values; sets api.exponent
    api.baseUploads = function () {
      var out = {}, I = L.input, sd = api.seed;
      (sd ? sd.uploads : []).forEach(function (u) { out[u[0]] = f32(u[1]); });
      api.exponent = sd ? sd.exponent : (I ? I.exponent : 0);
      var keys = Object.keys(api.edits);
      if (!I || !keys.length) return out;
      var v = new Float32Array(out[I.texture] || api.firstInput()), amax = 0;
      keys.forEach(function (key) { v[parseInt(key, 10)] = api.edits[key]; });
      for (var i = 0; i < v.length; i++) amax = Math.max(amax, Math.abs(v[i]));
      var e = exponentOf(amax, I.even);               // uploaded as Python uploads the edited matrix
      if (e) for (i = 0; i < v.length; i++) v[i] = v[i] * Math.pow(2, e);
      api.exponent += e;
      out[I.texture] = v;
      return out;
    };
    api.firstInput = function () {                     // the input texture's values before any edit
      var I = L.input, sd = api.seed, first = null;
      (sd ? sd.uploads : []).forEach(function (u) { if (u[0] === I.texture) first = f32(u[1]); });
      for (var k = 0; k < L.passes.length && first === null; k++)
        L.passes[k].uploads.forEach(function (u) { if (u[0] === I.texture && first === null) first = f32(u[1]); });
      return first;
    };
    api.replay = function () {
      if (!api.init()) { api.state = "unavailable"; return false; }
      var t0 = performance.now(), results = [], ran = [], done = [], seen = {}, firstBad = null;
      var state = {threshold: null}, after = {}, taken = {};
      api.error = null; notesCache = {};
      L.decisions.forEach(function (d) { (after[d.after] = after[d.after] || []).push(d); });
      var base = api.baseUploads();
      function put(u) {
        var s = shape(u[0]), t = texture(tex, u[0], s[0], s[1], s[2]), first = !seen[u[0]];
        seen[u[0]] = true;
        upload(t, (first && base[u[0]]) ? base[u[0]] : f32(u[1]));
      }
      // the host's uploads before recorded pass j (those not already given to a drawn swap)
      function uploadsOf(j) { L.passes[j].uploads.forEach(function (u) { if (!taken[j + ":" + u[0]]) put(u); }); }
      // a texture that a swap the page draws uses before its recorded first upload gets it now
      function early(serial, from) {
        if (seen[serial]) return;
        for (var j = from; j < L.passes.length; j++) {
          var u = L.passes[j].uploads.filter(function (w) { return w[0] === serial; })[0];
          if (u) { put(u); taken[j + ":" + serial] = true; return; }
        }
      }
      function exec(q, p, j) {
        if (j !== undefined) uploadsOf(j);
        var s = shape(p.target_serial), out = texture(tex, p.target_serial, s[0], s[1], s[2]);
        if (q.program === null) upload(out, f32(q.snapshot));
        else draw(q, program(q.program, false), out, tex, null);
        var v = read(out);
        results.push(v); ran.push(q); done.push(p);
        if (firstBad === null) for (var i = 0; i < v.length; i++) if (!isFinite(v[i])) { firstBad = results.length - 1; break; }
        return v;
      }
      try {
        for (var k = 0; k < L.passes.length && !api.error; k++) {
          var v = exec(L.passes[k], pages[k], k);
          (after[k] || []).forEach(function (d) {
            if (api.error) return;
            var r = decide(d, v, state);
            if (!r) return;
            if (r.error) { api.error = Object.assign({pass: results.length - 1}, r.error); return; }
            for (var j = k + 1; j <= k + r.skip; j++) uploadsOf(j);        // the recorded swaps, not drawn
            r.swaps.forEach(function (w) {
              w.q.inputs.forEach(function (inp) { early(inp[1], k + 1); });
              early(w.q.target, k + 1);
              exec(w.q, w.p);
            });
            k += r.skip;
          });
        }
        var err = gl.getError();
        if (err !== gl.NO_ERROR) throw new Error("WebGL error " + err + " during the replay");
      } catch (ex) {
        api.state = "failed"; api.why = String(ex.message || ex); console.error("live replay: " + api.why);
        return false;
      }
      api.results = results; api.ran = ran; api.pages = done; api.firstNonFinite = firstBad;
      api.seconds = (performance.now() - t0) / 1000;
      views = walk(done, function (k) { return results[k]; }, base);
      api.state = "done";
      return true;
    };
    // whether the replay is the recorded run (its own n, seed and input): then it is compared with it
    api.asRecorded = function () { return api.run === api.ownRun && !api.seed && !Object.keys(api.edits).length; };
    api.view = function (k) { return views ? views[k] : null; };
    api.values = function () { return (api.results || []).map(function (v) { return v ? b64(v) : null; }); };
    // the recorder's instrumented kernel on this GPU: 7 passes of one RGBA target, one vector each
    api.notes = function (k) {
      if (k in notesCache) return notesCache[k];
      var q = api.ran && api.ran[k], p = api.pages && api.pages[k], view = views && views[k];
      if (!q || !view || q.program === null || !L.programs[q.program].inst) return (notesCache[k] = null);
      var store = {}, rows = p.target[0], cols = p.target[1], M = data.max_fetches;
      view.inputs.forEach(function (inp) {
        var s = shape(inp[1]);
        if (!store[inp[1]]) upload(texture(store, inp[1], s[0], s[1], s[2]), inp[2]);
      });
      var scratch = texture({}, "s", rows, cols, 4), slots = [], prog = program(q.program, true);
      for (var slot = 0; slot < 2 + M; slot++) {
        target(scratch);
        gl.clearColor(0, 0, 0, 0); gl.clear(gl.COLOR_BUFFER_BIT);
        draw(q, prog, scratch, store, function (pr) { gl.uniform1i(gl.getUniformLocation(pr, "_rec_slot"), slot); });
        slots.push(read(scratch));
      }
      [scratch].concat(Object.keys(store).map(function (s) { return store[s]; })).forEach(function (t) {
        if (t.fbo) gl.deleteFramebuffer(t.fbo);
        gl.deleteTexture(t);
      });
      var cells = rows * cols, out = {count: new Int32Array(cells), T0: new Float32Array(3 * cells),
        T1: new Float32Array(3 * cells), texels: new Int32Array(2 * M * cells), sites: new Int32Array(M * cells)};
      for (var c = 0; c < cells; c++) {
        var a = slots[0], b = slots[1];
        out.count[c] = b[4 * c + 3] > 0.5 ? Math.round(b[4 * c + 2]) : -1;
        out.T0.set([a[4 * c], a[4 * c + 1], b[4 * c]], 3 * c);
        out.T1.set([a[4 * c + 2], a[4 * c + 3], b[4 * c + 1]], 3 * c);
        for (var i = 0; i < M; i++) {
          var f = slots[2 + i];
          out.texels[2 * (c * M + i)] = Math.floor(f[4 * c]);
          out.texels[2 * (c * M + i) + 1] = Math.floor(f[4 * c + 1]);
          out.sites[c * M + i] = Math.round(f[4 * c + 2]);
        }
      }
      return (notesCache[k] = out);
    };
    api.edit = function (row, col, value) {
      var I = L.input;
      if (!I) throw new Error("this run has no input texture to edit");
      if (row < 0 || col < 0 || row >= I.rows || col >= I.cols) throw new Error("no cell (" + col + ", " + row + ")");
      if (!isFinite(Math.fround(Number(value)))) throw new Error("cell (col " + col + ", row " + row + "): " + value +
        " is not a finite float32");
      api.edits[String((row * I.cols + col) * I.components)] = Number(value);
    };
    // the runs the page holds (data.runs: an order n each, with its seeds): run r, seed index s
    api.ownRun = 0; api.run = 0; api.seed = null; api.ownSeed = 0; api.seedIndex = 0;
    (data.runs || []).forEach(function (R, r) {
      if (R.own) {
        api.ownRun = api.run = r;
        R.seeds.forEach(function (sd, s) { if (!sd.uploads.length) api.ownSeed = api.seedIndex = s; });
        return;
      }
      R.passes.forEach(function (p, k) {
        var q = R.live.passes[k];
        p.uploads = q.uploads; p.verts = vertsOf(f32(q.vertices)); p.vertices = p.verts.length;
        p.png = p.values = p.notes = null; p.fetches = []; p.fetch_count = 0;
      });
    });
    api.choose = function (r, s) {
      var R = data.runs[r];
      if (!R) throw new Error("the page holds no run " + r);
      if (!R.seeds[s]) throw new Error("the page holds no seed " + s + " for n = " + R.n);
      if (r !== api.run && gl) {                      // another run's textures: serials name other shapes
        Object.keys(tex).forEach(function (k) { if (tex[k].fbo) gl.deleteFramebuffer(tex[k].fbo); gl.deleteTexture(tex[k]); });
        tex = {};
      }
      api.run = r;
      L = R.own ? data.live : Object.assign({}, R.live, {programs: data.live.programs});
      pages = R.own ? data.passes : R.passes;
      textures = R.own ? data.textures : R.textures;
      api.seed = R.seeds[s].uploads.length ? R.seeds[s] : null;
      api.seedIndex = s;
      api.edits = {}; views = null; api.results = null;
      $("trace-text").textContent = R.own ? data.trace : R.trace;
    };
    api.input = function () { return L.input; };
    api.pagesNow = function () { return pages; };
    api.unmirrored = function () { return L.unmirrored; };
    api.choice = function () {
      var R = (data.runs || [])[api.run];
      return R ? {n: R.n, seed: R.seeds[api.seedIndex || 0].seed} : null;
    };
    return api;
  })();

  // ------------------------------------------------------------------ the page
  // a caption counts its pass as the counter does: a live run with swaps of its own, or stopped by a
  // refusal, has another number of passes than the recorded run whose captions the page carries
  function counted(text, k, total) {
    var head = "pass " + (k + 1) + " of " + total, m = /(^|\n)pass \d+ of \d+/.exec(text);
    if (!m) return head + ": " + text;
    return text.slice(0, m.index) + m[1] + head + text.slice(m.index + m[0].length);
  }
  function refresh() { show(current); }
  function show(k) {
    current = Math.max(0, Math.min(n - 1, k));
    var p = passes[current];
    if (p.png) img.src = p.png; else img.removeAttribute("src");
    img.hidden = liveOn || !p.png;
    img.alt = "frame of pass " + (current + 1) + " of " + n + ": " + p.kernel;
    caption.textContent = counted(p.caption, current, n);
    $("plain").textContent = p.plain || "";
    $("plain").classList.toggle("answer", !!p.answer);
    slider.value = String(current + 1);
    counter.textContent = "pass " + (current + 1) + " of " + n;
    document.body.dataset.pass = String(current + 1);
    var f = fragmentOf(current);
    showSource(p, f);
    showArithmetic(current, p, f);
    $("vertex-list").textContent = p.verts.map(function (v, i) {
      return "vertex " + (i + 1) + ": V" + xy(v[0]) + "  T0 " + xy(v[1]) + "  T1 " + xy(v[2]);
    }).join("\n");
    drawPass(current);
    if (history.replaceState) {
      try { history.replaceState(null, "", "#pass-" + (current + 1) + (liveOn ? "&live" : staticChosen ? "&static" : "")); }
      catch (e) { /* file: */ }
    }
  }

  function stop() {
    if (timer !== null) { clearInterval(timer); timer = null; }
    playButton.textContent = "\u25B6 play";
  }
  function play() {
    if (timer !== null) { stop(); return; }
    if (current === n - 1) show(0);
    playButton.textContent = "\u23F8 pause";
    timer = setInterval(function () {
      if (current >= n - 1) stop(); else show(current + 1);
    }, 900);
  }
  function step(k) { stop(); show(k); }

  function liveStatus() {
    var s = $("live-status"), e = $("live-error");
    e.textContent = ""; e.hidden = true;
    if (live.state === "done") {
      var worst = 0, same = live.asRecorded(), ch = live.choice();
      live.results.forEach(function (v, k) {
        if (!same || !v) return;
        var r = recorded[k].values;
        for (var i = 0; i < v.length; i++) {
          if (isNaN(v[i]) && isNaN(r[i])) continue;
          var d = Math.abs(v[i] - r[i]) / Math.max(1, Math.abs(r[i]));
          if (!(d <= worst)) worst = d;
        }
      });
      s.textContent = "Live: " + live.results.length + " passes replayed through WebGL2 on " + (live.renderer || "this GPU") +
        " in " + live.seconds.toFixed(3) + " s" + (ch ? " (n = " + ch.n + ", seed " + ch.seed + ")" : "") +
        "; each frame is drawn from this browser's textures" +
        (same ? "; largest difference from the Python run: " + worst.toExponential(2) + " (relative to max(1, |value|))." :
         Object.keys(live.edits).length ? ", with the edited input." : ", with the chosen input.");
      if (live.error) {
        e.hidden = false;
        e.textContent = "The run stops at pass " + (live.error.pass + 1) + " (" + live.pages[live.error.pass].kernel +
          ", its value read back by the host): " + live.error.message +
          (live.firstNonFinite !== null ? "\nThe first NaN or infinity appears at pass " + (live.firstNonFinite + 1) +
           " (" + live.pages[live.firstNonFinite].kernel + ")." : "");
      }
    } else {
      s.textContent = "Live mode is not available here: " + live.why + ". The page shows the static frames drawn by Python" +
        (data.passes[0].png ? "." : ": each pass drawn from the values the recorder kept.");
      liveButton(live.why);
    }
  }
  // static mode says so: the passes as Python recorded them, not this browser's replay
  function staticStatus() {
    $("live-error").hidden = true;
    $("live-status").textContent = "Static: the " + data.passes.length + " passes as the Python run recorded them" +
      (data.passes[0].png ? " (the PNG frames drawn by Python)" : " (each pass drawn from the values the recorder kept)") +
      (data.live ? "; run live (WebGL2) replays them on this browser's GPU." : "; this page carries no live data.");
  }
  // the live button follows WebGL2's presence: disabled, with the reason, where it is missing
  function liveButton(why) {
    var b = $("live");
    b.disabled = !!why;
    b.title = why ? "live mode is not available here: " + why : "replay the passes on this browser's GPU (WebGL2)";
  }
  function buildChoice() {                                 // the held orders n and seeds
    var box = $("choice");
    box.textContent = "";
    if (!data.runs || !liveOn) { box.hidden = true; return; }
    box.hidden = false;
    data.runs.forEach(function (R, r) {
      R.seeds.forEach(function (sd, s) {
        var o = el("option", null, "n = " + R.n + ", seed " + sd.seed);
        o.value = r + ":" + s;
        if (r === live.run && s === live.seedIndex) o.selected = true;
        box.appendChild(o);
      });
    });
  }
  // a float32 value in the fewest digits that read back as the same float32 (what the editor shows
  // is what it uploads: a row typed equal to another is equal)
  function exact(v) {
    if (!isFinite(v)) return String(v);
    for (var d = 1; d < 9; d++) { var t = v.toPrecision(d); if (Math.fround(parseFloat(t)) === v) return g(parseFloat(t), d); }
    return g(v, 9);
  }
  // the first pass that reads texel (c, r) of texture I.texture: {pass, kernel, x, y, fetch} from the
  // recorder's notes of this page's own run, {pass, kernel} where no note says which texel, or null
  function firstReader(I, r, c) {
    var list = live.pagesNow(), own = list === data.passes, M = data.max_fetches;
    for (var k = 0; k < list.length; k++) {
      var p = list[k], names = p.inputs.filter(function (q) { return q[1] === I.texture; }).map(function (q) { return q[0]; });
      if (!names.length) continue;
      var notes = own ? recordedNotes[k] : null, sites = data.sites[p.source] || [], more = false;
      if (!notes) return {pass: k, kernel: p.kernel};
      for (var f = 0; f < notes.count.length; f++) {
        var cnt = notes.count[f];
        if (cnt > M) more = true;
        for (var i = 0; i < Math.min(cnt, M); i++) {
          var site = sites[notes.sites[f * M + i]], t = 2 * (f * M + i);
          if (site && names.indexOf(site[0]) >= 0 && notes.texels[t] === c && notes.texels[t + 1] === r)
            return {pass: k, kernel: p.kernel, x: f % p.target[1], y: Math.floor(f / p.target[1]), fetch: i + 1};
        }
      }
      if (more) return {pass: k, kernel: p.kernel};
    }
    return null;
  }
  function entryOf(I, r, c) { return I.entries ? I.entries[r * I.cols + c] : [r, c]; }
  // what an input cell is: the entry of A it holds (scaled as uploaded) and the first pass that reads it
  function cellStory(I, r, c, value) {
    var e = live.seed ? live.seed.exponent : I.exponent, ij = entryOf(I, r, c);
    var s = "cell (col " + c + ", row " + r + ") of the input texture: ";
    if (!ij) return s + "no entry of A; " + (I.layout === "lower" ? "the algorithm reads only the lower triangle of A " +
      "(the upper is its mirror), so no pass reads this cell." : "no pass reads it.");
    s += "2^" + e + " A(" + ij[0] + ", " + ij[1] + ") = " + exact(value) + " as uploaded, so A(" + ij[0] + ", " + ij[1] +
      ") = " + g(value * Math.pow(2, -e)) + ". ";
    var w = firstReader(I, r, c);
    if (!w) return s + "No pass reads it.";
    return s + "Pass " + (w.pass + 1) + " (" + w.kernel + ") reads it first" +
      (w.fetch ? ": fragment (" + w.x + ", " + w.y + "), its fetch " + w.fetch + "." : ".");
  }
  // an edited cell's text: {value} or {problem}, the message naming the cell
  function parsed(I, inp) {
    var r = +inp.dataset.row, c = +inp.dataset.col, t = inp.value.trim(), at = "cell (col " + c + ", row " + r + ")";
    if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t))
      return {problem: at + ": " + (t === "" ? "empty" : JSON.stringify(inp.value) + " is not a number") +
        "; type a finite decimal number such as -0.25 or 1e-3."};
    var v = Number(t);
    if (!isFinite(Math.fround(v))) return {problem: at + ": " + t + " is beyond float32's range (|v| < 3.4e38)."};
    if (!entryOf(I, r, c)) return {problem: at + " holds no entry the algorithm reads: it reads only the lower triangle " +
      "of A (the upper is its mirror), so this edit would change nothing; edit cell (col " + r + ", row " + c + ") instead."};
    return {value: v};
  }
  function buildEditor() {
    var box = $("editor"), I = data.live && live.input();
    box.textContent = "";
    if (!I || !liveOn) { box.hidden = true; return; }
    box.hidden = false;
    box.appendChild(el("h2", null, "The input: edit and replay"));
    if (live.unmirrored().length) {
      box.appendChild(el("p", null, "This run also decides from values it reads back (" + live.unmirrored().join("; ") +
        "), which the page replays as recorded rather than recomputing them, so an edited input would replay " +
        "decisions that do not belong to it: editing is offered where the page mirrors every such decision " +
        "(the Cholesky forms, LU with partial or full pivoting, Gauss-Jordan)."));
      return;
    }
    box.appendChild(el("p", null, "Texture " + I.what + ", " + I.rows + " x " + I.cols + ": change cells, then replay " +
      "(uploaded as Python uploads the edited matrix). A refusal (a pivot that is not positive, a zero pivot) shows at " +
      "the pass where the run reads it back, and a pivot that moves draws its row swaps. Point at a cell to see " +
      "what it holds and which pass reads it first." + (I.layout === "lower" ? " The algorithm reads only the lower " +
      "triangle; the cells above the diagonal are greyed." : "")));
    var first = live.firstInput(), story = el("p", "cell-story"), problem = el("pre", "editor-error");
    story.id = "editor-cell"; problem.id = "editor-error"; problem.hidden = true;
    var table = el("table", "grid");
    for (var r = 0; r < I.rows; r++) {
      var tr = el("tr");
      for (var c = 0; c < I.cols; c++) {
        var td = el("td"), inp = el("input");
        inp.type = "text"; inp.size = 6;
        var key = String((r * I.cols + c) * I.components);
        inp.value = exact(key in live.edits ? live.edits[key] : first[parseInt(key, 10)]);
        inp.dataset.row = r; inp.dataset.col = c;
        if (!entryOf(I, r, c)) inp.classList.add("unread");
        (function (inp, r, c, v) {
          var tell = function () { story.textContent = cellStory(I, r, c, v); inp.title = story.textContent; };
          inp.addEventListener("mouseenter", tell); inp.addEventListener("focus", tell);
        })(inp, r, c, first[parseInt(key, 10)]);
        td.appendChild(inp); tr.appendChild(td);
      }
      table.appendChild(tr);
    }
    box.appendChild(table); box.appendChild(story);
    var go = el("button", null, "replay with these values"), reset = el("button", null, "reset");
    go.type = reset.type = "button"; go.id = "editor-replay";
    go.addEventListener("click", function () {
      var bad = [], edits = [];
      table.querySelectorAll("input").forEach(function (inp) {
        var key = String((inp.dataset.row * I.cols + +inp.dataset.col) * I.components);
        if (exact(first[parseInt(key, 10)]) === inp.value && !(key in live.edits)) return;
        var q = parsed(I, inp);
        if (q.problem) bad.push(q.problem); else edits.push([+inp.dataset.row, +inp.dataset.col, q.value]);
      });
      problem.hidden = !bad.length;
      problem.textContent = bad.length ? "Not replayed: " + bad.join("\n") : "";
      if (bad.length) return;
      edits.forEach(function (e) { live.edit(e[0], e[1], e[2]); });
      replayLive();
    });
    reset.addEventListener("click", function () { live.edits = {}; replayLive(); buildEditor(); });
    box.appendChild(go); box.appendChild(reset); box.appendChild(problem);
  }
  function replayLive() {
    stop();
    var ok = live.replay();
    liveOn = ok;
    usePasses(ok ? live.pages : data.passes);
    $("live").textContent = ok ? "show the static frames" : "run live (WebGL2)";
    liveStatus();
    if (ok && live.error) show(live.error.pass); else refresh();
    return ok;
  }
  function startLive() { staticChosen = false; var ok = replayLive(); buildEditor(); buildChoice(); return ok; }
  function showStatic() {
    stop();
    liveOn = false; staticChosen = true;
    if (data.runs) live.choose(live.ownRun, live.ownSeed);
    usePasses(data.passes);
    $("live").textContent = "run live (WebGL2)";
    staticStatus(); buildEditor(); buildChoice(); refresh();
  }
  function choose(r, s) { live.choose(r, s); var ok = replayLive(); buildEditor(); buildChoice(); return ok; }
  $("live").addEventListener("click", function () { if (liveOn) showStatic(); else startLive(); });
  $("choice").addEventListener("change", function () {
    var v = $("choice").value.split(":");
    choose(parseInt(v[0], 10), parseInt(v[1], 10));
  });

  $("first").addEventListener("click", function () { step(0); });
  $("prev").addEventListener("click", function () { step(current - 1); });
  $("next").addEventListener("click", function () { step(current + 1); });
  $("last").addEventListener("click", function () { step(n - 1); });
  playButton.addEventListener("click", play);
  slider.addEventListener("input", function () { step(parseInt(slider.value, 10) - 1); });
  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.target === slider || e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
    if (e.target.tagName === "BUTTON" && (e.key === " " || e.key === "Enter")) return;   // a click
    var keys = { ArrowRight: function () { step(current + 1); }, ArrowLeft: function () { step(current - 1); },
                 Home: function () { step(0); }, End: function () { step(n - 1); }, " ": play };
    if (keys[e.key]) { e.preventDefault(); keys[e.key](); }
  });
  // page.html#pass-6 opens at pass 6; &static keeps the static frames (live starts by itself where it can)
  function fromAddress() {
    var parts = location.hash.replace(/^#/, "").split("&"), out = {pass: null, live: false, still: false};
    parts.forEach(function (s) {
      var m = /^pass-(\d+)$/.exec(s);
      if (m) out.pass = parseInt(m[1], 10) - 1;
      if (s === "live") out.live = true;
      if (s === "static") out.still = true;
    });
    return out;
  }
  window.addEventListener("hashchange", function () {
    var a = fromAddress();
    if (a.pass !== null && a.pass !== current) step(a.pass);
  });
  window.gpgpuPage = {
    show: step, live: live, startLive: startLive, replay: replayLive, showStatic: showStatic,
    choose: function (nn, seed) {                         // the held run of order nn and seed
      var runs = data.runs || [];
      for (var r = 0; r < runs.length; r++) for (var s = 0; s < runs[r].seeds.length; s++)
        if (runs[r].n === nn && runs[r].seeds[s].seed === seed) return choose(r, s);
      throw new Error("the page holds no run with n = " + nn + " and seed " + seed);
    },
    choices: function () {
      return (data.runs || []).map(function (R) { return [R.n, R.seeds.map(function (s) { return s.seed; })]; });
    },
    fragment: function (k, x, y) { pinned = [x, y]; step(k); return fragmentOf(k); },
    unpin: function () { pinned = hovered = null; refresh(); },
    cellCentre: function (x, y) {              // where cell (x, y) of the target is on the canvas, in CSS pixels
      var T = layout[layout.length - 1];
      return T ? [T.x + (x + 0.5) * T.cell, T.y + (y + 0.5) * T.cell, canvas.clientWidth, canvas.clientHeight] : null;
    },
    isLive: function () { return liveOn; }
  };
  var a0 = fromAddress();
  show(a0.pass === null ? 0 : a0.pass);
  if (!data.live) { $("live").hidden = true; $("choice").hidden = true; }
  else if (!a0.still) { startLive(); if (liveOn && a0.pass !== null && !live.error) show(a0.pass); }
  else {
    staticChosen = true; staticStatus(); buildChoice();
    if (!live.init()) liveButton(live.why);
  }
  if (!data.live) staticStatus();
})();
