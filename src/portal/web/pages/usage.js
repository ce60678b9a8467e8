// Usage: a bar chart (Chart.js, served by the app from its package) of each service's data per day over the last 30
// days, download and upload stacked; the canvas is an image whose label sums it up in one line.
import { api } from '../api.js';
import { add, h } from '../dom.js';
import { byteUnit, bytes, shortDay, t, unitLabel } from '../i18n.js';
import { listServices } from './services.js';

const DOWNLOAD_COLOUR = '#0b57d0';
const UPLOAD_COLOUR = '#8a4fbf';
let chartLibrary = null;
/** The charts drawn by the last visit, ended on the next: a left page's canvases are not kept alive by Chart.js. */
let drawn = [];

/** Chart.js's browser build, loaded once, when a chart is first drawn (it is most of the portal's weight). */
function loadChartJs() {
  chartLibrary ??= new Promise((resolve, reject) => {
    if (window.Chart) {
      resolve(window.Chart);
      return;
    }
    const script = document.createElement('script');
    script.src = new URL('vendor/chart.umd.js', document.baseURI).href;
    script.onload = () => resolve(window.Chart);
    script.onerror = () => {
      chartLibrary = null;
      reject(new Error('chart library not loaded'));
    };
    document.head.append(script);
  });
  return chartLibrary;
}

/** The line the canvas is labelled with: the totals and the busiest day. */
function summaryOf(name, usage) {
  const down = usage.days.reduce((sum, d) => sum + d.bytes_out, 0);
  const up = usage.days.reduce((sum, d) => sum + d.bytes_in, 0);
  if (down + up === 0) {
    return { line: t('usageSummaryEmpty', { service: name }), down, up };
  }
  const peak = usage.days.reduce((best, d) =>
    d.bytes_in + d.bytes_out > best.bytes_in + best.bytes_out ? d : best,
  );
  const line = t('usageSummary', {
    service: name,
    total: bytes(down + up),
    down: bytes(down),
    up: bytes(up),
    day: shortDay(peak.date),
    peak: bytes(peak.bytes_in + peak.bytes_out),
  });
  return { line, down, up };
}

function draw(Chart, canvas, usage) {
  const max = Math.max(0, ...usage.days.map((d) => d.bytes_in + d.bytes_out));
  const power = Math.max(2, byteUnit(max)); // at least MB: a day of kilobytes reads as nothing
  const scale = 1000 ** power;
  const reduced = window.matchMedia('(prefers-reduced-motion: reduce)').matches;
  return new Chart(canvas, {
    type: 'bar',
    data: {
      labels: usage.days.map((d) => shortDay(d.date)),
      datasets: [
        {
          label: t('download'),
          data: usage.days.map((d) => d.bytes_out / scale),
          backgroundColor: DOWNLOAD_COLOUR,
          stack: 'traffic',
        },
        {
          label: t('upload'),
          data: usage.days.map((d) => d.bytes_in / scale),
          backgroundColor: UPLOAD_COLOUR,
          stack: 'traffic',
        },
      ],
    },
    options: {
      responsive: true,
      maintainAspectRatio: false,
      animation: reduced ? false : { duration: 300 },
      scales: {
        x: { stacked: true, ticks: { color: '#4a5360', maxRotation: 0, autoSkipPadding: 8 } },
        y: {
          stacked: true,
          beginAtZero: true,
          ticks: { color: '#4a5360' },
          title: { display: true, text: unitLabel(power), color: '#4a5360' },
        },
      },
      plugins: {
        legend: { labels: { color: '#1b1f24' } },
        tooltip: {
          callbacks: { label: (item) => `${item.dataset.label}: ${bytes(item.raw * scale)}` },
        },
      },
    },
  });
}

export async function render(view, ctx) {
  drawn.forEach((chart) => chart.destroy());
  drawn = [];
  const services = (await listServices(ctx.subscriberId)).filter((s) => s.status !== 'terminated');
  add(view, h('h1', { tabindex: '-1' }, t('usageTitle')), h('p', {}, t('usageIntro')));
  if (services.length === 0) {
    add(view, h('p', {}, t('noServices')));
    return t('usageTitle');
  }
  // The API's default range is the 30 UTC days up to today.
  const [Chart, usages] = await Promise.all([
    loadChartJs(),
    Promise.all(services.map((s) => api.get(`services/${encodeURIComponent(s.id)}/usage`))),
  ]);
  services.forEach((service, i) => {
    const usage = usages[i];
    const name = service.pppoe_username;
    const summary = summaryOf(name, usage);
    const canvas = h('canvas', { role: 'img', 'aria-label': summary.line });
    canvas.textContent = summary.line; // fallback content, for browsers without canvas
    const headingId = `use-${service.id}`;
    add(
      view,
      h(
        'section',
        { class: 'card', 'aria-labelledby': headingId },
        h('h2', { id: headingId }, t('service', { name })),
        h('div', { class: 'chart-box' }, canvas),
        h(
          'p',
          {},
          t('usageTotal', {
            total: bytes(summary.down + summary.up),
            down: bytes(summary.down),
            up: bytes(summary.up),
          }),
        ),
      ),
    );
    // Drawn once in the document, so that Chart.js can measure its box.
    requestAnimationFrame(() => drawn.push(draw(Chart, canvas, usage)));
  });
  return t('usageTitle');
}
