// Prints, for the lines a setting misses in the top 5, the first three hits.
import { createEvaluator, DEFAULT_SETTING, type SetName } from '../bench/search-quality.js';
const set = (process.argv[2] ?? 'functions-users') as SetName;
const evaluator = await createEvaluator();
evaluator.lines[set].forEach((line, i) => {
  const hits = evaluator.hits(DEFAULT_SETTING, set, i, 30);
  const at = hits.findIndex((h) => line.expected.includes(h.name));
  if (at < 0 || at >= 5)
    console.log(
      `${at < 0 ? '-' : at + 1} ${line.intent}\n   want ${line.expected.slice(0, 3).join(' ')}\n   got  ${hits
        .slice(0, 3)
        .map((h) => h.name)
        .join(' ')}`,
    );
});
