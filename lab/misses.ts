// Prints the lines a setting misses at rank 1 (set given as argv[2]).
import { createEvaluator, DEFAULT_SETTING, type SetName } from '../bench/search-quality.js';
import { DEFAULT_EXPANSION } from '../src/search/index.js';
const set = (process.argv[2] ?? 'within-app') as SetName;
const action = Number(process.argv[3] ?? 0.5);
const evaluator = await createEvaluator();
const setting = { ...DEFAULT_SETTING, label: `a${action}`, engine: { expansion: { ...DEFAULT_EXPANSION, action } } };
const ranks = evaluator.ranks(setting)[set];
evaluator.lines[set].forEach((line, i) => {
  if (ranks[i] < 1) console.log(ranks[i].toFixed(2), line.intent, '→', line.expected.join(' '));
});
