// Script of swimlane.html (embedded by lib/profile/SwimlaneHtml.cpp): reads the trace,
// summary and analysis JSON embedded in the page and draws the summary, verdicts,
// legend and the lanes (SVG), with zoom, pan, hover details and dependency arrows.
// Ids and classes are a contract with test/html and docs/profiling.md.
(function () {
  'use strict';

  const LABEL_WIDTH = 130;       // px, lane names column
  const AXIS_HEIGHT = 22;        // px, time axis on top
  const CORE_LANE_HEIGHT = 20;   // px
  const PIPE_LANE_HEIGHT = 13;   // px
  const MIN_BOX_PX = 1;          // a task never narrower than this, so it stays visible
  // Above this many boxes, only those in view are drawn and sub-pixel neighbours on a
  // lane merge into one "cluster" rect, so huge traces stay responsive.
  const FULL_DRAW_LIMIT = 20000;
  const ZOOM_STEP = 1.25;
  const DRAG_CLICK_PX = 3;       // a press that moves less than this is a click
  const TIME_EPS_US = 0.0015;    // trace times have 3 decimals (ns); flow ends sit 1 ns inside

  const $ = (id) => document.getElementById(id);
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));

  function fail(message) {
    const el = $('error');
    el.hidden = false;
    el.textContent = message;
    document.body.dataset.ready = 'error';
  }

  function readJson(id) {
    const el = $(id);
    if (!el) return null;
    return JSON.parse(el.textContent);
  }

  /// Value at a dotted path ("cores.0.utilisation"), or undefined.
  function at(obj, path) {
    let v = obj;
    for (const part of path.split('.')) {
      if (v === null || v === undefined || typeof v !== 'object') return undefined;
      v = v[part];
    }
    return v;
  }

  // ---------------------------------------------------------------- the trace
  function parseTrace(trace) {
    if (!trace || !Array.isArray(trace.traceEvents))
      throw new Error('the trace has no traceEvents array (expected merged_swimlane.json)');
    const procNames = new Map();
    const threadNames = new Map();
    const key = (pid, tid) => pid + ':' + tid;
    const tasks = [];
    const pipes = [];
    const flowStarts = new Map();
    const flowEnds = new Map();
    for (const e of trace.traceEvents) {
      if (!e || typeof e !== 'object') continue;
      if (e.ph === 'M' && e.name === 'process_name') procNames.set(e.pid, String(at(e, 'args.name')));
      else if (e.ph === 'M' && e.name === 'thread_name') threadNames.set(key(e.pid, e.tid), String(at(e, 'args.name')));
      else if (e.ph === 'X' && e.cat === 'task') {
        const a = e.args || {};
        tasks.push({ kind: 'task', call: a.call, pid: e.pid, tid: e.tid, ts: +e.ts, dur: +e.dur, name: e.name, args: a });
      } else if (e.ph === 'X' && e.cat === 'pipe') {
        const a = e.args || {};
        pipes.push({ kind: 'pipe', task: a.task, pid: e.pid, tid: e.tid, ts: +e.ts, dur: +e.dur, name: e.name, args: a });
      } else if (e.cat === 'dep' && e.ph === 's') flowStarts.set(e.id, e);
      else if (e.cat === 'dep' && e.ph === 'f') flowEnds.set(e.id, e);
    }
    for (const b of tasks.concat(pipes))
      if (!isFinite(b.ts) || !isFinite(b.dur)) throw new Error('an event has no numeric ts/dur: ' + b.name);

    // Lanes: one per (pid, tid) that has task or pipe events, in pid then tid order.
    const lanes = new Map();
    const laneOf = (b, kind) => {
      const k = key(b.pid, b.tid);
      let lane = lanes.get(k);
      if (!lane) {
        lane = { key: k, pid: b.pid, tid: b.tid, kind, items: [], name: threadNames.get(k) || (procNames.get(b.pid) || b.pid) + '/' + b.tid };
        lanes.set(k, lane);
      }
      lane.items.push(b);
      b.lane = lane;
    };
    for (const t of tasks) laneOf(t, 'core');
    for (const p of pipes) laneOf(p, 'pipe');
    for (const lane of lanes.values()) lane.items.sort((a, b) => a.ts - b.ts);

    // Idle lanes: named core / pipe threads of the core processes without events.
    const coreProcs = new Set([...lanes.values()].map((l) => l.pid));
    const idleLanes = [];
    for (const [k, name] of threadNames) {
      const [pid, tid] = k.split(':').map(Number);
      if (!coreProcs.has(pid) || lanes.has(k)) continue;
      idleLanes.push({ key: k, pid, tid, kind: /\s/.test(name) ? 'pipe' : 'core', items: [], name, idle: true });
    }

    const byCall = new Map();
    for (const t of tasks) byCall.set(t.call, t);
    // Dependencies: bind each flow end to the task open at its time on its lane.
    const findTask = (e) => {
      const lane = lanes.get(key(e.pid, e.tid));
      if (!lane) return null;
      const items = lane.items;
      let lo = 0, hi = items.length - 1, best = -1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        if (items[mid].ts <= e.ts + TIME_EPS_US) { best = mid; lo = mid + 1; } else hi = mid - 1;
      }
      for (let i = best; i >= 0 && i >= best - 1; --i) {
        const it = items[i];
        if (it.kind === 'task' && e.ts >= it.ts - TIME_EPS_US && e.ts <= it.ts + it.dur + TIME_EPS_US) return it;
      }
      return null;
    };
    const preds = new Map();
    const succs = new Map();
    let edges = 0;
    // A flow end that names its task (args.call: a device trace's overlapping control
    // nodes) binds to it; otherwise to the task open at its time.
    const taskOf = (e) => (e.args && e.args.call !== undefined ? byCall.get(e.args.call) || null : findTask(e));
    for (const [id, s] of flowStarts) {
      const f = flowEnds.get(id);
      if (!f) continue;
      const from = taskOf(s), to = taskOf(f);
      if (!from || !to) continue;
      ++edges;
      if (!preds.has(to.call)) preds.set(to.call, []);
      if (!succs.has(from.call)) succs.set(from.call, []);
      preds.get(to.call).push(from.call);
      succs.get(from.call).push(to.call);
    }

    let t0 = Infinity, t1 = -Infinity;
    for (const lane of lanes.values())
      for (const b of lane.items) { t0 = Math.min(t0, b.ts); t1 = Math.max(t1, b.ts + b.dur); }
    if (!isFinite(t0)) { t0 = 0; t1 = 1; }
    const laneOrder = (a, b) => a.pid - b.pid || a.tid - b.tid;
    return {
      other: trace.otherData || {}, tasks, pipes, byCall, preds, succs, edges,
      lanes: [...lanes.values()].sort(laneOrder), idleLanes: idleLanes.sort(laneOrder), t0, t1,
    };
  }

  // ---------------------------------------------------------------- colours
  function hashOrderColour(order) {
    const hue = (Number(order) * 137.508 + 200) % 360;  // golden angle: neighbours differ
    return 'hsl(' + hue.toFixed(1) + ',62%,58%)';
  }

  // ---------------------------------------------------------------- summary
  // Each metric: the paths tried in analysis.json, then summary.json, then the trace's
  // otherData. The element keeps where its number came from (data-source, data-path).
  const METRICS = [
    { key: 'simulated_us', label: 'simulated', unit: 'us', paths: ['simulated_us', 'end_to_end_us', 'e2e_us', 'roofline.simulated_us'] },
    { key: 'bound_us', label: 'roofline bound', unit: 'us', paths: ['bound_us', 'roofline.bound_us'] },
    { key: 'ratio', label: 'bound / simulated', unit: '', paths: ['ratio', 'roofline.ratio', 'bound_ratio'] },
    { key: 'span_ratio', label: 'span ratio', unit: '', paths: ['span_ratio', 'roofline.span_ratio'] },
    { key: 'head_us', label: 'head', unit: 'us', paths: ['head_us', 'roofline.head_us'] },
    { key: 'span_us', label: 'span', unit: 'us', paths: ['span_us'] },
    { key: 'limiter', label: 'limiter', unit: '', paths: ['limiter', 'roofline.limiter'] },
    { key: 'tasks', label: 'tasks', unit: '', paths: ['tasks', 'task_count'] },
    { key: 'edges', label: 'edges', unit: '', paths: ['edges', 'edge_count'] },
    { key: 'critical_path_us', label: 'critical path', unit: 'us', paths: ['critical_path.length_us'] },
    { key: 'transfer_us', label: 'transfer pipes', unit: 'us', paths: ['pipes.transfer_us'] },
    { key: 'compute_us', label: 'compute pipes', unit: 'us', paths: ['pipes.compute_us'] },
  ];

  function sourcesOf(data) {
    const list = [];
    if (data.analysis) list.push(['analysis', data.analysis]);
    if (data.summary && Object.keys(data.summary).length) list.push(['summary', data.summary]);
    list.push(['trace', data.trace.other]);
    return list;
  }

  // analysis.json may nest the numbers it shares with summary.json under "summary".
  const withNested = (paths) => paths.concat(paths.map((p) => 'summary.' + p));

  function lookup(sources, paths) {
    for (const [name, obj] of sources)
      for (const p of withNested(paths)) {
        const v = at(obj, p);
        if (v !== undefined && v !== null && typeof v !== 'object') return { source: name, path: p, value: v };
      }
    return null;
  }

  function renderSummary(data) {
    const other = data.trace.other;
    $('title').textContent = 'ptoc swimlane: ' + (other.func || '?');
    // A device trace (other.family) says which family it came from and what its reader
    // noted; a ptoc run, its scheduler and clock.
    $('run-info').textContent = (other.family ? [
      other.family + ' (a device run)', 'device ' + (other.device || '?'),
      (other.aic_cores ?? '?') + ' AIC + ' + (other.aiv_cores ?? '?') + ' AIV cores',
    ] : [
      'device ' + (other.device || '?'), 'scheduler mode ' + (other.sched_mode ?? '?'),
      (other.aic_cores ?? '?') + ' AIC + ' + (other.aiv_cores ?? '?') + ' AIV cores',
      (other.clock_mhz ?? '?') + ' MHz', (other.pipe_records ? other.pipe_records + ' pipe records' : 'no pipe lanes'),
    ]).join(' \u00b7 ');
    const notes = Array.isArray(other.notes) ? other.notes : [];
    $('notes').hidden = !notes.length;
    $('notes').innerHTML = notes.map((n) => '<li class="note">' + esc(n) + '</li>').join('');
    const sources = sourcesOf(data);
    const summary = $('summary');
    summary.dataset.source = sources[0][0];
    let html = '';
    for (const m of METRICS) {
      const hit = lookup(sources, m.paths);
      if (!hit) continue;
      html += '<div class="metric" data-key="' + m.key + '" data-source="' + hit.source + '" data-path="' + esc(hit.path) +
        '" data-value="' + esc(hit.value) + '"><span class="label">' + esc(m.label) + '</span><span class="value">' +
        esc(hit.value) + (m.unit ? ' ' + m.unit : '') + '</span></div>';
    }
    summary.innerHTML = html;

    // Per core kind: an array of {kind, ...} or an object keyed by kind.
    let kinds = null, kindsSource = null, kindsPath = null;
    for (const [name, obj] of sources) {
      for (const p of withNested(['core_kinds', 'cores', 'utilisation', 'utilization'])) {
        const v = at(obj, p);
        if (Array.isArray(v) && v.length && typeof v[0] === 'object' && 'kind' in v[0]) { kinds = v.map((k, i) => [k.kind, k, p + '.' + i]); }
        else if (v && typeof v === 'object' && !Array.isArray(v) && (v.AIC || v.AIV)) kinds = Object.keys(v).map((k) => [k, v[k], p + '.' + k]);
        if (kinds) { kindsSource = name; kindsPath = p; break; }
      }
      if (kinds) break;
    }
    const kindCols = [['cores_used', 'cores used'], ['cores', 'cores'], ['tasks', 'tasks'], ['utilisation', 'utilisation'],
      ['busy_us', 'busy us'], ['idle_us', 'idle us'], ['window_idle_share', 'window idle']];
    if (kinds) {
      let t = '<table data-source="' + kindsSource + '" data-path="' + esc(kindsPath) + '"><tr><th>core kind</th>' +
        kindCols.map((c) => '<th>' + c[1] + '</th>').join('') + '</tr>';
      for (const [kind, k, path] of kinds) {
        t += '<tr class="core-kind" data-kind="' + esc(kind) + '" data-path="' + esc(path) + '"><td>' + esc(kind) + '</td>';
        for (const [col] of kindCols) {
          let v = k[col];
          if (v === undefined && col === 'utilisation') v = k.utilization;
          t += v === undefined || v === null ? '<td></td>' : '<td data-key="' + col + '" data-value="' + esc(v) + '">' + esc(v) + '</td>';
        }
        t += '</tr>';
      }
      $('core-kinds').innerHTML = t + '</table>';
    }

    let verdicts = null, verdictSource = null;
    for (const [name, obj] of sources)
      if (Array.isArray(obj.verdicts)) { verdicts = obj.verdicts; verdictSource = name; break; }

    // Per pipe and per core kind's pipes (analysis.json of a runtime_debug_mode=2
    // trace): arrays of objects, each a table row.
    let pipeHtml = '';
    for (const [rowClass, paths] of [['pipe-row', ['pipes.per_pipe', 'pipes']], ['pipe-kind-row', ['pipes.per_kind']]]) {
      for (const [name, obj] of sources) {
        const path = paths.find((p) => Array.isArray(at(obj, p)) && at(obj, p).length && typeof at(obj, p)[0] === 'object');
        if (!path) continue;
        const rows = at(obj, path);
        const cols = Object.keys(rows[0]).filter((k) => k !== 'kind' && k !== 'pipe' && typeof rows[0][k] !== 'object');
        pipeHtml += '<table data-source="' + name + '" data-path="' + esc(path) + '"><tr><th>' + (rowClass === 'pipe-row' ? 'pipe' : 'pipes of') + '</th>' +
          cols.map((c) => '<th>' + esc(c.replace(/_/g, ' ')) + '</th>').join('') + '</tr>' +
          rows.map((row, i) => '<tr class="' + rowClass + '" data-kind="' + esc(row.kind ?? '') + '" data-pipe="' + esc(row.pipe ?? '') +
            '" data-path="' + esc(path) + '.' + i + '"><td>' + esc([row.kind, row.pipe].filter((x) => x !== undefined).join(' ')) + '</td>' +
            cols.map((c) => '<td data-key="' + esc(c) + '" data-value="' + esc(row[c]) + '">' + esc(row[c]) + '</td>').join('') + '</tr>').join('') +
          '</table>';
        break;
      }
    }
    $('pipes').innerHTML = pipeHtml;

    const vEl = $('verdicts');
    if (verdicts) {
      vEl.dataset.source = verdictSource;
      vEl.innerHTML = '<ul>' + verdicts.map((v) => {
        const finding = v.finding ?? v.message ?? v.text ?? '';
        const knob = v.knob ?? v.fix ?? '';
        return '<li class="verdict" data-rule="' + esc(v.rule ?? '') + '" data-severity="' + esc(v.severity ?? '') +
          '" data-scope="' + esc(v.scope ?? '') + '"><span class="rule">' + esc(v.rule ?? 'verdict') + '</span>' +
          (v.scope ? ' [' + esc(v.scope) + ']' : '') + ': ' + esc(finding) +
          (knob ? ' <span class="knob">try: ' + esc(knob) + '</span>' : '') + '</li>';
      }).join('') + '</ul>';
      if (!verdicts.length) vEl.innerHTML = '<ul><li class="no-verdict">no verdicts</li></ul>';
    }
  }

  function renderLegend(data) {
    const groups = new Map();
    for (const t of data.trace.tasks) {
      const order = t.args.hash_order;
      let g = groups.get(order);
      if (!g) {
        g = { order, key: String(t.name).split(' ')[0], tasks: 0, lane: t.lane.name.replace(/_\d+$/, '') };
        groups.set(order, g);
      }
      ++g.tasks;
    }
    $('legend').innerHTML = [...groups.values()].sort((a, b) => a.order - b.order).map((g) =>
      '<span class="legend-item" data-hash-order="' + esc(g.order) + '" data-tasks="' + g.tasks + '"><span class="swatch" style="background:' +
      hashOrderColour(g.order) + '"></span>' + esc(g.key) + ' (' + (data.trace.other.family ? 'group ' : 'hash order ') + esc(g.order) + ', ' + esc(g.lane) + ', ' + g.tasks + ' tasks)</span>').join('');
  }

  // ---------------------------------------------------------------- lanes
  function niceStep(range, target) {
    const raw = range / target;
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
    return 10 * p;
  }

  function formatUs(v) {
    return Math.abs(v) >= 100 ? v.toFixed(1) : Math.abs(v) >= 1 ? v.toFixed(3).replace(/\.?0+$/, '') : v.toPrecision(3);
  }

  function makeView(data) {
    const view = { t0: data.trace.t0, t1: data.trace.t1, width: 800, selected: null, showIdle: false, critical: false };
    const pad = (view.t1 - view.t0) * 0.01 || 0.5;
    view.fit = [view.t0 - pad, view.t1 + pad];
    [view.t0, view.t1] = view.fit;
    return view;
  }

  function visibleLanes(data, view) {
    const lanes = view.showIdle ? data.trace.lanes.concat(data.trace.idleLanes) : data.trace.lanes.slice();
    lanes.sort((a, b) => a.pid - b.pid || a.tid - b.tid);
    let y = AXIS_HEIGHT;
    for (const lane of lanes) {
      lane.height = lane.kind === 'pipe' ? PIPE_LANE_HEIGHT : CORE_LANE_HEIGHT;
      lane.y = y;
      y += lane.height;
    }
    return { lanes, height: y + 4 };
  }

  function render(data, view) {
    const svg = $('lanes');
    const container = $('lanes-container');
    view.width = Math.max(400, container.clientWidth - 2);
    const plotW = view.width - LABEL_WIDTH;
    const scale = plotW / (view.t1 - view.t0);
    const xOf = (t) => LABEL_WIDTH + (t - view.t0) * scale;
    const { lanes, height } = visibleLanes(data, view);
    svg.setAttribute('width', view.width);
    svg.setAttribute('height', height);
    const totalBoxes = data.trace.tasks.length + data.trace.pipes.length;
    const full = totalBoxes <= FULL_DRAW_LIMIT;
    const out = [];
    out.push('<defs><clipPath id="plot-clip"><rect x="' + LABEL_WIDTH + '" y="0" width="' + plotW + '" height="' + height + '"></rect></clipPath>' +
      '<marker id="arrow-head" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto-start-reverse">' +
      '<path d="M0,0 L8,4 L0,8 z" fill="context-stroke"></path></marker></defs>');
    // Lane backgrounds and labels.
    out.push('<g id="lane-rows">');
    lanes.forEach((lane, i) => {
      out.push('<g class="lane" data-lane="' + esc(lane.name) + '" data-lane-kind="' + lane.kind + '" data-items="' + lane.items.length + '"' +
        (lane.idle ? ' data-idle="1"' : '') + '><rect class="lane-bg ' + (i % 2 ? 'odd' : 'even') + '" x="0" y="' + lane.y +
        '" width="' + view.width + '" height="' + lane.height + '"></rect><text class="lane-label" x="' + (lane.kind === 'pipe' ? 14 : 4) +
        '" y="' + (lane.y + lane.height / 2) + '">' + esc(lane.name) + '</text></g>');
    });
    out.push('</g>');
    // Time axis and the kernel head (before the first task may start).
    const step = niceStep(view.t1 - view.t0, Math.max(2, plotW / 110));
    out.push('<g id="axis" clip-path="url(#plot-clip)">');
    const head = Number(data.trace.other.head_us);
    if (isFinite(head) && head > view.t0)
      out.push('<rect class="head-region" x="' + xOf(Math.max(0, view.t0)) + '" y="' + AXIS_HEIGHT + '" width="' +
        Math.max(0, xOf(head) - xOf(Math.max(0, view.t0))) + '" height="' + (height - AXIS_HEIGHT) + '"><title>kernel head</title></rect>');
    for (let t = Math.ceil(view.t0 / step) * step; t <= view.t1; t += step) {
      const x = xOf(t);
      out.push('<line class="axis-tick" x1="' + x + '" x2="' + x + '" y1="' + (AXIS_HEIGHT - 4) + '" y2="' + height + '"></line>' +
        '<text class="axis-label" x="' + (x + 2) + '" y="' + (AXIS_HEIGHT - 8) + '">' + formatUs(t) + ' us</text>');
    }
    out.push('</g>');
    // Boxes.
    const critical = view.critical ? new Set(data.criticalCalls) : null;
    let drawn = 0, drawnTasks = 0;
    out.push('<g id="boxes" clip-path="url(#plot-clip)">');
    for (const lane of lanes) {
      const y = lane.y + 2, h = lane.height - 4;
      let cluster = null;
      const flush = () => {
        if (!cluster) return;
        out.push('<rect class="cluster" data-count="' + cluster.n + '" x="' + cluster.x0 + '" y="' + y + '" width="' +
          Math.max(MIN_BOX_PX, cluster.x1 - cluster.x0) + '" height="' + h + '" fill="' + cluster.fill + '"></rect>');
        cluster = null;
      };
      for (const b of lane.items) {
        const x0 = xOf(b.ts), x1 = xOf(b.ts + b.dur);
        if (!full && (x1 < LABEL_WIDTH || x0 > view.width)) continue;
        const order = b.kind === 'task' ? b.args.hash_order : (data.trace.byCall.get(b.task) || { args: {} }).args.hash_order;
        const fill = hashOrderColour(order);
        if (!full && x1 - x0 < MIN_BOX_PX) {
          if (cluster && x0 - cluster.x1 < MIN_BOX_PX) { cluster.x1 = Math.max(cluster.x1, x1); ++cluster.n; continue; }
          flush();
          cluster = { x0, x1, n: 1, fill };
          continue;
        }
        flush();
        const w = Math.max(MIN_BOX_PX, x1 - x0);
        if (b.kind === 'task') {
          const cls = 'task' + (view.selected === b.call ? ' selected' : '') +
            (view.related && view.related.has(b.call) ? ' related' : '') + (critical && critical.has(b.call) ? ' critical' : '');
          out.push('<rect class="' + cls + '" data-call="' + esc(b.call) + '" data-hash-order="' + esc(order) + '" data-leaf="' + esc(b.args.leaf) +
            '" data-lane="' + esc(lane.name) + '" x="' + x0 + '" y="' + y + '" width="' + w + '" height="' + h + '" fill="' + fill + '"></rect>');
          ++drawnTasks;
        } else {
          out.push('<rect class="pipe" data-task="' + esc(b.task) + '" data-pipe="' + esc(String(b.name).split(' ')[0]) + '" data-hash-order="' +
            esc(order) + '" data-index="' + b.index + '" x="' + x0 + '" y="' + y + '" width="' + w + '" height="' + h + '" fill="' + fill + '"></rect>');
        }
        ++drawn;
      }
      flush();
    }
    out.push('</g>');
    // Dependency arrows of the selected task.
    out.push('<g id="arrows" clip-path="url(#plot-clip)">');
    let arrows = 0;
    if (view.selected !== null && data.trace.byCall.has(view.selected)) {
      const sel = data.trace.byCall.get(view.selected);
      const mid = (t) => t.lane.y + t.lane.height / 2;
      const arrow = (from, to, cls, other) => {
        if (!from.lane.height || !to.lane.height || from.lane.y === undefined || !lanes.includes(from.lane) || !lanes.includes(to.lane)) return;
        const xa = xOf(from.ts + from.dur), ya = mid(from), xb = xOf(to.ts), yb = mid(to);
        const bend = Math.max(12, Math.abs(xb - xa) / 3);
        out.push('<path class="dep-arrow ' + cls + '" data-from="' + esc(from.call) + '" data-to="' + esc(to.call) + '" data-other="' + esc(other) +
          '" marker-end="url(#arrow-head)" d="M' + xa + ',' + ya + ' C' + (xa + bend) + ',' + ya + ' ' + (xb - bend) + ',' + yb + ' ' + xb + ',' + yb + '"></path>');
        ++arrows;
      };
      for (const p of data.trace.preds.get(sel.call) || []) arrow(data.trace.byCall.get(p), sel, 'pred', p);
      for (const s of data.trace.succs.get(sel.call) || []) arrow(sel, data.trace.byCall.get(s), 'succ', s);
    }
    out.push('</g>');
    svg.innerHTML = out.join('');
    svg.dataset.drawnBoxes = drawn;
    svg.dataset.drawnTasks = drawnTasks;
    svg.dataset.lanes = lanes.length;
    svg.dataset.arrows = arrows;
    svg.dataset.mode = full ? 'full' : 'clustered';
    $('view-range').textContent = 'view ' + formatUs(view.t0) + ' \u2013 ' + formatUs(view.t1) + ' us';
    view.lanes = lanes;
  }

  // ---------------------------------------------------------------- details
  function taskDetails(data, t) {
    const a = t.args;
    const has = (v) => v !== undefined && v !== null;
    // Rows for what the trace carries: a device trace has no subgraph, leaf, regions or bytes.
    const rows = [
      ['task', esc(t.name) + ' (call ' + esc(a.call) + (has(a.subgraph) ? ', subgraph ' + esc(a.subgraph) : '') + ')'],
      has(a.leaf) ? ['leaf', esc(a.leaf) + (a.leaf_hash ? ' (hash ' + esc(a.leaf_hash) + ')' : '')]
        : ['leaf hash', esc(a.leaf_hash ?? '-') + (a.root_hash ? ' (root ' + esc(a.root_hash) + ')' : '')],
      has(a.group_size) ? ['hash order', esc(a.hash_order) + ' (group of ' + esc(a.group_size) + ')'] : ['group', esc(a.group ?? '-')],
      ['core', esc(t.lane.name) + (a.thread !== undefined && a.thread >= 0 ? ', dispatched by AICPU_' + esc(a.thread) : '') + (a.control ? ' (control node: time placed, not measured)' : '')],
      ['start', formatUs(t.ts) + ' us'],
      ['duration', formatUs(t.dur) + ' us'],
      has(a.ready_us) ? ['ready' + (has(a.dispatch_us) ? ' / dispatch' : ''), esc(a.ready_us) + (has(a.dispatch_us) ? ' / ' + esc(a.dispatch_us) : '') + ' us (waited ' + formatUs(t.ts - Number(a.ready_us)) + ' us)'] : null,
      has(a.kernel_us) ? ['kernel / setup', esc(a.kernel_us) + ' / ' + esc(a.setup_us) + ' us'] : null,
      has(a.regions) ? ['regions (offsets)', a.regions.map(esc).join('<br>')] : null,
      has(a.bytes_in) ? ['bytes in / out', esc(a.bytes_in) + ' / ' + esc(a.bytes_out) + (a.l2_hit_bytes ? ' (L2 hit ' + esc(a.l2_hit_bytes) + ')' : '')] : null,
      has(a.read_stall_us) ? ['read stall', esc(a.read_stall_us) + ' us' + (Number(a.fill_wait_us) > 0 ? ' (' + esc(a.fill_wait_us) + ' us waiting for fills other cores started)' : '')] : null,
      ['preds / succs', (data.trace.preds.get(t.call) || []).length + ' / ' + (data.trace.succs.get(t.call) || []).length],
    ].filter((r) => r);
    return '<table>' + rows.map((r) => '<tr><td>' + r[0] + '</td><td>' + r[1] + '</td></tr>').join('') + '</table>';
  }

  function pipeDetails(data, p) {
    const a = p.args;
    const gbps = p.dur > 0 && a.bytes ? (a.bytes / p.dur / 1e3).toFixed(2) + ' GB/s' : '';
    const owner = data.trace.byCall.get(p.task);
    const rows = [
      ['pipe', esc(p.name) + ' on ' + esc(p.lane.name)],
      ['task', esc(owner ? owner.name : '?') + ' (call ' + esc(p.task) + ', instr ' + esc(a.instr) + ')'],
      ['hash order', esc(owner ? owner.args.hash_order : '?')],
      ['start', formatUs(p.ts) + ' us'],
      ['duration', formatUs(p.dur) + ' us'],
      ['bytes', esc(a.bytes) + (gbps ? ' (' + gbps + ')' : '')],
    ];
    return '<table>' + rows.map((r) => '<tr><td>' + r[0] + '</td><td>' + r[1] + '</td></tr>').join('') + '</table>';
  }

  function select(data, view, call) {
    view.selected = call;
    view.related = new Set((data.trace.preds.get(call) || []).concat(data.trace.succs.get(call) || []));
    const t = data.trace.byCall.get(call);
    const sel = $('selection');
    if (!t) { sel.innerHTML = ''; view.selected = null; return; }
    sel.dataset.call = call;
    sel.dataset.preds = (data.trace.preds.get(call) || []).length;
    sel.dataset.succs = (data.trace.succs.get(call) || []).length;
    sel.innerHTML = '<b>selected</b> (blue arrows: predecessors, red: successors)' + taskDetails(data, t);
  }

  // ---------------------------------------------------------------- interaction
  function install(data, view) {
    const svg = $('lanes');
    const tip = $('tooltip');
    const redraw = () => render(data, view);
    const zoomAt = (factor, tAnchor) => {
      const span = (view.t1 - view.t0) / factor;
      const minSpan = 1e-3;
      if (span < minSpan) return;
      const f = (tAnchor - view.t0) / (view.t1 - view.t0);
      view.t0 = tAnchor - f * span;
      view.t1 = view.t0 + span;
      redraw();
    };
    const timeAt = (clientX) => {
      const r = svg.getBoundingClientRect();
      const x = clientX - r.left - LABEL_WIDTH;
      return view.t0 + (x / (view.width - LABEL_WIDTH)) * (view.t1 - view.t0);
    };
    const centre = () => (view.t0 + view.t1) / 2;
    $('zoom-in').onclick = () => zoomAt(ZOOM_STEP, centre());
    $('zoom-out').onclick = () => zoomAt(1 / ZOOM_STEP, centre());
    $('zoom-reset').onclick = () => { [view.t0, view.t1] = view.fit; redraw(); };
    $('show-idle').onchange = (e) => { view.showIdle = e.target.checked; redraw(); };
    $('show-critical').onchange = (e) => { view.critical = e.target.checked; redraw(); };
    svg.addEventListener('wheel', (e) => {
      e.preventDefault();
      zoomAt(e.deltaY < 0 ? ZOOM_STEP : 1 / ZOOM_STEP, timeAt(e.clientX));
    }, { passive: false });
    let drag = null;
    svg.addEventListener('mousedown', (e) => {
      drag = { x: e.clientX, t0: view.t0, t1: view.t1, moved: false };
      svg.classList.add('dragging');
    });
    window.addEventListener('mousemove', (e) => {
      if (drag) {
        const dx = e.clientX - drag.x;
        if (Math.abs(dx) >= DRAG_CLICK_PX) drag.moved = true;
        if (drag.moved) {
          const dt = (dx / (view.width - LABEL_WIDTH)) * (drag.t1 - drag.t0);
          view.t0 = drag.t0 - dt;
          view.t1 = drag.t1 - dt;
          redraw();
        }
        tip.hidden = true;
        return;
      }
      const target = e.target;
      let html = null;
      if (target instanceof Element && target.classList.contains('task')) {
        const t = data.trace.byCall.get(Number(target.dataset.call));
        if (t) html = taskDetails(data, t);
      } else if (target instanceof Element && target.classList.contains('pipe')) {
        const p = data.trace.pipes[Number(target.dataset.index)];
        if (p) html = pipeDetails(data, p);
      } else if (target instanceof Element && target.classList.contains('cluster')) {
        html = esc(target.dataset.count) + ' boxes too narrow to draw apart; zoom in';
      }
      if (html === null) { tip.hidden = true; return; }
      tip.innerHTML = html;
      tip.hidden = false;
      const pad = 14;
      const w = tip.offsetWidth, h = tip.offsetHeight;
      tip.style.left = Math.min(e.clientX + pad, window.innerWidth - w - 4) + 'px';
      tip.style.top = (e.clientY + pad + h > window.innerHeight ? e.clientY - h - pad : e.clientY + pad) + 'px';
    });
    window.addEventListener('mouseup', (e) => {
      if (!drag) return;
      const click = !drag.moved;
      drag = null;
      svg.classList.remove('dragging');
      if (!click) return;
      const target = e.target;
      if (target instanceof Element && target.classList.contains('task')) select(data, view, Number(target.dataset.call));
      else select(data, view, null);
      redraw();
    });
    window.addEventListener('keydown', (e) => {
      if (e.key === '+' || e.key === '=') zoomAt(ZOOM_STEP, centre());
      else if (e.key === '-') zoomAt(1 / ZOOM_STEP, centre());
      else if (e.key === '0') $('zoom-reset').onclick();
    });
    window.addEventListener('resize', redraw);
  }

  function main() {
    let data;
    try {
      const trace = parseTrace(readJson('ptoc-trace'));
      trace.pipes.forEach((p, i) => { p.index = i; });
      data = { trace, summary: readJson('ptoc-summary') || {}, analysis: readJson('ptoc-analysis') };
      data.criticalCalls = [];
      for (const [, obj] of sourcesOf(data)) {
        const calls = at(obj, 'critical_path.calls');
        if (Array.isArray(calls)) { data.criticalCalls = calls; break; }
      }
    } catch (err) {
      fail('swimlane.html cannot read its embedded data: ' + err.message +
        '\nRegenerate the page from the run folder (ptoc run with a debug mode, or ptoc prof).');
      return;
    }
    renderSummary(data);
    renderLegend(data);
    const view = makeView(data);
    const m = /(?:^|[#&])select=(\d+)/.exec(location.hash);
    if (m) select(data, view, Number(m[1]));
    render(data, view);
    install(data, view);
    document.body.dataset.tasks = data.trace.tasks.length;
    document.body.dataset.pipeBoxes = data.trace.pipes.length;
    document.body.dataset.edges = data.trace.edges;
    document.body.dataset.ready = '1';
  }

  main();
})();
