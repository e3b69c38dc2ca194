// Checks that every chart drew its data: a chart's data are the only
// elements in the palette's colours (axes, text and reference lines are
// black or grey). The outcome goes on <body> as data-* attributes, which
// lmbench's own tests read from the rendered page.
(function () {
  const bad = [];
  let charts = 0, empty = 0;
  for (const fig of document.querySelectorAll("figure.panel")) {
    if (fig.dataset.empty) {
      empty++;
      if (!fig.querySelector(".empty")) bad.push(fig.id);
      continue;
    }
    charts++;
    const svg = fig.querySelector("svg");
    let drawn = 0;
    if (svg) {
      for (const el of svg.querySelectorAll("path, circle, rect, polygon, polyline")) {
        const style = (el.getAttribute("style") || "").toUpperCase();
        if (palette.some((c) => style.includes(c))) drawn++;
      }
    }
    const box = svg ? svg.getBoundingClientRect() : { width: 0, height: 0 };
    fig.dataset.drawn = String(drawn);
    if (drawn === 0 || box.width === 0 || box.height === 0) bad.push(fig.id);
  }
  document.body.dataset.charts = String(charts);
  document.body.dataset.empty = String(empty);
  document.body.dataset.bad = bad.join(" ");
  document.body.dataset.ok = bad.length === 0 ? "true" : "false";
  document.body.dataset.height = String(document.documentElement.scrollHeight);
})();
