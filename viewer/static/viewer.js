// kaizen viewer: live updates and small behaviours. Served as a file
// because the Content-Security-Policy forbids inline scripts; it never
// evaluates strings and never inserts HTML itself (htmx swaps the
// server-rendered, escaped fragments).
(function () {
  "use strict";

  var body = document.body;

  // A select marked data-autosubmit submits its form on change (project
  // switcher, chart period).
  document.addEventListener("change", function (e) {
    var el = e.target;
    if (el && el.matches && el.matches("select[data-autosubmit]") && el.form) {
      if (el.form.requestSubmit) {
        el.form.requestSubmit();
      } else {
        el.form.submit();
      }
    }
  });

  // ---- Live regions ----
  //
  // A live region (data-live) reloads itself (hx-trigger kaizen-change)
  // when the project changed. The server names the state each page and
  // fragment shows (the body's data-version, the X-Kaizen-Version header of
  // fragments, read before their data or right after an action's change)
  // and the event stream announces the newest one. A region is refreshed
  // when an announcement came after its request started and names another
  // state, or when an action elsewhere asked for it (kaizen-refresh); so
  // the fragment an action answered with, which already shows the change,
  // is not reloaded over its result, and every region converges to the
  // last announced state.
  //
  // A refresh never destroys what the user is doing: a region is left
  // alone while it is in use (a focused or pressed control, a field whose
  // value differs from the page's), while a request started in it or
  // aimed at it is pending, and while htmx is still settling it; a refresh
  // answer arriving once the region got busy is not swapped. The pass runs
  // again whenever an interaction may have ended.

  var pageVersion = body.getAttribute("data-version");
  var latest = pageVersion; // the newest state announced
  var epoch = 0; // how many announcements arrived
  // What each region shows: {version, epoch}, epoch being the count of
  // announcements when its request started. Regions from the page itself
  // show pageVersion from epoch 0.
  var shown = new WeakMap();
  var forced = new WeakSet(); // regions an action asked to reload
  var started = new WeakMap(); // request (xhr) -> epoch at its start
  var pending = new Map(); // request (xhr) -> {elt, target} until it ends
  var pressed = null; // the element under a pressed pointer
  var openDetails = {}; // open <details> summaries by region id

  function regions() {
    return document.querySelectorAll("[data-live]");
  }

  function stale(el) {
    if (forced.has(el)) {
      return true;
    }
    var s = shown.get(el) || { version: pageVersion, epoch: 0 };
    return s.epoch < epoch && s.version !== latest;
  }

  // dirty: a field of el holds something the user entered or picked.
  function dirty(el) {
    var fields = el.querySelectorAll("input, textarea, select");
    for (var i = 0; i < fields.length; i++) {
      var f = fields[i];
      if (f.tagName === "SELECT") {
        if (selectChanged(f)) {
          return true;
        }
      } else if (f.type === "checkbox" || f.type === "radio") {
        if (f.checked !== f.defaultChecked) {
          return true;
        }
      } else if (!/^(hidden|submit|button|reset|image)$/.test(f.type) && f.value !== f.defaultValue) {
        return true;
      }
    }
    return false;
  }

  function selectChanged(s) {
    var o = s.options;
    if (s.multiple) {
      for (var i = 0; i < o.length; i++) {
        if (o[i].selected !== o[i].defaultSelected) {
          return true;
        }
      }
      return false;
    }
    // A single select starts on its last selected option, else its first
    // enabled one.
    var def = -1;
    for (var j = 0; j < o.length; j++) {
      if (o[j].defaultSelected) {
        def = j;
      }
    }
    for (var k = 0; def < 0 && k < o.length; k++) {
      if (!o[k].disabled) {
        def = k;
      }
    }
    return o.length > 0 && s.selectedIndex !== def;
  }

  // inUse: the user is working in el.
  function inUse(el) {
    var a = document.activeElement;
    if (a && a !== body && el.contains(a) && /^(INPUT|TEXTAREA|SELECT|BUTTON)$/.test(a.tagName)) {
      return true;
    }
    if (pressed && el.contains(pressed)) {
      return true;
    }
    return dirty(el);
  }

  // requestOn: a pending request other than skip started in el or will
  // swap el (or a part of it).
  function requestOn(el, skip) {
    var found = false;
    pending.forEach(function (r, xhr) {
      if (xhr === skip) {
        return;
      }
      if (xhr.readyState === 4 && !skip) {
        pending.delete(xhr); // ended without htmx:afterRequest
        return;
      }
      var t = r.target;
      if ((r.elt && el.contains(r.elt)) || (t && (el.contains(t) || t.contains(el)))) {
        found = true;
      }
    });
    return found;
  }

  // settling: htmx swapped el (or a part) and has not processed it yet; a
  // trigger would be lost.
  function settling(el) {
    var busy = ".htmx-added, .htmx-settling, .htmx-swapping";
    return el.matches(busy) || !!el.querySelector(busy);
  }

  function rememberDetails(el) {
    var open = [];
    el.querySelectorAll("details[open] > summary").forEach(function (s) {
      open.push(s.textContent);
    });
    openDetails[el.id] = open;
  }

  // pass reloads every stale region that is not busy.
  function pass() {
    if (!window.htmx) {
      return;
    }
    regions().forEach(function (el) {
      if (!stale(el) || settling(el) || requestOn(el, null) || inUse(el)) {
        return;
      }
      forced.delete(el);
      rememberDetails(el);
      window.htmx.trigger(el, "kaizen-change");
    });
  }

  var scheduled = false;
  function schedule() {
    if (!scheduled) {
      scheduled = true;
      window.setTimeout(function () {
        scheduled = false;
        pass();
      }, 0);
    }
  }

  // Requests: which are pending, and where.
  document.addEventListener("htmx:beforeRequest", function (e) {
    var d = e.detail;
    if (!d || !d.xhr) {
      return;
    }
    started.set(d.xhr, epoch);
    pending.set(d.xhr, { elt: d.elt, target: d.target });
    window.setTimeout(function () {
      if (e.defaultPrevented) { // cancelled: never sent
        pending.delete(d.xhr);
        schedule();
      }
    }, 0);
  });
  document.addEventListener("htmx:afterRequest", function (e) {
    if (e.detail && e.detail.xhr) {
      pending.delete(e.detail.xhr);
    }
    schedule();
  });
  document.addEventListener("htmx:afterSettle", schedule);

  // A refresh whose answer arrives once its region got busy is dropped;
  // the region stays stale and is reloaded when it is free again.
  document.addEventListener("htmx:beforeSwap", function (e) {
    var d = e.detail || {};
    var rc = d.requestConfig;
    var el = rc && rc.elt;
    if (!el || !rc.triggeringEvent || rc.triggeringEvent.type !== "kaizen-change") {
      return;
    }
    if (!el.isConnected || inUse(el) || requestOn(el, d.xhr)) {
      d.shouldSwap = false;
    }
  });

  // A swap records what the new regions show, and reopens the <details>
  // a refreshed region had open.
  document.addEventListener("htmx:afterSwap", function (e) {
    var el = e.target;
    var d = e.detail || {};
    if (!el || !el.querySelectorAll) {
      return;
    }
    var xhr = d.xhr;
    var s = {
      version: xhr ? xhr.getResponseHeader("X-Kaizen-Version") : null,
      epoch: xhr && started.has(xhr) ? started.get(xhr) : epoch
    };
    var found = Array.prototype.slice.call(el.querySelectorAll("[data-live]"));
    if (el.matches("[data-live]")) {
      found.push(el);
    }
    found.forEach(function (region) {
      shown.set(region, s);
      var open = region.id && openDetails[region.id];
      if (!open) {
        return;
      }
      delete openDetails[region.id];
      region.querySelectorAll("details > summary").forEach(function (sum) {
        if (open.indexOf(sum.textContent) >= 0) {
          sum.parentElement.open = true;
        }
      });
    });
  });

  // Interactions ending: a pointer released, focus moved, a field edited.
  document.addEventListener("pointerdown", function (e) {
    pressed = e.target;
  }, true);
  function release() {
    // After the click it ends, and the request it starts.
    window.setTimeout(function () {
      pressed = null;
      schedule();
    }, 0);
  }
  document.addEventListener("pointerup", release, true);
  document.addEventListener("pointercancel", release, true);
  document.addEventListener("focusout", schedule);
  document.addEventListener("input", schedule);
  document.addEventListener("change", schedule);

  // Sent by the server (HX-Trigger) after an action changed state: every
  // other region reloads; the action's own answer updates its region.
  body.addEventListener("kaizen-refresh", function (e) {
    var acting = e.target;
    var target = null;
    pending.forEach(function (r) {
      if (r.elt === acting) {
        target = r.target;
      }
    });
    regions().forEach(function (el) {
      if (el.contains(acting) || (target && (el.contains(target) || target.contains(el)))) {
        return;
      }
      forced.add(el);
    });
    schedule();
  });

  // Server-sent events: the stream sends the project's version when it
  // connects and after every change. The body's data-version follows it.
  var url = body.getAttribute("data-events");
  var live = document.getElementById("live");
  function status(on) {
    if (live) {
      live.classList.toggle("on", on);
      live.classList.toggle("off", !on);
      live.title = on ? "Live updates: connected" : "Live updates: reconnecting";
    }
  }
  if (url && window.EventSource) {
    var source = new EventSource(url);
    source.addEventListener("open", function () {
      status(true);
    });
    source.addEventListener("error", function () {
      status(false);
    });
    source.addEventListener("version", function (e) {
      latest = e.data;
      epoch++;
      body.setAttribute("data-version", latest);
      schedule();
    });
    window.addEventListener("pagehide", function () {
      source.close();
    });
  }
})();
