// `cleaner inspect` view: click (or Enter) opens a block's details; n / N jump between
// disagreements with the gold labels; the check boxes filter the list. No network, no eval.
(function () {
  "use strict";
  var list = document.getElementById("blocks");
  function toggle(blk) {
    blk.classList.toggle("open");
    blk.setAttribute("aria-expanded", blk.classList.contains("open") ? "true" : "false");
  }
  list.addEventListener("click", function (ev) {
    var blk = ev.target.closest(".blk");
    if (blk) { toggle(blk); blk.focus({ preventScroll: true }); }
  });
  list.addEventListener("keydown", function (ev) {
    var blk = ev.target.closest(".blk");
    if (blk && (ev.key === "Enter" || ev.key === " ")) { ev.preventDefault(); toggle(blk); }
  });
  function bind(id, cls) {
    var box = document.getElementById(id);
    if (!box) return;
    var apply = function () { document.body.classList.toggle(cls, box.checked); };
    box.addEventListener("change", apply);
    apply();
  }
  bind("hide-other", "hide-other");
  bind("only-dis", "only-dis");
  var dis = Array.prototype.slice.call(document.querySelectorAll(".blk.dis"));
  var at = -1;
  document.addEventListener("keydown", function (ev) {
    if (ev.target.tagName === "INPUT" || !dis.length || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (ev.key !== "n" && ev.key !== "N") return;
    at = ev.key === "n" ? (at + 1) % dis.length : (at - 1 + dis.length) % dis.length;
    dis[at].scrollIntoView({ block: "center" });
    dis[at].focus({ preventScroll: true });
  });
})();
