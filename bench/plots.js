#!/usr/bin/env node
// Draws the docs/ plots from the raw benchmark results (hand-written SVG, no dependencies):
//   plot-overhead.svg   req/s and proxy CPU µs per request per target, from overhead.sh's TSV
//   plot-goodput.svg    goodput vs offered load per system, from goodput.sh's summary.tsv(s)
//   plot-goodput-matrix.svg  served % and upstream 429s per success at 120 % per limiter cell,
//                       one bar per system, from goodput.sh's summary.tsv(s)
//   plot-streaming.svg  per-event delay percentiles, direct vs smartlb, from streaming.sh's TSV
// Same input, same bytes: no clock, no locale, no randomness; the date shown is the run's stamp.
//
// node bench/plots.js [--overhead FILE] [--targets smartlb,nginx,haproxy] [--conns 16,128]
//                     [--goodput FILE[,FILE...]] [--goodput-matrix FILE[,FILE...]] [--streaming FILE]
//                     [--out docs/]
'use strict';
const fs = require('fs');
const path = require('path');

const REPO_DIR = path.resolve(__dirname, '..');
const WIDTH = 720;
const FONT = 'font-family="DejaVu Sans, Helvetica, Arial, sans-serif"';
const INK = '#222';
const MUTED = '#666';
const GRID = '#e3e3e3';

class InputError extends Error {}  // a file that cannot be drawn: the message says why
class UsageError extends InputError {}  // a bad command line: the usage follows the message

// ---------------------------------------------------------------------------------------------
// Command line and input files

function parseArgs(argv) {
  const opts = { out: path.join(REPO_DIR, 'docs'), goodput: [], 'goodput-matrix': [] };
  const known = ['overhead', 'targets', 'conns', 'goodput', 'goodput-matrix', 'streaming', 'out'];
  const lists = ['goodput', 'goodput-matrix'];
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    const value = argv[i + 1];
    if (!known.includes(key) || !argv[i].startsWith('--')) throw new UsageError(`unknown option ${argv[i]}`);
    if (value === undefined || value.startsWith('--')) throw new UsageError(`option ${argv[i]} needs a value`);
    opts[key] = lists.includes(key) ? opts[key].concat(splitList(value)) : value;
  }
  if (!opts.overhead && opts.goodput.length === 0 && opts['goodput-matrix'].length === 0 && !opts.streaming) {
    throw new UsageError('nothing to draw: give --overhead, --goodput, --goodput-matrix and/or --streaming');
  }
  return opts;
}

function splitList(value) {
  return value.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

// Reads a TSV whose first non-comment line is the header. Returns { comments, rows }, rows as
// objects keyed by column name; fails when a required column is missing or there is no data row.
function readTsv(file, required) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new InputError(`${file}: cannot read (${e.code || e.message})`);
  }
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const comments = lines.filter((l) => l.startsWith('#')).map((l) => l.replace(/^#\s*/, ''));
  const table = lines.filter((l) => !l.startsWith('#')).map((l) => l.split('\t'));
  if (table.length === 0) throw new InputError(`${file}: empty (no header line)`);
  const header = table[0];
  const missing = required.filter((c) => !header.includes(c));
  if (missing.length > 0) {
    throw new InputError(`${file}: missing column(s) ${missing.join(', ')} (has: ${header.join(' ')})`);
  }
  const rows = table.slice(1).map((cells) => Object.fromEntries(header.map((c, i) => [c, cells[i]])));
  if (rows.length === 0) throw new InputError(`${file}: no data rows under the header`);
  return { comments, rows };
}

// A number from a cell; "-" or anything unparsable gives NaN (callers skip those).
function num(cell) {
  return cell === undefined || cell === '' || cell === '-' ? NaN : Number(cell);
}

// "bench/results/overhead-20261125-032820.tsv (run 2026-11-25 03:28)": the path relative to the
// repository when it is inside it, the date from the stamp the bench scripts put in the name.
function sourceNote(file) {
  const abs = path.resolve(file);
  const rel = path.relative(REPO_DIR, abs);
  const shown = rel.startsWith('..') ? path.join(path.basename(path.dirname(abs)), path.basename(abs)) : rel;
  const m = abs.match(/(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})\d{2}/);
  return m ? `${shown} (run ${m[1]}-${m[2]}-${m[3]} ${m[4]}:${m[5]})` : shown;
}

function median(values) {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// ---------------------------------------------------------------------------------------------
// SVG building blocks

function esc(s) {
  return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

// Fixed decimals keep the output byte-stable; trailing zeros are trimmed.
function f(x) {
  return (Math.round(x * 10) / 10).toFixed(1).replace(/\.0$/, '');
}

function text(x, y, s, attrs = '') {
  return `<text x="${f(x)}" y="${f(y)}"${attrs ? ` ${attrs}` : ''}>${esc(s)}</text>`;
}

function line(x1, y1, x2, y2, attrs) {
  return `<line x1="${f(x1)}" y1="${f(y1)}" x2="${f(x2)}" y2="${f(y2)}" ${attrs}/>`;
}

function rect(x, y, w, h, attrs) {
  return `<rect x="${f(x)}" y="${f(y)}" width="${f(w)}" height="${f(h)}" ${attrs}/>`;
}

function polyline(points, attrs) {
  return `<polyline fill="none" points="${points.map(([x, y]) => `${f(x)},${f(y)}`).join(' ')}" ${attrs}/>`;
}

// A marker of one of four shapes, so series differ by more than colour.
function marker(shape, x, y, color, size = 4) {
  const fill = `fill="${color}" stroke="white" stroke-width="1"`;
  if (shape === 1) return rect(x - size, y - size, 2 * size, 2 * size, fill);
  if (shape === 2) {
    const s = size * 1.3;
    return `<path d="M${f(x)},${f(y - s)} L${f(x + s)},${f(y)} L${f(x)},${f(y + s)} L${f(x - s)},${f(y)} Z" ${fill}/>`;
  }
  if (shape === 3) {
    const s = size * 1.2;
    return `<path d="M${f(x)},${f(y - s)} L${f(x + s)},${f(y + s * 0.8)} L${f(x - s)},${f(y + s * 0.8)} Z" ${fill}/>`;
  }
  return `<circle cx="${f(x)}" cy="${f(y)}" r="${f(size)}" ${fill}/>`;
}

// The whole document: white background (readable in GitHub's light and dark modes), a title,
// a subtitle, the body, and footnote lines at the bottom.
function svgDocument(height, title, subtitle, body, footnotes) {
  const foot = footnotes.map((s, i) =>
    text(12, height - 8 - 14 * (footnotes.length - 1 - i), s, `font-size="10" fill="${MUTED}"`));
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}"` +
      ` ${FONT} font-size="11" fill="${INK}">`,
    `<title>${esc(title)}</title>`,
    `<rect width="100%" height="100%" fill="white"/>`,
    text(12, 22, title, 'font-size="15" font-weight="bold"'),
    text(12, 40, subtitle, `fill="${MUTED}"`),
    ...body,
    ...foot,
    '</svg>',
    '',
  ].join('\n');
}

// Legend swatch of a line series: a short line with the series' marker on it.
function lineSwatch(style) {
  const stroke = `stroke="${style.color}" stroke-width="2"`;
  return (x, y) => line(x, y, x + 18, y, stroke) + marker(style.shape, x + 9, y, style.color);
}

// A horizontal legend; items are { label, draw(x, y) } where draw paints the 20 px swatch. An
// item that would run past the right edge starts a new row, 16 px lower.
function legendLayout(items, x, y) {
  const out = [];
  const left = x;
  let rows = 1;
  for (const item of items) {
    const width = 24 + item.label.length * 6.3;
    if (x > left && x + width > WIDTH - 12) {
      x = left;
      y += 16;
      rows += 1;
    }
    out.push(item.draw(x, y));
    out.push(text(x + 24, y + 4, item.label));
    x += width + 18;
  }
  return { out, rows };
}

function legend(items, x, y) {
  return legendLayout(items, x, y).out;
}

// About `count` round tick values covering [lo, hi] (steps of 1, 2, 2.5 or 5 x 10^k).
function niceTicks(lo, hi, count) {
  const raw = (hi - lo) / count;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  const ticks = [];
  for (let k = Math.floor(lo / step); k * step <= hi + step * 1e-9; k++) ticks.push(k * step);
  if (ticks[ticks.length - 1] < hi) ticks.push(ticks[ticks.length - 1] + step);
  return ticks;
}

// Ticks for a log axis: 1-2-5 per decade when the range is short, decades only when long.
function logTicks(lo, hi) {
  const first = Math.floor(Math.log10(lo));
  const last = Math.ceil(Math.log10(hi));
  const mantissas = last - first <= 4 ? [1, 2, 5] : [1];
  const ticks = [];
  for (let e = first; e <= last; e++) {
    for (const m of mantissas) {
      const v = m * Math.pow(10, e);
      if (v >= lo / 1.0001 && v <= hi * 1.0001) ticks.push(v);
    }
  }
  return ticks;
}

// Number label for an axis tick: 45000 -> "45k", 0.05 -> "0.05".
function tickLabel(v) {
  if (Math.abs(v) >= 1000) return `${+(v / 1000).toFixed(1)}k`;
  if (Math.abs(v) >= 1 || v === 0) return `${+v.toFixed(1)}`;
  return `${+v.toPrecision(2)}`;
}

// Gridlines, tick labels and the rotated y label of a panel whose plot area is `box`.
function yAxis(box, ticks, toY, label) {
  const out = [];
  for (const t of ticks) {
    const y = toY(t);
    out.push(line(box.x, y, box.x + box.w, y, `stroke="${GRID}"`));
    out.push(text(box.x - 6, y + 4, tickLabel(t), `text-anchor="end" fill="${MUTED}"`));
  }
  const cy = box.y + box.h / 2;
  out.push(text(box.x - 44, cy, label, `transform="rotate(-90 ${f(box.x - 44)} ${f(cy)})" text-anchor="middle"`));
  return out;
}

function frame(box) {
  return line(box.x, box.y + box.h, box.x + box.w, box.y + box.h, `stroke="${INK}"`);
}

function panelTitle(box, s) {
  return text(box.x, box.y - 8, s, 'font-weight="bold"');
}

// ---------------------------------------------------------------------------------------------
// Plot 1: proxy overhead (overhead.sh)

const TARGET_ORDER = ['direct', 'smartlb', 'smartlb_b', 'smartlb_q', 'smartlb_rules', 'smartlb_budgets', 'nginx',
                      'haproxy', 'smartlb_tls', 'nginx_tls', 'haproxy_tls'];
const TARGET_COLORS = { smartlb: '#2471a3', nginx: '#1e8449', haproxy: '#ca6f1e', direct: '#7f8c8d' };
const EXTRA_COLORS = ['#8e44ad', '#c0392b', '#16a085', '#b7950b', '#34495e'];

// Colour of a target: its proxy's colour (TLS variants share it, drawn lighter), else a spare one.
function barFill(color, opacity) {
  return `fill="${color}" fill-opacity="${opacity}" stroke="${color}"`;
}

function targetStyle(target, index) {
  const tls = target.endsWith('_tls');
  const base = target.replace(/_tls$/, '');
  const color = TARGET_COLORS[base] || EXTRA_COLORS[index % EXTRA_COLORS.length];
  return { color, opacity: tls ? 0.4 : 0.85 };
}

function chooseOverheadTargets(file, rows, wanted) {
  const present = [...new Set(rows.map((r) => r.target))];
  if (wanted) {
    const missing = wanted.filter((t) => !present.includes(t));
    if (missing.length > 0) {
      throw new InputError(`${file}: no rows for target(s) ${missing.join(', ')} (present: ${present.join(' ')})`);
    }
    return wanted;
  }
  const rank = (t) => (TARGET_ORDER.includes(t) ? TARGET_ORDER.indexOf(t) : TARGET_ORDER.length);
  return present.sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

// One bar panel: a group per connection count, a bar (median) per target, a dot per repetition.
function barPanel(box, rows, conns, targets, column, yLabel, title) {
  const values = (c, t) => rows.filter((r) => r.conns === c && r.target === t).map((r) => num(r[column]))
    .filter((v) => Number.isFinite(v));
  const top = Math.max(...conns.flatMap((c) => targets.flatMap((t) => values(c, t))));
  const ticks = niceTicks(0, top * 1.08, 5);
  const yMax = ticks[ticks.length - 1];
  const toY = (v) => box.y + box.h - (v / yMax) * box.h;
  const out = [panelTitle(box, title), ...yAxis(box, ticks, toY, yLabel)];
  const groupW = box.w / conns.length;
  const barW = (groupW * 0.8) / targets.length;
  conns.forEach((c, gi) => {
    const gx = box.x + gi * groupW + groupW * 0.1;
    out.push(text(box.x + (gi + 0.5) * groupW, box.y + box.h + 16, `${c} connections`, 'text-anchor="middle"'));
    targets.forEach((t, ti) => {
      const v = values(c, t);
      if (v.length === 0) return;
      const { color, opacity } = targetStyle(t, ti);
      const x = gx + ti * barW + barW * 0.08;
      const w = barW * 0.84;
      const med = median(v);
      out.push(rect(x, toY(med), w, toY(0) - toY(med), barFill(color, opacity)));
      // Repetitions in run order, spread across the bar so equal values stay visible.
      v.forEach((rv, i) => {
        const dx = v.length === 1 ? w / 2 : w * (0.2 + (0.6 * i) / (v.length - 1));
        out.push(`<circle cx="${f(x + dx)}" cy="${f(toY(rv))}" r="2" fill="${INK}" fill-opacity="0.75"/>`);
      });
      if (w >= 20) {
        const label = med >= 1000 ? `${(med / 1000).toFixed(1)}k` : med.toFixed(1);
        const size = w >= 26 ? 10 : 9;
        out.push(text(x + w / 2, toY(Math.max(...v)) - 5, label, `text-anchor="middle" font-size="${size}"`));
      }
    });
  });
  out.push(frame(box));
  return out;
}

function plotOverhead(file, wantedTargets, wantedConns) {
  const { comments, rows } = readTsv(file, ['rep', 'conns', 'target', 'rps', 'proxy_cpu_us_per_req']);
  const targets = chooseOverheadTargets(file, rows, wantedTargets);
  const present = [...new Set(rows.map((r) => r.conns))].sort((a, b) => Number(a) - Number(b));
  const conns = wantedConns || present;
  const noConns = conns.filter((c) => !present.includes(c));
  if (noConns.length > 0) {
    throw new InputError(`${file}: no rows for conns ${noConns.join(', ')} (present: ${present.join(' ')})`);
  }
  const used = rows.filter((r) => targets.includes(r.target) && conns.includes(r.conns));
  const reps = new Set(used.map((r) => r.rep)).size;
  const height = 380;
  const left = { x: 70, y: 92, w: 270, h: 210 };
  const right = { x: 430, y: 92, w: 270, h: 210 };
  const hasCpu = (t) => used.some((r) => r.target === t && Number.isFinite(num(r.proxy_cpu_us_per_req)));
  const body = [
    ...legend(targets.map((t, i) => {
      const { color, opacity } = targetStyle(t, i);
      return { label: t, draw: (x, y) => rect(x, y - 5, 16, 10, barFill(color, opacity)) };
    }), 12, 62),
    ...barPanel(left, used, conns, targets, 'rps', 'requests per second', 'Throughput (higher is better)'),
    ...barPanel(right, used, conns, targets.filter(hasCpu), 'proxy_cpu_us_per_req', 'proxy CPU µs per request',
                'Proxy CPU per request (lower is better)'),
  ];
  return svgDocument(height, 'Proxy overhead: smartlb vs nginx and haproxy',
    `wrk through each proxy (pinned to one core) to a fixed backend; bar = median of ${reps} repetitions,` +
      ' dot = one repetition',
    body, [`source: ${sourceNote(file)}`, ...comments.slice(0, 1)]);
}

// ---------------------------------------------------------------------------------------------
// Plot 2: goodput under quotas (goodput.sh)

const IDEAL_STROKE = 'stroke="#999" stroke-width="1.5" stroke-dasharray="5,4"';
const SYSTEMS = {
  'smartlb-quota': { label: 'smartlb, declared quotas', color: '#2471a3', shape: 0 },
  'smartlb-reactive': { label: 'smartlb, reactive', color: '#8e44ad', shape: 1 },
  'smartlb-reactive-off': { label: 'smartlb, reactive, reports off', color: '#c39bd3', shape: 3 },
  nginx: { label: 'nginx with retries', color: '#1e8449', shape: 2 },
};

function systemStyle(system, index) {
  return SYSTEMS[system] || { label: system, color: EXTRA_COLORS[index % EXTRA_COLORS.length], shape: 3 };
}

// Per system: every run's point per load, and the mean per load for the line.
function goodputSeries(rows, column) {
  const systems = [...new Set(rows.map((r) => r.system))];
  return systems.map((system, i) => {
    const mine = rows.filter((r) => r.system === system && Number.isFinite(num(r[column])));
    const loads = [...new Set(mine.map((r) => num(r.load_pct)))].sort((a, b) => a - b);
    const mean = loads.map((l) => {
      const v = mine.filter((r) => num(r.load_pct) === l).map((r) => num(r[column]));
      return [l, v.reduce((a, b) => a + b, 0) / v.length];
    });
    const points = mine.map((r) => [num(r.load_pct), num(r[column])]);
    return { system, style: systemStyle(system, i), points, mean };
  });
}

// A line panel: x = offered load, one polyline + markers per series.
function linePanel(box, series, xTicks, xLabel, yTicks, yLabel, title, extra = []) {
  const xMax = xTicks[xTicks.length - 1];
  const yMax = yTicks[yTicks.length - 1];
  const toX = (v) => box.x + (v / xMax) * box.w;
  const toY = (v) => box.y + box.h - (v / yMax) * box.h;
  const out = [panelTitle(box, title), ...yAxis(box, yTicks, toY, yLabel)];
  for (const t of xTicks) out.push(text(toX(t), box.y + box.h + 15, `${t}`, `text-anchor="middle" fill="${MUTED}"`));
  out.push(text(box.x + box.w / 2, box.y + box.h + 32, xLabel, 'text-anchor="middle"'));
  for (const draw of extra) out.push(draw(toX, toY));
  for (const s of series) {
    out.push(polyline(s.mean.map(([x, y]) => [toX(x), toY(y)]), `stroke="${s.style.color}" stroke-width="2"`));
    for (const [x, y] of s.points) out.push(marker(s.style.shape, toX(x), toY(y), s.style.color));
  }
  out.push(frame(box));
  return out;
}

function plotGoodput(files) {
  const columns = ['system', 'load_pct', 'served_pct', 'upstream_429_per_ok'];
  const rows = files.flatMap((file) => readTsv(file, columns).rows);
  const served = goodputSeries(rows, 'served_pct');
  const retries = goodputSeries(rows, 'upstream_429_per_ok');
  const maxLoad = Math.max(...rows.map((r) => num(r.load_pct)));
  const xTicks = niceTicks(0, maxLoad, 6);
  const xMax = xTicks[xTicks.length - 1];
  const sideTicks = niceTicks(0, xMax, 3);
  const yTop = Math.max(100, ...served.flatMap((s) => s.points.map((p) => p[1])));
  const main = { x: 70, y: 92, w: 360, h: 220 };
  const side = { x: 520, y: 92, w: 180, h: 220 };
  const ideal = (toX, toY) => polyline([[toX(0), toY(0)], [toX(100), toY(100)], [toX(xMax), toY(100)]], IDEAL_STROKE);
  const retryTop = Math.max(...retries.flatMap((s) => s.points.map((p) => p[1])));
  const body = [
    ...legend([
      ...served.map((s) => ({ label: s.style.label, draw: lineSwatch(s.style) })),
      { label: 'ideal: min(load, 100 %)', draw: (x, y) => line(x, y, x + 18, y, IDEAL_STROKE) },
    ], 12, 62),
    ...linePanel(main, served, xTicks, 'offered load (% of the quotas\' capacity)', niceTicks(0, yTop, 5),
                 'served (% of capacity)', 'Goodput (higher is better)', [ideal]),
    ...linePanel(side, retries, sideTicks, 'offered load (%)', niceTicks(0, retryTop > 0 ? retryTop : 1, 4),
                 'upstream 429s / client 200s', 'Upstream 429s per success'),
  ];
  const runs = files.length === 1 ? 'one run' : `${files.length} runs`;
  return svgDocument(380, 'Goodput under quotas: declared vs reactive smartlb, and nginx',
    'five quota-limited sims, open-loop load; served = tokens the sims served / their capacity over the run' +
      ` (${runs}, line = mean)`,
    body, files.map((file) => `source: ${sourceNote(file)}`));
}

// ---------------------------------------------------------------------------------------------
// Plot 2b: goodput per rate-limiter cell (goodput.sh's matrix)

const LIMITER_ORDER = ['fixed', 'sliding', 'bucket'];
const KNOWN_ORDER = ['unknown', 'configured'];
const KNOWN_SHORT = { unknown: 'unkn.', configured: 'conf.' };
const MATRIX_SYSTEM_ORDER = ['smartlb-reactive', 'smartlb-reactive-off', 'smartlb-quota', 'nginx'];

// The distinct values of `list`, those named in `order` first (in that order), then the rest sorted.
function ordered(list, order) {
  const rank = (v) => (order.includes(v) ? order.indexOf(v) : order.length);
  return [...new Set(list)].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

function mean(values) {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

// Splits a footnote longer than `max` characters at spaces into several lines.
function wrapLine(line, max = 118) {
  const lines = [];
  let current = '';
  for (const word of line.split(' ')) {
    if (current !== '' && current.length + 1 + word.length > max) {
      lines.push(current);
      current = `  ${word}`;
    } else {
      current = current === '' ? word : `${current} ${word}`;
    }
  }
  return [...lines, current];
}

// "sliding 10 s unknown"
function cellName(cell) {
  return `${cell.limiter} ${cell.window} s ${cell.known}`;
}

// One bar panel over the cells: a slot per system in every cell (so a system keeps its place),
// bar = mean of the runs, a dot per run when there are several.
function matrixPanel(box, cells, systems, value, yTicks, yLabel, title, extra = []) {
  const yMax = yTicks[yTicks.length - 1];
  const toY = (v) => box.y + box.h - (Math.min(v, yMax) / yMax) * box.h;
  const out = [panelTitle(box, title), ...yAxis(box, yTicks, toY, yLabel)];
  for (const draw of extra) out.push(draw(toY));
  const groupW = box.w / cells.length;
  const barW = (groupW * 0.84) / systems.length;
  cells.forEach((cell, ci) => {
    if (ci > 0 && cell.limiter !== cells[ci - 1].limiter) {
      out.push(line(box.x + ci * groupW, box.y, box.x + ci * groupW, box.y + box.h, `stroke="${MUTED}" stroke-dasharray="2,3"`));
    }
    systems.forEach((system, si) => {
      const v = value(cell, system);
      if (v.length === 0) return;
      const style = systemStyle(system, si);
      const x = box.x + ci * groupW + groupW * 0.08 + si * barW;
      const m = mean(v);
      out.push(rect(x, toY(m), barW * 0.9, toY(0) - toY(m), barFill(style.color, 0.85)));
      if (v.length > 1) {
        v.forEach((rv) => out.push(`<circle cx="${f(x + barW * 0.45)}" cy="${f(toY(rv))}" r="1.5" fill="${INK}"/>`));
      }
    });
  });
  out.push(frame(box));
  return out;
}

// Three rows of labels under the cells: window known or not, the window, the limiter.
function matrixLabels(box, cells) {
  const groupW = box.w / cells.length;
  const out = [];
  const spans = (key) => {
    const result = [];
    cells.forEach((cell, i) => {
      const last = result[result.length - 1];
      if (last && key(cells[last.from]) === key(cell)) last.to = i;
      else result.push({ from: i, to: i });
    });
    return result;
  };
  const y0 = box.y + box.h;
  cells.forEach((cell, i) => out.push(text(box.x + (i + 0.5) * groupW, y0 + 13, KNOWN_SHORT[cell.known] || cell.known,
    `text-anchor="middle" font-size="9" fill="${MUTED}"`)));
  for (const span of spans((c) => `${c.limiter} ${c.window}`)) {
    const cx = box.x + ((span.from + span.to + 1) / 2) * groupW;
    out.push(text(cx, y0 + 27, `${cells[span.from].window} s`, 'text-anchor="middle"'));
  }
  for (const span of spans((c) => c.limiter)) {
    const cx = box.x + ((span.from + span.to + 1) / 2) * groupW;
    out.push(text(cx, y0 + 42, cells[span.from].limiter, 'text-anchor="middle" font-weight="bold"'));
  }
  return out;
}

function plotGoodputMatrix(files) {
  const columns = ['limiter', 'window_s', 'known', 'system', 'load_pct', 'served_pct', 'upstream_429_per_ok'];
  const inputs = files.map((file) => ({ file, ...readTsv(file, columns) }));
  const all = inputs.flatMap((input) => input.rows);
  const loads = [...new Set(all.map((r) => num(r.load_pct)).filter((l) => Number.isFinite(l)))];
  if (loads.length === 0) throw new InputError(`${files.join(', ')}: no numeric load_pct`);
  const load = loads.includes(120) ? 120 : Math.max(...loads);
  const rows = all.filter((r) => num(r.load_pct) === load);
  const windows = [...new Set(rows.map((r) => num(r.window_s)))].sort((a, b) => a - b);
  const cells = [];
  for (const limiter of ordered(rows.map((r) => r.limiter), LIMITER_ORDER)) {
    for (const window of windows) {
      for (const known of ordered(rows.map((r) => r.known), KNOWN_ORDER)) {
        const cell = { limiter, window, known };
        if (rows.some((r) => r.limiter === limiter && num(r.window_s) === window && r.known === known)) cells.push(cell);
      }
    }
  }
  const systems = ordered(rows.map((r) => r.system), MATRIX_SYSTEM_ORDER);
  const value = (column) => (cell, system) => rows
    .filter((r) => r.system === system && r.limiter === cell.limiter && num(r.window_s) === cell.window &&
                   r.known === cell.known)
    .map((r) => num(r[column])).filter((v) => Number.isFinite(v));
  const served = value('served_pct');
  const retries = value('upstream_429_per_ok');
  const servedTop = Math.max(100, ...cells.flatMap((c) => systems.flatMap((s) => served(c, s))));
  const retryTop = Math.max(0, ...cells.flatMap((c) => systems.flatMap((s) => retries(c, s))));
  const legendItems = [
    ...systems.map((system, i) => {
      const style = systemStyle(system, i);
      return { label: style.label, draw: (x, y) => rect(x, y - 5, 16, 10, barFill(style.color, 0.85)) };
    }),
    { label: '100 %', draw: (x, y) => line(x, y, x + 18, y, IDEAL_STROKE) },
  ];
  const { out: legendOut, rows: legendRows } = legendLayout(legendItems, 12, 62);
  const shift = 16 * (legendRows - 1);
  const top = { x: 70, y: 92 + shift, w: 630, h: 190 };
  const bottom = { x: 70, y: 316 + shift, w: 630, h: 100 };
  const full = (toY) => line(top.x, toY(100), top.x + top.w, toY(100), IDEAL_STROKE);
  // Per system: the worst cell (lowest mean served) and the one with the most upstream 429s.
  const notes = systems.map((system, i) => {
    const mine = cells.filter((c) => served(c, system).length > 0);
    if (mine.length === 0) return null;
    const worst = mine.reduce((a, b) => (mean(served(b, system)) < mean(served(a, system)) ? b : a));
    const withRetries = mine.filter((c) => retries(c, system).length > 0);
    const most = withRetries.length === 0 ? null :
      withRetries.reduce((a, b) => (mean(retries(b, system)) > mean(retries(a, system)) ? b : a));
    const label = systemStyle(system, i).label;
    const mostText = most ? `; most upstream 429s/success ${+mean(retries(most, system)).toFixed(3)} (${cellName(most)})` : '';
    return `${label}: worst ${+mean(served(worst, system)).toFixed(2)} % (${cellName(worst)})${mostText}`;
  }).filter((n) => n !== null);
  const body = [
    ...legendOut,
    ...matrixPanel(top, cells, systems, served, niceTicks(0, servedTop, 5), 'served (% of capacity)',
                   `Goodput at ${load} % load (higher is better)`, [full]),
    ...matrixPanel(bottom, cells, systems, retries, niceTicks(0, retryTop > 0 ? retryTop : 1, 3),
                   'upstream 429s / 200s', `Upstream 429s per success at ${load} % load (lower is better)`),
    ...matrixLabels(bottom, cells),
  ];
  const runs = files.length === 1 ? 'one run' : `${files.length} runs, bar = mean, dot = one run`;
  const footnotes = [...notes, ...inputs.map((input) => `source: ${sourceNote(input.file)}`),
                     ...inputs[0].comments.slice(0, 1)].flatMap((note) => wrapLine(note));
  return svgDocument(480 + shift + 14 * footnotes.length, 'Goodput per rate limiter: limiter × window × window known to smartlb',
    `five quota-limited sims per cell; served = tokens the sims served / what they could admit over the run (${runs})`,
    body, footnotes);
}

// ---------------------------------------------------------------------------------------------
// Plot 3: stream delay distribution (streaming.sh)

const PERCENTILES = [['p50_ms', 'p50'], ['p90_ms', 'p90'], ['p99_ms', 'p99'], ['p999_ms', 'p99.9'], ['max_ms', 'max']];
const PATHS = {
  direct: { label: 'direct to the backend', color: '#7f8c8d', shape: 1 },
  smartlb: { label: 'through smartlb', color: '#2471a3', shape: 0 },
  nginx: { label: 'through nginx', color: '#1e8449', shape: 2 },
  haproxy: { label: 'through haproxy', color: '#ca6f1e', shape: 2 },
};

// Two significant digits below 10 ms (0.024, 0.33, 2.3), one decimal up to 100, whole ms above.
function delayLabel(ms) {
  if (ms >= 100) return ms.toFixed(0);
  if (ms >= 10) return ms.toFixed(1);
  return `${+ms.toPrecision(2)}`;
}

function plotStreaming(file) {
  const { comments, rows } = readTsv(file, ['rep', 'path', ...PERCENTILES.map(([c]) => c)]);
  const paths = [...new Set(rows.map((r) => r.path))];
  const all = rows.flatMap((r) => PERCENTILES.map(([c]) => num(r[c]))).filter((v) => v > 0);
  if (all.length === 0) throw new InputError(`${file}: no positive delay values to draw`);
  const lo = Math.pow(10, Math.floor(Math.log10(Math.min(...all))));
  const hi = Math.pow(10, Math.ceil(Math.log10(Math.max(...all))));
  const box = { x: 70, y: 92, w: 630, h: 230 };
  const toX = (i) => box.x + (i + 0.5) * (box.w / PERCENTILES.length);
  const toY = (v) => box.y + box.h - ((Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * box.h;
  const out = [panelTitle(box, 'Delay per event, backend send → client arrival (lower is better)'),
               ...yAxis(box, logTicks(lo, hi), toY, 'delay per event (ms, log scale)')];
  PERCENTILES.forEach(([, label], i) => out.push(text(toX(i), box.y + box.h + 16, label, 'text-anchor="middle"')));
  const reps = new Set(rows.map((r) => r.rep)).size;
  const spare = (p, i) => ({ label: p, color: EXTRA_COLORS[i % EXTRA_COLORS.length], shape: 2 });
  const styles = paths.map((p, i) => PATHS[p] || spare(p, i));
  paths.forEach((p, pi) => {
    const s = styles[pi];
    const mine = rows.filter((r) => r.path === p);
    const medians = PERCENTILES.map(([c]) => median(mine.map((r) => num(r[c]))));
    out.push(polyline(medians.map((v, i) => [toX(i), toY(v)]).filter(([, y]) => Number.isFinite(y)),
      `stroke="${s.color}" stroke-width="2"`));
    // The medians as a row of numbers under the axis (labels by the points would collide).
    const rowY = box.y + box.h + 32 + 14 * pi;
    out.push(text(box.x - 6, rowY, p, `text-anchor="end" font-size="10" fill="${s.color}"`));
    PERCENTILES.forEach(([c], i) => {
      for (const r of mine) if (num(r[c]) > 0) out.push(marker(s.shape, toX(i), toY(num(r[c])), s.color, 3.5));
      const label = Number.isFinite(medians[i]) ? `${delayLabel(medians[i])} ms` : '-';
      out.push(text(toX(i), rowY, label, `text-anchor="middle" font-size="10" fill="${s.color}"`));
    });
  });
  const xLabel = 'percentile of all events of all streams (numbers: median ms per path)';
  out.push(text(box.x + box.w / 2, box.y + box.h + 36 + 14 * paths.length, xLabel, 'text-anchor="middle"'));
  out.push(frame(box));
  const body = [
    ...legend(styles.map((s) => ({ label: s.label, draw: lineSwatch(s) })), 12, 62),
    ...out,
  ];
  const proxies = paths.filter((p) => p !== 'direct');
  return svgDocument(410 + 14 * paths.length, `Streaming: delay per SSE event, direct vs through ${proxies.join(', ')}`,
    `every event stamped by the backend; marker = one repetition, line and numbers = median of ${reps} repetitions`,
    body, [`source: ${sourceNote(file)}`, ...comments.slice(0, 1)]);
}

// ---------------------------------------------------------------------------------------------

function main() {
  const opts = parseArgs(process.argv.slice(2));
  const outputs = [];
  if (opts.overhead) {
    const conns = opts.conns ? splitList(opts.conns) : undefined;
    const targets = opts.targets ? splitList(opts.targets) : undefined;
    outputs.push(['plot-overhead.svg', plotOverhead(opts.overhead, targets, conns)]);
  }
  if (opts.goodput.length > 0) outputs.push(['plot-goodput.svg', plotGoodput(opts.goodput)]);
  if (opts['goodput-matrix'].length > 0) {
    outputs.push(['plot-goodput-matrix.svg', plotGoodputMatrix(opts['goodput-matrix'])]);
  }
  if (opts.streaming) outputs.push(['plot-streaming.svg', plotStreaming(opts.streaming)]);
  fs.mkdirSync(opts.out, { recursive: true });
  for (const [name, svg] of outputs) {
    const file = path.join(opts.out, name);
    fs.writeFileSync(file, svg);
    console.log(`wrote ${file}`);
  }
}

try {
  main();
} catch (e) {
  if (!(e instanceof InputError)) throw e;
  console.error(`plots.js: ${e.message}`);
  if (e instanceof UsageError) {
    console.error('usage: node bench/plots.js [--overhead FILE [--targets a,b] [--conns 16,128]]\n' +
                  '                           [--goodput FILE[,FILE]] [--goodput-matrix FILE[,FILE]]\n' +
                  '                           [--streaming FILE] [--out DIR]');
  }
  process.exit(2);
}
