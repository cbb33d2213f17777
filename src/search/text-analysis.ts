import { stemmer } from 'stemmer';

/**
 * English function words and the filler of requests ("please", "I need", "can you"): they carry no
 * meaning a catalogue entry could match, so neither documents nor intents index them.
 */
const STOPWORDS = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between ' +
    'both but by can could did do does doing down during each few for from further had has have having he her ' +
    'here hers herself him himself his how i if in into is it its itself just let lets me more most my myself ' +
    'no nor not now of off on once only or other our ours ourselves out over own same she should so some such ' +
    'than that the their theirs them themselves then there these they this those through to too under until up ' +
    'very was we were what when where which while who whom why will with would you your yours yourself ' +
    'yourselves also via per etc e g ie eg please need want wants like using use used able thing things ' +
    'someone something anything everything s t d ll m re ve don doesn didn isn aren wasn weren won wouldn ' +
    'shouldn couldn can cannot shall may might must whats thats theres im ive youre'
  ).split(/\s+/),
);

/** A word as written, lower-cased, and its stem: queries need both (typo correction works on the word). */
export interface Token {
  word: string;
  stem: string;
}

const WORD = /[\p{L}\p{N}]+/gu;

/**
 * Splits identifiers and prose into lower-case words: `SEND_EMAIL`, `sendEmail`, `APITemplate.io`
 * and "send e-mail" all become separate words. Stop words are dropped.
 */
export function words(text: string, dropStopWords = true): string[] {
  const out: string[] = [];
  // camelCase and acronym boundaries: "APITemplate" → "API Template", "sendEmail" → "send Email".
  const spaced = text.replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2').replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2');
  for (const match of spaced.toLowerCase().matchAll(WORD)) {
    const word = match[0];
    if (!dropStopWords || !STOPWORDS.has(word)) {
      out.push(word);
    }
  }
  return out;
}

const stemCache = new Map<string, string>();

/** Porter stem of a lower-case word; numbers and very short words are kept as they are. */
export function stem(word: string): string {
  if (word.length <= 2 || /^\d/.test(word)) {
    return word;
  }
  let stemmed = stemCache.get(word);
  if (stemmed === undefined) {
    stemmed = stemmer(word);
    if (stemCache.size > 50_000) {
      stemCache.clear();
    }
    stemCache.set(word, stemmed);
  }
  return stemmed;
}

export function tokens(text: string): Token[] {
  return words(text).map((word) => ({ word, stem: stem(word) }));
}

export function stems(text: string): string[] {
  return words(text).map(stem);
}

/**
 * Names are often written glued or split ("Hacker News" / HACKERNEWS, "Eleven Labs" / elevenlabs):
 * the glued form of each pair of adjacent name words is indexed too, so either spelling matches.
 */
export function nameStems(text: string): string[] {
  const parts = words(text);
  const out = parts.map(stem);
  for (let i = 0; i + 1 < parts.length; i++) {
    out.push(stem(parts[i] + parts[i + 1]));
  }
  return out;
}
