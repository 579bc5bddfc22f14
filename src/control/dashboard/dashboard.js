// Fulcrum's dashboard: polls /api/stats about once a second and draws the run from it and from
// /api/graph: the pipeline (edges labelled with packets/s, nodes with cycles per packet), the
// packet balance, ports with rate charts over the last minute, elements, drops, workers,
// mempools and offload devices. Plain JS, no library, nothing loaded from anywhere else.
//
// DOM data scheme (tests/e2e/test_dashboard.py reads it back and compares it with /metrics):
// every drawn figure that is a /metrics sample sits in an element carrying
//   data-metric="NAME"      the sample's name, e.g. fulcrum_port_received_packets_total
//   data-labels='K="V",…'   label matchers in the exposition syntax (same escaping): a subset of
//                           the sample's labels that picks exactly one sample, e.g. port="0"
//   data-value="EXACT"      the sample's value as JS writes the number (an integer's digits)
// Integer samples are drawn exactly, with "," between thousands: the text less its commas is
// data-value. Fractional ones (uptime, cycles per packet, task times) are drawn rounded.
// fulcrum_build_info (value 1) tags the elements that show its labels (version, pipeline);
// fulcrum_running tags the status badge ("running" / "ended").
// Rates (per second over the last live window) are not /metrics samples and carry no tag.
// Counters are JS numbers: exact up to 2^53.
"use strict";

const POLL_MS = 1000;
const HISTORY_S = 60;
// Node boxes hold classChars of the class name and nameChars of the instance name.
const GRAPH = { nodeW: 164, nodeH: 64, layerGap: 120, rowGap: 40, pad: 24, minScale: 0.6, classChars: 18,
                nameChars: 26, labelLift: 13 };
const COLORS = { rx: "#2563eb", tx: "#0d9488", drop: "#dc2626" };

const state = { graph: null, layout: null, seq: -1, history: [], stats: null };

// ---- DOM helpers ----------------------------------------------------------------------------

const SVG_NS = "http://www.w3.org/2000/svg";

function build(make, tag, attrs, children) {
  const el = make(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.setAttribute("class", v);
    else el.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}
const h = (tag, attrs, ...children) => build((t) => document.createElement(t), tag, attrs, children);
const s = (tag, attrs, ...children) =>
  build((t) => document.createElementNS(SVG_NS, t), tag, attrs, children);

function labelText(labels) {
  const esc = (v) => String(v).replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
  return Object.entries(labels).map(([k, v]) => `${k}="${esc(v)}"`).join(",");
}

// Marks `el` as drawing the /metrics sample NAME{labels} = value.
function tag(el, name, labels, value) {
  el.setAttribute("data-metric", name);
  el.setAttribute("data-labels", labelText(labels));
  el.setAttribute("data-value", String(value));
  return el;
}

// ---- number formats -------------------------------------------------------------------------

const grouped = (v) => String(v).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

function si(v, unit) {
  const steps = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
  for (const [f, p] of steps) if (Math.abs(v) >= f) return `${(v / f).toFixed(2)} ${p}${unit}`;
  return `${v.toFixed(v === 0 || Math.abs(v) >= 10 ? 0 : 1)} ${unit}`;
}
const pps = (v) => si(v, "pps");
const bps = (v) => si(v, "b/s");
// Chart scales: at most three significant digits, no trailing zeros ("2.5 Mpps").
function siShort(v, unit) {
  const steps = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"], [1, ""]];
  const [f, p] = steps.find(([x]) => Math.abs(v) >= x) || [1, ""];
  return `${Number((v / f).toPrecision(3))} ${p}${unit}`;
}
const ppsAxis = (v) => siShort(v, "pps");
const bpsAxis = (v) => siShort(v, "b/s");
const clip = (text, chars) => (text.length > chars ? `${text.slice(0, chars - 1)}…` : text);

function duration(sec) {
  const t = Math.floor(sec);
  const hh = Math.floor(t / 3600), mm = Math.floor((t % 3600) / 60), ss = t % 60;
  return hh > 0 ? `${hh}h ${mm}m ${ss}s` : mm > 0 ? `${mm}m ${ss}s` : `${(sec).toFixed(1)} s`;
}

// A span drawing an integer sample exactly.
const count = (name, labels, v) => tag(h("span", { class: "num" }, grouped(v)), name, labels, v);
// A span drawing a fractional sample rounded to `digits`.
const fixed = (name, labels, v, digits, suffix = "") =>
  tag(h("span", { class: "num" }, v.toFixed(digits) + suffix), name, labels, v);

const cyclesPerPacket = (e) => (e.in_packets > 0 ? e.cycles / e.in_packets : 0);
const sum = (xs) => xs.reduce((a, b) => a + b, 0);

// ---- the pipeline graph ---------------------------------------------------------------------

// Layers left to right by longest path from the sources (a cycle is cut at its first node),
// then each layer ordered by its predecessors' mean row to keep edges short.
function layoutGraph(nodes) {
  const n = nodes.length;
  const preds = nodes.map(() => []);
  nodes.forEach((nd, i) => nd.outputs.forEach((o) => o.to >= 0 && preds[o.to].push(i)));
  const indeg = preds.map((p) => p.length);
  const layer = new Array(n).fill(0);
  const done = new Array(n).fill(false);
  const queue = [];
  indeg.forEach((d, i) => d === 0 && queue.push(i));
  for (;;) {
    while (queue.length > 0) {
      const i = queue.shift();
      if (done[i]) continue;
      done[i] = true;
      for (const o of nodes[i].outputs) {
        if (o.to < 0 || done[o.to]) continue;
        layer[o.to] = Math.max(layer[o.to], layer[i] + 1);
        if (--indeg[o.to] === 0) queue.push(o.to);
      }
    }
    const left = done.indexOf(false);
    if (left < 0) break;
    queue.push(left);
  }
  const layers = [];
  layer.forEach((l, i) => (layers[l] = layers[l] || []).push(i));
  const row = new Array(n).fill(0);
  layers.forEach((ids, l) => {
    if (l > 0) {
      const key = (i) => (preds[i].length ? sum(preds[i].map((p) => row[p])) / preds[i].length : i);
      ids.sort((a, b) => key(a) - key(b));
    }
    ids.forEach((id, r) => (row[id] = r));
  });
  const rows = Math.max(...layers.map((ids) => ids.length));
  const { nodeW, nodeH, layerGap, rowGap, pad } = GRAPH;
  const width = 2 * pad + layers.length * nodeW + (layers.length - 1) * layerGap;
  const height = 2 * pad + rows * nodeH + (rows - 1) * rowGap + 24;
  const pos = nodes.map((_, i) => {
    const count = layers[layer[i]].length;
    const top = pad + 12 + ((rows - count) * (nodeH + rowGap)) / 2;
    return { x: pad + layer[i] * (nodeW + layerGap), y: top + row[i] * (nodeH + rowGap) };
  });
  return { pos, width, height };
}

// A curve from output `index` of `outputs` (connected ones) of node a to node b, and its middle.
function edgePath(a, b, index, outputs) {
  const { nodeW, nodeH } = GRAPH;
  const spread = outputs > 1 ? (index / (outputs - 1) - 0.5) * (nodeH * 0.6) : 0;
  const x1 = a.x + nodeW, y1 = a.y + nodeH / 2 + spread;
  const x2 = b.x, y2 = b.y + nodeH / 2;
  const back = x2 <= x1;
  const bend = back ? 90 : Math.max(40, (x2 - x1) / 2);
  const drop = back ? nodeH + 30 : 0;
  const c1 = [x1 + bend, y1 + drop], c2 = [x2 - bend, y2 + drop];
  const mid = [(x1 + 3 * c1[0] + 3 * c2[0] + x2) / 8, (y1 + 3 * c1[1] + 3 * c2[1] + y2) / 8];
  return { d: `M${x1},${y1} C${c1[0]},${c1[1]} ${c2[0]},${c2[1]} ${x2},${y2}`, mid };
}

function drawGraph(report, rates) {
  const box = document.getElementById("graph");
  if (!state.graph) {
    box.replaceChildren(h("p", { class: "empty" }, "waiting for the pipeline…"));
    return;
  }
  const nodes = state.graph.nodes;
  const { pos, width, height } = state.layout;
  const { nodeW, nodeH } = GRAPH;
  const byName = new Map(report.elements.map((e, i) => [e.name, i]));
  const maxRate = Math.max(1, ...(rates.element_out_pps || []).flat());
  const edges = [], labels = [], boxes = [];
  nodes.forEach((nd, i) => {
    const ei = byName.get(nd.name);
    const e = ei === undefined ? null : report.elements[ei];
    const outRates = (ei !== undefined && rates.element_out_pps && rates.element_out_pps[ei]) || [];
    const connected = nd.outputs.map((o, k) => [o, k]).filter(([o]) => o.to >= 0);
    connected.forEach(([o, k], c) => {
      const rate = outRates[k] || 0;
      const { d, mid } = edgePath(pos[i], pos[o.to], c, connected.length);
      const widthPx = 1.5 + 3 * Math.sqrt(rate / maxRate);
      edges.push(s("path", { d, class: rate > 0 ? "edge live" : "edge", "stroke-width": widthPx.toFixed(2),
                             "marker-end": "url(#arrow)" },
                   s("title", {}, `${nd.name}[${k}] → ${nodes[o.to].name}: ${pps(rate)}`)));
      const text = (connected.length > 1 ? `[${k}] ` : "") + pps(rate);
      const w = 7 * text.length + 12;
      labels.push(s("g", { class: "edge-label", transform: `translate(${mid[0]},${mid[1] - GRAPH.labelLift})` },
                    s("rect", { x: -w / 2, y: -10, width: w, height: 20, rx: 10 }),
                    s("text", { "text-anchor": "middle", y: 4 }, text)));
    });
    const drops = e ? sum(Object.values(e.drops)) : 0;
    const cpp = e ? cyclesPerPacket(e) : 0;
    const p = pos[i];
    boxes.push(s("g", { class: drops > 0 ? "node dropping" : "node", transform: `translate(${p.x},${p.y})` },
      s("title", {}, `${nd.name} (${nd.class})\n${nd.loc}` +
        (nd.drop_reasons.length ? `\ndrop reasons: ${nd.drop_reasons.join(", ")}` : "")),
      s("rect", { width: nodeW, height: nodeH, rx: 8 }),
      s("text", { x: 12, y: 21, class: "node-class" }, clip(nd.class, GRAPH.classChars)),
      s("text", { x: 12, y: 37, class: "node-name" }, clip(nd.name, GRAPH.nameChars)),
      e && tag(s("text", { x: 12, y: 54, class: "node-cost" }, `${cpp.toFixed(1)} cycles/pkt`),
               "fulcrum_element_cycles_per_packet", { element: e.name }, cpp),
      drops > 0 && s("text", { x: nodeW / 2, y: nodeH + 15, class: "node-drops", "text-anchor": "middle" },
                     `${grouped(drops)} dropped`)));
  });
  const svg = s("svg", { viewBox: `0 0 ${width} ${height}`, width: "100%",
                         style: `min-width:${Math.round(width * GRAPH.minScale)}px;max-height:${height}px`,
                         role: "img", "aria-label": "pipeline graph" },
    s("defs", {}, s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 9,
                                markerHeight: 9, markerUnits: "userSpaceOnUse", orient: "auto" },
                    s("path", { d: "M0,0 L10,5 L0,10 z", class: "arrow" }))),
    edges, boxes, labels);
  box.replaceChildren(svg);
}

// ---- time-series charts ---------------------------------------------------------------------

// Lines of `series` ([{color, values: [[t, v], …]}]) over the last HISTORY_S seconds to tNow,
// with a scale on the right unless `format` is null (a sparkline).
function drawChart(canvas, series, tNow, format) {
  const dpr = window.devicePixelRatio || 1;
  const cssW = canvas.clientWidth || 300, cssH = canvas.clientHeight || 80;
  canvas.width = Math.round(cssW * dpr);
  canvas.height = Math.round(cssH * dpr);
  const g = canvas.getContext("2d");
  g.scale(dpr, dpr);
  const left = 4, right = cssW - (format ? 66 : 4), top = 6, bottom = cssH - 6;
  const peak = Math.max(0, ...series.flatMap((x) => x.values.map((p) => p[1])));
  const yMax = niceCeil(peak);
  g.font = "11px system-ui, sans-serif";
  g.textBaseline = "middle";
  for (let k = 0; k <= 2; ++k) {
    const y = top + ((bottom - top) * k) / 2;
    g.strokeStyle = "#e5e9f0";
    g.lineWidth = 1;
    g.beginPath();
    g.moveTo(left, Math.round(y) + 0.5);
    g.lineTo(right, Math.round(y) + 0.5);
    g.stroke();
    if (!format) continue;
    g.fillStyle = "#8a94a6";
    g.fillText(format((yMax * (2 - k)) / 2), right + 6, y);
  }
  const x = (t) => right - ((tNow - t) / HISTORY_S) * (right - left);
  const y = (v) => bottom - (yMax > 0 ? (v / yMax) * (bottom - top) : 0);
  for (const { color, values } of series) {
    if (values.length === 0) continue;
    g.strokeStyle = color;
    g.lineWidth = 1.75;
    g.lineJoin = "round";
    g.beginPath();
    values.forEach(([t, v], i) => (i ? g.lineTo(x(t), y(v)) : g.moveTo(x(t), y(v))));
    g.stroke();
    g.globalAlpha = 0.08;
    g.fillStyle = color;
    g.lineTo(x(values[values.length - 1][0]), bottom);
    g.lineTo(x(values[0][0]), bottom);
    g.fill();
    g.globalAlpha = 1;
  }
}

function niceCeil(v) {
  if (v <= 0) return 1;
  const mag = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (v <= m * mag) return m * mag;
  return 10 * mag;
}

function chart(series, tNow, format) {
  const canvas = h("canvas", { class: "chart" });
  requestAnimationFrame(() => drawChart(canvas, series, tNow, format));
  return canvas;
}

const seriesOf = (pick) => state.history.map((x) => [x.t, pick(x)]);

// ---- sections -------------------------------------------------------------------------------

function drawMeta(st) {
  const r = st.report;
  const meta = document.getElementById("meta");
  meta.replaceChildren(
    tag(h("span", { class: "pipeline", title: r.pipeline }, r.pipeline || "(pipeline given as text)"),
        "fulcrum_build_info", { pipeline: r.pipeline }, 1),
    h("span", {}, "version ", tag(h("b", {}, r.version), "fulcrum_build_info", { version: r.version }, 1),
      ` (${r.git_hash})`),
    h("span", {}, count("fulcrum_workers", {}, r.workers), r.workers === 1 ? " worker" : " workers"),
    h("span", {}, "batch ", count("fulcrum_batch_size", {}, r.batch)),
    h("span", {}, r.pages),
    r.tsc_hz !== undefined &&
      h("span", { title: "TSC rate" }, "TSC ", tag(h("span", {}, `${(r.tsc_hz / 1e9).toFixed(2)} GHz`),
                                                   "fulcrum_tsc_hertz", {}, r.tsc_hz)),
    h("span", {}, "up ", tag(h("b", {}, duration(st.elapsed_s)), "fulcrum_uptime_seconds", {}, st.elapsed_s)));
  setStatus(st.running ? "running" : "ended", st.running ? "status-ok" : "status-ended", st.running ? 1 : 0);
}

function setStatus(text, cls, running) {
  const el = document.getElementById("status");
  el.textContent = text;
  el.className = `status ${cls}`;
  if (running === undefined) ["data-metric", "data-labels", "data-value"].forEach((a) => el.removeAttribute(a));
  else tag(el, "fulcrum_running", {}, running);
}

function drawTotals(st) {
  const r = st.report, rt = st.rates;
  const tile = (title, name, value, rate, pick, color) =>
    h("div", { class: "tile" },
      h("div", { class: "tile-title" }, title),
      h("div", { class: "tile-value" }, count(name, {}, value)),
      h("div", { class: "tile-rate" }, rate === null ? "\u00a0" : pps(rate)),
      pick && chart([{ color, values: seriesOf(pick) }], st.elapsed_s, null));
  const balanced = r.packets_in + r.packets_created === r.packets_out + r.dropped + r.queued;
  document.getElementById("totals").replaceChildren(
    tile("Received", "fulcrum_packets_received_total", r.packets_in, rt.in_pps, (x) => x.in, COLORS.rx),
    tile("Transmitted", "fulcrum_packets_transmitted_total", r.packets_out, rt.out_pps, (x) => x.out, COLORS.tx),
    tile("Dropped", "fulcrum_packets_dropped_total", r.dropped, rt.drop_pps, (x) => x.drop, COLORS.drop),
    tile("Created", "fulcrum_packets_created_total", r.packets_created, null),
    h("div", { class: "tile" },
      h("div", { class: "tile-title" }, "In flight"),
      h("div", { class: "tile-value" }, count("fulcrum_packets_in_flight", {}, r.queued)),
      h("div", { class: balanced ? "balance ok" : "balance bad" },
        balanced ? "received + created = transmitted + dropped + in flight"
                 : "balance does not hold")));
}

function drawPorts(st) {
  const r = st.report, rt = st.rates;
  const side = (label, i, dir, packetsName, bytesName, pkts, bytes, ratePps, rateBps) =>
    h("div", { class: `side side-${dir}` },
      h("div", { class: "side-title" }, h("i", { class: `dot dot-${dir}` }), label),
      h("div", { class: "side-rate" }, pps(ratePps || 0), h("small", {}, bps(rateBps || 0))),
      h("div", { class: "side-total" }, count(packetsName, { port: String(i) }, pkts), " packets"),
      h("div", { class: "side-total" }, count(bytesName, { port: String(i) }, bytes), " bytes"));
  document.getElementById("ports").replaceChildren(...r.ports.map((p, i) =>
    h("div", { class: "port" },
      h("div", { class: "port-head" }, h("b", {}, `Port ${i}`), h("span", { class: "spec", title: p.spec }, p.spec)),
      h("div", { class: "port-body" },
        side("RX", i, "rx", "fulcrum_port_received_packets_total", "fulcrum_port_received_bytes_total",
             p.rx_packets, p.rx_bytes, rt.port_rx_pps[i], rt.port_rx_bps[i]),
        side("TX", i, "tx", "fulcrum_port_transmitted_packets_total", "fulcrum_port_transmitted_bytes_total",
             p.tx_packets, p.tx_bytes, rt.port_tx_pps[i], rt.port_tx_bps[i]),
        h("div", { class: "port-charts" },
          h("div", { class: "chart-title" }, "packets/s, last minute"),
          chart([{ color: COLORS.rx, values: seriesOf((x) => x.ports[i].rxp) },
                 { color: COLORS.tx, values: seriesOf((x) => x.ports[i].txp) }], st.elapsed_s, ppsAxis),
          h("div", { class: "chart-title" }, "bits/s, last minute"),
          chart([{ color: COLORS.rx, values: seriesOf((x) => x.ports[i].rxb) },
                 { color: COLORS.tx, values: seriesOf((x) => x.ports[i].txb) }], st.elapsed_s, bpsAxis))))));
}

function table(headers, rows, empty) {
  if (rows.length === 0) return h("p", { class: "empty" }, empty);
  return h("table", {},
    h("thead", {}, h("tr", {}, headers.map(([t, cls]) => h("th", { class: cls }, t)))),
    h("tbody", {}, rows));
}

function drawElements(st) {
  const r = st.report, rt = st.rates;
  const graphNode = new Map((state.graph ? state.graph.nodes : []).map((n) => [n.name, n]));
  const rows = r.elements.map((e, i) => {
    const node = graphNode.get(e.name);
    const outs = e.out_packets.map((n, k) => {
      const to = node && node.outputs[k] && node.outputs[k].to >= 0 ? state.graph.nodes[node.outputs[k].to].name : "—";
      return h("div", { class: "out" }, h("span", { class: "muted" }, `[${k}] → ${to} `),
               count("fulcrum_element_output_packets_total", { element: e.name, output: String(k) }, n));
    });
    const counters = Object.entries(e.counters).map(([name, v]) =>
      h("span", { class: "chip" }, `${name} `, count("fulcrum_element_counter", { element: e.name, name }, v)));
    const drops = sum(Object.values(e.drops));
    return h("tr", {},
      h("td", {}, h("b", {}, e.name)),
      h("td", { class: "muted" }, e.class),
      h("td", { class: "r" }, count("fulcrum_element_packets_total", { element: e.name }, e.in_packets)),
      h("td", { class: "r" }, pps((rt.element_in_pps || [])[i] || 0)),
      h("td", { class: "r" }, count("fulcrum_element_batches_total", { element: e.name }, e.batches)),
      h("td", { class: "r" }, count("fulcrum_element_cycles_total", { element: e.name }, e.cycles)),
      h("td", { class: "r" }, fixed("fulcrum_element_cycles_per_packet", { element: e.name }, cyclesPerPacket(e), 1)),
      h("td", {}, outs),
      h("td", { class: drops > 0 ? "r bad" : "r muted" }, grouped(drops)),
      h("td", {}, counters));
  });
  document.getElementById("elements").replaceChildren(table(
    [["Element"], ["Class"], ["Packets", "r"], ["Rate", "r"], ["Batches", "r"], ["Cycles", "r"],
     ["Cycles/pkt", "r"], ["Outputs"], ["Dropped", "r"], ["Counters"]], rows, "no elements"));
}

function drawDrops(st) {
  const entries = Object.entries(st.report.drops).sort((a, b) => b[1] - a[1]);
  const total = Math.max(1, sum(entries.map((x) => x[1])));
  const rows = entries.map(([where, n]) => {
    const slash = where.lastIndexOf("/");
    const element = slash < 0 ? where : where.slice(0, slash);
    const reason = slash < 0 ? "" : where.slice(slash + 1);
    return h("tr", {},
      h("td", {}, element), h("td", {}, h("span", { class: "reason" }, reason)),
      h("td", { class: "r" }, count("fulcrum_drops_total", { element, reason }, n)),
      h("td", { class: "bar-cell" }, h("div", { class: "track" },
        h("div", { class: "bar bar-drop", style: `width:${(100 * n / total).toFixed(1)}%` }))));
  });
  document.getElementById("drops").replaceChildren(
    table([["Element"], ["Reason"], ["Packets", "r"], ["Share"]], rows, "No packet dropped."));
}

function drawWorkers(st) {
  const rows = st.report.per_worker.map((w, i) => {
    const l = { worker: String(i) };
    return h("tr", {}, h("td", {}, `#${i}`), h("td", { class: "muted" }, `cpu ${w.cpu}`),
      h("td", { class: "r" }, count("fulcrum_worker_received_packets_total", l, w.rx_packets)),
      h("td", { class: "r" }, count("fulcrum_worker_transmitted_packets_total", l, w.tx_packets)),
      h("td", { class: "r" }, count("fulcrum_worker_dropped_packets_total", l, w.dropped)));
  });
  document.getElementById("workers").replaceChildren(
    table([["Worker"], ["Core"], ["RX", "r"], ["TX", "r"], ["Dropped", "r"]], rows, "no workers"));
}

function drawMempools(st) {
  const rows = st.mempools.map((m) => h("tr", {},
    h("td", {}, m.name),
    h("td", { class: "r" }, count("fulcrum_mempool_in_use", { pool: m.name }, m.in_use)),
    h("td", { class: "r" }, count("fulcrum_mempool_size", { pool: m.name }, m.size)),
    h("td", { class: "bar-cell" }, h("div", { class: "track" },
      h("div", { class: "bar", style: `width:${(100 * m.in_use / Math.max(1, m.size)).toFixed(1)}%` })))));
  document.getElementById("mempools").replaceChildren(
    table([["Pool"], ["In use", "r"], ["Size", "r"], ["Use"]], rows, "no mempools"));
}

function drawDevices(st) {
  const devices = st.report.devices;
  document.getElementById("devices-card").hidden = devices.length === 0;
  const phases = [["queue", "queue_us"], ["device", "device_us"], ["return", "return_us"], ["total", "task_us"]];
  const rows = devices.map((d) => h("tr", {},
    h("td", {}, h("b", {}, d.device), d.emulated && !d.device.includes("emulated") ? h("span", { class: "chip" }, "emulated") : null),
    h("td", { class: "r" }, count("fulcrum_device_tasks_total", { device: d.device, result: "ok" }, d.tasks_ok)),
    h("td", { class: "r" }, count("fulcrum_device_tasks_total", { device: d.device, result: "failed" }, d.tasks_failed)),
    h("td", { class: "r" }, count("fulcrum_device_packets_total", { device: d.device }, d.packets)),
    phases.map(([phase, key]) => h("td", { class: "r" },
      tag(h("span", { class: "num" }, `${d[key].toFixed(1)} µs`), "fulcrum_device_task_seconds",
          { device: d.device, phase }, d[key] * 1e-6)))));
  document.getElementById("devices").replaceChildren(table(
    [["Device"], ["Tasks ok", "r"], ["Failed", "r"], ["Packets", "r"], ["Queue", "r"], ["Device", "r"],
     ["Return", "r"], ["Task", "r"]], rows, "no device"));
}

function drawFooter(st) {
  const r = st.report;
  document.getElementById("footer").replaceChildren(
    "live state #", count("fulcrum_snapshot_sequence", {}, st.seq),
    ` · rates over the last ${st.rates.window_s.toFixed(2)} s · table reloads: `,
    count("fulcrum_table_reloads_total", { result: "done" }, r.reloads || 0), " done, ",
    count("fulcrum_table_reloads_total", { result: "refused" }, r.reload_failures || 0), " refused · ",
    h("a", { href: "/metrics" }, "/metrics"), " · ", h("a", { href: "/api/stats" }, "/api/stats"), " · ",
    h("a", { href: "/api/graph" }, "/api/graph"));
}

// ---- polling --------------------------------------------------------------------------------

function remember(st) {
  if (st.seq === state.seq) return;
  state.seq = st.seq;
  const rt = st.rates;
  state.history.push({
    t: st.elapsed_s, in: rt.in_pps, out: rt.out_pps, drop: rt.drop_pps,
    ports: st.report.ports.map((_, i) => ({ rxp: rt.port_rx_pps[i] || 0, txp: rt.port_tx_pps[i] || 0,
                                            rxb: rt.port_rx_bps[i] || 0, txb: rt.port_tx_bps[i] || 0 })),
  });
  while (state.history.length > 0 && state.history[0].t < st.elapsed_s - HISTORY_S) state.history.shift();
}

function draw(st) {
  drawMeta(st);
  drawTotals(st);
  drawGraph(st.report, st.rates);
  drawPorts(st);
  drawElements(st);
  drawDrops(st);
  drawWorkers(st);
  drawMempools(st);
  drawDevices(st);
  drawFooter(st);
}

async function fetchJson(path) {
  const res = await fetch(path, { cache: "no-store" });
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
  return res.json();
}

async function poll() {
  try {
    if (!state.graph) {
      state.graph = await fetchJson("/api/graph");
      state.layout = layoutGraph(state.graph.nodes);
    }
    const st = await fetchJson("/api/stats");
    remember(st);
    state.stats = st;
    draw(st);
  } catch (err) {
    // Before the run is live (503) or after the process has gone: keep what was drawn.
    setStatus(state.stats ? "disconnected" : "connecting", "status-wait");
  }
  setTimeout(poll, POLL_MS);
}

window.addEventListener("resize", () => state.stats && draw(state.stats));
poll();
