import type { QueryTerm } from './lexical-index.js';
import { stem, tokens, words } from './text-analysis.js';
import { lowerBound } from './sorted.js';
import type { WordNet } from './wordnet.js';

/** How much an expansion counts next to a word the user typed. */
export interface ExpansionWeights {
  /** A glued pair of typed words found in the index ("hacker news" → hackernews). */
  glued: number;
  /** A close spelling of a typed word that the index does not know ("outlok" → outlook). */
  typo: number;
  /** A WordNet synonym (times the sense weight). */
  synonym: number;
  /** An index term that starts or ends with a typed word ("screen" → screenshot, "reddit" → subreddit). */
  compound: number;
  /** Another verb of the action class a typed word belongs to ("show" → get, list, retrieve…). */
  action: number;
}

export const DEFAULT_EXPANSION: ExpansionWeights = { glued: 1, typo: 0.8, synonym: 0.35, compound: 0.5, action: 0.5 };

/**
 * The actions an API operation performs, each with the words catalogues name it by (first) and the
 * everyday words people ask for it with. A typed word of a class brings the class's catalogue words
 * as weighted terms: "show me every planet" reaches "list", "take it off" reaches "delete". Classes
 * of API operations (read, list, create, update, delete, search, send, add a member), not of any intent.
 */
export const ACTION_CLASSES: readonly (readonly string[])[] = [
  [
    'get',
    'retrieve',
    'fetch',
    'read',
    'show',
    'view',
    'see',
    'display',
    'look',
    'open',
    'check',
    'describe',
    'details',
  ],
  ['list', 'all', 'every', 'browse', 'enumerate', 'show'],
  ['create', 'add', 'new', 'make', 'start', 'register', 'insert', 'generate', 'set', 'setup', 'book'],
  ['update', 'edit', 'change', 'modify', 'rename', 'patch', 'adjust', 'fix', 'correct', 'replace', 'set', 'move'],
  ['delete', 'remove', 'drop', 'erase', 'discard', 'clear', 'destroy', 'purge', 'trash', 'rid', 'revoke', 'cancel'],
  ['search', 'find', 'query', 'lookup', 'filter', 'locate', 'discover', 'look'],
  ['send', 'post', 'email', 'mail', 'message', 'notify', 'share', 'publish', 'deliver', 'forward', 'submit'],
  ['invite', 'add', 'join', 'include', 'assign', 'attach', 'append'],
];

const ACTION_CLASSES_BY_WORD = new Map<string, (readonly string[])[]>();
for (const members of ACTION_CLASSES) {
  for (const word of members) {
    ACTION_CLASSES_BY_WORD.set(word, [...(ACTION_CLASSES_BY_WORD.get(word) ?? []), members]);
  }
}

/** Shortest typed word looked up as part of a compound, and the least a compound adds to it. */
const COMPOUND_MIN_LENGTH = 4;
const COMPOUND_MIN_EXTRA = 3;

/**
 * The index terms, for corrections: every term of length ≥ 4 under each of its one-letter
 * deletions, and sorted (forwards and backwards) to find the compounds a word begins or ends.
 */
export class SpellingIndex {
  private readonly byDeletion = new Map<string, string[]>();
  private readonly sorted: string[];
  private readonly reversed: string[];

  constructor(terms: Iterable<string>) {
    const all = [...terms].filter((term) => /^[a-z]+$/.test(term));
    this.sorted = [...all].sort();
    this.reversed = all.map(reverse).sort();
    for (const term of all) {
      if (term.length < 4 || /\d/.test(term)) {
        continue;
      }
      for (const key of deletions(term)) {
        const list = this.byDeletion.get(key);
        if (list) {
          list.push(term);
        } else {
          this.byDeletion.set(key, [term]);
        }
      }
    }
  }

  /** Index terms at Damerau–Levenshtein distance 1 of `word`. */
  corrections(word: string): string[] {
    if (word.length < 4) {
      return [];
    }
    const found = new Set<string>();
    for (const key of deletions(word)) {
      for (const term of this.byDeletion.get(key) ?? []) {
        if (term !== word && withinOneEdit(word, term)) {
          found.add(term);
        }
      }
    }
    return [...found].sort();
  }

  /** Index terms that begin or end with `word` and are at least a few letters longer. */
  compounds(word: string): string[] {
    if (word.length < COMPOUND_MIN_LENGTH || !/^[a-z]+$/.test(word)) {
      return [];
    }
    const out = withPrefix(this.sorted, word);
    for (const term of withPrefix(this.reversed, reverse(word))) {
      out.push(reverse(term));
    }
    return out.filter((term) => term.length >= word.length + COMPOUND_MIN_EXTRA);
  }
}

function reverse(word: string): string {
  return [...word].reverse().join('');
}

/** The entries of a sorted list that start with `prefix`. */
function withPrefix(sorted: string[], prefix: string): string[] {
  const out: string[] = [];
  for (let i = lowerBound(sorted, prefix); i < sorted.length && sorted[i].startsWith(prefix); i++) {
    out.push(sorted[i]);
  }
  return out;
}

/** The word itself and each form with one letter removed. */
function deletions(word: string): Set<string> {
  const out = new Set<string>([word]);
  for (let i = 0; i < word.length; i++) {
    out.add(word.slice(0, i) + word.slice(i + 1));
  }
  return out;
}

function withinOneEdit(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) {
    return false;
  }
  if (a.length === b.length) {
    const diff: number[] = [];
    for (let i = 0; i < a.length && diff.length <= 2; i++) {
      if (a[i] !== b[i]) {
        diff.push(i);
      }
    }
    if (diff.length <= 1) {
      return true;
    }
    // One transposition of adjacent letters.
    return diff.length === 2 && diff[1] === diff[0] + 1 && a[diff[0]] === b[diff[1]] && a[diff[1]] === b[diff[0]];
  }
  const [short, long] = a.length < b.length ? [a, b] : [b, a];
  let i = 0;
  while (i < short.length && short[i] === long[i]) {
    i++;
  }
  return short.slice(i) === long.slice(i + 1);
}

/** The terms the indexes hold, by id. */
export interface Vocabulary {
  id(term: string): number | undefined;
}

/**
 * The weighted terms of an intent: its own stems, glued pairs of adjacent words the index knows,
 * corrections of words it does not know, WordNet synonyms that occur in the catalogue and the
 * catalogue words of the actions it asks for. A term reached several ways keeps its highest weight.
 */
export function expandQuery(
  intent: string,
  vocabulary: Vocabulary,
  spelling: SpellingIndex | undefined,
  wordnet: WordNet | undefined,
  weights: ExpansionWeights = DEFAULT_EXPANSION,
): QueryTerm[] {
  const terms = new Map<number, number>();
  const add = (term: string, weight: number) => {
    const id = vocabulary.id(term);
    if (id !== undefined && weight > (terms.get(id) ?? 0)) {
      terms.set(id, weight);
    }
  };
  const typed = tokens(intent);
  for (const token of typed) {
    add(token.stem, 1);
  }
  for (let i = 0; i + 1 < typed.length; i++) {
    add(stem(typed[i].word + typed[i + 1].word), weights.glued);
  }
  for (const token of typed) {
    if (vocabulary.id(token.stem) === undefined && spelling) {
      for (const term of spelling.corrections(token.stem)) {
        add(term, weights.typo);
      }
      for (const term of spelling.compounds(token.stem)) {
        add(term, weights.compound);
      }
    }
    if (wordnet && weights.synonym > 0 && !/\d/.test(token.word)) {
      for (const related of wordnet.synonyms(token.word)) {
        add(stem(related.word), weights.synonym * related.weight);
      }
    }
  }
  if (weights.action > 0) {
    // Stop words count here: "all", "every" and "off" say what to do.
    for (const word of words(intent, false)) {
      for (const members of ACTION_CLASSES_BY_WORD.get(word) ?? []) {
        for (const member of members) {
          add(stem(member), weights.action);
        }
      }
    }
  }
  return [...terms].map(([term, weight]) => ({ term, weight }));
}
