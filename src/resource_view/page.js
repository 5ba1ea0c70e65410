// The resource view's script: the hover text of any element with `data-tip`; in a
// dependency graph, a box's edges and neighbours highlighted (pointed at, or kept by a
// click), edges filtered by kind; and a check of each graph as the browser drew it (no two
// boxes overlap, every label inside its box), written under the graph.
(function () {
  "use strict";
  var tip = document.getElementById("tip");

  document.addEventListener("mouseover", function (ev) {
    var el = ev.target.closest ? ev.target.closest("[data-tip]") : null;
    if (!el) {
      tip.hidden = true;
      return;
    }
    tip.textContent = el.getAttribute("data-tip");
    tip.hidden = false;
  });
  document.addEventListener("mousemove", function (ev) {
    if (tip.hidden) return;
    var r = tip.getBoundingClientRect();
    var x = ev.clientX + 14, y = ev.clientY + 16;
    if (x + r.width > window.innerWidth - 4) x = Math.max(4, ev.clientX - r.width - 14);
    if (y + r.height > window.innerHeight - 4) y = Math.max(4, ev.clientY - r.height - 16);
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  });
  document.addEventListener("mouseleave", function () {
    tip.hidden = true;
  });

  function graph(svg) {
    var nodes = {};
    svg.querySelectorAll(".node").forEach(function (n) {
      nodes[n.getAttribute("data-name")] = n;
    });
    var edges = svg.querySelectorAll(".edge");
    var kept = null;

    function show(node) {
      svg.querySelectorAll(".hot").forEach(function (e) {
        e.classList.remove("hot");
      });
      if (!node) {
        svg.classList.remove("focus");
        return;
      }
      var name = node.getAttribute("data-name");
      svg.classList.add("focus");
      node.classList.add("hot");
      edges.forEach(function (e) {
        var from = e.getAttribute("data-from"), to = e.getAttribute("data-to");
        if (from !== name && to !== name) return;
        e.classList.add("hot");
        var other = nodes[from === name ? to : from];
        if (other) other.classList.add("hot");
      });
    }

    svg.querySelectorAll(".node").forEach(function (n) {
      n.addEventListener("mouseenter", function () {
        if (!kept) show(n);
      });
      n.addEventListener("mouseleave", function () {
        if (!kept) show(null);
      });
      n.addEventListener("click", function (ev) {
        ev.stopPropagation();
        kept = kept === n ? null : n;
        show(kept || n);
      });
    });
    svg.addEventListener("click", function () {
      kept = null;
      show(null);
    });

    var controls = document.querySelector('.graphctl[data-for="' + svg.id + '"]');
    if (controls) {
      controls.querySelectorAll("input[data-kind]").forEach(function (box) {
        box.addEventListener("change", function () {
          svg.classList.toggle("hide-" + box.getAttribute("data-kind"), !box.checked);
        });
      });
      var binding = controls.querySelector("input[data-binding]");
      if (binding) {
        binding.addEventListener("change", function () {
          svg.classList.toggle("binding-only", binding.checked);
        });
      }
    }
    check(svg);
  }

  // Whether the browser drew every box apart and every label inside its box.
  function check(svg) {
    var boxes = [], overflows = [], overlaps = [];
    svg.querySelectorAll(".node").forEach(function (n) {
      var r = n.querySelector("rect").getBBox();
      boxes.push({ name: n.getAttribute("data-name"), r: r });
      n.querySelectorAll("text").forEach(function (t) {
        var b = t.getBBox();
        if (b.x < r.x || b.x + b.width > r.x + r.width || b.y < r.y || b.y + b.height > r.y + r.height) {
          overflows.push(n.getAttribute("data-name"));
        }
      });
    });
    for (var i = 0; i < boxes.length; i++) {
      for (var j = i + 1; j < boxes.length; j++) {
        var a = boxes[i].r, b = boxes[j].r;
        if (a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height) {
          overlaps.push(boxes[i].name + " / " + boxes[j].name);
        }
      }
    }
    var p = document.getElementById("check-" + svg.getAttribute("data-gress"));
    if (!p) return;
    p.setAttribute("data-drawn", String(boxes.length));
    p.setAttribute("data-overlaps", String(overlaps.length));
    p.setAttribute("data-overflows", String(overflows.length));
    if (overlaps.length === 0 && overflows.length === 0) {
      p.textContent += " As drawn: " + boxes.length + " boxes, none overlapping, every label inside its box.";
    } else {
      p.classList.add("bad");
      p.textContent += " As drawn: " + overlaps.length + " overlapping pair(s)" +
        (overlaps.length ? " (" + overlaps.slice(0, 5).join(", ") + ")" : "") + ", " +
        overflows.length + " label(s) outside their box" +
        (overflows.length ? " (" + overflows.slice(0, 5).join(", ") + ")" : "") + ".";
    }
  }

  document.querySelectorAll("svg.depgraph").forEach(graph);
})();
