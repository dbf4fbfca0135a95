// Colours: distinguishable for common colour-vision deficiencies (Okabe–Ito first), then more.
export const PALETTE = [
  '#0072B2', '#E69F00', '#009E73', '#CC79A7', '#D55E00', '#56B4E9', '#F0E442', '#000000',
  '#882255', '#44AA99', '#999933', '#AA4499', '#117733', '#332288', '#DDCC77', '#88CCEE',
];

export function colour(index: number): string {
  return PALETTE[((index % PALETTE.length) + PALETTE.length) % PALETTE.length];
}

export function withAlpha(hex: string, alpha: number): string {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
}
