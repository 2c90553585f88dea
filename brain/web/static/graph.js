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
    const count = data.nodes.length;
    const big = count > 500;
    // Sizes run from 1 to 9 whatever the Brain's scale; labels show once zoomed in enough to read them.
    const top = Math.log2(1 + Math.max(1, ...data.nodes.map((n) => n.links + n.cites)));
    const size = (n) => 1 + 8 * Math.log2(1 + n.links + n.cites) / top;
    const labelScale = Math.max(0, Math.log10(count) - 1.5) * 2.5;
    const graph = ForceGraph()(el)
      .width(el.clientWidth).height(el.clientHeight)
      .graphData(data)
      .nodeId("id")
      .nodeRelSize(count > 100 ? 2.5 : 4)
      .nodeVal(size)
      .nodeColor(colour)
      .nodeLabel((n) => `<b>${escape(n.title)}</b><br>${escape(n.type)} · ${n.links} links · ${n.cites} citations`)
      .linkColor(() => count > 100 ? "rgba(120,120,140,0.12)" : "rgba(120,120,140,0.3)")
      .warmupTicks(count > 100 ? 20 : 80)  // laid out before the first frame, so the view opens nearly settled
      .cooldownTime(5000)
      .onNodeClick((n) => { window.location.href = n.url; })
      .nodeCanvasObjectMode(() => "after")
      .nodeCanvasObject((n, ctx, scale) => {
        if (scale < labelScale) return;
        ctx.font = `${11 / scale}px system-ui, sans-serif`;
        ctx.fillStyle = "#222";
        ctx.textAlign = "center";
        ctx.fillText(n.title, n.x, n.y + Math.sqrt(size(n)) * graph.nodeRelSize() + 10 / scale);
      });
    graph.d3Force("charge").strength(big ? -20 : count > 100 ? -40 : -120).distanceMax(300);  // no far drift of lone pages
    graph.d3Force("link").distance(count <= 60 ? 70 : 30);  // room for the labels of a small Brain
    el.forceGraph = graph;  // for the browser test, which clicks a node where the graph drew it
    el.dataset.nodes = String(data.nodes.length);
    graph.onEngineStop(() => {
      if (!el.dataset.ready) graph.zoomToFit(400, 60);  // once: later stops come from the reader's own drags
      el.dataset.ready = "1";
    });
    window.addEventListener("resize", () => graph.width(el.clientWidth).height(el.clientHeight));
  }).catch((err) => { status.textContent = `The graph could not be loaded: ${err}`; });
})();
