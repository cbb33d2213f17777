// Learning-to-rank with a small gradient-boosted tree ensemble: regression trees of depth `depth`
// fitted by Newton steps on the listwise softmax loss (gradient p - y, hessian p(1 - p) per
// candidate), splits searched over 32 quantile bins per feature. Deterministic.
import type { TrainList } from './model.js';

export interface TreeNode {
  feature: number;
  threshold: number;
  left: TreeNode | number;
  right: TreeNode | number;
}
export interface TreeModel {
  rate: number;
  trees: (TreeNode | number)[];
  /** As in LinearModel: the first-stage score times this is added (residual learning). */
  offset: number;
}

const BINS = 32;

export function treeScore(model: TreeModel, x: number[]): number {
  let s = model.offset * x[0];
  for (const tree of model.trees) {
    let node = tree;
    while (typeof node !== 'number') node = x[node.feature] <= node.threshold ? node.left : node.right;
    s += model.rate * node;
  }
  return s;
}

export function trainTrees(
  lists: TrainList[],
  options: { trees: number; depth: number; rate: number; minHessian: number; offset: number; l2: number },
): TreeModel {
  const dims = lists[0].candidates[0].length;
  const rows: number[][] = [];
  const listOf: number[] = [];
  const offsets = [0];
  lists.forEach((list, i) => {
    for (const x of list.candidates) {
      rows.push(x);
      listOf.push(i);
    }
    offsets.push(rows.length);
  });
  const n = rows.length;
  // Quantile thresholds per feature, and each row's bin.
  const thresholds: number[][] = [];
  const bins = Array.from({ length: dims }, () => new Uint8Array(n));
  for (let j = 0; j < dims; j++) {
    const values = [...new Set(rows.map((x) => x[j]))].sort((a, b) => a - b);
    const cuts: number[] = [];
    for (let b = 1; b < BINS && values.length > 1; b++) {
      const cut = values[Math.min(values.length - 1, Math.floor((b * values.length) / BINS))];
      if (cuts[cuts.length - 1] !== cut) cuts.push(cut);
    }
    thresholds.push(cuts);
    for (let r = 0; r < n; r++) {
      let b = 0;
      while (b < cuts.length && rows[r][j] >= cuts[b]) b++;
      bins[j][r] = b;
    }
  }
  const model: TreeModel = { rate: options.rate, trees: [], offset: options.offset };
  const score = Float64Array.from(rows, (x) => options.offset * x[0]);
  const g = new Float64Array(n);
  const h = new Float64Array(n);
  for (let t = 0; t < options.trees; t++) {
    for (let i = 0; i < lists.length; i++) {
      let max = -Infinity;
      for (let r = offsets[i]; r < offsets[i + 1]; r++) max = Math.max(max, score[r]);
      let z = 0;
      for (let r = offsets[i]; r < offsets[i + 1]; r++) z += Math.exp(score[r] - max);
      for (let r = offsets[i]; r < offsets[i + 1]; r++) {
        const p = Math.exp(score[r] - max) / z;
        g[r] = p - (r - offsets[i] === lists[i].label ? 1 : 0);
        h[r] = Math.max(p * (1 - p), 1e-6);
      }
    }
    const all = Int32Array.from({ length: n }, (_, r) => r);
    const tree = grow(all, 0);
    model.trees.push(tree);
    for (let r = 0; r < n; r++) {
      let node = tree;
      while (typeof node !== 'number') node = rows[r][node.feature] <= node.threshold ? node.left : node.right;
      score[r] += options.rate * node;
    }
  }
  void listOf;
  return model;

  function leaf(ids: Int32Array): number {
    let G = 0;
    let H = 0;
    for (const r of ids) {
      G += g[r];
      H += h[r];
    }
    return Math.round((-G / (H + options.l2)) * 1e4) / 1e4;
  }

  function grow(ids: Int32Array, level: number): TreeNode | number {
    if (level >= options.depth) return leaf(ids);
    let G = 0;
    let H = 0;
    for (const r of ids) {
      G += g[r];
      H += h[r];
    }
    const parent = (G * G) / (H + options.l2);
    let best = { gain: 1e-9, feature: -1, bin: -1 };
    const hg = new Float64Array(BINS + 1);
    const hh = new Float64Array(BINS + 1);
    for (let j = 0; j < dims; j++) {
      const cuts = thresholds[j].length;
      if (cuts === 0) continue;
      hg.fill(0);
      hh.fill(0);
      const bj = bins[j];
      for (const r of ids) {
        hg[bj[r]] += g[r];
        hh[bj[r]] += h[r];
      }
      let gl = 0;
      let hl = 0;
      for (let b = 0; b < cuts; b++) {
        gl += hg[b];
        hl += hh[b];
        const hr = H - hl;
        if (hl < options.minHessian || hr < options.minHessian) continue;
        const gr = G - gl;
        const gain = (gl * gl) / (hl + options.l2) + (gr * gr) / (hr + options.l2) - parent;
        if (gain > best.gain) best = { gain, feature: j, bin: b };
      }
    }
    if (best.feature < 0) return leaf(ids);
    // Rows with bin <= b go left: their value is below thresholds[j][b].
    const j = best.feature;
    const left = ids.filter((r) => bins[j][r] <= best.bin);
    const right = ids.filter((r) => bins[j][r] > best.bin);
    const cut = thresholds[j][best.bin];
    // x <= threshold goes left: the largest value below the cut.
    let threshold = -Infinity;
    for (const r of left) threshold = Math.max(threshold, rows[r][j]);
    void cut;
    return { feature: j, threshold, left: grow(left, level + 1), right: grow(right, level + 1) };
  }
}
