// The Graph view: pages as nodes coloured by type and sized by links and citations; a click opens the page.
// Titles come from pages, which are untrusted text: the tooltip gets them escaped, the canvas draws them as text.
"use strict";
(function () {
  const COLOURS = {person: "#d1495b", organization: "#00798c", place: "#edae49", project: "#30638e",
                   concept: "#7b4fa0", preference: "#3c9d5d", learning: "#8d6a3f", event: "#e07a5f"};
  const el = document.getElementById("graph");
  const status = document.getElementById("graph-status");
  const escape = (s) => String(s).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
  const colour = (n) => COLOURS[n.type] || "#777";

  function legend(nodes) {
    const ul = document.getElementById("legend");
    const counts = {};
    nodes.forEach((n) => { counts[n.type] = (counts[n.type] || 0) + 1; });
    Object.keys(counts).sort().forEach((type) => {
      const li = document.createElement("li");
      const dot = document.createElement("span");
      dot.className = "dot";
      dot.style.background = COLOURS[type] || "#777";
      li.append(dot, document.createTextNode(`${type} (${counts[type]})`));
      ul.append(li);
    });
  }

  fetch(el.dataset.src).then((r) => r.json()).then((data) => {
    status.textContent = `${data.nodes.length} pages, ${data.links.length} links · size: links + citations · click a page to open it`;
    legend(data.nodes);
    const big = data.nodes.length > 500;
    const labelScale = data.nodes.length <= 60 ? 0 : big ? 2.5 : 1.2;  // labels once zoomed in enough to read them
    const graph = ForceGraph()(el)
      .width(el.clientWidth).height(el.clientHeight)
      .graphData(data)
      .nodeId("id")
      .nodeVal((n) => 1 + 2 * Math.log2(1 + n.links + n.cites))
      .nodeColor(colour)
      .nodeLabel((n) => `<b>${escape(n.title)}</b><br>${escape(n.type)} · ${n.links} links · ${n.cites} citations`)
      .linkColor(() => "rgba(120,120,140,0.25)")
      .warmupTicks(big ? 30 : 80)  // laid out before the first frame, so the view opens settled
      .cooldownTicks(big ? 100 : 150)
      .onNodeClick((n) => { window.location.href = n.url; })
      .nodeCanvasObjectMode(() => "after")
      .nodeCanvasObject((n, ctx, scale) => {
        if (scale < labelScale) return;
        ctx.font = `${11 / scale}px system-ui, sans-serif`;
        ctx.fillStyle = "#222";
        ctx.textAlign = "center";
        ctx.fillText(n.title, n.x, n.y + Math.sqrt(1 + 2 * Math.log2(1 + n.links + n.cites)) * 4 + 10 / scale);
      });
    graph.d3Force("charge").strength(big ? -30 : -120).distanceMax(big ? 200 : 300);  // no far drift of lone pages
    el.forceGraph = graph;  // for the browser test, which clicks a node where the graph drew it
    el.dataset.nodes = String(data.nodes.length);
    graph.onEngineStop(() => {
      if (!el.dataset.ready) graph.zoomToFit(400, 60);  // once: later stops come from the reader's own drags
      el.dataset.ready = "1";
    });
    window.addEventListener("resize", () => graph.width(el.clientWidth).height(el.clientHeight));
  }).catch((err) => { status.textContent = `The graph could not be loaded: ${err}`; });
})();
