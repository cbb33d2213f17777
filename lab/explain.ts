import { WordNet } from '../src/search/index.js';
import { expandQuery, SpellingIndex } from '../src/search/query-expansion.js';
import { stems } from '../src/search/text-analysis.js';
const wn = WordNet.open();
const intent = process.argv[2];
const vocab = new Map<string, number>();
const terms = expandQuery(
  intent,
  {
    id: (t) => {
      if (!vocab.has(t)) vocab.set(t, vocab.size);
      return vocab.get(t);
    },
  },
  new SpellingIndex([]),
  wn,
);
const names = [...vocab.keys()];
console.log(stems(intent).join(' '));
console.log(terms.map((t) => `${names[t.term]}:${t.weight.toFixed(2)}`).join(' '));
