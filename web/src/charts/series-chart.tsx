/**
 * Several series over the same x values as lines or bars, drawn by uPlot (loaded on first use,
 * like the Activity chart). The numbers are also in a table beside every chart, so the canvas is
 * hidden from screen readers.
 */
import { useEffect, useRef } from 'preact/hooks';
import type uPlot from 'uplot';

export interface ChartSeries {
  label: string;
  values: number[];
}

interface Props {
  /** Unix seconds (time axis) or 1, 2, 3… (stickiness). */
  xs: number[];
  series: ChartSeries[];
  kind: 'line' | 'bar';
  time?: boolean;
  height?: number;
}

/** Colours with at least 3:1 contrast on white, told apart by hue. */
export const PALETTE = ['#1d4ed8', '#c2410c', '#047857', '#7c3aed', '#b91c1c', '#0e7490', '#a16207', '#be185d'];

const loadUPlot = () => Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')]).then(([module]) => module.default);

export function SeriesChart({ xs, series, kind, time = true, height = 240 }: Props) {
  const container = useRef<HTMLDivElement>(null);

  useEffect(() => {
    let chart: uPlot | null = null;
    let cancelled = false;
    const resize = new ResizeObserver(() => chart?.setSize({ width: container.current!.clientWidth, height }));
    void loadUPlot().then((UPlot) => {
      if (cancelled || !container.current) return;
      const text = getComputedStyle(document.documentElement).getPropertyValue('--text-muted').trim() || '#475569';
      const step = xs.length > 1 ? xs[1] - xs[0] : 1;
      const bars = kind === 'bar' ? UPlot.paths.bars!({ size: [0.8 / Math.max(1, series.length), 60] }) : undefined;
      chart = new UPlot(
        {
          width: container.current.clientWidth,
          height,
          legend: { show: series.length > 1 },
          cursor: { drag: { x: false, y: false } },
          scales: {
            x: { time, range: (_u, min, max) => [min - step / 2, max + step / 2] },
            y: { range: (_u, min, max) => [Math.min(0, min), Math.max(1, max)] },
          },
          axes: [
            { stroke: text, grid: { show: false } },
            { stroke: text, size: 60, grid: { stroke: '#e2e8f0' } },
          ],
          series: [
            {},
            ...series.map((s, i) => ({
              label: s.label,
              stroke: PALETTE[i % PALETTE.length],
              width: 2,
              ...(bars && { fill: PALETTE[i % PALETTE.length], paths: bars, points: { show: false } }),
            })),
          ],
        },
        [xs, ...series.map((s) => s.values)],
        container.current,
      );
      resize.observe(container.current);
    });
    return () => {
      cancelled = true;
      resize.disconnect();
      chart?.destroy();
    };
  }, [xs, series, kind, time, height]);

  return <div ref={container} class="chart" aria-hidden="true" />;
}
