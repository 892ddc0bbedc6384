// How a rollout's boxes are split into waves (docs/updates.md, "Rollouts"): each wave twice the
// size of the one before, so the first (the canary) is the smallest and a bad release reaches
// few boxes before the rollout stops itself. 100 boxes in 3 waves: 14, 29, 57.
export function waveSizes(boxes: number, waves: number): number[] {
  const n = Math.max(1, Math.min(waves, boxes));
  const total = 2 ** n - 1;
  const sizes: number[] = [];
  let given = 0;
  for (let i = 0; i < n; i++) {
    const size = i === n - 1 ? boxes - given : Math.max(1, Math.floor((boxes * 2 ** i) / total));
    sizes.push(size);
    given += size;
  }
  return sizes;
}

/** A wave fails when more than `maxPct` percent of its boxes failed. */
export function waveFailed(failed: number, boxes: number, maxPct: number): boolean {
  return boxes > 0 && failed * 100 > boxes * maxPct;
}
