/** One day's count, for the chart: the day (YYYY-MM-DD, UTC) and its requests. */
export interface DayCount {
  day: string;
  requests: number;
}

const WIDTH = 600;
const HEIGHT = 100;
const escape = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const plural = (n: number, one: string) =>
  `${n.toLocaleString('en-US')} ${one}${n === 1 ? '' : 's'}`;

/**
 * The requests of the days given (newest first, as the page lists them) as a bar chart drawn on
 * the server, oldest day on the left: the bars in an SVG image that stretches to the width it is
 * given (so its shapes may be stretched, never its words), and its words in HTML around it: the
 * scale (the busiest day's count at the top line, 0 at the axis) and the first and last days.
 * The image names itself and sums itself up for screen readers (the numbers themselves are in
 * the table beside it); each bar has a tooltip.
 */
export function usageChart(days: readonly DayCount[]): string {
  const oldestFirst = [...days].reverse();
  const busiest = oldestFirst.reduce((top, d) => (d.requests > top.requests ? d : top), {
    day: '',
    requests: 0,
  });
  const total = oldestFirst.reduce((sum, d) => sum + d.requests, 0);
  const slot = WIDTH / Math.max(1, oldestFirst.length);
  const bars = oldestFirst
    .map((d, i) => {
      // A day with any request shows at least a sliver; a day with none, nothing.
      const height = d.requests === 0 ? 0 : Math.max(1, (d.requests / busiest.requests) * HEIGHT);
      const x = (i * slot + slot * 0.15).toFixed(1);
      const y = (HEIGHT - height).toFixed(1);
      return `<rect class="chart-bar" x="${x}" y="${y}" width="${(slot * 0.7).toFixed(1)}" height="${height.toFixed(1)}"><title>${escape(d.day)}: ${plural(d.requests, 'request')}</title></rect>`;
    })
    .join('');
  const first = oldestFirst[0]?.day ?? '';
  const last = oldestFirst.at(-1)?.day ?? '';
  const summary =
    total === 0
      ? `No requests from ${first} to ${last}.`
      : `${plural(total, 'request')} from ${first} to ${last}; the busiest day was ${busiest.day} with ${plural(busiest.requests, 'request')}.`;
  return [
    `<div class="usage-chart-frame">`,
    `<div class="chart-scale" aria-hidden="true"><span data-chart-top>${busiest.requests.toLocaleString('en-US')}</span><span>0</span></div>`,
    `<svg class="usage-chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="usage-chart-title usage-chart-desc" preserveAspectRatio="none">`,
    `<title id="usage-chart-title">Requests per day, last ${oldestFirst.length} days</title>`,
    `<desc id="usage-chart-desc">${escape(summary)}</desc>`,
    `<line class="chart-grid" x1="0" y1="0" x2="${WIDTH}" y2="0"></line>`,
    `<line class="chart-axis" x1="0" y1="${HEIGHT}" x2="${WIDTH}" y2="${HEIGHT}"></line>`,
    bars,
    `</svg>`,
    `<div class="chart-days" aria-hidden="true"><span>${escape(first)}</span><span>${escape(last)}</span></div>`,
    `</div>`,
  ].join('');
}
