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

  // A live region is being used when it holds the focused field or text
  // typed into a field: refreshing it would throw the input away.
  function inUse(el) {
    var a = document.activeElement;
    if (a && a !== body && el.contains(a) && /^(INPUT|TEXTAREA|SELECT)$/.test(a.tagName)) {
      return true;
    }
    var fields = el.querySelectorAll("input[type=text], textarea");
    for (var i = 0; i < fields.length; i++) {
      if (fields[i].value) {
        return true;
      }
    }
    return false;
  }

  // Open <details> survive a refresh: remembered by region and summary.
  var openDetails = {};

  function rememberDetails(el) {
    var open = [];
    el.querySelectorAll("details[open] > summary").forEach(function (s) {
      open.push(s.textContent);
    });
    openDetails[el.id] = open;
  }

  document.addEventListener("htmx:afterSwap", function (e) {
    var el = e.detail && e.detail.elt;
    var region = el && el.id && document.getElementById(el.id);
    var open = region && openDetails[region.id];
    if (!open) {
      return;
    }
    delete openDetails[region.id];
    region.querySelectorAll("details > summary").forEach(function (s) {
      if (open.indexOf(s.textContent) >= 0) {
        s.parentElement.open = true;
      }
    });
  });

  // refresh reloads every live region (data-live) that is not in use and
  // does not contain except (the element whose action just answered with
  // its own fresh fragment).
  function refresh(except) {
    if (!window.htmx) {
      return;
    }
    document.querySelectorAll("[data-live]").forEach(function (el) {
      if ((except && el.contains(except)) || inUse(el)) {
        return;
      }
      rememberDetails(el);
      window.htmx.trigger(el, "kaizen-change");
    });
  }

  // Sent by the server (HX-Trigger) after an action changed state.
  body.addEventListener("kaizen-refresh", function (e) {
    refresh(e.target);
  });

  // Server-sent events: the stream sends the project's change signature
  // when it connects and after every change.
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
    var version = body.getAttribute("data-version");
    var source = new EventSource(url);
    source.addEventListener("open", function () {
      status(true);
    });
    source.addEventListener("error", function () {
      status(false);
    });
    source.addEventListener("version", function (e) {
      if (e.data !== version) {
        version = e.data;
        refresh(null);
      }
    });
    window.addEventListener("pagehide", function () {
      source.close();
    });
  }
})();
