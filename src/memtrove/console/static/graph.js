// memtrove console: the graph explorer. Draws a document's neighbourhood with the bundled
// Cytoscape.js; a click expands a node, a double-click opens it; edge types filter.
"use strict";

(function () {
  const box = document.getElementById("graph");
  if (!box || typeof cytoscape !== "function") return;
  const list = document.getElementById("graph-nodes");
  const LARGE = 80;
  const colours = {
    semantic: "#4e79a7", causal: "#e15759", temporal: "#76b7b2", entity: "#59a14f",
    reference: "#9c755f", supporting: "#edc948", contradicts: "#b07aa1", usage: "#ff9da7",
    fact: "#8cd17d",
  };
  const graph = cytoscape({
    container: box,
    style: [
      { selector: "node", style: { label: "data(label)", "font-size": 10, "background-color": "#8a8f98",
        color: "#888", "text-wrap": "ellipsis", "text-max-width": 120 } },
      { selector: "node.start", style: { "background-color": "#f28e2b" } },
      { selector: "node[kind = 'entity']", style: { shape: "round-rectangle", "background-color": "#59a14f" } },
      { selector: "node[kind = 'value']", style: { shape: "diamond", "background-color": "#bab0ac" } },
      { selector: "edge[type = 'fact']", style: { label: "data(label)", "font-size": 8, color: "#888" } },
      { selector: "node.expanded", style: { "border-width": 2, "border-color": "#f28e2b" } },
      { selector: "edge", style: { width: 1.5, "curve-style": "bezier", "target-arrow-shape": "triangle",
        "line-color": "data(colour)", "target-arrow-color": "data(colour)" } },
    ],
  });
  window.memtroveGraph = graph;

  function wanted() {
    return Array.from(document.querySelectorAll('input[name="edge-type"]:checked')).map((i) => i.value);
  }

  function href(node) {
    if (node.kind === "entity") return "/ui/graph?entity=" + encodeURIComponent(node.id.slice(7));
    return "/ui/doc?ref=" + encodeURIComponent(node.id);
  }

  function listNode(node) {
    const item = document.createElement("li");
    if (node.kind === "value") {
      item.textContent = node.title + " (value)";
    } else {
      const link = document.createElement("a");
      link.href = href(node);
      link.textContent = node.title + " (" + node.type + ")";
      item.appendChild(link);
      const expand = document.createElement("button");
      expand.type = "button";
      expand.textContent = "Expand";
      expand.addEventListener("click", () => load(node.id));
      item.appendChild(expand);
    }
    list.appendChild(item);
  }

  async function load(id) {
    if (id.startsWith("value:")) return; // a literal has no neighbourhood
    const asOf = box.dataset.asOf ? "&as_of=" + encodeURIComponent(box.dataset.asOf) : "";
    const which = id.startsWith("entity:") ? "entity=" + encodeURIComponent(id.slice(7)) + asOf
      : "ref=" + encodeURIComponent(id);
    const url = "/ui/graph.json?" + which + "&types=" + encodeURIComponent(wanted().join(","));
    const answer = await fetch(url, { credentials: "same-origin" });
    const data = await answer.json();
    if (!answer.ok) return;
    const added = [];
    for (const node of data.nodes) {
      if (graph.getElementById(node.id).length) continue;
      added.push({ group: "nodes", data: { id: node.id, label: node.title, type: node.type, kind: node.kind } });
      listNode(node);
    }
    for (const edge of data.edges) {
      const key = edge.id || edge.source + ">" + edge.target + ":" + edge.type;
      if (graph.getElementById(key).length) continue;
      added.push({ group: "edges", data: { id: key, source: edge.source, target: edge.target,
        type: edge.type, label: edge.label || edge.type, colour: colours[edge.type] || "#999" } });
    }
    graph.add(added);
    graph.getElementById(id).addClass("expanded");
    // cose reads well for a neighbourhood but grows with the square of the nodes; a large
    // one is laid out in rings by degree, which is linear.
    const large = graph.nodes().length > LARGE;
    graph.layout(large
      ? { name: "concentric", animate: false, fit: true, padding: 20, minNodeSpacing: 4,
          concentric: (node) => node.degree(), levelWidth: () => 1 }
      : { name: "cose", animate: false, fit: true, padding: 20 }).run();
    box.dataset.nodes = String(graph.nodes().length);
    box.dataset.loads = String(Number(box.dataset.loads || "0") + 1);
    box.dataset.ready = "true";
  }

  graph.on("tap", "node", (event) => load(event.target.id()));
  graph.on("dbltap", "node[kind != 'value']", (event) => {
    window.location.href = href({ id: event.target.id(), kind: event.target.data("kind") });
  });
  document.querySelectorAll('input[name="edge-type"]').forEach((input) =>
    input.addEventListener("change", () => {
      const types = new Set(wanted());
      graph.edges().forEach((edge) => edge.style("display", types.has(edge.data("type")) ? "element" : "none"));
    })
  );
  const start = box.dataset.start || "entity:" + box.dataset.entity;
  load(start).then(() => graph.getElementById(start).addClass("start"));
})();
