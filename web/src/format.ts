// Number, size and time formatting shared by every page.

export function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let u = 0;
  let v = n;
  while (u < units.length - 1 && v >= 1024 && v % 1024 === 0) {
    v /= 1024;
    u++;
  }
  return `${v} ${units[u]}`;
}

// Short form for axis ticks: 4, 64, 1K, 1M.
export function bytesShort(n: number): string {
  if (n >= 1 << 30 && n % (1 << 30) === 0) return `${n / (1 << 30)}G`;
  if (n >= 1 << 20 && n % (1 << 20) === 0) return `${n / (1 << 20)}M`;
  if (n >= 1 << 10 && n % (1 << 10) === 0) return `${n / (1 << 10)}K`;
  return String(n);
}

export function us(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  if (v >= 1000) return `${(v / 1000).toFixed(v >= 10000 ? 1 : 2)} ms`;
  return `${v.toFixed(v >= 100 ? 1 : 2)} µs`;
}

export function speedup(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  return `${v.toFixed(2)}×`;
}

// "1.05–1.37×", or '–' when the interval is unknown.
export function speedupInterval(lo: number | null | undefined, hi: number | null | undefined): string {
  if (lo === null || lo === undefined || hi === null || hi === undefined || !Number.isFinite(lo) || !Number.isFinite(hi)) return '–';
  return `${lo.toFixed(2)}–${hi.toFixed(2)}×`;
}

export function percent(v: number): string {
  return `${(v * 100).toFixed(v < 0.1 ? 1 : 0)} %`;
}

export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '–';
  const s = Math.max(0, seconds);
  if (s < 10) return `${s.toFixed(1)} s`;
  if (s < 90) return `${Math.round(s)} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  if (s < 172800) return `${(s / 3600).toFixed(1)} h`;
  return `${(s / 86400).toFixed(1)} d`;
}

export function time(unixSeconds: number): string {
  if (!unixSeconds) return '–';
  const d = new Date(unixSeconds * 1000);
  return d.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' });
}

// "alg 6 (pipeline) seg 8 KiB fan-out 2"; only the knobs that are set.
export function configLabel(c: { algorithm: number; segsize: number; fanout: number }, name?: string): string {
  if (c.algorithm === 0) return 'Open MPI default';
  let out = name ? `${name} (${c.algorithm})` : `algorithm ${c.algorithm}`;
  if (c.segsize > 0) out += `, seg ${bytes(c.segsize)}`;
  if (c.fanout > 0) out += `, fan-out ${c.fanout}`;
  return out;
}

// "4:1048576" -> "4 B – 1 MiB" (the spec's sizes range).
export function sizeRange(text: string): string {
  const [lo, hi] = text.split(':').map(Number);
  if (!Number.isFinite(lo)) return text;
  if (hi === undefined || !Number.isFinite(hi) || hi === lo) return bytes(lo);
  return `${bytes(lo)} – ${bytes(hi)}`;
}
