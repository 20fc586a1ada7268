import type { Row } from './run.ts';

/**
 * A dependency-free SVG bar chart of every ratio to its baseline (one bar per
 * database) with its spread as whiskers and the target drawn as a tick, so the docs can show the
 * latest run without a browser or a plotting library.
 */
export function renderChart(rows: Row[]): string {
  const bars = rows.filter((r) => r.baseline && r.ratio);
  const rowH = 26;
  const left = 430;
  const width = 880;
  const scaleMax = Math.max(1, ...bars.map((b) => b.ratio!.max));
  const x = (v: number) => left + (v / scaleMax) * (width - left - 60);
  const height = 40 + bars.length * rowH + 30;
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="20" font-size="14" font-weight="bold">Throughput as a fraction of the baseline (median of interleaved rounds; whiskers IQR and min–max); tick = target</text>`,
  ];
  bars.forEach((b, i) => {
    const y = 36 + i * rowH;
    const r = b.ratio!;
    const target = b.target?.startsWith('≥ ') ? Number(b.target.slice(2)) : undefined;
    out.push(`<text x="10" y="${y + 14}">${esc(`S${b.scenario} ${b.database}: ${b.subject.split(',')[0]!.slice(0, 56)}`)}</text>`);
    out.push(
      `<rect x="${left}" y="${y + 3}" width="${Math.max(1, x(b.value) - left)}" height="${rowH - 8}" fill="${b.met === false ? '#d54' : '#3a7'}"/>`,
    );
    // The spread: interquartile range as a thick whisker, min–max as a thin one.
    out.push(`<line x1="${x(r.min)}" x2="${x(r.max)}" y1="${y + rowH / 2 - 1}" y2="${y + rowH / 2 - 1}" stroke="#333" stroke-width="1"/>`);
    out.push(`<line x1="${x(r.q1)}" x2="${x(r.q3)}" y1="${y + rowH / 2 - 1}" y2="${y + rowH / 2 - 1}" stroke="#333" stroke-width="4"/>`);
    out.push(`<text x="${x(Math.max(b.value, r.max)) + 4}" y="${y + 14}">${b.value}</text>`);
    if (target !== undefined && Number.isFinite(target))
      out.push(`<line x1="${x(target)}" x2="${x(target)}" y1="${y}" y2="${y + rowH - 2}" stroke="black" stroke-width="2"/>`);
  });
  const axisY = 36 + bars.length * rowH + 4;
  out.push(`<line x1="${left}" x2="${x(scaleMax)}" y1="${axisY}" y2="${axisY}" stroke="#888"/>`);
  for (let v = 0; v <= scaleMax + 1e-9; v += 0.25) out.push(`<text x="${x(v) - 8}" y="${axisY + 14}" fill="#555">${v}</text>`);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
