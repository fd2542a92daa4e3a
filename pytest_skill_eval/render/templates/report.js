(function () {
  "use strict";
  // Group details are inert JSON strings until a group is opened; they were escaped when rendered.
  function load(group) {
    if (group.dataset.loaded) return;
    var source = document.getElementById("data-" + group.id);
    var body = group.querySelector(".group-body");
    if (!source || !body) return;
    var holder = document.createElement("template");
    holder.innerHTML = JSON.parse(source.textContent);
    body.replaceChildren(holder.content);
    group.dataset.loaded = "1";
  }
  var groups = document.querySelectorAll("details.group");
  // a trial's details are inside its group's, loaded with it: one listener sees every toggle
  document.addEventListener("toggle", function (e) {
    var el = e.target;
    if (el && el.tagName === "DETAILS" && el.open && el.matches("details.group, details.trial")) load(el);
  }, true);
  function openFromHash() {
    var wanted;
    try { wanted = decodeURIComponent(location.hash.slice(1)); } catch (e) { return; }
    var match = /^(g\d+)(-t\d+)?/.exec(wanted);
    if (!match) return;
    var ids = match[2] ? [match[1], match[1] + match[2]] : [match[1]];
    for (var i = 0; i < ids.length; i++) {
      var el = document.getElementById(ids[i]);
      if (!el || el.tagName !== "DETAILS") return;
      load(el);
      el.open = true;
    }
    var target = document.getElementById(wanted);
    if (target) target.scrollIntoView();
  }
  window.addEventListener("hashchange", openFromHash);
  openFromHash();
  var byTransition = document.getElementById("filter-transition");
  var byState = document.getElementById("filter-state");
  var count = document.getElementById("filter-count");
  function applyFilters() {
    var transition = byTransition.value, state = byState.value, shown = 0;
    document.querySelectorAll("tr[data-filter-row], details[data-filter-row]").forEach(function (el) {
      var ok = (!transition || el.dataset.transitions.split(" ").indexOf(transition) >= 0) &&
               (!state || el.dataset.states.split(" ").indexOf(state) >= 0);
      el.hidden = !ok;
      if (ok && el.tagName === "TR") shown += 1;
    });
    count.textContent = shown + " of " + groups.length + " groups shown";
  }
  byTransition.addEventListener("change", applyFilters);
  byState.addEventListener("change", applyFilters);
  document.getElementById("filters").addEventListener("submit", function (e) { e.preventDefault(); });
})();
