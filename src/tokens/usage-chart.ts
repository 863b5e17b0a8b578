/** One day's count, for the chart: the day (YYYY-MM-DD, UTC) and its requests. */
export interface DayCount {
  day: string;
  requests: number;
}

const WIDTH = 600;
const HEIGHT = 120;
const LABELS = 18;
const escape = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const plural = (n: number, one: string) =>
  `${n.toLocaleString('en-US')} ${one}${n === 1 ? '' : 's'}`;

/**
 * The requests of the days given (newest first, as the page lists them) as a bar chart drawn on
 * the server: an SVG image, oldest day on the left, that names itself and sums itself up for
 * screen readers (the numbers themselves are in the table beside it). Each bar has a tooltip.
 */
export function usageChart(days: readonly DayCount[]): string {
  const oldestFirst = [...days].reverse();
  const busiest = oldestFirst.reduce((top, d) => (d.requests > top.requests ? d : top), {
    day: '',
    requests: 0,
  });
  const total = oldestFirst.reduce((sum, d) => sum + d.requests, 0);
  const slot = WIDTH / Math.max(1, oldestFirst.length);
  const plot = HEIGHT - LABELS;
  const bars = oldestFirst
    .map((d, i) => {
      // A day with any request shows at least a sliver; a day with none, nothing.
      const height =
        d.requests === 0 ? 0 : Math.max(1, (d.requests / busiest.requests) * (plot - 4));
      const x = (i * slot + slot * 0.15).toFixed(1);
      const y = (plot - height).toFixed(1);
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
    `<svg class="usage-chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="usage-chart-title usage-chart-desc" preserveAspectRatio="none">`,
    `<title id="usage-chart-title">Requests per day, last ${oldestFirst.length} days</title>`,
    `<desc id="usage-chart-desc">${escape(summary)}</desc>`,
    `<line class="chart-axis" x1="0" y1="${plot}" x2="${WIDTH}" y2="${plot}"></line>`,
    bars,
    `<text class="chart-label" x="0" y="${HEIGHT - 3}">${escape(first)}</text>`,
    `<text class="chart-label" x="${WIDTH}" y="${HEIGHT - 3}" text-anchor="end">${escape(last)}</text>`,
    `</svg>`,
  ].join('');
}
