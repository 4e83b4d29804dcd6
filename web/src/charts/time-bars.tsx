/**
 * Bars over time, drawn by uPlot (a ~50 KB canvas chart library, loaded the first time a chart
 * is shown, so pages without charts never download it).
 */
import { useEffect, useRef } from 'preact/hooks';
import type uPlot from 'uplot';

interface Props {
  /** Unix seconds, ascending. */
  times: number[];
  values: number[];
  /** What a value counts, for the tooltip legend. */
  seriesLabel: string;
  height?: number;
}

const step = (times: number[]) => (times.length > 1 ? times[1] - times[0] : 1);

const loadUPlot = () => Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')]).then(([module]) => module.default);

export function TimeBars({ times, values, seriesLabel, height = 160 }: Props) {
  const container = useRef<HTMLDivElement>(null);

  useEffect(() => {
    let chart: uPlot | null = null;
    let cancelled = false;
    const resize = new ResizeObserver(() => chart?.setSize({ width: container.current!.clientWidth, height }));
    void loadUPlot().then((UPlot) => {
      if (cancelled || !container.current) return;
      const style = getComputedStyle(document.documentElement);
      const accent = style.getPropertyValue('--chart-bar').trim() || '#1d4ed8';
      const text = style.getPropertyValue('--text-muted').trim() || '#475569';
      chart = new UPlot(
        {
          width: container.current.clientWidth,
          height,
          legend: { show: false },
          cursor: { drag: { x: false, y: false } },
          // Half a step of room at each end, so the first and last bars are drawn whole.
          scales: { x: { time: true, range: (_u, min, max) => [min - step(times) / 2, max + step(times) / 2] }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
          axes: [
            { stroke: text, grid: { show: false } },
            { stroke: text, size: 50, grid: { stroke: '#e2e8f0' } },
          ],
          series: [{}, { label: seriesLabel, fill: accent, stroke: accent, paths: UPlot.paths.bars!({ size: [0.7, 40] }), points: { show: false } }],
        },
        [times, values],
        container.current,
      );
      resize.observe(container.current);
    });
    return () => {
      cancelled = true;
      resize.disconnect();
      chart?.destroy();
    };
  }, [times, values, seriesLabel, height]);

  return <div ref={container} class="chart" aria-hidden="true" />;
}
