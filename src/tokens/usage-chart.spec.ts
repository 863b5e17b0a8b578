import { describe, expect, it } from '@jest/globals';
import { usageChart } from './usage-chart.js';

const days = (counts: number[]) =>
  counts.map((requests, i) => ({ day: `2026-11-${String(24 - i).padStart(2, '0')}`, requests }));

describe('usageChart', () => {
  it('should draw a bar a day, oldest on the left, each as tall as its share of the busiest', () => {
    const svg = usageChart(days([9, 0, 40]));
    const bars = [...svg.matchAll(/<rect [^>]*height="([\d.]+)"><title>([^<]+)<\/title>/g)];
    expect(bars.map((b) => b[2])).toEqual([
      '2026-11-22: 40 requests',
      '2026-11-23: 0 requests',
      '2026-11-24: 9 requests',
    ]);
    const [busiest, none, some] = bars.map((b) => Number(b[1]));
    expect(none).toBe(0);
    expect(some / busiest).toBeCloseTo(9 / 40, 2);
  });

  it('should name itself and say what it shows, for screen readers', () => {
    const svg = usageChart(days([1, 2]));
    expect(svg).toContain('role="img"');
    expect(svg).toContain('<title id="usage-chart-title">Requests per day, last 2 days</title>');
    expect(svg).toContain(
      '<desc id="usage-chart-desc">3 requests from 2026-11-23 to 2026-11-24; the busiest day was 2026-11-23 with 2 requests.</desc>',
    );
    expect(usageChart(days([0, 0]))).toContain('No requests from 2026-11-23 to 2026-11-24.');
  });

  it("should put its words in HTML beside the image, with the busiest day's count as its scale", () => {
    const svg = usageChart(days([9, 0, 1_250]));
    expect(svg).toContain('<span data-chart-top>1,250</span><span>0</span>');
    expect(svg).toContain('<span>2026-11-22</span><span>2026-11-24</span>');
    // The image stretches to its width: nothing in it is text.
    const image = svg.slice(svg.indexOf('<svg'), svg.indexOf('</svg>'));
    expect(image).toContain('preserveAspectRatio="none"');
    expect(image).not.toContain('<text');
  });
});
