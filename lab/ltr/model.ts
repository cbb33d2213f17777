// Learning-to-rank: a linear scorer over standardised features, fitted by listwise softmax
// cross-entropy (the target's share of exp(score) over its list) with an L2 penalty, by full-batch
// Adam from zero: deterministic, no random initialisation.
export interface LinearModel {
  mean: number[];
  scale: number[];
  weights: number[];
  /**
   * Residual models: the score is offset·x[0] (the first-stage score over the list's best) plus the
   * linear part, in training as in use, so the weights learn corrections to the first stage.
   */
  offset?: number;
}

export interface TrainList {
  label: number;
  candidates: number[][];
}

export function standardiser(lists: TrainList[], dims: number): { mean: number[]; scale: number[] } {
  const mean = new Array<number>(dims).fill(0);
  const sq = new Array<number>(dims).fill(0);
  let n = 0;
  for (const list of lists) {
    for (const x of list.candidates) {
      n++;
      for (let j = 0; j < dims; j++) {
        mean[j] += x[j];
        sq[j] += x[j] * x[j];
      }
    }
  }
  const scale = mean.map((m, j) => {
    const mu = m / n;
    const sd = Math.sqrt(Math.max(sq[j] / n - mu * mu, 0));
    return sd > 1e-6 ? 1 / sd : 0;
  });
  return { mean: mean.map((m) => m / n), scale };
}

export function score(model: LinearModel, x: number[]): number {
  let s = (model.offset ?? 0) * x[0];
  for (let j = 0; j < x.length; j++) s += model.weights[j] * (x[j] - model.mean[j]) * model.scale[j];
  return s;
}

export function train(
  lists: TrainList[],
  options: { l2: number; epochs: number; rate: number; offset?: number },
): LinearModel {
  const offset = options.offset ?? 0;
  const dims = lists[0].candidates[0].length;
  const { mean, scale } = standardiser(lists, dims);
  // One flat array of standardised rows, lists delimited by offsets: an epoch is then a few tens of ms.
  const offsets = new Int32Array(lists.length + 1);
  lists.forEach((list, i) => (offsets[i + 1] = offsets[i] + list.candidates.length));
  const rows = new Float32Array(offsets[lists.length] * dims);
  const labels = Int32Array.from(lists, (list) => list.label);
  lists.forEach((list, i) =>
    list.candidates.forEach((x, c) => {
      const at = (offsets[i] + c) * dims;
      for (let j = 0; j < dims; j++) rows[at + j] = (x[j] - mean[j]) * scale[j];
    }),
  );
  const w = new Float64Array(dims);
  const m = new Float64Array(dims);
  const v = new Float64Array(dims);
  const grad = new Float64Array(dims);
  const s = new Float64Array(Math.max(...lists.map((l) => l.candidates.length)));
  for (let epoch = 1; epoch <= options.epochs; epoch++) {
    grad.fill(0);
    for (let i = 0; i < lists.length; i++) {
      const n = offsets[i + 1] - offsets[i];
      let max = -Infinity;
      for (let c = 0; c < n; c++) {
        const at = (offsets[i] + c) * dims;
        let acc = offset * lists[i].candidates[c][0];
        for (let j = 0; j < dims; j++) acc += rows[at + j] * w[j];
        s[c] = acc;
        max = Math.max(max, acc);
      }
      let z = 0;
      for (let c = 0; c < n; c++) z += s[c] = Math.exp(s[c] - max);
      for (let c = 0; c < n; c++) {
        const p = s[c] / z - (c === labels[i] ? 1 : 0);
        const at = (offsets[i] + c) * dims;
        for (let j = 0; j < dims; j++) grad[j] += p * rows[at + j];
      }
    }
    for (let j = 0; j < dims; j++) {
      const g = grad[j] / lists.length + options.l2 * w[j];
      m[j] = 0.9 * m[j] + 0.1 * g;
      v[j] = 0.999 * v[j] + 0.001 * g * g;
      const mh = m[j] / (1 - 0.9 ** epoch);
      const vh = v[j] / (1 - 0.999 ** epoch);
      w[j] -= (options.rate * mh) / (Math.sqrt(vh) + 1e-8);
    }
  }
  return { mean, scale, weights: [...w].map((x) => Math.round(x * 1e5) / 1e5), offset };
}

/** Mean log-likelihood of the targets (to watch the fit). */
export function logLikelihood(model: LinearModel, lists: TrainList[]): number {
  let total = 0;
  for (const list of lists) {
    const s = list.candidates.map((x) => score(model, x));
    const max = Math.max(...s);
    const z = s.reduce((a, b) => a + Math.exp(b - max), 0);
    total += s[list.label] - max - Math.log(z);
  }
  return total / lists.length;
}
